#include "cost_models/inference.hpp"

#include <algorithm>
#include <cmath>

#include "cost_models/collectives.hpp"
#include "cost_models/layer_bytes.hpp"
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

struct Acc {
    double time_s = 0, compute_s = 0, memory_s = 0;
    void add(const KernelTime& k) {
        time_s += k.time_s;
        (k.compute_bound ? compute_s : memory_s) += k.time_s;
    }
};

}   // namespace

double experts_touched(double experts, double top_k, double tokens) noexcept {
    if (experts <= 0 || tokens <= 0) return 0;
    const double miss = std::pow(std::max(0.0, 1.0 - top_k / experts), tokens);
    return std::max(std::min(experts, top_k), experts * (1.0 - miss));
}

double pipeline_micro_batches(int pp, double sequences) noexcept {
    return pp > 1 ? std::min(static_cast<double>(pp), std::max(1.0, std::ceil(sequences))) : 1.0;
}

double kernel_fixed_s(const AcceleratorSpec& a, bool cuda_graphs) noexcept {
    if (cuda_graphs) return kGraphKernelFixed_s;
    return kGraphKernelFixed_s - kGraphLaunch_s + std::max(a.efficiency.kernel_launch_us * 1e-6, kGraphLaunch_s);
}

IterationCost iteration_cost(const ServingJob& s, const IterationBatch& whole) {
    IterationCost r;
    if (whole.tokens() <= 0) return r;
    // Pipeline parallelism: the engines keep up to pp micro-batches of the running sequences in flight
    // (TensorRT-LLM's micro-batches, vLLM's virtual engines), so every stage works on one of them while
    // the others work on the rest. A step of every sequence takes pp stage-times of one micro-batch: its
    // layers are priced on the heaviest micro-batch, m = min(pp, sequences): 1/m of the decodes, and a
    // prompt is not split, so it carries 1/min(m, prompts) of the prompt tokens.
    const double micro = pipeline_micro_batches(s.parallel.pp, whole.decode_seqs + whole.prefill_seqs);
    const double prompt_share = std::min(micro, std::max(1.0, whole.prefill_seqs));
    IterationBatch b = whole;
    b.prefill_tokens /= prompt_share;
    b.prefill_seqs /= prompt_share;
    b.prefill_pairs /= prompt_share;
    b.prefill_kv_tokens /= prompt_share;
    b.decode_seqs /= micro;
    b.decode_kv_tokens /= micro;
    const double M = b.tokens();
    const auto& m = s.model;
    const auto& a = s.system.gpu;
    const auto& in = s.inference;
    const int tp = s.parallel.tp;
    const int pp = s.parallel.pp;
    const auto per = layers_per_stage(m.layers, pp);
    const double layers = *std::max_element(per.begin(), per.end());
    const Precision cp = compute_precision(a, in.weight_precision, in.compute_precision);
    const double wbytes = weight_bytes_per_param(in.weight_precision, in.quant_group_size);
    const double kvb = precision_bytes(in.kv_precision);
    const double h = static_cast<double>(m.hidden);
    const double kv_local = kv_heads_per_tp_rank(m, tp) * static_cast<double>(m.head_dim);
    const double heads_local = m.heads / static_cast<double>(tp);
    const double kv_cache_elems = kv_cache_elements_per_token_layer(m, tp);   // per token, this rank

    Acc layer;   // one transformer layer; each kernel's fixed time is counted apart
    double kernels = 0;
    // Weights at their storage precision (with group scales), read once per iteration; 16-bit
    // activations in and out.
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
        g.launches = 0;
        g.sustained = false;
        layer.add(gemm_time(a, g));
        kernels += 1;
    };
    const double gate = m.mlp == MlpKind::swiglu ? 2.0 : 1.0;
    const double dtok = b.decode_seqs * b.decode_tokens_per_seq;
    if (m.mla.enabled()) {
        // MLA (DeepSeek-V2/V3 in vLLM, SGLang, TensorRT-LLM): down-projections whole on every rank,
        // Q up-projection. Prefill tokens attend with K and V up-projected from the cached latents of
        // their context; decode tokens attend in the latent space (weights absorbed: q_nope·W_UK before
        // and the latent output·W_UV after the attention, one small GEMM per head).
        const double rq = static_cast<double>(m.mla.q_lora_rank), rkv = static_cast<double>(m.mla.kv_lora_rank);
        const double dr = static_cast<double>(m.mla.qk_rope_head_dim), dv = static_cast<double>(m.v_head());
        const double dn = static_cast<double>(m.qk_nope_head_dim());
        if (rq > 0) {
            linear(M, rq, h, 1);
            linear(M, m.q_dim() / static_cast<double>(tp), rq, 1);
        } else {
            linear(M, m.q_dim() / static_cast<double>(tp), h, 1);
        }
        linear(M, rkv + dr, h, 1);
        if (b.prefill_tokens > 0) linear(b.prefill_kv_tokens, heads_local * (dn + dv), rkv, 1);
        if (dtok > 0) {
            linear(dtok, rkv, dn, heads_local);
            linear(dtok, dv, rkv, heads_local);
        }
    } else {
        linear(M, m.q_dim() / static_cast<double>(tp) + 2.0 * kv_local, h, 1);
    }
    linear(M, h, static_cast<double>(m.v_dim()) / tp, 1);
    if (m.moe.enabled()) {
        const double f = static_cast<double>(m.moe.expert_ffn_hidden);
        const double touched = experts_touched(m.moe.experts, m.moe.top_k, M);
        const double per_expert = M * m.moe.top_k / touched;
        linear(M, m.moe.experts, h, 1);   // router
        // Routing outside the expert GEMMs, each its own kernel in MoE serving engines (TensorRT-LLM's
        // MoE plugin; vLLM's fused_moe has the same activation and combine passes): softmax/top-k over
        // the router logits, dispatch (one row copy per chosen expert), the gated activation between
        // the grouped GEMMs, and the weighted combine. None of it shrinks with TP except the
        // activation's FFN width, so it weighs more at high TP.
        const double routed = M * m.moe.top_k;
        layer.add(memory_time(a,
                              moe_permute_bytes(M, m.moe.top_k, h, 2.0) +
                                  mlp_activation_bytes(routed, f / tp, gate, 2.0) + M * m.moe.experts * 4.0,
                              0.0, false, 0.0));
        kernels += 4;
        linear(per_expert, gate * f / tp, h, touched);
        linear(per_expert, h, f / tp, touched);
        if (m.moe.shared_experts > 0) {
            linear(M, gate * f * m.moe.shared_experts / tp, h, 1);
            linear(M, h, f * m.moe.shared_experts / tp, 1);
        }
    } else {
        const double f = static_cast<double>(m.ffn_hidden);
        linear(M, gate * f / tp, h, 1);
        linear(M, h, f / tp, 1);
    }
    // Attention, each sequence's new tokens against its own context: prefill chunks (causal pairs)
    // and decode tokens (reading the whole cached K/V at the KV precision).
    // `d_qk`, `d_v`: head dimensions of QKᵀ and PV; `kv_bytes_per_token`: K/V bytes read per context token.
    auto attention = [&](double seqs, double tokens, double pairs, double kv_tokens, double d_qk, double d_v,
                         double kv_bytes_per_token) {
        if (seqs <= 0 || tokens <= 0) return;
        AttentionSpec at;
        at.batch_heads = seqs * heads_local;
        at.s_q = tokens / seqs;
        at.s_kv = pairs / tokens;   // mean keys per query: FLOPs = 2·heads·(d_qk + d_v)·pairs
        at.d = 0.5 * (d_qk + d_v);
        at.causal = false;
        at.precision = cp;
        at.q_o_bytes = tokens * heads_local * (d_qk + d_v) * 2.0;
        at.kv_bytes = kv_tokens * kv_bytes_per_token;
        at.sustained = false;
        at.launches = 0;
        layer.add(attention_time(a, at));
        kernels += 1;
    };
    const double hd = static_cast<double>(m.head_dim);
    if (m.mla.enabled()) {
        // Prefill: per-head K (head_dim) and V (v_head_dim) up-projected in 16 bits; decode: MQA-like over
        // the cached latent and RoPE key (kv_lora_rank + qk_rope_head_dim for QKᵀ, kv_lora_rank for PV),
        // read once for all heads (FlashMLA).
        const double rkv = static_cast<double>(m.mla.kv_lora_rank);
        attention(b.prefill_seqs, b.prefill_tokens, b.prefill_pairs, b.prefill_kv_tokens, hd,
                  static_cast<double>(m.v_head()), heads_local * (hd + static_cast<double>(m.v_head())) * 2.0);
        attention(b.decode_seqs, dtok, b.decode_kv_tokens * b.decode_tokens_per_seq, b.decode_kv_tokens, kv_cache_elems,
                  rkv, kv_cache_elems * kvb);
    } else {
        attention(b.prefill_seqs, b.prefill_tokens, b.prefill_pairs, b.prefill_kv_tokens, hd, hd, kv_cache_elems * kvb);
        // A decode kernel with one thread block per query head reads its KV head's cache once per query
        // head of the group (TensorRT-LLM's masked multi-head attention before XQA).
        const double reads = in.decode_attention == DecodeAttention::per_query_head ? heads_local / kv_local * hd : 1.0;
        attention(b.decode_seqs, dtok, b.decode_kv_tokens * b.decode_tokens_per_seq, b.decode_kv_tokens, hd, hd,
                  reads * kv_cache_elems * kvb);
    }
    // Norms, RoPE and the KV append, activation, residuals: about 8 passes over the hidden state in 4
    // fused kernels; plus writing this iteration's K/V.
    layer.add(memory_time(a, 8.0 * 2.0 * M * h * 2.0 + M * kv_cache_elems * kvb, 0.0, false, 0.0));
    kernels += 4;
    // Tensor parallelism: two all-reduces of the hidden state per layer.
    double comm = 0;
    if (tp > 1) {
        const auto g = place_group(tp, 1, s.system.scaleup_domain);
        comm = 2.0 * collective_time(s.system, Collective::all_reduce, M * h * 2.0, g).time_s;
        kernels += 2;
    }
    r.compute_s = pp * layers * layer.compute_s;
    r.memory_s = pp * layers * layer.memory_s;
    r.comm_s = pp * layers * comm;
    double t = pp * layers * (layer.time_s + comm);
    // LM head on each token that samples (the last of a finished prompt, every decode token), 16-bit.
    GemmSpec head;
    head.m = std::max(1.0, whole.prefill_seqs + whole.decode_seqs * whole.decode_tokens_per_seq);
    head.n = static_cast<double>(m.vocab) / tp;
    head.k = h;
    head.launches = 0;
    head.sustained = false;
    const auto hk = gemm_time(a, head);
    t += hk.time_s;
    (hk.compute_bound ? r.compute_s : r.memory_s) += hk.time_s;
    kernels = pp * layers * kernels + 2.0;   // + embedding, head
    // Pipeline: the activations cross pp − 1 stage boundaries.
    if (pp > 1) {
        const auto g = place_group(2, tp, s.system.scaleup_domain);
        const double send = (pp - 1) * collective_time(s.system, Collective::send_recv, M * h * 2.0, g).time_s;
        r.comm_s += send;
        t += send;
    }
    // The host's work per running sequence (scheduler, sampling set-up, response): decode and prefill alike.
    r.overhead_s = kernels * kernel_fixed_s(a, in.cuda_graphs) +
                   in.host_per_sequence_us * 1e-6 * (whole.decode_seqs + whole.prefill_seqs);
    r.time_s = t + r.overhead_s;
    return r;
}

