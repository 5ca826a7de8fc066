// The result of `llmsim estimate` as JSON (the scenario contract's keys and more) and as text, both
// formatted from the library's structs (sim/estimate.hpp, app/serving.hpp).
#pragma once

#include <string>

#include "app/serving.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/specs.hpp"
#include "sim/estimate.hpp"

namespace llmsim::cli {

// A scenario's estimate, training or serving by its kind.
struct Estimate {
    std::optional<sim::TrainingEstimate> training;
    std::optional<app::ServingEvaluation> serving;   // app::evaluate_serving
};
// `simulator` keeps the played step (for --trace); a continuous-batching run keeps its iterations when
// options.simulate (for --trace).
Estimate run_estimate(const Scenario& s, const sim::EstimateOptions& options, sim::StepSimulator& simulator);

Json estimate_json(const Scenario& s, const Estimate& e, const sim::EstimateOptions& options);
std::string estimate_text(const Scenario& s, const Estimate& e);

}   // namespace llmsim::cli
