// Multi-head attention (Vaswani et al. 2017) and its grouped-query form (Ainslie et al. 2023; MQA is
// one KV head): Q, K and V projected from the hidden state (Megatron fuses the three), the attention
// core over whole K/V heads (replicated when tp > kv_heads), the output projection.
#include <fmt/format.h>

#include "cost_models/layer/impl/impl.hpp"
#include "cost_models/model_params.hpp"

namespace llmsim::layer_impl::mha {

bool applies(const ModelSpec&) noexcept { return true; }

namespace {

LayerOp projection(const char* name, double n, double k) {
    LayerOp op;
    op.name = name;
    op.block = LayerBlock::attention;
    op.part = LayerPart::qkv;
    op.fused = "qkv";
    op.n = n;
    op.k = k;
    return op;
}

}   // namespace

void describe(const ModelSpec& m, const LayerShape& s, Layer& l) {
    const double tp = s.tp, h = static_cast<double>(m.hidden), hd = static_cast<double>(m.head_dim);
    const double q = static_cast<double>(m.q_dim()), kv = static_cast<double>(m.kv_dim());
    const double kv_heads_local = kv_heads_per_tp_rank(m, s.tp);
    const double kv_local = kv_heads_local * hd;
    const double heads_local = m.heads / tp;
    const bool qkv_bias = m.bias || m.qkv_bias;

    LayerOp qp = projection("q", q / tp, h);
    qp.params = qp.active_params = h * q + (qkv_bias ? q : 0.0);
    l.add(qp);
    for (const char* name : {"k", "v"}) {
        LayerOp p = projection(name, kv_local, h);
        p.shard = Shard::kv_heads;
        p.params = p.active_params = h * kv + (qkv_bias ? kv : 0.0);
        p.params_local = h * kv_local + (qkv_bias ? kv_local : 0.0);
        l.add(p);
    }
    if (m.position == PositionKind::relative) {
        // Transformer-XL relative positions (Gopher, Chinchilla): one h×q projection per layer.
        LayerOp r;
        r.kind = LayerOpKind::weights;
        r.name = "relative_position";
        r.block = LayerBlock::attention;
        r.params = r.active_params = h * q;
        l.add(r);
    }
    if (m.position == PositionKind::rope) {
        LayerOp rope;
        rope.kind = LayerOpKind::pass;
        rope.name = "rope";
        rope.block = LayerBlock::attention;
        rope.pass = ElementwiseKind::rope;
        rope.n = q / tp + kv_local;
        l.add(rope);
    }

    LayerOp core;
    core.kind = LayerOpKind::attention;
    core.name = "attention";
    core.block = LayerBlock::attention;
    AttentionShape& a = core.attn;
    a.heads = heads_local;
    a.head_qk = hd;
    a.head_v = static_cast<double>(m.v_head());
    a.q_width = q;
    a.out_width = static_cast<double>(m.v_dim());
    a.k_saved = a.v_saved = kv_local * tp;
    a.cache_elements = 2.0 * kv_heads_local * hd;
    a.kv_elements = a.cache_elements;
    a.decode_qk = a.decode_v = hd;
    // A decode kernel with one thread block per query head reads its KV head's cache once per query
    // head of the group (TensorRT-LLM's masked multi-head attention before XQA).
    a.decode_reads = heads_local / kv_local * hd;
    l.add(core);

    LayerOp out;
    out.name = "attn_out";
    out.block = LayerBlock::attention;
    out.part = LayerPart::attn_out;
    out.n = h;
    out.k = static_cast<double>(m.v_dim()) / tp;
    out.row_parallel = true;
    out.fp8_input_cast = true;
    out.params = out.active_params = q * h + (m.bias ? h : 0.0);
    l.add(out);
}

AttentionText text(const ModelSpec& m, double kv_bytes, NumberText num) {
    AttentionText t;
    const double qkv = static_cast<double>(m.hidden) * static_cast<double>(m.q_dim() + 2 * m.kv_dim());
    const bool gqa = m.kv_heads < m.heads;
    t.params.push_back({"QKV projection per layer (GQA: K and V have kv_heads·d columns)", "h·(q + 2·kv)",
                        fmt::format("{}·({} + 2·{})", m.hidden, m.q_dim(), m.kv_dim()),
                        gqa ? "MHA would need 3·h·q; GQA shrinks K and V by heads/kv_heads" : "", qkv});
    t.params.push_back({"attention per layer (QKV + output projection + biases)", "h·(q + 2·kv) + q·h",
                        fmt::format("{} + {}·{}", num.count(qkv), m.q_dim(), m.hidden), "",
                        layer_param_sums(describe_layer(m, LayerShape{})).attention});
    t.cache_given = fmt::format("L = {}, KV heads = {}, head dim = {}, {} B per element", m.layers, m.kv_heads,
                                m.head_dim, num.num(kv_bytes));
    t.cache = {"per token", "2 (K and V) · L · kv_heads · d · bytes",
               fmt::format("2 · {} · {} · {} · {}", m.layers, m.kv_heads, m.head_dim, num.num(kv_bytes)),
               gqa ? "GQA stores kv_heads, not heads: the cache shrinks by heads/kv_heads"
                   : "MHA: every head keeps its own K and V",
               0.0};
    return t;
}

}   // namespace llmsim::layer_impl::mha
