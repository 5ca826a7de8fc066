// The discrete-event simulator of one training step (docs/simulator.md).
//
// One representative device per pipeline stage (TP, CP and DP peers of a stage run the same work at
// the same times, so one device stands for all of them). Each device has a compute stream and
// communication streams (TP, CP/EP, PP send forward, PP send backward, DP); see Stream. The pipeline
// schedule (sim/schedules.hpp) orders each stage's F/B/W passes; the simulator adds the cross-stage
// dependencies, pipeline send/recv, bucketed data-parallel gradient reduction overlapped with the
// last backward, a grad-norm barrier, the optimizer step and the ZeRO-1/2 parameter all-gather, plays
// them on the event engine and measures the step, the bubble, per-stage busy/idle, exposed
// communication and the activation memory timeline.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "cost_models/step_time.hpp"
#include "schedules/schedule.hpp"
#include "sim/engine.hpp"

namespace llmsim::sim {

// Streams of one stage's representative device.
enum Stream : int {
    kCompute = 0,
    kTpStream = 1,     // TP collectives (exposed part folded into compute; shown in traces)
    kCpEpStream = 2,   // CP ring exchange / EP all-to-all (likewise)
    kPpFwd = 3,        // send activations to the next stage
    kPpBwd = 4,        // send gradients to the previous stage
    kDpStream = 5,     // gradient buckets, ZeRO-1/2 parameter all-gather
    kStreamsPerStage = 6
};

enum class TaskKind : std::uint8_t { F, B, W, SendAct, SendGrad, GradBucket, Barrier, Optimizer, ParamGather };

// How to play the costs: the schedule and the overlap policies.
struct PipelineSetup {
    const ScheduleDef* schedule = nullptr;   // required
    int vp = 1;                              // model chunks per stage (interleaved)
    bool overlap_grad_reduce = true;         // DP buckets overlap the last micro-batch's backward
    bool overlap_param_gather = true;        // ZeRO-1/2 all-gather overlaps the next step's forward
    bool grads_reduce_scatter = false;       // ZeRO >= 1: buckets are reduce-scatters (for names)
    // Per stage: activation bytes of one micro-batch through all of the stage's layers (empty: 0).
    std::vector<double> activation_bytes;
    // Per stage: DP gradient buckets (empty or 0: one per layer of the stage, at least one).
    std::vector<int> buckets;
};

struct StageStats {
    int stage = 0;
    double busy_s = 0;   // compute stream busy with F/B/W (the pipeline part of the step)
    double idle_s = 0;   // pipeline time − busy
    double last_backward_end_s = 0;
    double grads_reduced_s = 0;   // when this stage's last gradient bucket finished
    double optimizer_end_s = 0;
    double activation_bytes_per_microbatch = 0;
    double peak_activation_bytes = 0;
    double peak_microbatches = 0;   // peak live activations in units of one micro-batch of the stage
};

struct ExposedComm {
    double tp = 0, cp = 0, ep = 0, pp = 0, dp = 0;   // seconds per step on the critical stage
};

struct SimResult {
    const ScheduleDef* schedule = nullptr;
    double step_time_s = 0;       // end of the last optimizer step (+ exposed parameter all-gather)
    double pipeline_time_s = 0;   // end of the last F/B/W pass on any stage
    double bubble_s = 0;          // idle time of the critical stage inside the pipeline time
    double bubble_fraction = 0;   // bubble_s / pipeline_time_s
    double grad_sync_s = 0;       // every stage's gradients reduced (the grad-norm barrier)
    int critical_stage = 0;       // the busiest stage
    ExposedComm exposed;
    std::vector<StageStats> stages;
    std::int64_t tasks = 0, events = 0;
};

// Plays one step. Reusable: keeps its buffers between runs (no per-task heap allocation once warm).
class StepSimulator {
public:
    const SimResult& run(
        const StepCosts& costs,
        const PipelineSetup&
            setup);   // throws ConfigError past limits::kSimPasses (a backstop: simulate() checks first, sim/work_limits)

