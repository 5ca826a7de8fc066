// The block-kind tables of a layer (cost_models/layer/layer.hpp) and the layer around the blocks.
// To add an attention (or MLP) kind: write cost_models/layer/impl/NAME.cpp (declare it in
// impl/impl.hpp) and add one entry to kAttentionKinds (kMlpKinds) below, before the kinds it refines.
// Nothing else names a block kind.
#include <cmath>
#include <stdexcept>
#include <string_view>

#include "cost_models/layer/impl/impl.hpp"
#include "cost_models/layer_bytes.hpp"

namespace llmsim {

namespace {

namespace li = layer_impl;

// The first entry that applies describes the block; the last applies to every model.
constexpr AttentionKindDef kAttentionKinds[] = {
    {"mla", "multi-head latent attention: latent KV cache, up-projected K/V, duplicated down-projections",
     li::mla::applies, li::mla::describe, li::mla::text},
    {"mha", "multi-head and grouped-query attention: fused QKV, whole K/V heads per TP rank", li::mha::applies,
     li::mha::describe, li::mha::text},
};

constexpr MlpKindDef kMlpKinds[] = {
    {"moe", "router, dispatch and combine, top-k routed experts (grouped, over ep), shared experts", li::moe::applies,
     li::moe::describe, li::moe::summary},
    {"dense", "fc1 (gate and up when gated), activation, fc2", li::dense_mlp::applies, li::dense_mlp::describe,
     nullptr},
};

LayerOp layer_pass(const char* name, ElementwiseKind kind, double n, double div) {
    LayerOp op;
    op.kind = LayerOpKind::pass;
    op.name = name;
    op.pass = kind;
    op.n = n;
    op.div = div;
    return op;
}

}   // namespace

std::span<const AttentionKindDef> attention_kinds() noexcept { return kAttentionKinds; }
std::span<const MlpKindDef> mlp_kinds() noexcept { return kMlpKinds; }

const AttentionKindDef& attention_kind(const ModelSpec& m) noexcept {
    for (const auto& k : kAttentionKinds)
        if (k.applies(m)) return k;
    return kAttentionKinds[std::size(kAttentionKinds) - 1];
}

const MlpKindDef& mlp_kind(const ModelSpec& m, bool moe_layer) noexcept {
    for (const auto& k : kMlpKinds)
        if (k.applies(m, moe_layer)) return k;
    return kMlpKinds[std::size(kMlpKinds) - 1];
}

bool has_moe_layers(const ModelSpec& m) noexcept { return &mlp_kind(m, true) != &mlp_kind(m, false); }

void Layer::add(const LayerOp& op) {
    if (count >= kMaxLayerOps) throw std::logic_error("layer description: more than kMaxLayerOps operations");
    ops[count++] = op;
}

const AttentionShape& Layer::attention() const noexcept {
    for (const auto& op : *this)
        if (op.kind == LayerOpKind::attention) return op.attn;
    static const AttentionShape none;
    return none;
}

double routed_rows_stdev(double rows, double experts) noexcept {
    return rows > 0 && experts > 1 ? std::sqrt(rows * (1.0 - 1.0 / experts)) : 0.0;
}

bool Layer::routed() const noexcept { return routing().experts > 0; }

Layer::Routing Layer::routing() const noexcept {
    for (const auto& op : *this)   // the routed experts' first GEMM: one per expert, top_k rows per token
        if (op.kind == LayerOpKind::gemm && op.experts > 0) return {op.experts, op.rows};
    return {};
}

Layer describe_layer(const ModelSpec& m, const LayerShape& s) {
    Layer l;
    l.attention_kind = &attention_kind(m);
    l.mlp_kind = &mlp_kind(m, s.moe);
    const double h = static_cast<double>(m.hidden);
    const ElementwiseKind norm = m.norm == NormKind::rmsnorm ? ElementwiseKind::rms_norm : ElementwiseKind::layer_norm;
    const double norm_params = m.norm == NormKind::layernorm ? 2.0 * h : h;
    LayerOp norm1 = layer_pass("norm1", norm, h, s.sp_div);
    norm1.params = norm1.active_params = norm_params;
    l.add(norm1);
    l.attention_kind->describe(m, s, l);
    LayerOp residual = layer_pass("dropout_add1", ElementwiseKind::residual, h, s.sp_div);
    residual.k = m.dropout ? 1.0 : 0.0;   // the mask's byte per element
    l.add(residual);
    if (!m.parallel_block) {   // a parallel block's MLP reads the first norm's output
        LayerOp norm2 = norm1;
        norm2.name = "norm2";
        l.add(norm2);
    }
    l.mlp_kind->describe(m, s, l);
    residual.name = "dropout_add2";
    l.add(residual);
    return l;
}

Layer fuse_gemms(const Layer& l) {
    Layer out;
    out.attention_kind = l.attention_kind;
    out.mlp_kind = l.mlp_kind;
    for (const auto& op : l) {
        LayerOp* last = out.count > 0 ? &out.ops[out.count - 1] : nullptr;
        if (op.kind == LayerOpKind::gemm && op.fused && last && last->kind == LayerOpKind::gemm && last->fused &&
            std::string_view(last->fused) == op.fused) {
            last->n += op.n;
            last->params += op.params;
            last->active_params += op.active_params;
            last->params_local += op.params_local;
            continue;
        }
        out.add(op);
        if (op.kind == LayerOpKind::gemm && op.fused) out.ops[out.count - 1].name = op.fused;
    }
    return out;
}

double ffn_width(const Layer& l) noexcept {
    for (const auto& op : l)
        if (op.kind == LayerOpKind::gemm && op.part == LayerPart::fc2) return op.k;
    return 0.0;
}

double pass_bytes(const LayerOp& op, double rows, double e, bool eager) noexcept {
    switch (op.pass) {
        case ElementwiseKind::layer_norm: return 2.0 * e * rows * op.n / op.div;
        case ElementwiseKind::rms_norm:
            return (eager ? eager_rmsnorm_bytes_per_element(e) : 2.0 * e) * rows * op.n / op.div;
        case ElementwiseKind::rope: return (eager ? eager_rope_bytes_per_element(e) : 2.0 * e) * rows * op.n / op.div;
        case ElementwiseKind::residual: return (3.0 * e + op.k) * rows * op.n / op.div;
        case ElementwiseKind::mlp_activation:
            return eager ? eager_mlp_activation_bytes(rows, op.n, op.k, e) : mlp_activation_bytes(rows, op.n, op.k, e);
        case ElementwiseKind::moe_routing: return moe_permute_bytes(rows, op.rows, op.n, e);
    }
    return 0.0;
}

LayerParamSums layer_param_sums(const Layer& l) noexcept {
    LayerParamSums r;
    for (const auto& op : l) {
        switch (op.block) {
            case LayerBlock::layer: r.norms += op.params; break;
            case LayerBlock::attention: r.attention += op.params; break;
            case LayerBlock::mlp:
                r.mlp += op.params;
                r.mlp_active += op.active_params;
                break;
        }
        if (op.experts > 0) r.experts += op.params;
        if (op.shard == Shard::kv_heads) {
            r.kv_heads += op.params;
            r.kv_heads_local += op.params_local;
        }
        if (op.shard == Shard::whole) r.whole += op.params;
    }
    return r;
}

}   // namespace llmsim
