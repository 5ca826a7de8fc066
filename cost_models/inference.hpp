// Serving cost model (docs/serving.md). One iteration of a serving engine: a batch of prefill chunks
// and decode tokens, each attending to its own context, priced with the training roofline (GemmSpec,
// AttentionSpec) and the collectives registry. Static batching is one prefill iteration then decode
// iterations; continuous batching (sim/serving) composes iterations from a request stream.
#pragma once

#include <unordered_map>
#include <vector>

#include "cost_models/layer/layer.hpp"
#include "cost_models/memory.hpp"
#include "cost_models/roofline.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim {

// What one iteration computes, summed over the sequences in it.
struct IterationBatch {
    double prefill_tokens = 0;          // prompt tokens computed (all chunks)
    double prefill_seqs = 0;            // sequences with a chunk
    double prefill_pairs = 0;           // Σ chunk·(cached + (chunk+1)/2): causal query–key pairs of the chunks
    double prefill_kv_tokens = 0;       // Σ (cached + chunk): context the chunks read
    double decode_seqs = 0;             // sequences generating
    double decode_tokens_per_seq = 1;   // tokens each feeds (k + 1 when verifying a speculation)
    double decode_kv_tokens = 0;        // Σ context of the generating sequences
    double tokens() const { return prefill_tokens + decode_seqs * decode_tokens_per_seq; }
};

struct IterationCost {
    double time_s = 0;
    double compute_s = 0;    // kernels bound by tensor-core throughput
    double memory_s = 0;     // kernels bound by HBM bandwidth
    double comm_s = 0;       // TP all-reduces and PP sends
    double overhead_s = 0;   // kernels' fixed time and the host's work per running sequence
    bool compute_bound() const { return compute_s >= memory_s; }
};

// Fixed time of each kernel in a captured CUDA graph beyond its roofline time (launch from the graph,
// the first loads' DRAM latency, the last wave's tail): 2.8 us, measured on an H100 (decode steps of
// Llama-3-8B and 70B layers at batch 1..16, hardware_db/profiles/h100-sxm5-80gb-2026-11-22; leave-one-out
// 5.3%); of it, kGraphLaunch_s is the launch from the graph (empty kernels in a graph, same run). A
// kernel launched on its own pays the accelerator's kernel_launch_us instead (back-to-back empty
// kernels: 3.64 us on that H100). The host's work per running sequence is the scenario's
// inference.host_per_sequence_us (docs/serving.md).
inline constexpr double kGraphKernelFixed_s = 2.8e-6;
inline constexpr double kGraphLaunch_s = 1.03e-6;

// SMs DeepEP's normal (high-throughput) dispatch and combine kernels hold while they run: 20 by default
// (github.com/deepseek-ai/DeepEP README, `Buffer.set_num_sms`; DeepSeek-V3's report, section 3.2.2, gives
// 20 of the H800's 132 SMs to communication). Its low-latency kernels hold none (hook-based overlap).
inline constexpr double kDeepEpNormalSms = 20.0;

// Fixed time of one kernel beyond its roofline time: in a CUDA graph, or launched on its own.
[[nodiscard]] double kernel_fixed_s(const AcceleratorSpec& a, bool cuda_graphs) noexcept;

// One iteration on one replica: every running sequence one step. With pipeline parallelism the
// sequences run as pipeline_micro_batches micro-batches in flight, each stage on one of them, so the
// step takes pp stage-times of the heaviest micro-batch (1/m of the decodes; a prompt is not split, so
// 1/min(m, prompts) of the prompt tokens) plus the PP sends of one micro-batch; the LM head and the
// host's work are the whole batch's.
[[nodiscard]] IterationCost iteration_cost(const ServingJob& s, const IterationBatch& whole);

// iteration_cost for many iterations of one job (the serving simulator's loop): the layer's description
// and its fused GEMMs are made once, and the GEMMs' and collectives' time is remembered per batch shape
// (tokens, decode tokens, the prefill context where a GEMM runs over it). A pure function of the batch:
// every answer is bit for bit iteration_cost's. The job must outlive the pricer.
class IterationPricer {
public:
    explicit IterationPricer(const ServingJob& s);
    [[nodiscard]] IterationCost operator()(const IterationBatch& whole);

