// The result of an estimate (`llmsim estimate --json`, `llmsim run` rows, llmsim.estimate in Python):
// a training step (app/estimate.hpp) or a serving evaluation (app/serving.hpp) as JSON, the scenario
// contract's keys and more. One definition; cli/estimate_report.hpp prints the same structs as text.
#pragma once

#include <optional>

#include "app/accuracy.hpp"
#include "app/estimate.hpp"
#include "app/serving.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim::report {

// A scenario's estimate, training or serving by its kind.
struct Estimate {
    std::optional<app::TrainingEstimate> training;
    std::optional<app::ServingEvaluation> serving;   // app::evaluate_serving
    // Training: the step time's range from the published runs most like this one (app::step_time_range).
    std::optional<app::PublishedRange> step_time_range;
};
// `simulator` keeps the played step (for --trace); a continuous-batching run keeps its iterations when
// options.simulate (for --trace).
Estimate run_estimate(const Scenario& s, const app::EstimateOptions& options, sim::StepSimulator& simulator);

Json estimate_json(const Scenario& s, const Estimate& e, const app::EstimateOptions& options);
// The range the published runs most like an answer measured (app/accuracy), as every result shows it.
Json published_range_json(const app::PublishedRange& r);
// {"board_power_W", "joules_per_output_token_max"} and, with a price, "usd_per_hour",
// "usd_per_million_output_tokens", "usd_per_million_tokens" (app::ServingEconomics).
Json economics_json(const app::ServingEconomics& x);

}   // namespace llmsim::report