double speculative_tokens_per_step(const SpeculativeConfig& sp) noexcept {
    if (!sp.enabled) return 1.0;
    if (sp.acceptance_length) return *sp.acceptance_length;
    const double al = sp.acceptance, k = sp.tokens;
    if (al >= 1.0) return k + 1.0;
    return (1.0 - std::pow(al, k + 1.0)) / (1.0 - al);
}

double decode_step_tokens(const SpeculativeConfig& sp) noexcept { return sp.enabled ? sp.tokens + 1.0 : 1.0; }

double draft_cost_s(const ServingJob& s, double seqs, double context) {
    const auto& sp = s.inference.speculative;
    if (!sp.enabled || seqs <= 0 || sp.method == "ngram") return 0;
    // A draft model runs `tokens` decode steps; EAGLE and MTP heads are one decoder layer of the
    // target (with its LM head) per proposed token.
    ModelSpec draft = sp.draft_model ? *sp.draft_model : s.model;
    if (!sp.draft_model) draft.layers = s.parallel.pp;   // one layer per stage: one in all
    InferenceConfig in = s.inference;
    in.speculative = {};
    const ServingJob dj{draft, s.system, s.parallel, in};
    IterationBatch b;
    b.decode_seqs = seqs;
    b.decode_kv_tokens = seqs * context;
    return sp.tokens * iteration_cost(dj, b).time_s;
}

