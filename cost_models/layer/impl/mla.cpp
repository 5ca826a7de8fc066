// Multi-head latent attention (DeepSeek-V2/V3, Kimi K2): each token caches one latent of kv_lora_rank
// plus a decoupled RoPE key of qk_rope_head_dim shared by all heads; K (its no-RoPE part) and V of every
// head are up-projected from the latent, Q from a latent of q_lora_rank (or from the hidden state).
// Megatron-Core's MLASelfAttention keeps the down-projections and the latent norms whole on every TP
// rank (parallel mode "duplicated"); the up-projections are column-parallel, the output projection
// row-parallel. Serving engines (vLLM, SGLang, TensorRT-LLM) cache the latent whole on every rank;
// prefill up-projects K and V of the context, decode attends in the latent space (FlashMLA) with the
// up-projections absorbed: q_nope·W_UK before and the latent output·W_UV after, one small GEMM per head.
#include <fmt/format.h>

#include "cost_models/layer/impl/impl.hpp"
#include "cost_models/model_params.hpp"

namespace llmsim {

// The parameter helpers model_params.hpp declares (the drills show them term by term).
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

namespace layer_impl::mla {

bool applies(const ModelSpec& m) noexcept { return m.mla.enabled(); }

namespace {

LayerOp gemm(const char* name, double n, double k, double params, Shard shard) {
    LayerOp op;
    op.name = name;
    op.block = LayerBlock::attention;
    op.part = LayerPart::qkv;
    op.n = n;
    op.k = k;
    op.shard = shard;
    op.params = op.active_params = params;
    return op;
}

// A latent's RMSNorm, whole on every rank.
LayerOp latent_norm(const char* name, double width) {
    LayerOp op;
    op.kind = LayerOpKind::pass;
    op.name = name;
    op.block = LayerBlock::attention;
    op.pass = ElementwiseKind::rms_norm;
    op.n = width;
    op.shard = Shard::whole;
    op.params = op.active_params = width;
    return op;
}

}   // namespace

void describe(const ModelSpec& m, const LayerShape& s, Layer& l) {
    const double tp = s.tp, h = static_cast<double>(m.hidden), H = m.heads, hd = static_cast<double>(m.head_dim);
    const double rq = static_cast<double>(m.mla.q_lora_rank), rkv = static_cast<double>(m.mla.kv_lora_rank);
    const double dr = static_cast<double>(m.mla.qk_rope_head_dim), dv = static_cast<double>(m.v_head());
    const double dn = static_cast<double>(m.qk_nope_head_dim());
    const double qd = static_cast<double>(m.q_dim()), heads_local = m.heads / tp;

    if (rq > 0) {
        l.add(gemm("q_down", rq, h, h * rq, Shard::whole));
        l.add(latent_norm("q_norm", rq));
        l.add(gemm("q_up", qd / tp, rq, rq * H * hd, Shard::split));
    } else {
        l.add(gemm("q", qd / tp, h, h * H * hd, Shard::split));
    }
    l.add(gemm("kv_down", rkv + dr, h, h * (rkv + dr), Shard::whole));
    l.add(latent_norm("kv_norm", rkv));
    LayerOp up = gemm("kv_up", heads_local * (dn + dv), rkv, rkv * H * (dn + dv), Shard::split);
    if (s.serving) up.serving = ServingRows::prefill_context;
    l.add(up);
    if (s.serving) {   // decode: the up-projections absorbed, one GEMM per head
        LayerOp uk = gemm("absorb_k", rkv, dn, 0.0, Shard::split);
        uk.batch = heads_local;
        uk.serving = ServingRows::decode_tokens;
        l.add(uk);
        LayerOp uv = gemm("absorb_v", dv, rkv, 0.0, Shard::split);
        uv.batch = heads_local;
        uv.serving = ServingRows::decode_tokens;
        l.add(uv);
    }
    if (m.position == PositionKind::rope) {
        LayerOp rope;
        rope.kind = LayerOpKind::pass;
        rope.name = "rope";
        rope.block = LayerBlock::attention;
        rope.pass = ElementwiseKind::rope;
        rope.n = heads_local * dr + dr;
        l.add(rope);
    }

    LayerOp core;
    core.kind = LayerOpKind::attention;
    core.name = "attention";
    core.block = LayerBlock::attention;
    AttentionShape& a = core.attn;
    a.heads = heads_local;
    a.head_qk = hd;
    a.head_v = dv;
    a.q_width = qd;
    a.out_width = static_cast<double>(m.v_dim());
    a.k_saved = kv_heads_per_tp_rank(m, s.tp) * hd * tp;
    a.v_saved = a.out_width;
    a.latents = rq + rkv;
    a.shared_key = dr;
    // Training, prefill and the context-parallel exchange: per-head K (head_dim) and V (v_head_dim)
    // up-projected in 16 bits. Decode: MQA-like over the cached latent and RoPE key
    // (kv_lora_rank + qk_rope_head_dim for QKᵀ, kv_lora_rank for PV), read once for all heads.
    a.kv_elements = heads_local * (hd + dv);
    a.kv_16bit = true;
    a.cache_elements = static_cast<double>(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim);
    a.decode_qk = a.cache_elements;
    a.decode_v = rkv;
    a.decode_reads = 1.0;
    l.add(core);

    LayerOp out =
        gemm("attn_out", h, static_cast<double>(m.v_dim()) / tp, a.out_width * h + (m.bias ? h : 0.0), Shard::split);
    out.part = LayerPart::attn_out;
    out.row_parallel = true;
    out.fp8_input_cast = true;
    l.add(out);
}

AttentionText text(const ModelSpec& m, double kv_bytes, NumberText num) {
    // The one count is mla_attention_params (above), shown term by term.
    const auto& a = m.mla;
    AttentionText t;
    t.summary = fmt::format("latent {} + RoPE key {} cached per token and layer, q latent {}, head dims q/k {} v {}",
                            a.kv_lora_rank, a.qk_rope_head_dim, a.q_lora_rank, m.head_dim, a.v_head_dim);
    t.given = fmt::format("MLA: q latent r_q = {}, KV latent r_kv = {}, RoPE key d_r = {}, d_qk = {}, d_v = {}",
                          a.q_lora_rank, a.kv_lora_rank, a.qk_rope_head_dim, m.head_dim, a.v_head_dim);
    const std::int64_t dn = m.qk_nope_head_dim();
    const auto args = fmt::make_format_args(m.hidden, a.q_lora_rank, m.heads, m.head_dim, a.kv_lora_rank,
                                            a.qk_rope_head_dim, dn, a.v_head_dim);
    const bool q_latent = a.q_lora_rank > 0;
    t.params.push_back(
        {"attention per layer (MLA: down-projections to the latents, their norms, up-projections, output)",
         q_latent ? "h·r_q + r_q + r_q·H·d_qk + h·(r_kv + d_r) + r_kv + r_kv·H·(d_qk − d_r + d_v) + H·d_v·h"
                  : "h·H·d_qk + h·(r_kv + d_r) + r_kv + r_kv·H·(d_qk − d_r + d_v) + H·d_v·h",
         // h, r_q, H, d_qk, r_kv, d_r, d_qk − d_r, d_v
         fmt::vformat(q_latent
                          ? "{0}·{1} + {1} + {1}·{2}·{3} + {0}·({4} + {5}) + {4} + {4}·{2}·({6} + {7}) + {2}·{7}·{0}"
                          : "{0}·{2}·{3} + {0}·({4} + {5}) + {4} + {4}·{2}·({6} + {7}) + {2}·{7}·{0}",
                      args),
         "K and V of every head come from one shared latent: the cache holds r_kv + d_r per token, not 2·H·d",
         layer_param_sums(describe_layer(m, LayerShape{})).attention});
    t.cache_given = fmt::format("L = {}, MLA latent = {}, shared RoPE key = {}, {} B per element", m.layers,
                                a.kv_lora_rank, a.qk_rope_head_dim, num.num(kv_bytes));
    t.cache = {"per token", "L · (kv_lora_rank + qk_rope_head_dim) · bytes",
               fmt::format("{} · ({} + {}) · {}", m.layers, a.kv_lora_rank, a.qk_rope_head_dim, num.num(kv_bytes)),
               fmt::format("MLA caches one latent per token for all {} heads, not K and V per head "
                           "(MHA would need 2·{}·{} per layer: {:.0f}x more)",
                           m.heads, m.heads, m.head_dim,
                           2.0 * m.heads * static_cast<double>(m.head_dim) /
                               static_cast<double>(a.kv_lora_rank + a.qk_rope_head_dim)),
               0.0};
    return t;
}

}   // namespace layer_impl::mla
}   // namespace llmsim
