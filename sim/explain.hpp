// `llmsim explain` as a library call: the binding constraint of a training scenario (memory: which
// component on which pipeline stage; time: compute, which communication, the bubble or the optimizer),
// the breakdown, every lever that applies with its effect predicted by re-running the estimate
// (sim::estimate_training) and its trade-off in one line, and the first action to take.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cost_models/step_time.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim::sim {

struct Lever {
    std::string name;       // "sequence parallelism"
    std::string change;     // "sp: off -> on"
    std::string tradeoff;   // one line
    int gpus = 0;
    double step_time_s = 0;
    double tokens_per_s_per_gpu = 0;
    double mfu = 0;
    double peak_bytes = 0;   // most loaded GPU
    bool fits = false;
    double binding_after = 0;   // the binding quantity after the change (bytes or seconds)
    bool improves = false;      // lowers the binding quantity
    Scenario scenario;          // the scenario with the lever applied
};

struct Explanation {
    std::string binding;        // "memory" or "time"
    std::string constraint;     // one sentence: what binds, where, by how much
    double binding_value = 0;   // peak bytes (memory) or step time (time)
    StepEstimate base;
    std::vector<std::pair<std::string, double>> memory_parts;   // bytes, most loaded GPU
    std::vector<std::pair<std::string, double>> time_parts;     // seconds per step
    std::vector<Lever> levers;                                  // every lever that applies, in the order tried
    int recommended = -1;                                       // index into levers (-1: none helps)
    std::string recommendation;
};

// Memory binds when the most loaded GPU does not fit; otherwise time binds (step time at the same GPU
// count and global batch). The recommended lever: for memory, the fitting lever with the shortest step
// (else the one that saves most memory among those costing at most 10% of the step, else among all); for time, the fitting lever at the same GPU count with the
// shortest step. Layout changes keep the GPU count (dp absorbs them); "more GPUs" is listed apart.
[[nodiscard]] Explanation explain_training(const Scenario& s);

// When memory binds: the first actions applied one after another (each the recommendation for the
// scenario the previous one left) until the scenario fits or `max_steps` are taken. Empty when time
// binds. The last lever's `fits` says whether the path reaches a layout that fits.
[[nodiscard]] std::vector<Lever> fit_path(const Scenario& s, int max_steps = 4);

}   // namespace llmsim::sim
