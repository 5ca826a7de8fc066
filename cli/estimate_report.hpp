// The result of `llmsim estimate` as JSON (the scenario contract's keys and more) and as text.
#pragma once

#include <string>

#include "hardware_db/json_reader.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim::cli {

// How `llmsim estimate` plays a training step (cli/cmd_estimate.cpp flags).
struct EstimateOptions {
    bool fast = false;               // closed form only (no discrete-event simulation)
    std::string trace_path;          // write a Chrome/Perfetto trace of the simulated step here
    bool timeline = false;           // add a text Gantt of the step ("timeline" key)
    int straggler_stage = -1;        // slow this stage ...
    double straggler_factor = 1.0;   // ... by this factor
};

// Training or inference, by the scenario's kind. Training uses the discrete-event simulator unless
// options.fast.
Json estimate_json(const Scenario& s);
Json estimate_json(const Scenario& s, const EstimateOptions& options);
std::string estimate_text(const Scenario& s, const Json& result);

}   // namespace llmsim::cli
