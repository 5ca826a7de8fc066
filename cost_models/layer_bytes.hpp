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

// Eager PyTorch (no torch.compile): the reference implementations that torchtitan and Hugging Face
// Llama run, one kernel per op. Forward bytes per element; the backward is priced at twice the forward
// like every memory-bound pass (step_time's `mem`).
//
// RMSNorm (torchtitan's and HF's RMSNorm module: x.float(), pow(2), mean, rsqrt, x·rsqrt, type_as, ·weight):
// read e write 4, read 4 write 4, read 4, read 4 write 4, read 4 write e, read e write e = 28 + 4e
// (36 B in bf16, against 2e = 4 B fused). LayerNorm is one kernel even in eager (F.layer_norm): 2e.
[[nodiscard]] constexpr double eager_rmsnorm_bytes_per_element(double e) noexcept { return 28.0 + 4.0 * e; }
// RoPE on each element of q and k: torchtitan's complex form (float() r e w 4, complex multiply r 4 w 4,
// type_as r 4 w e) = 16 + 2e; HF's rotate_half form (slice-negate, cat, two multiplies, add) moves
// 10e, the same 20 B in bf16. Fused: 2e.
[[nodiscard]] constexpr double eager_rope_bytes_per_element(double e) noexcept { return 16.0 + 2.0 * e; }
// The gated MLP activation silu(gate)·up as two kernels (silu r e w e; multiply r 2e w e): 5e per ffn
// element, against mlp_activation_bytes' 3e fused. An ungated F.gelu is one kernel either way.
[[nodiscard]] constexpr double eager_mlp_activation_bytes(double tokens, double ffn_local, double gate,
                                                          double bytes_per_element) noexcept {
    return gate > 1.0 ? 5.0 * bytes_per_element * tokens * ffn_local
                      : mlp_activation_bytes(tokens, ffn_local, gate, bytes_per_element);
}

}   // namespace llmsim
