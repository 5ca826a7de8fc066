#include "cost_models/inference.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "cost_models/collectives.hpp"
#include "cost_models/layer/layer.hpp"
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
    return a.half_precision();
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

double uniform_routing_imbalance(int ep, double routed_per_gpu) noexcept {
    if (ep <= 1 || !(routed_per_gpu > 0)) return 1.0;
    const double n = ep;
    return std::min(n, 1.0 + std::sqrt(2.0 * std::log(n) * (1.0 - 1.0 / n) / routed_per_gpu));
}

ExpertShare expert_share(double experts, double top_k, double tokens, int ep, double stated_imbalance) noexcept {
    ExpertShare r;
    const double n = std::max(1, ep);
    const double group = tokens * n;
    const double touched = experts_touched(experts, top_k, group);
    if (!(touched > 0)) return r;
    // A stated skew past ep would put more than every token on one GPU.
    r.imbalance = ep <= 1                ? 1.0
                  : stated_imbalance > 0 ? std::min(stated_imbalance, n)
                                         : uniform_routing_imbalance(ep, tokens * top_k);
    r.experts = ep <= 1 ? touched : std::max(1.0, touched / n);
    r.rows = group * top_k / n * r.imbalance / r.experts;
    r.rows_stdev = routed_rows_stdev(r.rows, touched);
    return r;
}

double pipeline_micro_batches(int pp, double sequences) noexcept {
    return pp > 1 ? std::min(static_cast<double>(pp), std::max(1.0, std::ceil(sequences))) : 1.0;
}

double kernel_fixed_s(const AcceleratorSpec& a, bool cuda_graphs) noexcept {
    if (cuda_graphs) return kGraphKernelFixed_s;
    return kGraphKernelFixed_s - kGraphLaunch_s + std::max(a.efficiency.kernel_launch_us * 1e-6, kGraphLaunch_s);
}

namespace {

// The heaviest pipeline micro-batch of an iteration (iteration_cost).
IterationBatch stage_batch(const ServingJob& s, const IterationBatch& whole) {
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
    return b;
}

// One transformer layer of a serving iteration on one GPU (cost_models/layer's operations, the serving
// form): its kernels' roofline times and how many kernels it launches.
struct ServingLayer {
    const ServingJob& s;
    const IterationBatch& b;
    const Layer& desc;
    const Layer& fused;   // fuse_gemms(desc)
    Precision cp;
    double wbytes = 0, kvb = 0;
    Acc time;   // each kernel's fixed time is counted apart
    double kernels = 0;
    ExpertShare experts;   // the routed experts' share of this GPU (IterationPricer::gemms)
    double routed_s = 0;   // of `time`, the routed experts' GEMMs and their routing passes

    ServingLayer(const ServingJob& job, const IterationBatch& batch, const Layer& d, const Layer& f)
        : s(job), b(batch), desc(d), fused(f) {
        const auto& in = s.inference;
        cp = compute_precision(s.system.gpu, in.weight_precision, in.compute_precision);
        wbytes = weight_bytes_per_param(in.weight_precision, in.quant_group_size);
        kvb = precision_bytes(in.kv_precision);
    }

    // Weights at their storage precision (with group scales), read once per iteration; 16-bit
    // activations in and out.
    double linear(double rows, double n, double k, double count, double rows_stdev = 0.0) {
        GemmSpec g;
        g.m = rows;
        g.m_stdev = rows_stdev;
        g.n = n;
        g.k = k;
        g.batch = count;
        g.precision = cp;
        g.a_bytes = 2.0;
        g.b_bytes = wbytes;
        g.c_bytes = 2.0;
        g.launches = 0;
        g.sustained = false;
        const KernelTime t = gemm_time(s.system.gpu, g);
        time.add(t);
        kernels += 1;
        return t.time_s;
    }

