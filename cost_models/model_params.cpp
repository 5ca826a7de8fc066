#include "cost_models/model_params.hpp"

#include <algorithm>

#include "cost_models/layer/layer.hpp"
#include "cost_models/layout.hpp"

namespace llmsim {

double mlp_params(const ModelSpec& m, double f) {
    const double h = static_cast<double>(m.hidden);
    if (m.mlp == MlpKind::swiglu) return 3.0 * h * f + (m.bias ? 2.0 * f + h : 0.0);
    return 2.0 * h * f + (m.bias ? f + h : 0.0);
}

ParamCounts count_parameters(const ModelSpec& m) {
    ParamCounts c;
    const double h = static_cast<double>(m.hidden);
    const double norm = m.norm == NormKind::layernorm ? 2.0 * h : h;

    c.embedding = static_cast<double>(m.vocab) * h;
    c.position = m.position == PositionKind::learned ? static_cast<double>(m.max_seq_len) * h : 0.0;
    c.output = m.tied_embeddings ? 0.0 : static_cast<double>(m.vocab) * h;
    c.final_norm = norm;

    const LayerParamSums dense = layer_param_sums(describe_layer(m, LayerShape{}));
    c.attention_per_layer = dense.attention;
    c.norms_per_layer = dense.norms;
    c.dense_mlp_per_layer = dense.mlp;
    const Layer moe_layer = describe_layer(m, LayerShape{.moe = true});
    if (moe_layer.routed()) {
        const LayerParamSums moe = layer_param_sums(moe_layer);
        c.expert_params_per_layer = moe.experts;
        c.moe_mlp_per_layer = moe.mlp;
        c.moe_mlp_active_per_layer = moe.mlp_active;
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
    return describe_layer(m, LayerShape{.tp = std::max(1, tp)}).attention().cache_elements;
}

double layer_params_per_tp_rank(const ModelSpec& m, const ParamCounts& pc, int tp, bool moe_layer) {
    const Layer l = describe_layer(m, LayerShape{.tp = std::max(1, tp), .moe = moe_layer});
    const double layer = l.routed() ? pc.moe_layer - pc.expert_params_per_layer : pc.dense_layer;
    // K/V projections hold whole heads on every rank (kv_heads_per_tp_rank), MLA's down-projections and
    // latent norms are whole on every rank (Megatron-Core's "duplicated"); the rest is split by tp.
    const LayerParamSums s = layer_param_sums(l);
    return (layer - s.kv_heads - s.whole) / std::max(1, tp) + s.kv_heads_local + s.whole;
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
    const Layer l = describe_layer(m, LayerShape{.tp = std::max(1, tp), .moe = moe_layer});
    // A layer with weights whole on every rank or routed experts is one block.
    const LayerParamSums s = layer_param_sums(l);
    if (s.whole > 0 || s.experts > 0) return {layer_params_per_tp_rank(m, pc, tp, moe_layer)};
    // One matrix per GEMM as the framework runs them (fused GEMMs are one matrix), in the forward's order.
    std::vector<double> out;
    for (const auto& op : fuse_gemms(l))
        if (op.kind == LayerOpKind::gemm) out.push_back(op.n * op.k);
    return out;
}

}   // namespace llmsim
