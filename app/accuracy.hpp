// How sure a serving answer is, from the published runs (docs/serving.md "How sure"): the residuals of
// `llmsim validate` on validation/serving.json, kept in hardware_db/data/residuals/serving.json (made by
// `llmsim validate validation/serving.json --residuals FILE`; a test fails when it is stale), give each
// capacity and throughput answer the range the published runs most like it measured against llmsim's
// prediction. A range, not a confidence interval: it says what the published runs did, with how many.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/validate.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim::app {

struct Residual {
    std::string id, quantity, engine, accelerator;
    std::string arrivals;   // "offline" (every request at t = 0), "poisson", or "static"
    double error = 0;       // predicted / measured − 1
};

// The serving residuals of a validation report (every serving quantity of every case), rounded to 1e-4.
[[nodiscard]] std::vector<Residual> serving_residuals(const ValidationReport& rep);
// As the JSON that hardware_db/data/residuals/serving.json holds.
[[nodiscard]] std::string residuals_json_text(const std::vector<Residual>& rs);
// The residuals compiled into the binary (empty when the file is absent).
[[nodiscard]] const std::vector<Residual>& builtin_serving_residuals();

// What the published runs most like a deployment measured, as a multiple of llmsim's prediction.
struct PublishedRange {
    double low = 0, high = 0;   // the prediction times min and max of measured / predicted
    double low_ratio = 0, high_ratio = 0;
    int runs = 0;
    std::string basis;   // "8 MLPerf runs of tensorrt-llm on b200, h100-sxm, h200-sxm"
};
inline constexpr int kMinRangeRuns = 3;
// The runs of the same quantity, arrivals and engine; of them, those on the same accelerator when there are at
// least kMinRangeRuns, else all of the engine's; none below kMinRangeRuns.
[[nodiscard]] std::optional<PublishedRange> published_range(const std::vector<Residual>& rs,
                                                            const std::string& quantity, const std::string& arrivals,
                                                            const std::string& engine, const std::string& accelerator,
                                                            double predicted);

}   // namespace llmsim::app