    // Per layer, for one batch shape: the GEMMs' roofline time and kernels, the TP all-reduces' time.
    struct LayerGemms {
        double time_s = 0, compute_s = 0, memory_s = 0;
        double kernels = 0;
        double comm_s = 0;
        double ep_comm_s = 0;                         // expert parallelism: dispatch and combine all-to-alls
        double ep_dispatch_s = 0, ep_combine_s = 0;   // of ep_comm_s, each all-to-all
        double routed_s = 0;                          // of time_s, the routed experts' GEMMs and routing passes
    };

private:
    const ServingJob& s_;
    Layer desc_;               // the model's layer (every layer priced as its MoE layer)
    Layer fused_;              // its GEMMs fused as the engines run them
    Layer::Routing routing_;   // its routed experts and top_k (0 and 0 without routed experts)
    double layers_ = 0;
    bool context_rows_ = false;   // a GEMM runs over the prefill context (MLA's up-projections)
    struct Key {
        double tokens, decode_tokens, context;
        bool operator==(const Key&) const = default;
    };
    struct DoubleHash {
        static std::size_t mix(double v) noexcept;
        std::size_t operator()(double v) const noexcept { return mix(v); }
    };
    struct KeyHash {
        std::size_t operator()(const Key& k) const noexcept;
    };
    std::unordered_map<Key, LayerGemms, KeyHash> memo_;
    static constexpr double kDecodeMemoRows = 1 << 16;
    std::vector<LayerGemms> decode_memo_;   // decode-only batches by tokens (kernels 0: not priced yet)
    LayerGemms gemms(const IterationBatch& b, double M, double dtok);
    // The LM head's GEMM by its rows (the sampling tokens of an iteration): one pricing per count, whole
    // counts below kDecodeMemoRows in a table (flops 0: not priced yet), others in a bounded map.
    std::vector<KernelTime> head_table_;
    std::unordered_map<double, KernelTime, DoubleHash> head_memo_;
    KernelTime head(double rows);
};

// Two-batch overlap (inference.expert_parallel.two_batch_overlap): one layer's time from its computation
// `compute_s` (the GEMMs, attention and passes of `g`, with the TP all-reduces) and `g`'s all-to-alls. A
// decode step takes the longer of the two; a batch with a prompt pays SGLang's prefill schedule, in which
// the micro-batches' stages pair unevenly (docs/serving.md "Expert parallelism").
[[nodiscard]] double two_batch_layer_s(const AcceleratorSpec& a, bool prompt, double compute_s,
                                       const IterationPricer::LayerGemms& g);

// Micro-batches a pipeline of `pp` stages keeps in flight for `sequences` running sequences:
// min(pp, sequences), at least 1 (1 without pipeline parallelism).
[[nodiscard]] double pipeline_micro_batches(int pp, double sequences) noexcept;

// Experts a MoE layer reads for `tokens` tokens routed top_k of `experts` uniformly:
// E·(1 − (1 − k/E)^tokens).
[[nodiscard]] double experts_touched(double experts, double top_k, double tokens) noexcept;

// Expert parallelism: the busiest GPU's share of a MoE layer when each of the `ep` replicas of a group runs
// `tokens` tokens, routed top_k of `experts` (docs/serving.md "Expert parallelism").
struct ExpertShare {
    double experts = 0;      // experts the GPU runs (its share of those the group's tokens touch; at least 1)
    double rows = 0;         // token rows per expert on the busiest GPU
    double rows_stdev = 0;   // their spread over the experts touched (routed_rows_stdev)
    double imbalance = 1;    // its routed tokens over the mean
};
// `stated_imbalance` > 0 is used as given; 0 takes uniform routing's spread: each GPU's routed tokens are
// Binomial(ep·tokens·top_k, 1/ep), and the largest of ep of them lies near μ + σ·√(2 ln ep) (the normal
// extreme value), μ = tokens·top_k, σ² = μ(1 − 1/ep); at most ep (every token on one GPU).
[[nodiscard]] double uniform_routing_imbalance(int ep, double routed_per_gpu) noexcept;
[[nodiscard]] ExpertShare expert_share(double experts, double top_k, double tokens, int ep,
                                       double stated_imbalance) noexcept;

// Speculative decoding per target step: expected tokens emitted, (1 − α^(k+1))/(1 − α) (Leviathan et
// al. 2023) or the given acceptance length; and the draft's cost for `seqs` sequences at `context`.
[[nodiscard]] double speculative_tokens_per_step(const SpeculativeConfig& sp) noexcept;
// Tokens each decoding sequence feeds per target step: k + 1 when verifying a speculation, else 1.
[[nodiscard]] double decode_step_tokens(const SpeculativeConfig& sp) noexcept;
[[nodiscard]] double draft_cost_s(const ServingJob& s, double seqs, double context);

// KV cache: bytes per token per GPU (every layer of the most loaded stage, K and V) and the paged
// pool a replica's GPU holds for it.
struct KvPool {
    double bytes_per_token = 0;
    double pool_bytes = 0;     // kKvMemoryFraction of what weights and the runtime leave
    std::int64_t blocks = 0;   // of kKvBlockTokens tokens
};
inline constexpr int kKvBlockTokens = 16;   // vLLM's default block_size
inline constexpr double kKvMemoryFraction = 0.9;
[[nodiscard]] KvPool kv_pool(const ServingJob& s);

struct InferenceEstimate {
    double ttft_s = 0;                // prefill of `batch` prompts
    double tpot_s = 0;                // one decode step, averaged over the output
    double e2e_latency_s = 0;         // ttft + (output_len − 1) · tpot
    double output_tokens_per_s = 0;   // whole deployment (all replicas)
    double output_tokens_per_s_per_gpu = 0;
    bool prefill_compute_bound = true;
    bool decode_compute_bound = false;
    double spec_tokens_per_step = 1;   // speculative decoding: tokens per target step
    InferenceMemory memory;
};

// Static batching: `batch` prompts prefilled together, then decoded together to output_len.
[[nodiscard]] InferenceEstimate estimate_inference(const ServingJob& s);

}   // namespace llmsim