    // MoE routing outside the expert GEMMs, each its own kernel in MoE serving engines (TensorRT-LLM's
    // MoE plugin; vLLM's fused_moe has the same activation and combine passes): softmax/top-k over the
    // router logits (fp32), dispatch (one row copy per chosen expert), the gated activation between the
    // grouped GEMMs, and the weighted combine. None of it shrinks with TP except the activation's FFN
    // width, so it weighs more at high TP.
    double routing(double M) {
        double logits = 0, permute = 0, activation = 0;
        for (const auto& op : desc) {
            if (op.part == LayerPart::router) logits = M * op.n * 4.0;
            if (op.kind != LayerOpKind::pass) continue;
            if (op.pass == ElementwiseKind::moe_routing) permute = pass_bytes(op, M, 2.0, false);
            if (op.pass == ElementwiseKind::mlp_activation && op.experts > 0)
                // over the rows of the busiest GPU's experts (every routed row without expert parallelism)
                activation =
                    pass_bytes(op, s.parallel.ep > 1 ? experts.rows * experts.experts : M * op.rows, 2.0, false);
        }
        const KernelTime t = memory_time(s.system.gpu, permute + activation + logits, 0.0, false, 0.0);
        time.add(t);
        kernels += 4;
        return t.time_s;
    }

    // The GEMMs, each over the tokens it runs on: routed experts over the experts the batch touches, MLA's
    // up-projections over the prefill's context and, absorbed, over the decode tokens.
    void gemms(double M, double dtok) {
        for (const auto& op : fused) {
            if (op.kind == LayerOpKind::pass && op.pass == ElementwiseKind::moe_routing) routed_s += routing(M);
            if (op.kind != LayerOpKind::gemm) continue;
            if (op.experts > 0) {   // the busiest GPU's experts (all of them without expert parallelism)
                routed_s += linear(experts.rows, op.n, op.k, experts.experts, experts.rows_stdev);
                continue;
            }
            switch (op.serving) {
                case ServingRows::tokens: linear(M, op.n, op.k, op.batch); break;
                case ServingRows::prefill_context:
                    if (b.prefill_tokens > 0) linear(b.prefill_kv_tokens, op.n, op.k, op.batch);
                    break;
                case ServingRows::decode_tokens:
                    if (dtok > 0) linear(dtok, op.n, op.k, op.batch);
                    break;
            }
        }
    }

    // Each sequence's new tokens against its own context. `d_qk`, `d_v`: head dimensions of QKᵀ and PV;
    // `kv_bytes_per_token`: K/V bytes read per context token.
    void attention(double seqs, double tokens, double pairs, double kv_tokens, double d_qk, double d_v,
                   double kv_bytes_per_token) {
        if (seqs <= 0 || tokens <= 0) return;
        const double heads = desc.attention().heads;
        AttentionSpec at;
        at.batch_heads = seqs * heads;
        at.s_q = tokens / seqs;
        at.s_kv = pairs / tokens;   // mean keys per query: FLOPs = 2·heads·(d_qk + d_v)·pairs
        at.d = 0.5 * (d_qk + d_v);
        at.causal = false;
        at.precision = cp;
        at.q_o_bytes = tokens * heads * (d_qk + d_v) * 2.0;
        at.kv_bytes = kv_tokens * kv_bytes_per_token;
        at.sustained = false;
        at.launches = 0;
        time.add(attention_time(s.system.gpu, at));
        kernels += 1;
    }

    // Prefill chunks (causal pairs, K/V as the kernel reads them) and decode tokens (the cache at the KV
    // precision, in the widths the decode kernel attends with).
    void attention_kernels(double dtok) {
        const AttentionShape& a = desc.attention();
        attention(b.prefill_seqs, b.prefill_tokens, b.prefill_pairs, b.prefill_kv_tokens, a.head_qk, a.head_v,
                  a.kv_elements * (a.kv_16bit ? 2.0 : kvb));
        const double reads = s.inference.decode_attention == DecodeAttention::per_query_head ? a.decode_reads : 1.0;
        attention(b.decode_seqs, dtok, b.decode_kv_tokens * b.decode_tokens_per_seq, b.decode_kv_tokens, a.decode_qk,
                  a.decode_v, reads * a.cache_elements * kvb);
    }
};

}   // namespace

