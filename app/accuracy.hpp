// How sure an answer is, from the published runs (docs/serving.md and docs/accuracy.md, "How sure"): the
// residuals of `llmsim validate` on validation/serving.json and validation/training.json, kept in
// hardware_db/data/residuals/ (made by `llmsim validate validation/FILE.json --residuals FILE`; a test
// fails when they are stale), give each capacity, throughput and training step time the range the
// published runs most like it measured against llmsim's prediction. A range, not a confidence interval:
// it says what the published runs did, with how many (in-sample: the runs fitted the constants).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/validate.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim::app {

struct Residual {
    std::string id, quantity;
    std::string engine;   // the serving engine; of a training run, its framework ("unspecified" when unstated)
    std::string accelerator;
    std::string arrivals;   // "offline" (every request at t = 0), "poisson", "static", or "training"
    double error = 0;       // predicted / measured − 1
    std::string source;     // the publication it is from (source_key of the case's source); empty: its own
};

// The serving residuals of a validation report (every serving quantity of every case), rounded to 1e-4.
[[nodiscard]] std::vector<Residual> serving_residuals(const ValidationReport& rep);
// The training step times' residuals of a validation report (the simulator's step, as estimate reports it).
[[nodiscard]] std::vector<Residual> training_residuals(const ValidationReport& rep);
// Both, serving first (what `llmsim validate --residuals` writes).
[[nodiscard]] std::vector<Residual> residuals(const ValidationReport& rep);
// As the JSON that hardware_db/data/residuals/*.json hold.
[[nodiscard]] std::string residuals_json_text(const std::vector<Residual>& rs);
// The residuals compiled into the binary (hardware_db/data/residuals/*.json; empty when absent).
[[nodiscard]] const std::vector<Residual>& builtin_residuals();

// The chance that a new run's measured / predicted falls between the smallest and the largest of `runs`
// others, if it is exchangeable with them: (runs − 1) / (runs + 1). Among runs + 1 exchangeable values each
// is equally likely to be the smallest or the largest (Wilks 1941's tolerance limits; the split-conformal
// interval of Lei et al. 2018 at its widest), so the min–max range of 3 runs is a 50% range, of 19 a 90% one.
// Runs of one publication share its setup and so much of its error: they are not exchangeable with another
// publication's, and a range's runs hold a new source's run less often than they state (validate's "how
// sure, tested"). A range therefore also says how many sources its runs come from; the lower bound of its
// level when only sources are exchangeable is range_level(sources) (one run drawn from each of m sources and
// one from the new run's are m + 1 exchangeable values, and their min–max lies inside the min–max of all).
[[nodiscard]] double range_level(int runs) noexcept;

// What the published runs most like a deployment measured, as a multiple of llmsim's prediction.
struct PublishedRange {
    double low = 0, high = 0;   // the prediction times min and max of measured / predicted
    double low_ratio = 0, high_ratio = 0;
    int runs = 0;
    int sources = 0;     // the publications the runs come from (a run without a source counts as its own)
    double level = 0;    // range_level(runs): the stated chance that a run like these falls inside
    std::string basis;   // "8 published runs (2 sources) of tensorrt-llm on b200, h100-sxm, h200-sxm"
};
inline constexpr int kMinRangeRuns = 3;
// A range of one or two publications' runs holds a third's run far less often than its runs state (one
// setup, one error; validate's "how sure, tested": 28 of 44 training runs against 82% stated, with ranges
// of one source's runs the most often missed), so a range takes its runs from kMinRangeSources sources where
// the residuals have them.
inline constexpr int kMinRangeSources = 3;
// The runs of the same quantity, arrivals and engine; of them, those on the same accelerator when there are at
// least kMinRangeRuns from kMinRangeSources sources, else all of the engine's (first_range in accuracy.cpp: where
// no set has that many sources, the widest with the most); none below kMinRangeRuns.
[[nodiscard]] std::optional<PublishedRange> published_range(const std::vector<Residual>& rs,
                                                            const std::string& quantity, const std::string& arrivals,
                                                            const std::string& engine, const std::string& accelerator,
                                                            double predicted);
// A training step time's range: the runs on the same accelerator with the same framework when there are at
// least kMinRangeRuns from kMinRangeSources sources, else those on the same accelerator, else those of the same
// framework on any, else every training run (where none has that many sources, the widest with the most); none
// below kMinRangeRuns.
[[nodiscard]] std::optional<PublishedRange> step_time_range(const std::vector<Residual>& rs,
                                                            const std::string& framework,
                                                            const std::string& accelerator, double predicted_s);

// How often a step-time range holds the run it is for, when the range is built without the runs of that
// run's source (leave one source out): over the training residuals whose id `source_of` names, the runs
// whose measured / predicted ratio lies inside step_time_range of the other sources' runs.
struct IntervalCoverage {
    int runs = 0, inside = 0;
    double level_sum = 0;   // the ranges' stated levels (PublishedRange::level), summed over the runs tested
    [[nodiscard]] double share() const { return runs > 0 ? static_cast<double>(inside) / runs : 0.0; }
    // What the ranges claimed on average: share() should come close to it when the runs are exchangeable.
    [[nodiscard]] double stated_level() const { return runs > 0 ? level_sum / runs : 0.0; }
};
[[nodiscard]] IntervalCoverage step_time_interval_coverage(const std::vector<Residual>& rs,
                                                           const std::map<std::string, std::string>& source_of);
// The same test for any quantity the ranges are given for: step_time_s (step_time_range), else a serving
// quantity (published_range, of the run's own arrivals, engine and accelerator).
[[nodiscard]] IntervalCoverage range_coverage(const std::vector<Residual>& rs,
                                              const std::map<std::string, std::string>& source_of,
                                              const std::string& quantity);
// The ranges answers carry, tested on a validation report's own cases: range_coverage over its residuals,
// sources by source_key, for each quantity that carries a range (step_time_s, output_tokens_per_s_per_gpu,
// slo_capacity_qps) and has a case to test. `llmsim validate` prints them; its JSON is `range_coverage`.
[[nodiscard]] std::map<std::string, IntervalCoverage> range_coverages(const ValidationReport& rep);

}   // namespace llmsim::app
