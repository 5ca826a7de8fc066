// Parameter counts derived from a ModelSpec (docs/flops-model.md, "Parameters").
#pragma once

#include <vector>

#include "hardware_db/specs.hpp"

namespace llmsim {

struct ParamCounts {
    double embedding = 0;   // V·h input embedding
    double position = 0;    // learned position table
    double output = 0;      // untied LM head V·h (0 when tied)
    double final_norm = 0;
    double attention_per_layer = 0;   // QKV + output projection (+ biases)
    double norms_per_layer = 0;
    double dense_mlp_per_layer = 0;        // a dense-MLP layer's MLP
    double moe_mlp_per_layer = 0;          // a MoE layer's MLP: router + all experts + shared
    double moe_mlp_active_per_layer = 0;   // router + top_k experts + shared
    double expert_params_per_layer = 0;    // routed experts only (sharded by ep)
    double dense_layer = 0;                // one dense layer, all parts
    double moe_layer = 0;                  // one MoE layer, all parts
    double total = 0;
    double active = 0;          // per token (MoE: top_k experts)
    double non_embedding = 0;   // total − embedding − position − output
};

[[nodiscard]] ParamCounts count_parameters(const ModelSpec& m);

// KV heads one tensor-parallel rank holds: kv_heads/tp, or one whole (replicated) head when
// tp > kv_heads — a head is never split (Megatron-Core, TensorRT-LLM and vLLM replicate KV heads).
// The one rule for KV weights, their gradients and optimizer states, the K/V projection FLOPs, the
// KV cache and the context-parallel K/V exchange.
[[nodiscard]] double kv_heads_per_tp_rank(const ModelSpec& m, int tp);

// Elements one TP rank caches per token and layer: K and V of kv_heads_per_tp_rank() heads, or with
// MLA the latent plus the shared RoPE key (kv_lora_rank + qk_rope_head_dim), whole on every rank. The
// one rule for KV-cache bytes.
[[nodiscard]] double kv_cache_elements_per_token_layer(const ModelSpec& m, int tp);

// MLA (DeepSeek-V2/V3) attention parameters of one layer: Q down/up (or direct), KV down (latent and
// shared RoPE key), KV up (K no-RoPE part and V of every head), output projection, the two latent norms;
// and the part of it every TP rank keeps whole (the down-projections and their norms).
[[nodiscard]] double mla_attention_params(const ModelSpec& m);
// The MLA projection matrices of one layer but the output projection (Q down/up or direct, KV down and
// up): the weights the attention's input GEMMs read, 2 FLOPs each per token.
[[nodiscard]] double mla_projection_weights(const ModelSpec& m);
[[nodiscard]] double mla_down_projection_params(const ModelSpec& m);

// Parameters of one layer on one TP rank, routed experts excluded: the K and V projections hold
// kv_heads_per_tp_rank() whole heads, everything else is split by tp.
[[nodiscard]] double layer_params_per_tp_rank(const ModelSpec& m, const ParamCounts& pc, int tp, bool moe_layer);

// The weight matrices of a dense layer on one TP rank, in the order its forward uses them (fused QKV,
// output projection, fc1 with the gate, fc2): what DeepSpeed ZeRO-3 gathers one by one. Other layers
// (MLA, MoE) are returned as one block of layer_params_per_tp_rank().
[[nodiscard]] std::vector<double> layer_weight_matrices(const ModelSpec& m, const ParamCounts& pc, int tp,
                                                        bool moe_layer);

// Parameters of one MLP of width f (two or three matrices, plus biases).
[[nodiscard]] double mlp_params(const ModelSpec& m, double f);

// Embedding-side parameters one GPU of pipeline stage `stage` holds (split by TP): the input embedding
// and learned positions on the first stage, the LM head on the last (with tied embeddings and pp > 1
// the last stage keeps its own copy of the embedding matrix, as Megatron does).
[[nodiscard]] double embedding_params_on_stage(const ModelSpec& m, const ParamCounts& pc, const ParallelConfig& p,
                                               int stage);

// Parameters one GPU of pipeline stage `stage` holds before any ZeRO sharding: the stage's layers
// split by TP (routed experts by TP·EP), the embedding side above and, on the last stage, the final
// norm. `dense` is everything but the routed experts (sharded over dp·cp by ZeRO), `expert` the
// routed experts (sharded over the expert data-parallel group).
struct StageParams {
    double dense = 0, expert = 0;
    double total() const { return dense + expert; }
};
[[nodiscard]] StageParams stage_parameters(const ModelSpec& m, const ParamCounts& pc, const ParallelConfig& p,
                                           int stage);

}   // namespace llmsim
