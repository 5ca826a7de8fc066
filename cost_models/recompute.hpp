#pragma once
// What a selective activation-checkpointing policy keeps and recomputes: one definition, used by the
// activation memory (cost_models/memory), the step time (cost_models/step_time) and the FLOP count
// (cost_models/flops).

#include "hardware_db/specs.hpp"

namespace llmsim {

// `recompute: selective` means what the scenario's framework means by it:
// - Megatron-LM / NeMo / Megatron-Bridge / DeepSpeed (and an unnamed framework): Korthikanti et al. 2022
//   "selective recomputation": only the attention core (softmax, dropout over the s² scores) is
//   recomputed. With FlashAttention that frees only the score tensors it never stored, while
//   Megatron-Core still re-runs the checkpointed attention kernel in backward.
// - torchtitan: selective *op* AC, torchtitan's default (`activation_checkpoint.mode = "selective"`,
//   `selective_ac_option = "op"`; _apply_ac_to_transformer_block's _get_custom_policy): inside each
//   transformer block it counts the aten.mm calls in forward order and saves the output of every
//   odd-numbered one (1st, 3rd, ...), plus the outputs of SDPA (attention output and log-sum-exp) and of
//   reduce-scatters. Everything else (the other GEMMs, norms, RoPE, activation functions, residual adds,
//   all-gathers) is recomputed in backward from the block's input, which the checkpoint keeps.
[[nodiscard]] bool op_level_selective(Framework f, Recompute r) noexcept;

// The forward GEMMs of one transformer block in the order torchtitan's models call them (q, k, v, output
// projection; MLA: q_down, q_up, kv_down, kv_up; then the MLP: gate (w1), up (w3), down (w2), or fc1, fc2
// without a gate; MoE: router, routed experts, shared experts), and what the op-level policy does with
// them: the share of each GEMM group's forward FLOPs that backward recomputes (groups as the step-time
// model runs them: the fused QKV projection, the output projection, fc1 with gate and up, fc2) and the
// elements per token of the outputs it saves on one TP rank.
struct OpSacPlan {
    double qkv = 0, attn_out = 0, fc1 = 0, fc2 = 0, router = 0;   // recomputed share of forward FLOPs
    double shared_fc1 = 0, shared_fc2 = 0;                        // shared experts (MoE)
    double saved_elements_per_token = 0;     // column-parallel outputs at local width; row-parallel h / sp_div
    double recomputed_flops_per_token = 0;   // forward FLOPs of the GEMMs it runs again (this rank)
};

// Share of the transformer layers that backward recomputes under `recompute: full`: 1, unless
// training.recompute_num_layers = N limits it to the first N layers of every model chunk (Megatron's block
// method): Σ over stages and chunks of min(N, layers in the chunk) / layers, the chunks of a stage splitting
// its layers as evenly as they can. 0 for any other policy. One definition for the activation memory, the
// step time and the FLOP count.
[[nodiscard]] double full_recompute_share(int layers, const ParallelConfig& p, const TrainingConfig& t);

// The most layers one model chunk holds (a stage's layers split over its chunks as evenly as they can):
// recompute_num_layers at or above it recomputes every layer.
[[nodiscard]] int max_layers_per_chunk(int layers, const ParallelConfig& p);

// The smallest n in [1, hi] with fits(n), for fits monotone in n (false below some n, true from it on), by
// bisection; 0 when fits(hi) is false. How the search and `explain` find the fewest recomputed or
// offloaded layers that fit.
template <class Fits>
[[nodiscard]] int fewest_satisfying(int hi, const Fits& fits) {
    if (hi < 1 || !fits(hi)) return 0;
    int lo = 1;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (fits(mid))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

// Share of the transformer layers whose activations are offloaded to host memory
// (training.activation_offload_layers / layers; Megatron-Core offloads the first N layers).
[[nodiscard]] double activation_offload_share(int layers, const TrainingConfig& t);

// `sp_div`: tp with sequence parallelism (the row-parallel outputs are reduce-scattered), else 1.
[[nodiscard]] OpSacPlan op_sac_plan(const ModelSpec& m, int tp, double sp_div, bool moe_layer);

}   // namespace llmsim
