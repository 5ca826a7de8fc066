#include "cost_models/inference.hpp"

#include <algorithm>
#include <cmath>

#include "cost_models/collectives.hpp"
#include "cost_models/layout.hpp"
#include "cost_models/model_params.hpp"
#include "cost_models/roofline.hpp"

namespace llmsim {

namespace {

// Tensor-core precision that runs a GEMM whose weights are stored at `w`.
Precision compute_precision(const AcceleratorSpec& a, Precision w, Precision requested) {
    if (w == Precision::fp8 && a.peak(Precision::fp8) > 0) return Precision::fp8;
    if (w == Precision::fp4 && a.peak(Precision::fp4) > 0) return Precision::fp4;
    if (a.peak(requested) > 0) return requested;
    return a.peak(Precision::bf16) > 0 ? Precision::bf16 : Precision::fp16;
}

struct PassTime {
    double time_s = 0;
    double compute_s = 0;
    double memory_s = 0;
};

// One forward pass over `tokens` new tokens per sequence for `batch` sequences attending to
// `context` tokens, on one GPU of a TP group (the slowest pipeline stage).
PassTime forward_pass(const ServingJob& s, double batch, double tokens, double context, bool causal_prefill) {
    const auto& m = s.model;
    const auto& a = s.system.gpu;
    const auto& in = s.inference;
    const int tp = s.parallel.tp;
    const auto per = layers_per_stage(m.layers, s.parallel.pp);
    const int layers = *std::max_element(per.begin(), per.end());
    const Precision cp = compute_precision(a, in.weight_precision, in.compute_precision);
    const double wbytes = weight_bytes_per_param(in.weight_precision, in.quant_group_size);
    const double kvb = precision_bytes(in.kv_precision);
    const double M = batch * tokens;
    const double h = static_cast<double>(m.hidden);
    const double kv_local = kv_heads_per_tp_rank(m, tp) * static_cast<double>(m.head_dim);

    PassTime layer;   // one transformer layer
    auto add = [&](const KernelTime& k) {
        layer.time_s += k.time_s;
        (k.compute_bound ? layer.compute_s : layer.memory_s) += k.time_s;
    };
    // Weights at their storage precision (with group scales) read once; 16-bit activations in and out.
    auto linear = [&](double rows, double n, double k, double count) {
        GemmSpec g;
        g.m = rows;
        g.n = n;
        g.k = k;
        g.batch = count;
        g.precision = cp;
        g.a_bytes = 2.0;
        g.b_bytes = wbytes;
        g.c_bytes = 2.0;
        g.launches = count;
        g.sustained = false;
        add(gemm_time(a, g));
    };
    const double f_eff =
        m.moe.enabled() ? static_cast<double>(m.moe.expert_ffn_hidden) : static_cast<double>(m.ffn_hidden);
    const double gate = m.mlp == MlpKind::swiglu ? 2.0 : 1.0;
    linear(M, m.q_dim() / static_cast<double>(tp) + 2.0 * kv_local, h, 1);
    linear(M, h, m.q_dim() / static_cast<double>(tp), 1);
    if (m.moe.enabled()) {
        // Decode touches min(E, batch·tokens·k) experts; prefill all of them.
        const double touched = std::min<double>(m.moe.experts, M * m.moe.top_k);
        const double tokens_per_expert = M * m.moe.top_k / touched;
        linear(tokens_per_expert, gate * f_eff / tp, h, touched);
        linear(tokens_per_expert, h, f_eff / tp, touched);
    } else {
        linear(M, gate * f_eff / tp, h, 1);
        linear(M, h, f_eff / tp, 1);
    }
    // Attention: each sequence's new tokens against its context, reading this step's K/V cache.
    AttentionSpec at;
    at.batch_heads = batch * (m.heads / static_cast<double>(tp));
    at.s_q = tokens;
    at.s_kv = context;
    at.d = static_cast<double>(m.head_dim);
    at.causal = causal_prefill;
    at.precision = cp;
    at.q_o_bytes = 0;
    at.kv_bytes = batch * context * 2.0 * kv_local * kvb;
    at.sustained = false;
    add(attention_time(a, at));
    // Norms, activation, residuals: about 8 elementwise passes over the hidden state (docs).
    for (int i = 0; i < 8; ++i) add(memory_time(a, 2.0 * M * h * 2.0, 0.0, false));
    // Tensor parallelism: two all-reduces of the hidden state per layer.
    if (tp > 1) {
        const auto g = place_group(tp, 1, s.system.scaleup_domain);
        layer.time_s += 2.0 * collective_time(s.system, Collective::all_reduce, M * h * 2.0, g).time_s;
    }
    PassTime r;
    r.time_s = layers * layer.time_s;
    r.compute_s = layers * layer.compute_s;
    r.memory_s = layers * layer.memory_s;
    // LM head on the last token of each sequence (prefill) or each new token (decode), 16-bit.
    GemmSpec head;
    head.m = batch;
    head.n = static_cast<double>(m.vocab) / tp;
    head.k = h;
    head.sustained = false;
    r.time_s += gemm_time(a, head).time_s;
    return r;
}

}   // namespace

InferenceEstimate estimate_inference(const ServingJob& s) {
    InferenceEstimate r;
    const auto& in = s.inference;
    const double b = static_cast<double>(in.batch);
    const double pp = s.parallel.pp;
    const auto prefill = forward_pass(s, b, static_cast<double>(in.input_len), static_cast<double>(in.input_len), true);
    r.ttft_s = prefill.time_s * pp;
    r.prefill_compute_bound = prefill.compute_s >= prefill.memory_s;
    // Decode: average context over the generated tokens.
    const double ctx = static_cast<double>(in.input_len) + static_cast<double>(in.output_len) / 2.0;
    const auto decode = forward_pass(s, b, 1.0, ctx, false);
    r.tpot_s = decode.time_s * pp;
    r.decode_compute_bound = decode.compute_s >= decode.memory_s;
    r.e2e_latency_s = r.ttft_s + static_cast<double>(in.output_len) * r.tpot_s;
    const double replicas = std::max(1, s.gpus() / std::max(1, s.parallel.tp * s.parallel.pp));
    r.output_tokens_per_s = replicas * b * static_cast<double>(in.output_len) / r.e2e_latency_s;
    r.output_tokens_per_s_per_gpu = r.output_tokens_per_s / s.gpus();
    r.memory = inference_memory(s.model, s.system, s.parallel, in);
    return r;
}

}   // namespace llmsim
