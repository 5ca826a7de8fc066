// Step time of one training iteration (docs/step-time-model.md).
//
// step_costs() prices every operator of a layer on one GPU (roofline), every collective on the
// system's topology (alpha-beta, cheapest algorithm), and rolls them up per pipeline stage and
// micro-batch. estimate_step() plays the pipeline schedule in closed form (the fast path the search
// uses); sim/ plays the same StepCosts on a discrete-event engine.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "cost_models/collectives.hpp"
#include "cost_models/flops.hpp"
#include "cost_models/memory.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim {

// One operator of a layer, per micro-batch, on one GPU.
struct OpTime {
    std::string name;   // "qkv", "attention", "mlp_fc1", "tp_allreduce", ...
    std::string kind;   // "gemm" | "attention" | "memory" | "comm"
    double fwd_s = 0;
    double bwd_s = 0;
    double recompute_s = 0;   // forward work done again in backward
    double flops_fwd = 0;
    double bytes_fwd = 0;
    bool exposed = true;   // communication: on the critical path
};

// A collective the step performs, and how often (what of it is hidden is the layer's and the step's
// exposure: LayerCost's *_exposed_* and StepCosts, one rule each).
struct CommEvent {
    std::string what;   // "tp all-reduce (attention output)", "dp reduce-scatter grads", ...
    std::string dim;    // "tp" | "cp" | "ep" | "pp" | "dp"
    Collective collective = Collective::all_reduce;
    const AlgorithmDef* algorithm = nullptr;   // the cheapest (collectives registry)
    double bytes = 0;
    int ranks = 1;
    int domains = 1;     // scale-up domains the group spans
    double time_s = 0;   // one call
    double calls_per_step = 0;
};

struct LayerCost {
    double fwd_compute_s = 0, bwd_compute_s = 0, recompute_s = 0, wgrad_s = 0;
    double tp_exposed_fwd_s = 0, tp_exposed_bwd_s = 0;   // bwd includes recomputed forward's comm
    double cp_exposed_fwd_s = 0, cp_exposed_bwd_s = 0;
    double ep_exposed_fwd_s = 0, ep_exposed_bwd_s = 0;
    double zero3_exposed_fwd_s = 0, zero3_exposed_bwd_s = 0;
    // Activation offload: host-link copies not hidden by the next layer's compute.
    double offload_exposed_fwd_s = 0, offload_exposed_bwd_s = 0;
    double tp_total_s = 0, cp_total_s = 0, ep_total_s = 0, zero3_total_s = 0;   // per micro-batch, hidden or not
    double offload_total_s = 0;
    std::vector<OpTime> ops;
    double fwd_s() const {
        return fwd_compute_s + tp_exposed_fwd_s + cp_exposed_fwd_s + ep_exposed_fwd_s + zero3_exposed_fwd_s +
               offload_exposed_fwd_s;
    }
    double bwd_s() const {
        return bwd_compute_s + recompute_s + tp_exposed_bwd_s + cp_exposed_bwd_s + ep_exposed_bwd_s +
               zero3_exposed_bwd_s + offload_exposed_bwd_s;
    }
};

struct StageCost {
    int stage = 0;
    int layers = 0;
    int moe_layers = 0;
    // Per micro-batch through the whole stage (all its chunks), exposed communication included.
    double fwd_s = 0;
    double bwd_s = 0;
    double wgrad_s = 0;   // weight-gradient share of bwd_s (zero-bubble schedules split it out)
    // Components of fwd_s + bwd_s.
    double compute_s = 0;
    double tp_s = 0, cp_s = 0, ep_s = 0, zero3_s = 0, pp_s = 0;
    double offload_s = 0;           // exposed activation-offload copies
    double p2p_s = 0;               // one activation (or gradient) transfer to the next stage
    double dp_grad_s = 0;           // end-of-step gradient reduction of this stage's parameters
    double dp_sm_fraction = 0;      // compute share the reduction takes while it overlaps backward
    double dp_param_gather_s = 0;   // ZeRO-1/2 parameter all-gather after the optimizer
    double optimizer_s = 0;
    double params = 0;   // parameters held (before ZeRO sharding)
};