IterationCost iteration_cost(const ServingJob& s, const IterationBatch& whole) { return IterationPricer(s)(whole); }

double two_batch_layer_s(const AcceleratorSpec& a, bool prompt, double compute_s,
                         const IterationPricer::LayerGemms& g) {
    // A decode step (DeepEP's low-latency kernels, which hold no SMs): the longer of the two.
    if (!prompt) return std::max(compute_s, g.ep_comm_s);
    // DeepEP's normal kernels (a batch with a prompt) hold kDeepEpNormalSms of the SMs while they run, and the
    // computation runs on the rest (on NVIDIA GPUs, all with 58 SMs or more; an accelerator with at most
    // 2 x that many, a TPU's 1-2 cores, lends none).
    const double sms = std::max(1.0, static_cast<double>(a.sm_count));
    const double slowed = sms > 2.0 * kDeepEpNormalSms ? sms / (sms - kDeepEpNormalSms) : 1.0;
    // With a prompt, SGLang's prefill schedule: each micro-batch's layer is two stages, [its dispatch awaited,
    // the routed experts, its combine launched] and [the shared experts, its combine awaited, the next
    // attention, its dispatch launched], and the two micro-batches' stages alternate on the compute stream
    // while the other's all-to-all is in flight. Per layer the four stages take
    // max(e, d) + max(e, c) + max(a, c) + max(a, d), each term one micro-batch's (half the batch's) routed
    // experts e, rest of the layer a, dispatch d and combine c: the longer of computation and
    // communication only when each stage pairs evenly, the sum of both when neither hides the other.
    const double e = g.routed_s * slowed, rest = (compute_s - g.routed_s) * slowed;
    const double d = g.ep_dispatch_s, c = g.ep_combine_s;
    return 0.5 * (std::max(e, d) + std::max(e, c) + std::max(rest, c) + std::max(rest, d));
}

IterationPricer::IterationPricer(const ServingJob& s)
    : s_(s),
      // Every layer priced as the model's MoE layer (a dense model's is dense).
      desc_(describe_layer(s.model, LayerShape{.tp = s.parallel.tp, .moe = true, .serving = true})),
      fused_(fuse_gemms(desc_)),
      routing_(desc_.routing()) {
    const auto per = layers_per_stage(s.model.layers, s.parallel.pp);
    layers_ = *std::max_element(per.begin(), per.end());
    for (const auto& op : fused_)
        if (op.kind == LayerOpKind::gemm && op.experts <= 0 && op.serving == ServingRows::prefill_context)
            context_rows_ = true;
}

std::size_t IterationPricer::DoubleHash::mix(double v) noexcept {
    // splitmix64's finaliser over the value's bits (std::hash<double> hashes its bytes one by one: a tenth
    // of a serving simulation's time). +0.0 makes -0.0, equal to 0.0, hash as it does.
    auto x = std::bit_cast<std::uint64_t>(v + 0.0);
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return static_cast<std::size_t>(x ^ (x >> 31));
}

std::size_t IterationPricer::KeyHash::operator()(const Key& k) const noexcept {
    using D = DoubleHash;
    return D::mix(k.tokens) ^ std::rotl(D::mix(k.decode_tokens), 21) ^ std::rotl(D::mix(k.context), 42);
}

