// `llmsim explain` as a library call: the binding constraint of a training scenario (memory: which
// component on which pipeline stage; time: compute, which communication, the bubble or the optimizer),
// the breakdown, every lever that applies with its effect predicted by re-running the estimate
// (app::estimate_training) and its trade-off in one line, and the first action to take. For a serving
// scenario (explain_serving): KV capacity, queueing, compute or HBM, from the serving simulator's run
// (continuous batching) or the static-batching estimate; every serving lever re-run the same way.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cost_models/step_time.hpp"
#include "hardware_db/specs.hpp"
#include "sim/serving.hpp"

namespace llmsim::app {

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

// ---- Serving ----

// One serving run's measures as explain compares them: the serving simulator's (continuous batching)
// or estimate_inference's (static batching: means stand for the percentiles).
struct ServingMeasures {
    bool fits = true;   // the weights and one request's KV cache fit (else the run was not possible)
    double ttft_s = 0, ttft_p99_s = 0, tpot_s = 0, tpot_p99_s = 0, e2e_p99_s = 0, queue_s = 0;
    double ttft_p90_s = 0, tpot_p90_s = 0;
    double output_tokens_per_s = 0, output_tokens_per_s_per_gpu = 0, requests_per_s = 0;
    bool slo_met = true;
    std::int64_t preemptions = 0, peak_batch = 0;
    double mean_batch = 0, kv_occupancy_max = 0;
    double kv_held_fraction = 0, seats_held_fraction = 0, budget_held_fraction = 0;
    double prefill_s = 0, decode_s = 0;   // iteration time: prefill-carrying / decode-only (static: TTFT / decode)
    double prefill_compute_fraction = 0, decode_compute_fraction = 0;              // compute-bound share of each phase
    double compute_fraction = 0;                                                   // of all iteration time
    double weights_bytes = 0, other_bytes = 0, kv_bytes = 0, capacity_bytes = 0;   // per GPU; kv: pool or batch
    double need_bytes = 0;   // weights + runtime + KV of one mean request (continuous) or of the batch (static)
};

struct ServingLever {
    std::string name;       // "KV cache in FP8"
    std::string change;     // "kv bf16 -> fp8"
    std::string tradeoff;   // one line
    int gpus = 0;
    ServingMeasures after;
    double binding_after = 0;
    bool improves = false;   // the binding quantity moves the right way
    Scenario scenario;       // the scenario with the lever applied
};

struct ServingExplanation {
    std::string binding;      // "KV capacity" | "queueing" | "compute" | "HBM" | "memory"
    std::string constraint;   // one sentence: what binds, measured how
    std::string quantity;     // the binding quantity: "TTFT p99", "TPOT p99", "output tokens/s per GPU", ...
    std::string unit;         // "s", "tokens/s", "bytes"
    bool higher_is_better = false;
    double binding_value = 0;
    double capacity_requests_per_s = 0;   // offline capacity of the deployment (continuous with qps)
    double utilisation = 0;               // qps / capacity
    ServingMeasures base;
    std::vector<std::pair<std::string, double>> memory_parts;   // bytes per GPU
    std::vector<ServingLever> levers;                           // every lever that applies and runs
    int recommended = -1;
    std::string recommendation;
};

// Continuous batching, the binding decided in this order: memory when the weights or the longest
// request's KV cache do not fit one replica; queueing (with a qps) when the utilisation qps / offline
// capacity (the same deployment simulated with every request at t = 0) is at least
// kQueueingUtilisation; KV capacity when sequences were preempted or a waiting request was held back for
// KV blocks during at least kHeldShare of the iteration time; queueing when queueing is at least half of
// the mean TTFT; else compute or HBM by the compute-bound share of iteration time (of the prefill-carrying
// iterations when TTFT binds). The binding quantity: TTFT p99 for queueing and KV capacity (TPOT p99 when
// that is the SLO missed); for compute or HBM the SLO percentile missed by the largest ratio, else TTFT
// p99 when compute-bound prefill holds most of the time, else TPOT p99; offline (no qps), output
// tokens/s per GPU. Static batching:
// memory or KV capacity when it does not fit, else compute or HBM of the phase (prefill or decode)
// holding most of the latency, its quantity TTFT or TPOT. When nothing fits, memory needed per GPU.
// The recommended lever improves the binding quantity and runs; among those, first the ones that meet
// the SLO (when there is one), then the ones at the same GPU count, then the best binding quantity
// (when nothing fits: among the levers that fit, the lowest e2e p99, offline the most tokens/s per GPU).
// kHeldShare and kQueueingUtilisation are reporting thresholds (docs/drills.md), not model constants.
inline constexpr double kHeldShare = 0.1;
inline constexpr double kQueueingUtilisation = 0.9;
[[nodiscard]] ServingExplanation explain_serving(const Scenario& s);

// Measures one serving scenario (what explain_serving runs for every lever).
[[nodiscard]] ServingMeasures measure_serving(const Scenario& s);

}   // namespace llmsim::app
