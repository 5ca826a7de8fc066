// The search's fast path (docs/search.md, "Fast path"): the closed-form step time of
// cost_models/step_time.cpp (estimate_step) and the per-GPU memory of cost_models/memory.cpp
// (training_memory), re-assembled from cached pieces so that one layout costs a few hundred
// nanoseconds, no strings, no vectors, no heap allocation.
//
// What is cached, and by what key:
//   LayerEntry  layer_cost() of a dense and a MoE layer and layer_activations() of both, keyed by
//               (tp, cp, ep, micro_batch, sequence_parallel, recompute, ZeRO-2 or 3 with dp·cp, and
//               the overlap policies layer_cost() reads: tp_comm_overlap where tp > 1 with SP, and
//               overlap_grad_reduce / overlap_param_gather with ZeRO-2/3).
//   EdgeEntry   everything assemble_step_costs() adds to a stage besides its layers (embedding on
//               the first stage, LM head and loss on the last, pipeline send/recv), per stage class
//               (only / first / middle / last), obtained by calling assemble_step_costs() with
//               all-zero layer costs; keyed by (tp, cp, micro_batch, sp, min(pp,3), interleaved,
//               placement of the pipeline pair).
//   StateEntry  per-stage data-parallel gradient reduction, parameter all-gather and optimizer
//               time (assemble_step_costs() again), and per-stage weights, gradients, optimizer
//               states and buffers (training_memory()); keyed by (tp, cp, pp, dp, ep, zero, offload).
//               Stages are grouped into runs of identical stages (same layers, MoE layers and
//               class), so a 128-stage pipeline is 2 to 5 groups.
// Exactness: tests/test_search_fast_eval.cpp checks step_time_s and total_bytes against
// estimate_step() and training_memory() within 1e-9 relative on varied layouts.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "cost_models/flops.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim::search {

// The three overlap policies (Megatron's --tp-comm-overlap, --overlap-grad-reduce,
// --overlap-param-gather; ParallelConfig's fields of the same names), searched like the layout.
struct OverlapPolicy {
    bool tp_comm = false;
    bool grad_reduce = true;
    bool param_gather = true;
    auto key() const { return std::make_tuple(tp_comm, grad_reduce, param_gather); }
    bool operator==(const OverlapPolicy& o) const { return key() == o.key(); }
};

// One point of the search space.
struct Candidate {
    int gpus = 1, tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, vp = 1;
    int zero = 0;
    bool sp = false;
    const ScheduleDef* schedule = &default_schedule();
    Recompute recompute = Recompute::none;
    // With recompute full: training.recompute_num_layers, the layers of every model chunk recomputed
    // (0: every layer). The search sets it to the fewest that fit (docs/search.md).
    int recompute_layers = 0;
    // training.activation_offload_layers (pp 1, recompute none); the search sets the fewest that fit.
    int offload_layers = 0;
    Offload offload = Offload::none;
    std::int64_t micro_batch = 1, global_batch = 1;
    OverlapPolicy overlap;

    // The total order used to break ties (fewer GPUs, then smaller tp, pp, ...).
    auto key() const {
        return std::make_tuple(gpus, global_batch, tp, pp, cp, ep, vp, schedule->id(), zero, static_cast<int>(offload),
                               micro_batch, static_cast<int>(recompute), recompute_layers, offload_layers, sp,
                               overlap.tp_comm, overlap.grad_reduce, overlap.param_gather);
    }
    bool operator<(const Candidate& o) const { return key() < o.key(); }
    bool operator==(const Candidate& o) const { return key() == o.key(); }
};

// The base scenario with the candidate's layout and training settings applied.
Scenario apply_candidate(const Scenario& base, const Candidate& c);
Candidate candidate_of(const Scenario& s);

// Memory components of the most loaded stage.
enum MemoryPart { kWeights = 0, kGradients, kOptimizer, kActivations, kOther, kMemoryParts };
const char* memory_part_name(int part);   // as MemoryBreakdown::dominant names it

struct FastMemory {
    double total_bytes = 0;
    double parts[kMemoryParts] = {};
    int stage = 0;
    int dominant = kWeights;
    double host_bytes_per_node = 0;
    bool host_fits = true;
};

struct FastTime {
    double step_time_s = 0;
    double pipeline_s = 0;
    double bubble_s = 0;   // as StepBreakdown::bubble (schedule bubble + uneven stages)
    double bubble_fraction = 0;
    double tokens_per_s = 0;
    double mfu = 0;
    int critical_stage = 0;
};

