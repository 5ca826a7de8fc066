// `llmsim estimate` as a library call: a training step in closed form and on the discrete-event
// simulator (with their comparison, a text timeline and a straggler). Returns structs; cli/ formats
// them as text or JSON. (Serving: app/serving.hpp; the contract's output keys: app/quantities.hpp.)
#pragma once

#include <map>
#include <optional>
#include <string>

#include "cost_models/inference.hpp"
#include "cost_models/rlhf.hpp"
#include "cost_models/step_time.hpp"
#include "sim/serving.hpp"
#include "sim/step_sim.hpp"

namespace llmsim::app {

struct EstimateOptions {
    bool fast = false;               // closed form only (no discrete-event simulation)
    bool simulate = false;           // simulate even with `fast` (a trace or timeline needs the played step)
    bool timeline = false;           // a text Gantt of the played step ...
    int timeline_columns = 80;       // ... this many columns wide (a terminal's)
    int straggler_stage = -1;        // slow this stage ...
    double straggler_factor = 1.0;   // ... by this factor
};

struct TrainingEstimate {
    StepEstimate closed_form;
    std::optional<StepEstimate> simulated;   // unless options.fast (and nothing needed it played)
    sim::MethodComparison comparison;        // when simulated
    sim::SimResult played;                   // the simulator's measurements, when simulated
    std::string timeline;                    // when options.timeline
    std::optional<RlhfEstimate> rlhf;        // training.rlhf: one PPO iteration (closed form)
    bool fast = false;
    // What the report shows: the simulator's estimate, or the closed form with --fast.
    const StepEstimate& chosen() const { return fast || !simulated ? closed_form : *simulated; }
};

// `sim` keeps the played step (its trace can be written after the call).
TrainingEstimate estimate_training(const TrainingJob& job, const EstimateOptions& options, sim::StepSimulator& sim);

}   // namespace llmsim::app