KvPool kv_pool(const ServingJob& s) {
    KvPool k;
    const auto mem = inference_memory(s.model, s.system, s.parallel, s.inference);
    k.bytes_per_token = mem.kv_bytes_per_token;
    double taken = mem.weights_bytes + mem.other_bytes;
    const auto& sp = s.inference.speculative;
    if (sp.enabled && sp.draft_model) {
        const auto dm = inference_memory(*sp.draft_model, s.system, s.parallel, s.inference);
        taken += dm.weights_bytes;
        k.bytes_per_token += dm.kv_bytes_per_token;
    }
    k.pool_bytes = std::max(0.0, kKvMemoryFraction * (mem.capacity_bytes - taken));
    k.blocks = k.bytes_per_token > 0
                   ? static_cast<std::int64_t>(std::floor(k.pool_bytes / (kKvBlockTokens * k.bytes_per_token)))
                   : 0;
    return k;
}

InferenceEstimate estimate_inference(const ServingJob& s) {
    InferenceEstimate r;
    const auto& in = s.inference;
    const double bsz = static_cast<double>(in.batch);
    const double L = static_cast<double>(in.input_len);
    const double computed = std::max(1.0, std::round(L * (1.0 - in.prefix_cache_hit)));
    IterationBatch pf;
    pf.prefill_seqs = bsz;
    pf.prefill_tokens = bsz * computed;
    pf.prefill_pairs = bsz * computed * ((L - computed) + (computed + 1.0) / 2.0);
    pf.prefill_kv_tokens = bsz * L;
    const auto prefill = iteration_cost(s, pf);
    r.ttft_s = prefill.time_s;
    r.prefill_compute_bound = prefill.compute_bound();
    // Decode at the mean context over the generated tokens.
    const double ctx = L + static_cast<double>(in.output_len) / 2.0;
    const auto& sp = in.speculative;
    IterationBatch dec;
    dec.decode_seqs = bsz;
    dec.decode_kv_tokens = bsz * ctx;
    dec.decode_tokens_per_seq = decode_step_tokens(sp);
    const auto decode = iteration_cost(s, dec);
    r.spec_tokens_per_step = speculative_tokens_per_step(sp);
    r.tpot_s = (decode.time_s + draft_cost_s(s, bsz, ctx)) / r.spec_tokens_per_step;
    r.decode_compute_bound = decode.compute_bound();
    r.e2e_latency_s = r.ttft_s + static_cast<double>(in.output_len - 1) * r.tpot_s;
    const double replicas = std::max(1, s.gpus() / std::max(1, s.parallel.tp * s.parallel.pp));
    r.output_tokens_per_s = replicas * bsz * static_cast<double>(in.output_len) / r.e2e_latency_s;
    r.output_tokens_per_s_per_gpu = r.output_tokens_per_s / s.gpus();
    r.memory = inference_memory(s.model, s.system, s.parallel, in);
    return r;
}

}   // namespace llmsim
