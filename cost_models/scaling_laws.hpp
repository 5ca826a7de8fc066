// Compute-optimal scaling (docs/search.md, "Scaling laws"): Chinchilla (Hoffmann et al. 2022,
// arXiv 2203.15556) Approach 3's parametric loss L(N, D) = E + A/N^α + B/D^β with the paper's
// constants and with Epoch AI's replication (Besiroglu et al. 2024, arXiv 2404.10102), its closed-form
// compute-optimal frontier under C = 6·N·D, and Approach 1's Table 3 interpolated log-log.
// Pure functions of numbers; no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hardware_db/specs.hpp"

namespace llmsim {

enum class ScalingFit {
    hoffmann,             // Approach 3 as printed: E 1.69, A 406.4, B 410.7, α 0.34, β 0.28
    hoffmann_unrounded,   // the same fit's unrounded constants (E 1.6934, α 0.3392, β 0.2849)
    epoch,                // Epoch AI replication: E 1.8172, A 482.01, B 2085.43, α 0.3478, β 0.3658
    approach1,            // Hoffmann Table 3 (Approach 1 projections), interpolated log-log
};

[[nodiscard]] const char* to_string(ScalingFit f);
// "hoffmann" | "hoffmann-unrounded" | "epoch" | "approach1"; false if unknown.
[[nodiscard]] bool scaling_fit_from_string(const std::string& s, ScalingFit& out);

struct LossFit {
    double E = 0, A = 0, B = 0, alpha = 0, beta = 0;
};

// The constants of an Approach 3 fit (approach1 has none: its loss is reported with `hoffmann`'s).
[[nodiscard]] LossFit loss_fit(ScalingFit f);

// L(N, D) = E + A/N^α + B/D^β (nats per token).
[[nodiscard]] double chinchilla_loss(const LossFit& f, double n, double d);

// C ≈ 6·N·D (Kaplan et al. 2020; Hoffmann et al. Sec. 2).
[[nodiscard]] inline double training_compute(double params, double tokens) { return 6.0 * params * tokens; }

// The batch (tokens per optimizer step) near-optimal for a budget of C FLOPs: DeepSeek LLM's fit
// B_opt = 0.2920 · C^0.3271 (Bi et al. 2024, arXiv:2401.02954, Sec. 3.1, Eq. 1; fitted on 1e17-3e20 FLOPs
// and used for their 7B and 67B runs on 2T tokens, 9.4M and 18.9M tokens: at C = 6ND the fit gives 9.2M and
// 19.3M).
[[nodiscard]] double optimal_batch_tokens(double flops);

struct ScalingPoint {
    double params = 0;   // N
    double tokens = 0;   // D
    double flops = 0;    // C
    double loss = 0;     // predicted final loss L(N, D)
    double tokens_per_param() const { return params > 0 ? tokens / params : 0.0; }
};

// Approach 3 closed form: G = (αA/(βB))^(1/(α+β)), N_opt = G·(C/6)^(β/(α+β)), D_opt = (C/6)/N_opt.
[[nodiscard]] double optimal_g(const LossFit& fit);

// Compute-optimal N and D for a budget of C FLOPs (6·N·D = C exactly for the Approach 3 fits;
// Approach 1 interpolates N_opt(C) and D_opt(C) separately, so 6·N·D is within Table 3's 4%).
[[nodiscard]] ScalingPoint optimal_for_compute(ScalingFit f, double c);
// The budget (and tokens) for which N parameters are compute-optimal.
[[nodiscard]] ScalingPoint optimal_for_params(ScalingFit f, double n);
// The budget (and parameters) for which D tokens are compute-optimal.
[[nodiscard]] ScalingPoint optimal_for_tokens(ScalingFit f, double d);

// Hoffmann et al. Table 3: (parameters, FLOPs, tokens), Approach 1's projections.
struct Table3Row {
    double params, flops, tokens;
};
[[nodiscard]] const std::vector<Table3Row>& chinchilla_table3();

// Piecewise-linear interpolation in log-log space through (xs, ys), extrapolating with the end
// segments; xs increasing.
[[nodiscard]] double loglog_interpolate(const std::vector<double>& xs, const std::vector<double>& ys, double x);

// A decoder-only model shape of about `params` parameters (embeddings included), Llama style
// (SwiGLU MLP of 8h/3 rounded up to 256, RMSNorm, RoPE, no biases, untied embeddings, head
// dimension 128, 8 KV heads from 32 heads up). Depth and width follow the aspect-ratio rule of
// Kaplan et al. 2020 (loss is flat for d_model/n_layer from ~50 to ~200; GPT-3 175B uses 128):
// among widths on a 256/512/1024 grid, the depth that matches `params` and whose h/L is closest
// to 128, with the parameter count within a few per cent.
[[nodiscard]] ModelSpec model_shape_for_params(double params, std::int64_t vocab = 32000,
                                               std::int64_t max_seq_len = 8192);

// Checkpointing against failures (Young 1974; Daly 2006, "A higher order estimate of the optimum
// checkpoint interval for restart dumps", Future Generation Computer Systems 22(3):303-312). Failures a
// Poisson process of mean M (the job MTBF: node MTBF / nodes); a checkpoint write takes δ, a restart R.
// A segment of τ computed and then written takes the expected wall time M·e^(R/M)·(e^((τ+δ)/M) − 1),
// failures during the write and the restart included (Daly's model, exact for exponential failures;
// Young's first-order waste δ/τ + (τ/2 + R)/M is its limit for δ, τ, R ≪ M and passes 100% waste as δ
// nears M/2). The interval is Daly's second-order optimum τ = sqrt(2δM)·[1 + ⅓·sqrt(δ/(2M)) + δ/(18M)] − δ
// for δ < 2M, else τ = M.
struct CheckpointPlan {
    double job_mtbf_s = 0;
    double interval_s = 0;       // compute time between checkpoints
    double waste_fraction = 0;   // of wall time
    double goodput = 1;          // useful fraction of wall time
    double wall_s = 0;           // wall time for `compute_s` of useful work (0 when `stalls`)
    double expected_interruptions = 0;
    double checkpoints = 0;
    // A segment's expected wall time is past e^kStallExponent of its work: failures come faster than a
    // checkpoint can be written and the job does not progress (goodput 0, no finite wall time).
    bool stalls = false;
};
inline constexpr double kStallExponent = 200;
[[nodiscard]] CheckpointPlan plan_checkpoints(double compute_s, int nodes, double node_mtbf_s, double write_s,
                                              double restart_s = 0);

// Failures that stop a synchronous training job, per GPU-hour, when the user states none: BLOOM's
// training on Jean Zay, "a new cluster with about 400 GPUs, on average we were getting 1-2 GPU failures a
// week" (S. Bekman et al., "The Technology Behind BLOOM Training", huggingface.co/blog/bloom-megatron-
// deepspeed, 2022): 1.5 / (400 · 168 h). Llama 3's 54 days on 16,384 H100s (Llama Team 2024, Sec. 3.3.4:
// 466 job interruptions, 419 unexpected) is the check, not the source: 8.8 a day predicted against 8.6
// (7.8 unexpected).
inline constexpr double kGpuFailuresPerHour = 1.5 / (400.0 * 168.0);
// A node's MTBF (hours) at that rate.
[[nodiscard]] constexpr double default_node_mtbf_hours(int gpus_per_node) noexcept {
    return 1.0 / (kGpuFailuresPerHour * (gpus_per_node > 0 ? gpus_per_node : 1));
}

}   // namespace llmsim