KernelTime IterationPricer::head(double rows) {
    const bool whole = rows >= 1 && rows < kDecodeMemoRows && rows == std::floor(rows);
    const auto row = whole ? static_cast<std::size_t>(rows) : 0;
    if (whole && row < head_table_.size() && head_table_[row].flops > 0) return head_table_[row];
    if (!whole)
        if (const auto it = head_memo_.find(rows); it != head_memo_.end()) return it->second;
    GemmSpec g;
    g.m = rows;
    g.n = static_cast<double>(s_.model.vocab) / s_.parallel.tp;
    g.k = static_cast<double>(s_.model.hidden);
    g.launches = 0;
    g.sustained = false;
    const KernelTime k = gemm_time(s_.system.gpu, g);
    if (whole) {
        if (row >= head_table_.size()) head_table_.resize(row + 1);
        head_table_[row] = k;
        return k;
    }
    if (head_memo_.size() >= (std::size_t{1} << 16)) head_memo_.clear();   // bounded, as memo_ is
    head_memo_.emplace(rows, k);
    return k;
}

IterationPricer::LayerGemms IterationPricer::gemms(const IterationBatch& b, double M, double dtok) {
    const Key key{M, dtok, context_rows_ && b.prefill_tokens > 0 ? b.prefill_kv_tokens : 0.0};
    // Decode-only batches (most iterations of a stream) by their whole token count, in a table.
    const bool decode_only = key.context == 0 && dtok == M && M >= 1 && M < kDecodeMemoRows && M == std::floor(M);
    const auto row = decode_only ? static_cast<std::size_t>(M) : 0;
    if (decode_only && row < decode_memo_.size() && decode_memo_[row].kernels > 0) return decode_memo_[row];
    if (!decode_only)
        if (const auto it = memo_.find(key); it != memo_.end()) return it->second;
    ServingLayer layer(s_, b, desc_, fused_);
    // The routed experts this GPU runs and the rows of its busiest one: one share for the expert GEMMs,
    // their activation and the dispatch's imbalance.
    const int ep = s_.parallel.ep;
    const auto& xp = s_.inference.expert_parallel;
    if (routing_.experts > 0)
        layer.experts = expert_share(xp.expert_slots(routing_.experts, ep), routing_.top_k, M, ep, xp.load_imbalance);
    layer.gemms(M, dtok);
    LayerGemms g{layer.time.time_s, layer.time.compute_s, layer.time.memory_s, layer.kernels};
    g.routed_s = layer.routed_s;
    // Tensor parallelism: two all-reduces of the hidden state per layer.
    if (s_.parallel.tp > 1) {
        const double h = static_cast<double>(s_.model.hidden);
        const auto grp = place_group(s_.parallel.tp, 1, s_.system.scaleup_domain);
        g.comm_s = 2.0 * collective_time(s_.system, Collective::all_reduce, M * h * 2.0, grp).time_s;
    }
    // Expert parallelism: each routed token's hidden state goes to the GPUs of its top_k experts and their
    // outputs come back (dispatch and combine, as DeepEP runs them: per scale-up domain when the batch holds
    // a prompt, per expert for decode steps), from each TP rank's 1/tp of the tokens (sequence-parallel
    // dispatch); FP8 out (a byte and a 4-byte scale per 128 elements, as DeepEP dispatches to FP8 experts),
    // 16-bit back. The busiest GPU receives its imbalance times the mean.
    if (ep > 1 && routing_.experts > 0) {
        const double h = static_cast<double>(s_.model.hidden);
        const double k = routing_.top_k;
        const double tokens = M / s_.parallel.tp;
        const Precision cp =
            compute_precision(s_.system.gpu, s_.inference.weight_precision, s_.inference.compute_precision);
        const double out_bytes = cp == Precision::fp8 || cp == Precision::fp4 ? 1.0 + 4.0 / 128.0 : 2.0;
        const auto grp = place_group(ep, s_.parallel.tp * s_.parallel.pp, s_.system.scaleup_domain);
        const auto mode = b.prefill_tokens > 0 ? ExpertAllToAll::per_domain : ExpertAllToAll::per_expert;
        const double dispatch = expert_all_to_all_time(s_.system, grp, tokens, k, h * out_bytes, mode);
        const double combine = expert_all_to_all_time(s_.system, grp, tokens, k, h * 2.0, mode);
        const double f = layer.experts.imbalance;
        g.ep_comm_s = f * (dispatch + combine);
        g.ep_dispatch_s = f * dispatch;
        g.ep_combine_s = f * combine;
    }
    if (decode_only) {
        if (row >= decode_memo_.size()) decode_memo_.resize(row + 1);
        decode_memo_[row] = g;
        return g;
    }
    // A bounded memo: batch shapes repeat within a stream, but a command's work stays bounded.
    if (memo_.size() >= (std::size_t{1} << 16)) memo_.clear();
    memo_.emplace(key, g);
    return g;
}