struct StepCosts {
    std::int64_t microbatches = 1;
    std::vector<StageCost> stages;
    LayerCost dense_layer, moe_layer;   // a representative layer of each kind
    std::vector<CommEvent> comms;
    bool pp_p2p_overlapped = false;   // interleaved schedules overlap send/recv with compute
};

[[nodiscard]] StepCosts step_costs(const TrainingJob& s);

// The pieces step_costs() is made of, for callers that cache them (the search): the costs of one
// dense or MoE layer for one micro-batch on one GPU — they depend on the system, the model, tp,
// cp, ep, micro_batch, sequence parallelism, recompute, precision and (ZeRO-3 only) dp — and the
// assembly of stages from them. `comms`, when given, receives the collectives with their counts.
[[nodiscard]] LayerCost layer_cost(const TrainingJob& s, bool moe_layer, std::vector<CommEvent>* comms = nullptr);
// Activation offload's exposed copy time per layer and micro-batch (the mean over the model's `layers`), one
// way: `share` of the layers offloaded, `copy_s` one layer's activations over the host link, `compute_s` a
// layer's compute in that direction; the copies run back to back behind the later layers' compute
// (docs/step-time-model.md). One definition for layer_cost() and the search's fast path.
[[nodiscard]] double offload_exposed_s(double share, double copy_s, int layers, double compute_s);

// DeepSpeed ZeRO-3 (stage 3 of deepspeed/runtime/zero, docs/step-time-model.md "DeepSpeed ZeRO-3"):
// one weight matrix of a layer with the compute of its segment (its GEMMs and the parameter-free
// operators up to the next weight's hook) and the time of one all-gather and one reduce-scatter of it
// over its data-parallel group.
struct Zero3Unit {
    std::string name;
    double params = 0;   // elements per TP rank, before sharding
    double fwd_s = 0, bwd_s = 0, redo_s = 0;
    bool expert = false;
    double gather_s = 0, reduce_s = 0;
};

// The stage-3 settings that decide what is gathered when (DeepSpeed's defaults, the same from v0.3.13,
// deepspeed/runtime/zero/constants.py, to today's config.py): parameters below the persistence
// threshold stay gathered; the next parameter is prefetched only while fewer than max_live elements
// are gathered; a released parameter is kept when its next use is fewer than max_reuse elements away.
struct DeepSpeedZero3 {
    double max_live = 1e9;        // stage3_max_live_parameters
    double max_reuse = 1e9;       // stage3_max_reuse_distance
    double persistence = 1e5;     // stage3_param_persistence_threshold
    bool prefetch = true;         // overlap_param_gather (DeepSpeed's overlap_comm)
    bool overlap_reduce = true;   // overlap_grad_reduce
    bool recompute = false;       // full activation recompute: the checkpointed forward gathers again
};

struct Zero3Exposure {
    double fwd_exposed_s = 0, bwd_exposed_s = 0;   // per layer and micro-batch (bwd: recompute included)
    double fwd_total_s = 0, bwd_total_s = 0;       // collective time, hidden or not
    double gathers = 0, reduces = 0;               // collectives per layer and micro-batch
    std::vector<double> unit_gathers;              // all-gathers of each unit per layer and micro-batch
};

// Exposure of one layer's gathers and reduce-scatters when every parameter is its own collective,
// prefetched one parameter ahead behind the current parameter's segment (units in forward order,
// gather_s/reduce_s filled; the layer's neighbours are taken to be like it).
[[nodiscard]] Zero3Exposure deepspeed_zero3_exposure(std::span<const Zero3Unit> units, const DeepSpeedZero3& ds);
[[nodiscard]] StepCosts assemble_step_costs(const TrainingJob& s, const LayerCost& dense, const LayerCost& moe,
                                            std::vector<CommEvent>* comms = nullptr);

struct StepBreakdown {
    double compute = 0, tp_comm = 0, cp_comm = 0, ep_comm = 0, pp_comm = 0, dp_comm = 0, bubble = 0, optimizer = 0,
           exposed_comm = 0;
    double offload = 0;   // activation-offload copies over the host link not hidden by compute
};

