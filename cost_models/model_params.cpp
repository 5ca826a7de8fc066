#include "cost_models/model_params.hpp"

#include <algorithm>

#include "cost_models/layout.hpp"

namespace llmsim {

double mlp_params(const ModelSpec& m, double f) {
    const double h = static_cast<double>(m.hidden);
    if (m.mlp == MlpKind::swiglu) return 3.0 * h * f + (m.bias ? 2.0 * f + h : 0.0);
    return 2.0 * h * f + (m.bias ? f + h : 0.0);
}

namespace {
// The two latent norms (the Q latent's when Q has one, the KV latent's).
double mla_latent_norm_params(const ModelSpec& m) {
    return static_cast<double>(m.mla.q_lora_rank + m.mla.kv_lora_rank);
}
// The down-projection matrices: hidden -> Q latent (when Q has one), hidden -> KV latent + RoPE key.
double mla_down_projection_weights(const ModelSpec& m) {
    const double h = static_cast<double>(m.hidden);
    return h * static_cast<double>(m.mla.q_lora_rank + m.mla.kv_lora_rank + m.mla.qk_rope_head_dim);
}
}   // namespace

double mla_down_projection_params(const ModelSpec& m) {
    if (!m.mla.enabled()) return 0.0;
    return mla_down_projection_weights(m) + mla_latent_norm_params(m);
}

double mla_projection_weights(const ModelSpec& m) {
    const double h = static_cast<double>(m.hidden), H = m.heads;
    const double rq = static_cast<double>(m.mla.q_lora_rank), rkv = static_cast<double>(m.mla.kv_lora_rank);
    const double q_up = (rq > 0 ? rq : h) * H * static_cast<double>(m.head_dim);   // Q from its latent (or h)
    // K (no-RoPE part) and V of every head from the KV latent.
    const double kv_up = rkv * H * static_cast<double>(m.qk_nope_head_dim() + m.v_head());
    return mla_down_projection_weights(m) + q_up + kv_up;
}

double mla_attention_params(const ModelSpec& m) {
    const double h = static_cast<double>(m.hidden);
    return mla_projection_weights(m) + mla_latent_norm_params(m) + static_cast<double>(m.v_dim()) * h +
           (m.bias ? h : 0.0);
}

ParamCounts count_parameters(const ModelSpec& m) {
    ParamCounts c;
    const double h = static_cast<double>(m.hidden);
    const double q = static_cast<double>(m.q_dim());
    const double kv = static_cast<double>(m.kv_dim());
    const double norm = m.norm == NormKind::layernorm ? 2.0 * h : h;

    c.embedding = static_cast<double>(m.vocab) * h;
    c.position = m.position == PositionKind::learned ? static_cast<double>(m.max_seq_len) * h : 0.0;
    c.output = m.tied_embeddings ? 0.0 : static_cast<double>(m.vocab) * h;
    c.final_norm = norm;

    if (m.mla.enabled()) {
        c.attention_per_layer = mla_attention_params(m);
    } else {
        c.attention_per_layer = h * q + 2.0 * h * kv + q * h;
        // Transformer-XL relative positions (Gopher, Chinchilla): one h×q projection per layer.
        if (m.position == PositionKind::relative) c.attention_per_layer += h * q;
        if (m.bias)
            c.attention_per_layer += q + 2.0 * kv + h;
        else if (m.qkv_bias)
            c.attention_per_layer += q + 2.0 * kv;
    }
    c.norms_per_layer = (m.parallel_block ? 1.0 : 2.0) * norm;
    c.dense_mlp_per_layer = mlp_params(m, static_cast<double>(m.ffn_hidden));
    if (m.moe.enabled()) {
        const double expert = mlp_params(m, static_cast<double>(m.moe.expert_ffn_hidden));
        const double shared = m.moe.shared_experts * mlp_params(m, static_cast<double>(m.moe.shared_expert_ffn_hidden));
        const double router = h * m.moe.experts;
        c.expert_params_per_layer = m.moe.experts * expert;
        c.moe_mlp_per_layer = router + c.expert_params_per_layer + shared;
        c.moe_mlp_active_per_layer = router + m.moe.top_k * expert + shared;
    }
    c.dense_layer = c.attention_per_layer + c.norms_per_layer + c.dense_mlp_per_layer;
    c.moe_layer = c.attention_per_layer + c.norms_per_layer + c.moe_mlp_per_layer;

    const double n_moe = m.moe_layers();
    const double n_dense = m.dense_mlp_layers();
    const double outside = c.embedding + c.position + c.output + c.final_norm;
    c.total = outside + n_dense * c.dense_layer + n_moe * c.moe_layer;
    c.active = outside + n_dense * c.dense_layer +
               n_moe * (c.attention_per_layer + c.norms_per_layer + c.moe_mlp_active_per_layer);
    c.non_embedding = c.total - c.embedding - c.position - c.output;
    return c;
}

double kv_heads_per_tp_rank(const ModelSpec& m, int tp) {
    return std::max(1.0, static_cast<double>(m.kv_heads) / std::max(1, tp));
}

double kv_cache_elements_per_token_layer(const ModelSpec& m, int tp) {
    // MLA caches the latent and the shared RoPE key, whole on every TP rank (vLLM, SGLang, TensorRT-LLM);
    // otherwise K and V of the rank's KV heads.
    if (m.mla.enabled()) return static_cast<double>(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim);
    return 2.0 * kv_heads_per_tp_rank(m, tp) * static_cast<double>(m.head_dim);
}

namespace {
// K and V projection weights (and biases) for `kv_heads` heads.
double kv_projection_params(const ModelSpec& m, double kv_heads) {
    const double kv = kv_heads * static_cast<double>(m.head_dim);
    return 2.0 * static_cast<double>(m.hidden) * kv + (m.bias || m.qkv_bias ? 2.0 * kv : 0.0);
}
}   // namespace

double layer_params_per_tp_rank(const ModelSpec& m, const ParamCounts& pc, int tp, bool moe_layer) {
    const double layer = moe_layer ? pc.moe_layer - pc.expert_params_per_layer : pc.dense_layer;
    if (m.mla.enabled()) {
        // Megatron-Core's MLA keeps the down-projections whole on every TP rank (parallel mode
        // "duplicated"); the up-projections are column-parallel, the output projection row-parallel.
        const double whole = mla_down_projection_params(m);
        return (layer - whole) / std::max(1, tp) + whole;
    }
    const double kv_all = kv_projection_params(m, m.kv_heads);
    return (layer - kv_all) / std::max(1, tp) + kv_projection_params(m, kv_heads_per_tp_rank(m, tp));
}

double embedding_params_on_stage(const ModelSpec& m, const ParamCounts& pc, const ParallelConfig& p, int stage) {
    double out = 0;
    if (stage == 0) out += pc.embedding / p.tp + pc.position;
    if (stage == p.pp - 1) {
        if (!m.tied_embeddings)
            out += pc.output / p.tp;
        else if (p.pp > 1)
            out += pc.embedding / p.tp;
    }
    return out;
}

StageParams stage_parameters(const ModelSpec& m, const ParamCounts& pc, const ParallelConfig& p, int stage) {
    const int layers = layers_per_stage(m.layers, p.pp)[static_cast<std::size_t>(stage)];
    const int moe = moe_layers_on_stage(m, p.pp, stage);
    const int dense = layers - moe;
    const double tp = p.tp;
    StageParams r;
    r.dense = dense * layer_params_per_tp_rank(m, pc, p.tp, false) + moe * layer_params_per_tp_rank(m, pc, p.tp, true) +
              embedding_params_on_stage(m, pc, p, stage);
    if (stage == p.pp - 1) r.dense += pc.final_norm;
    r.expert = moe * pc.expert_params_per_layer / (tp * p.ep);
    return r;
}

std::vector<double> layer_weight_matrices(const ModelSpec& m, const ParamCounts& pc, int tp, bool moe_layer) {
    if (m.mla.enabled() || (moe_layer && m.moe.enabled())) return {layer_params_per_tp_rank(m, pc, tp, moe_layer)};
    const double h = static_cast<double>(m.hidden), t = std::max(1, tp);
    const double kv_local = kv_heads_per_tp_rank(m, tp) * static_cast<double>(m.head_dim);
    const double gate = m.mlp == MlpKind::swiglu ? 2.0 : 1.0;
    const double f = static_cast<double>(m.ffn_hidden);
    return {h * (static_cast<double>(m.q_dim()) / t + 2.0 * kv_local), static_cast<double>(m.v_dim()) / t * h,
            gate * f / t * h, f / t * h};
}

}   // namespace llmsim