    const SimResult& result() const { return res_; }
    const Engine& engine() const { return eng_; }

    // Chrome trace event format ({"traceEvents": [...]}, Perfetto / chrome://tracing) of the last run.
    void write_trace(std::ostream& os) const;
    // A compact text Gantt of the last run: one row per stage, each `columns` wide with its label (at
    // least 20 columns of time).
    std::string timeline(int columns = 80) const;

    // Passes (F, B, W) one step may have before the simulator refuses the work (memory: ~100 bytes each).

private:
    void check_work(const ScheduleDef& sched) const;
    void order_passes(const ScheduleDef& sched);
    void add_compute_tasks(const StepCosts& c, const PipelineSetup& setup, bool split);
    void link_stages(const StepCosts& c);
    void add_step_tail(const StepCosts& c, const PipelineSetup& setup);
    void measure(const StepCosts& c, const PipelineSetup& setup);
    std::size_t pass_key(int stage, int chunk, std::int64_t mb) const;

    Engine eng_;
    SimResult res_;
    std::vector<PipeOp> ops_;
    std::vector<std::int32_t> stage_ops_;                   // ops_ offsets per stage (size p+1)
    std::vector<std::int32_t> op_first_;                    // first task of each op
    std::vector<std::int32_t> op_last_;                     // last task of each op (pieces)
    std::vector<std::int32_t> f_task_, b_first_, b_last_;   // per (stage, chunk, mb)
    std::vector<std::int32_t> final_op_;                    // per (stage, chunk): op index of its last gradient pass
    std::vector<std::int32_t> xpred_;                       // per task: its cross-stage dependency (−1 none)
    std::vector<std::int32_t> stage_last_;                  // per stage: last pipeline task
    std::vector<std::int32_t> opt_task_;                    // per stage: optimizer task
    std::vector<int> nbuckets_;                             // per stage: gradient buckets per model chunk
    std::vector<int> last_bucket_;                          // per stage: its last gradient-bucket task
    int barrier_ = -1;                                      // the grad-norm barrier task
    int n_compute_ = 0;                                     // tasks 0..n_compute_-1 are compute passes
    // What the trace needs to know about the last run.
    int p_ = 1, v_ = 1;
    std::int64_t m_ = 1;
    bool reduce_scatter_ = false;
    std::vector<double> chunk_bytes_;                           // per stage
    std::vector<double> tp_share_, cpep_share_, zero3_share_;   // per stage: exposed comm per mb
};

// ---- Scenario level -----------------------------------------------------------------------

struct SimOptions {
    std::string schedule;            // empty: the scenario's schedule
    int straggler_stage = -1;        // slow every pass and collective of this stage ...
    double straggler_factor = 1.0;   // ... by this factor (symmetric peers cannot show stragglers)
};

// The setup the scenario implies (schedule, vp, overlap flags, activation bytes, buckets).
PipelineSetup make_setup(const TrainingJob& s, const StepCosts& costs, const SimOptions& o = {});
// Scales every time of one stage by `factor` (the straggler knob).
void apply_straggler(StepCosts& costs, int stage, double factor);

// estimate_step() played on the simulator: same report fields (finish_estimate), method "simulator".
StepEstimate simulate_step(const TrainingJob& s, const SimOptions& o, StepSimulator& sim);
StepEstimate simulate_step(const TrainingJob& s, const SimOptions& o = {});

// Closed form vs simulator: both step times and, when they differ by more than 2%, why.
struct MethodComparison {
    double closed_form_s = 0, simulator_s = 0, rel_diff = 0;   // (sim − cf) / cf
    bool agree = true;                                         // |rel_diff| <= 2%
    std::string note;
};
MethodComparison compare_methods(const TrainingJob& s, const StepEstimate& cf, const StepEstimate& se,
                                 const SimResult& r);

}   // namespace llmsim::sim
