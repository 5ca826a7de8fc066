#include "cost_models/flops.hpp"

#include <algorithm>

#include "cost_models/layer/layer.hpp"
#include "cost_models/memory.hpp"
#include "cost_models/model_params.hpp"
#include "cost_models/recompute.hpp"

namespace llmsim {

LayerFlops layer_flops_per_token(const ModelSpec& m, double seq_len, bool moe_layer, bool causal) {
    LayerFlops f;
    for (const auto& op : describe_layer(m, LayerShape{.moe = moe_layer})) {
        if (op.kind == LayerOpKind::attention) {
            // QKᵀ over the query/key width and PV over the value width (equal unless MLA).
            f.attn_core = (causal ? 1.0 : 2.0) * seq_len * (op.attn.q_width + op.attn.out_width);
            continue;
        }
        if (op.kind != LayerOpKind::gemm) continue;
        switch (op.part) {
            case LayerPart::qkv: f.qkv += op.flops_per_token(); break;
            case LayerPart::attn_out: f.attn_out += op.flops_per_token(); break;
            case LayerPart::router: f.router += op.flops_per_token(); break;
            case LayerPart::fc1:
            case LayerPart::fc2:
            case LayerPart::shared_fc1:
            case LayerPart::shared_fc2: f.mlp += op.flops_per_token(); break;
            case LayerPart::none: break;
        }
    }
    return f;
}

InferenceTokenFlops inference_token_flops(const ModelSpec& m, double context, bool causal) {
    InferenceTokenFlops r;
    r.context = context;
    const auto dense = layer_flops_per_token(m, context, false, causal);
    const auto moe = layer_flops_per_token(m, context, true, causal);
    const double n_dense = m.dense_mlp_layers(), n_moe = m.moe_layers();
    r.lm_head = 2.0 * static_cast<double>(m.hidden) * static_cast<double>(m.vocab);
    r.gemm =
        n_dense * (dense.qkv + dense.attn_out + dense.mlp) + n_moe * (moe.qkv + moe.attn_out + moe.mlp) + r.lm_head;
    r.attention = n_dense * dense.attn_core + n_moe * moe.attn_core;
    r.router = n_dense * dense.router + n_moe * moe.router;
    return r;
}

namespace {

// Forward FLOPs per token of one layer that torchtitan's op-level selective recompute runs again
// (op_sac_plan: every other GEMM; SDPA is saved unless attention is unfused).
double op_sac_recompute_flops(const ModelSpec& m, const LayerFlops& f, bool moe_layer, bool flash) {
    return op_sac_plan(m, 1, 1.0, moe_layer).recomputed_flops_per_token + (flash ? 0.0 : f.attn_core);
}

}   // namespace

TrainingFlops training_flops(const ModelSpec& m, const TrainingConfig& t, Framework framework, double full_share) {
    TrainingFlops r;
    const double T = static_cast<double>(t.global_batch) * static_cast<double>(t.seq_len);
    r.tokens_per_step = T;
    const int n_moe = m.moe_layers();
    const int n_dense = m.dense_mlp_layers();
    const auto dense_c = layer_flops_per_token(m, t.seq_len, false, true);
    const auto moe_c = layer_flops_per_token(m, t.seq_len, true, true);
    const auto dense_n = layer_flops_per_token(m, t.seq_len, false, false);
    const auto moe_n = layer_flops_per_token(m, t.seq_len, true, false);
    const double logits = 2.0 * static_cast<double>(m.hidden) * static_cast<double>(m.vocab);

    auto fwd_model = [&](const LayerFlops& d, const LayerFlops& e) {
        return n_dense * (d.total() - d.router) + n_moe * (e.total() - e.router) + logits;
    };
    const double fwd_causal = fwd_model(dense_c, moe_c);
    const double fwd_noncausal = fwd_model(dense_n, moe_n);
    r.model_flops_per_step = 3.0 * T * fwd_causal;
    r.model_flops_per_step_noncausal = 3.0 * T * fwd_noncausal;
    r.logits_flops_per_step = 3.0 * T * logits;

    // As executed: FlashAttention skips masked blocks (causal count); unfused attention computes
    // the full score matrix. Routers are executed.
    const auto& d_ex = t.flash_attention ? dense_c : dense_n;
    const auto& e_ex = t.flash_attention ? moe_c : moe_n;
    const double fwd_exec = n_dense * d_ex.total() + n_moe * e_ex.total() + logits;
    r.forward_flops_per_step = T * fwd_exec;
    double recompute = 0;
    if (op_level_selective(framework, t.recompute))
        recompute = n_dense * op_sac_recompute_flops(m, d_ex, false, t.flash_attention) +
                    n_moe * op_sac_recompute_flops(m, e_ex, true, t.flash_attention);
    else if (t.recompute == Recompute::selective)
        recompute = n_dense * d_ex.attn_core + n_moe * e_ex.attn_core;
    else if (t.recompute == Recompute::full)
        recompute = std::clamp(full_share, 0.0, 1.0) * (n_dense * d_ex.total() + n_moe * e_ex.total());
    r.recompute_flops_per_step = T * recompute;
    r.hardware_flops_per_step = 3.0 * T * fwd_exec + r.recompute_flops_per_step;
    if (t.finetune.method != FinetuneConfig::Method::none) {
        // LoRA / QLoRA: count what the step runs (docs/flops-model.md, "LoRA"). The frozen base computes
        // no weight gradients: each of its GEMMs (the LM head too) runs forward and for the activation
        // gradient, 2x; the attention core has no weights, 3x; the adapters train in full, 6 FLOPs per
        // adapter parameter per token (and one more forward of them where full recompute re-runs layers).
        auto core = [&](const LayerFlops& d, const LayerFlops& e) {
            return n_dense * d.attn_core + n_moe * e.attn_core;
        };
        const double adapter_params = static_cast<double>(m.layers) * lora_params_per_layer(m, t.finetune);
        const double adapters = 6.0 * adapter_params;
        r.model_flops_per_step = T * (2.0 * fwd_causal + core(dense_c, moe_c) + adapters);
        r.model_flops_per_step_noncausal = T * (2.0 * fwd_noncausal + core(dense_n, moe_n) + adapters);
        r.logits_flops_per_step = 2.0 * T * logits;
        if (t.recompute == Recompute::full)
            r.recompute_flops_per_step += T * std::clamp(full_share, 0.0, 1.0) * 2.0 * adapter_params;
        r.hardware_flops_per_step = T * (2.0 * fwd_exec + core(d_ex, e_ex) + adapters) + r.recompute_flops_per_step;
    }
    r.model_flops_per_token = r.model_flops_per_step / T;
    r.hardware_flops_per_token = r.hardware_flops_per_step / T;
    r.six_n_flops_per_token = 6.0 * count_parameters(m).active;
    const double h = static_cast<double>(m.hidden), s = static_cast<double>(t.seq_len), l = m.layers,
                 V = static_cast<double>(m.vocab);
    r.narayanan_flops_per_step =
        96.0 * static_cast<double>(t.global_batch) * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
    return r;
}

}   // namespace llmsim
