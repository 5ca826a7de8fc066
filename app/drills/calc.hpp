// Worked calculations (`llmsim calc`, the drills' solutions, docs/drills.md): each returns the formula,
// the formula with the numbers filled in, the result with its unit and, where textbooks and real
// systems differ, one line on why. Every number comes from the cost-model functions the simulator
// uses (collectives registry, roofline GemmSpec, schedules registry, memory, flops, scaling laws), so a
// calc and an estimate cannot disagree. Plain structs; cli/ prints them (render() builds the text).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hardware_db/specs.hpp"

namespace llmsim::drills {

// One step of a worked solution: `formula`, then `numbers` (the formula with values), = value unit.
struct Worked {
    std::string label;     // "ring all-reduce"
    std::string formula;   // "T = 2(p−1)/p · M/B + 2(p−1)·α"
    std::string numbers;   // "T = 2·1023/1024 · 350 GB / 100 GB/s"
    double value = 0;      // in `unit`
    std::string unit;      // "s", "GB", "%", "x", ...
    std::string why;       // where textbooks and real systems differ (may be empty)
};

struct Calc {
    std::string title;
    std::vector<std::string> given;   // inputs, one line each
    std::vector<Worked> steps;
    std::size_t answer = 0;   // the headline step
    std::string note;         // closing remark (may be empty)
    const Worked& result() const { return steps.at(answer); }
};

// The text `llmsim calc` prints and a drill shows as its solution.
[[nodiscard]] std::string render(const Calc& c);

// A number with 3 significant digits, no exponent between 1e-3 and 1e6 ("6.99", "350", "0.0412").
[[nodiscard]] std::string num(double v);
// Bytes in decimal units ("350 GB"), seconds ("6.99 s", "412 ms", "3.2 days"), FLOPs ("1.2 PFLOP").
[[nodiscard]] std::string bytes_str(double b);
[[nodiscard]] std::string seconds_str(double s);
[[nodiscard]] std::string flops_str(double f);
[[nodiscard]] std::string count_str(double n);   // "175B", "12.9M"

// --- communication ----------------------------------------------------------------------------
struct CollectiveQuery {
    double bytes = 0;                     // the all-reduce buffer
    int ranks = 2;                        // p
    double GBps = 0;                      // link bandwidth per rank, per direction (1e9 B/s)
    double alpha_s = 0;                   // per-step latency
    const SystemSpec* system = nullptr;   // also price every registry algorithm on this system
};
// Ring, NCCL's pipelined tree and the textbook (unpipelined) tree on one link; with a system, every
// algorithm of the collectives registry and the one NCCL's tuner would pick. Headline: ring.
[[nodiscard]] Calc all_reduce_calc(const CollectiveQuery& q);
// The textbook binary tree all-reduce without pipelining: reduce up then broadcast down, the whole
// buffer on every level: 2·log2(p)·(α + M/B).
[[nodiscard]] double textbook_tree_all_reduce_time(int n, double bytes, double alpha_s, double bw_Bps) noexcept;

// Megatron tensor parallelism: per layer and micro-batch, 2 all-reduces forward and 2 backward of
// s·b·h activations (sequence parallelism: all-gather + reduce-scatter pairs, same volume).
[[nodiscard]] Calc tp_comm_calc(const ModelSpec& m, std::int64_t seq, std::int64_t micro_batch, int tp, bool sp,
                                double GBps);
// Bytes one GPU sends per step: DDP all-reduce 2(n−1)/n·Ψ vs FSDP/ZeRO-3 3(n−1)/n·Ψ (ZeRO paper Sec. 7).
[[nodiscard]] Calc fsdp_vs_ddp_calc(double params, int ranks, double bytes_per_param);

// --- compute ----------------------------------------------------------------------------------
// Arithmetic intensity of C[m×n] = A[m×k]·B[k×n] and its roofline bound on `gpu` (roofline gemm_time).
[[nodiscard]] Calc gemm_calc(const AcceleratorSpec& gpu, double m, double n, double k, Precision p);
// FLOPs per token: training 6·N vs llmsim's count (attention, logits); inference 2·N (+ attention).
[[nodiscard]] Calc flops_per_token_calc(const ModelSpec& m, std::int64_t seq);
// MFU from measured tokens/s: model FLOPs per token · tokens/s / (GPUs · peak).
[[nodiscard]] Calc mfu_calc(const ModelSpec& m, std::int64_t seq, double tokens_per_s, int gpus,
                            const AcceleratorSpec& gpu, Precision p);
// Days, GPU-hours and cost of 6·N·D FLOPs at a given MFU.
[[nodiscard]] Calc training_time_calc(double params, double tokens, int gpus, double peak_flops, double mfu,
                                      double usd_per_gpu_hour);

// --- pipeline and scaling ---------------------------------------------------------------------
// Bubble of `schedule` (schedules registry bubble_s) for p stages, m micro-batches, v chunks, equal
// stages; `wgrad_share` = weight-gradient share of a stage's forward+backward (zero-bubble).
[[nodiscard]] Calc bubble_calc(const ScheduleDef& schedule, int p, std::int64_t m, int v,
                               double wgrad_share = 1.0 / 3.0);
[[nodiscard]] Calc amdahl_calc(double serial_fraction, int p);
[[nodiscard]] Calc gustafson_calc(double serial_fraction, int p);
// Strong (same problem) or weak (same work per GPU) scaling efficiency from two measurements.
[[nodiscard]] Calc scaling_efficiency_calc(int p1, double t1_s, int p2, double t2_s, bool weak);
// Global batch = micro-batch · data-parallel ranks · accumulation steps.
[[nodiscard]] Calc grad_accum_calc(std::int64_t global_batch, std::int64_t micro_batch, int dp, std::int64_t seq);

// --- memory -----------------------------------------------------------------------------------
[[nodiscard]] Calc params_calc(const ModelSpec& m);
// Model states (weights, gradients, optimizer) per GPU with ZeRO `stage` over `dp` ranks (training_memory).
[[nodiscard]] Calc model_states_calc(const ModelSpec& m, int dp, int zero_stage);
// Activations of one layer (layer_activations) and of the model, with and without full recompute, and
// √L checkpointing: √L checkpoints, memory ≈ (L/k + k)·A, one extra forward.
[[nodiscard]] Calc activations_calc(const ModelSpec& m, std::int64_t seq, std::int64_t micro_batch, int tp, bool sp);
[[nodiscard]] Calc checkpointing_calc(int layers, double layer_bytes);
// KV cache bytes per token and for a batch, and the largest batch that fits (inference_memory).
[[nodiscard]] Calc kv_cache_calc(const ModelSpec& m, const AcceleratorSpec& gpu, std::int64_t context,
                                 std::int64_t batch, Precision kv, Precision weights);
// Decode bound: each step reads the weights and the batch's KV cache from HBM.
[[nodiscard]] Calc decode_bound_calc(const ModelSpec& m, const AcceleratorSpec& gpu, std::int64_t batch,
                                     std::int64_t context, Precision weights);
// Little's law: sequences in flight = arrival rate · time in system; their KV cache.
[[nodiscard]] Calc littles_law_calc(double requests_per_s, double latency_s, double kv_bytes_per_seq);
// Speculative decoding: E = (1−α^(k+1))/(1−α) tokens per target pass, speedup E/(k·c + 1).
[[nodiscard]] Calc speculative_calc(double alpha, int k, double draft_cost_ratio);
// LoRA/QLoRA memory: frozen base (16-bit or NF4), adapters with their gradients and Adam states.
[[nodiscard]] Calc lora_calc(const ModelSpec& m, int rank, bool qlora);
// RLHF (PPO): actor and critic trained, reference and reward frozen (same size by default).
[[nodiscard]] Calc rlhf_calc(const ModelSpec& m);
// Chinchilla: D = 20·N beside the fitted laws (Approach 3 and Epoch's replication).
[[nodiscard]] Calc chinchilla_calc(double params);

}   // namespace llmsim::drills