IterationCost IterationPricer::operator()(const IterationBatch& whole) {
    IterationCost r;
    if (whole.tokens() <= 0) return r;
    const ServingJob& s = s_;
    const IterationBatch b = stage_batch(s, whole);
    const double M = b.tokens();
    const auto& m = s.model;
    const auto& a = s.system.gpu;
    const auto& in = s.inference;
    const int tp = s.parallel.tp;
    const int pp = s.parallel.pp;
    const double h = static_cast<double>(m.hidden);
    const double dtok = b.decode_seqs * b.decode_tokens_per_seq;
    const LayerGemms per = gemms(b, M, dtok);
    ServingLayer layer(s, b, desc_, fused_);
    layer.time = {per.time_s, per.compute_s, per.memory_s};
    layer.kernels = per.kernels;
    layer.attention_kernels(dtok);
    // Norms, RoPE and the KV append, activation, residuals: about 8 passes over the hidden state in 4
    // fused kernels; plus writing this iteration's K/V.
    layer.time.add(
        memory_time(a, 8.0 * 2.0 * M * h * 2.0 + M * desc_.attention().cache_elements * layer.kvb, 0.0, false, 0.0));
    layer.kernels += 4;
    const double comm = per.comm_s;
    if (tp > 1) layer.kernels += 2;
    if (per.ep_comm_s > 0) layer.kernels += 2;
    r.compute_s = pp * layers_ * layer.time.compute_s;
    r.memory_s = pp * layers_ * layer.time.memory_s;
    r.comm_s = pp * layers_ * (comm + per.ep_comm_s);
    // Two-batch overlap: each micro-batch's dispatch and combine run under the other's computation, so a
    // layer takes the longer of the two streams; DeepEP's normal kernels (a batch with a prompt) hold
    // kDeepEpNormalSms of the SMs meanwhile, and the computation runs on the rest (on NVIDIA GPUs, all with
    // 58 SMs or more; an accelerator with at most 2 x that many, a TPU's 1-2 cores, lends none).
    double layer_s = layer.time.time_s + comm + per.ep_comm_s;
    if (in.expert_parallel.two_batch_overlap && per.ep_comm_s > 0)
        layer_s = two_batch_layer_s(a, b.prefill_tokens > 0, layer.time.time_s + comm, per);
    double t = pp * layers_ * layer_s;
    // LM head on each token that samples (the last of a finished prompt, every decode token), 16-bit.
    const auto hk = head(std::max(1.0, whole.prefill_seqs + whole.decode_seqs * whole.decode_tokens_per_seq));
    t += hk.time_s;
    (hk.compute_bound ? r.compute_s : r.memory_s) += hk.time_s;
    const double kernels = pp * layers_ * layer.kernels + 2.0;   // + embedding, head
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
    const double taken = mem.weights_bytes + mem.other_bytes;   // a speculative draft model's included
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
    const double replicas = s.replicas();
    r.output_tokens_per_s = replicas * bsz * static_cast<double>(in.output_len) / r.e2e_latency_s;
    r.output_tokens_per_s_per_gpu = r.output_tokens_per_s / s.gpus();
    r.memory = inference_memory(s.model, s.system, s.parallel, in);
    return r;
}

}   // namespace llmsim