class FastEvaluator {
public:
    // The base scenario supplies the model, system, precision, sequence length, flash attention
    // and optimizer; candidates supply everything else, the overlap policies included.
    explicit FastEvaluator(const Scenario& base);

    const Scenario& base() const { return base_; }

    // Convenience (looks the cached pieces up; the search hoists these lookups out of its loops).
    FastMemory memory(const Candidate& c);
    FastTime time(const Candidate& c);

    // --- cached pieces -------------------------------------------------------------------------
    struct LayerScalars {
        double fwd = 0, bwd = 0, wgrad = 0, compute = 0, tp = 0, cp = 0, ep = 0, zero3 = 0;
        double act_total = 0, act_working = 0;     // activations kept for backward; recompute working set
        double fwd_compute = 0, bwd_compute = 0;   // the layer's compute each way (activation offload hides behind it)
        double act_full = 0;                       // everything the layer holds (what offload copies)
        double offload = 0, act_offloaded = 0;     // exposed offload copies; activations in host memory
    };
    struct LayerEntry {
        LayerScalars dense, moe;
    };
    struct EdgeScalars {
        double fwd = 0, bwd = 0, wgrad = 0, compute = 0, tp = 0, pp = 0;
    };
    enum StageClass { kOnly = 0, kFirst, kMiddle, kLast };
    struct EdgeEntry {
        EdgeScalars cls[4];
    };
    struct StageGroup {
        int first = 0, count = 0, layers = 0, moe = 0, dense = 0;
        int cls = kOnly;
        double dp_grad_s = 0, dp_gather_s = 0, optimizer_s = 0, dp_sm_fraction = 0;
        double weights = 0, grads = 0, optimizer = 0;   // model states on one GPU
        double other_fixed = 0;                         // buffers and reserve without the activation-proportional slack
        double offloaded = 0;                           // bytes per GPU offloaded to the host
    };
    struct StateEntry {
        int dp = 1;
        double rollout_kv_per_seq = 0;   // RLHF: rollout KV cache per GPU of one sequence per replica
        std::vector<StageGroup> groups;
    };

    const LayerEntry& layer(int tp, int cp, int ep, std::int64_t mb, bool sp, Recompute rc, int zero, int dp,
                            const OverlapPolicy& overlap);
    // recompute_num_layers: the share-weighted mean of a layer that keeps its activations and a fully
    // recomputed one, as layer_cost() and layer_activations() take it (full_recompute_share).
    static LayerEntry blend(const LayerEntry& kept, const LayerEntry& recomputed, double share);
    // activation_offload_layers: `share` of the layers' activations in host memory, their copies priced as
    // layer_cost() prices them (offload_exposed_s over the system's host link).
    LayerEntry offloaded(const LayerEntry& kept, double share) const;
    const EdgeEntry& edge(int tp, int cp, int dp, int pp, std::int64_t mb, bool sp, const ScheduleDef& sched);
    const StateEntry& state(int tp, int cp, int pp, int dp, int ep, int zero, Offload offload);
    const TrainingFlops& flops(std::int64_t global_batch);

    // The arithmetic on cached pieces (no lookups, no allocation).
    FastMemory memory(const StateEntry& st, const LayerEntry& le, int tp, int cp, int pp, int vp,
                      const ScheduleDef& sched, bool sp, std::int64_t mb, std::int64_t microbatches) const;
    FastTime time(const StateEntry& st, const LayerEntry& le, const EdgeEntry& ed, int gpus, int vp,
                  const ScheduleDef& sched, std::int64_t microbatches, const TrainingFlops& fl,
                  const OverlapPolicy& overlap) const;

    std::size_t layer_entries() const;
    // The layer a candidate runs (blended for recompute_layers).
    LayerEntry candidate_layer(const Candidate& c, int zero);

private:
    Scenario base_;
    double peak_ = 0;
    double frag_ = 0.05;
    mutable std::mutex mu_;
    std::map<std::tuple<int, int, int, std::int64_t, bool, int, int, int>, std::unique_ptr<LayerEntry>> layers_;
    std::map<std::tuple<int, int, std::int64_t, bool, int, bool, int, int>, std::unique_ptr<EdgeEntry>> edges_;
    std::map<std::tuple<int, int, int, int, int, int, int>, std::unique_ptr<StateEntry>> states_;
    std::map<std::int64_t, std::unique_ptr<TrainingFlops>> flops_;
};

}   // namespace llmsim::search
