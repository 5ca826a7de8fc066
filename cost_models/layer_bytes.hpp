#pragma once
// Bytes moved by the memory-bound passes of a transformer layer that surround its GEMMs: one
// definition each, used by the training step (cost_models/step_time) and the serving iteration
// (cost_models/inference).

namespace llmsim {

// MoE token routing outside the expert GEMMs: dispatch reads each token's hidden state once and writes
// one copy per chosen expert; combine reads the top_k expert outputs and writes their weighted sum
// (TensorRT-LLM expandInputRows / finalizeMoeRouting, Megatron-Core token permute / unpermute):
// 2·e·tokens·(1 + top_k)·hidden.
[[nodiscard]] constexpr double moe_permute_bytes(double tokens, double top_k, double hidden,
                                                 double bytes_per_element) noexcept {
    return 2.0 * bytes_per_element * tokens * (1.0 + top_k) * hidden;
}

// The activation between fc1 and fc2 run as its own kernel: it reads fc1's output (gate and up halves
// for a gated MLP, gate = 2) and writes fc2's input: e·tokens·ffn·(gate + 1).
[[nodiscard]] constexpr double mlp_activation_bytes(double tokens, double ffn_local, double gate,
                                                    double bytes_per_element) noexcept {
    return bytes_per_element * tokens * ffn_local * (gate + 1.0);
}

}   // namespace llmsim