struct StepEstimate {
    double step_time_s = 0;
    double pipeline_time_s = 0;
    double tokens_per_step = 0;
    double tokens_per_s = 0;
    double tokens_per_s_per_gpu = 0;
    double model_flops_per_step = 0;
    double hardware_flops_per_step = 0;
    double mfu = 0;
    double hfu = 0;
    double bubble_fraction = 0;
    double achieved_tflops_per_gpu = 0;   // model FLOPs / s / GPU
    std::int64_t microbatches = 1;
    int critical_stage = 0;
    StepBreakdown breakdown;
    std::string dominant;   // largest breakdown component
    std::string method = "closed-form";
    // Token budget (training.token_budget): wall time and GPU-hours.
    double token_budget = 0, train_days = 0, gpu_hours = 0;
    TrainingFlops flops;
    MemoryBreakdown memory;
    StepCosts costs;
};

// A run of `count` identical consecutive pipeline stages starting at `first` (count 1: one stage):
// what the closed-form pipeline and the step's tail need of them. estimate_step() passes one run per
// stage; the search's fast path passes its runs of identical stages (the same arithmetic, so the two
// agree to rounding: tests/test_search_fast_eval.cpp).
struct StageRun {
    int first = 0, count = 1;
    double fwd_s = 0, bwd_s = 0, wgrad_s = 0;   // one micro-batch through one stage of the run
    double work_s = 0;   // compute plus exposed TP/CP/EP/ZeRO-3/blocking PP communication of that
    double dp_grad_s = 0, dp_sm_fraction = 0, dp_param_gather_s = 0, optimizer_s = 0;
};

struct PipelinePlay {
    double pipeline_s = 0;          // m·t_max + the schedule's bubble
    double bubble_s = 0;            // the schedule's closed-form bubble
    double reported_bubble_s = 0;   // plus whatever the pipeline holds beyond the critical stage's work
    int critical_stage = 0;         // the first stage of the busiest run
};
// The schedule's closed form (schedules/: PipelineTimes -> bubble) over the stages.
[[nodiscard]] PipelinePlay closed_form_pipeline(const ScheduleDef& schedule, int vp, std::int64_t microbatches,
                                                std::span<const StageRun> runs);

// What follows the last backward: the exposed data-parallel gradient reduction (stage s has the
// drain of the stages before it as slack and, with overlap, its own last backward; the hidden part
// slows that backward by its share of the SMs), the exposed parameter all-gather (overlapping the
// next step's first forward) and the optimizer step (the slowest stage's).
struct StepTail {
    double dp_exposed_s = 0, gather_exposed_s = 0, optimizer_s = 0;
};
[[nodiscard]] StepTail step_tail(bool overlap_grad_reduce, bool overlap_param_gather, std::span<const StageRun> runs);
// The part of a stage's ZeRO-1/2 parameter all-gather the next step's first forward does not hide.
[[nodiscard]] double exposed_param_gather_s(bool overlap, double gather_s, double first_forward_s);

// Closed-form pipeline schedule over the costs (GPipe and 1F1B (m−1)·t_max + Σ_s t_s; interleaved
// (m − 1/v)·t_max + Σ_s t_s/v; ZB-H1 removes the weight-gradient passes from the bubble).
[[nodiscard]] StepEstimate estimate_step(const TrainingJob& s);
[[nodiscard]] StepEstimate estimate_step(const TrainingJob& s, const StepCosts& costs);

// The largest component of a breakdown, in words ("compute", "pipeline bubble", ...).
[[nodiscard]] const char* dominant_cost(const StepBreakdown& b);

// Fills the report fields (MFU, breakdown, ...) from a pipeline time and bubble measured elsewhere
// (the discrete-event simulator).
void finish_estimate(const TrainingJob& s, StepEstimate& e, double pipeline_s, double bubble_s, int critical_stage);

// Per micro-batch, the stage's own work: compute plus its exposed TP/CP/EP/ZeRO-3/blocking PP time.
[[nodiscard]] double stage_work_s(const StageCost& st);
// The bubble a report shows: the schedule's bubble plus whatever the pipeline holds beyond the
// critical stage's work (uneven stages).
[[nodiscard]] double reported_bubble_s(double pipeline_s, double bubble_s, std::int64_t microbatches,
                                       double critical_work_s);

// One StageRun per stage of the costs (count 1).
[[nodiscard]] std::vector<StageRun> stage_runs(const StepCosts& costs);

}   // namespace llmsim
