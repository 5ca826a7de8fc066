#include "hardware_db/engines.hpp"

#include <array>

#include <fmt/format.h>

#include "hardware_db/enum_names.hpp"

namespace llmsim {

namespace {
constexpr std::array kEngines{EngineKind::tensorrt_llm, EngineKind::vllm, EngineKind::sglang};
}   // namespace

const std::vector<std::string>& engine_names() {
    static const std::vector<std::string> names = enum_names(kEngines);
    return names;
}

std::optional<EngineKind> engine_from_string(std::string_view name) { return enum_from_string(kEngines, name); }

std::optional<EngineVersion> parse_engine_version(std::string_view text) {
    std::array<int, 3> parts{0, 0, 0};
    std::size_t part = 0, i = 0;
    while (true) {
        const std::size_t start = i;
        int value = 0;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
            if (i - start >= 4) return std::nullopt;   // at most 9999
            value = value * 10 + (text[i] - '0');
            ++i;
        }
        if (i == start) return std::nullopt;                            // empty part, sign, letter
        if (i - start > 1 && text[start] == '0') return std::nullopt;   // leading zero
        parts[part++] = value;
        if (i == text.size()) break;
        if (text[i] != '.' || part == parts.size()) return std::nullopt;
        ++i;
    }
    return EngineVersion{parts[0], parts[1], parts[2]};
}

EngineVersion first_release(EngineKind kind) noexcept {
    // vLLM's and SGLang's first releases were both 0.1.0.
    return kind == EngineKind::tensorrt_llm ? EngineVersion{0, 5, 0} : EngineVersion{0, 1, 0};
}

std::string to_string(const EngineVersion& v) { return fmt::format("{}.{}.{}", v.major, v.minor, v.patch); }

namespace {

// What an engine release does where a scenario is silent. Sources: docs/serving.md "Engines".
struct Defaults {
    SchedulerPolicy scheduler = SchedulerPolicy::inflight;
    std::int64_t chunk_tokens = 0;   // chunked prefill with this token budget; 0: whole prompts
    double prompt_budget_tokens = kTensorRtLlmMaxNumTokens;   // whole prompts: the most prompt tokens per iteration
    std::int64_t max_batch = 0;                               // sequences per replica; 0: as many as the KV cache holds
    bool cuda_graphs = false;
    bool kv_reserve = false;   // KV blocks for the whole request at admission (no preemption)
    DecodeAttention decode_attention = DecodeAttention::grouped;
};

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

bool before(const std::optional<EngineVersion>& v, EngineVersion release) { return v && *v < release; }

// TensorRT-LLM, its C++ runtime (TensorRT engines: MLPerf's harness, trtllm-bench's engine path).
Defaults tensorrt_llm(const std::optional<EngineVersion>& v) {
    Defaults d;
    // In-flight batching, context and generation requests in one iteration; chunked context off at
    // runtime (ExecutorConfig enableChunkedContext = false); max_num_tokens 8192 (0.11+).
    d.scheduler = SchedulerPolicy::inflight;
    d.chunk_tokens = 0;
    d.prompt_budget_tokens = kTensorRtLlmMaxNumTokens;
    // max_batch_size: 256 in 0.11-0.13, 2048 from 0.14 (release notes 0.11.0, 0.14.0); before 0.11 it
    // was set per engine build (the KV cache bounds it here).
    if (v && *v >= EngineVersion{0, 11, 0}) d.max_batch = *v < EngineVersion{0, 14, 0} ? 256 : 2048;
    if (!v) d.max_batch = 2048;
    d.cuda_graphs = false;   // ExtendedRuntimePerfKnobConfig cudaGraphMode = false
    // The capacity scheduler's default, GUARANTEED_NO_EVICT (executor/types.h; the Triton backend when
    // batch_scheduler_policy is unset; trtllm-bench throughput 0.12-0.20, whose tables validation/ holds):
    // a request is admitted only when blocks for its prompt and its max_new_tokens are free, so nothing
    // is evicted. MAX_UTILIZATION (MLPerf's harness sets it) is kv_admission "on_demand".
    d.kv_reserve = true;
    // XQA, the grouped-query decode kernel, from 0.7.0 (CHANGELOG 0.7.0/0.7.1); before it the masked
    // multi-head attention kernel runs one thread block per query head.
    if (before(v, {0, 7, 0})) d.decode_attention = DecodeAttention::per_query_head;
    return d;
}

// vLLM: V0 before 0.8.0, V1 (the default engine) from 0.8.0.
Defaults vllm(const std::optional<EngineVersion>& v, const AcceleratorSpec& gpu, const ModelSpec& model) {
    Defaults d;
    d.cuda_graphs = true;   // V0: decode-only graphs up to 256 sequences; V1: piecewise graphs up to 512
    if (before(v, {0, 8, 0})) {
        d.max_batch = 256;   // max_num_seqs
        // Chunked prefill turns itself on for contexts over 32K (PR #6666, 0.5.4), with a budget of 512
        // tokens (2048 from 0.6.5, PR #10544), decodes first; otherwise prefill-first without mixing,
        // whole prompts up to max(max_model_len, 2048) tokens.
        if (!before(v, {0, 5, 4}) && model.max_seq_len > 32768) {
            d.scheduler = SchedulerPolicy::inflight;
            d.chunk_tokens = before(v, {0, 6, 5}) ? 512 : 2048;
        } else {
            d.scheduler = SchedulerPolicy::prefill_first;
            d.prompt_budget_tokens = static_cast<double>(std::max<std::int64_t>(model.max_seq_len, 2048));
        }
        return d;
    }
    // V1: chunked prefill always, running requests first; the OpenAI server's budget and sequence cap by
    // GPU memory (>= 70 GiB: 8192 tokens and 1024 sequences; else 2048 and 256; A100s in the small tier
    // from 0.9, PR #17885).
    d.scheduler = SchedulerPolicy::inflight;
    const bool a100 = gpu.name.find("a100") != std::string::npos;
    const bool large = gpu.hbm_capacity_bytes >= 70 * kGiB && !(a100 && !before(v, {0, 9, 0}));
    d.chunk_tokens = large ? 8192 : 2048;
    d.max_batch = large ? 1024 : 256;
    return d;
}

// SGLang: prefill and decode in separate iterations (get_next_batch_to_run: "run prefill first if
// possible"; --enable-mixed-chunk off), chunked prefill sized by GPU memory (_handle_gpu_memory_settings),
// running requests bounded by the KV cache, CUDA graphs on, FlashInfer / FA3 decode.
Defaults sglang(const AcceleratorSpec& gpu) {
    Defaults d;
    d.scheduler = SchedulerPolicy::prefill_first;
    const double gb = gpu.hbm_capacity_bytes / 1e9;
    d.chunk_tokens = gb < 35 ? 2048 : gb < 60 ? 4096 : gb < 160 ? 8192 : 16384;
    d.cuda_graphs = true;
    return d;
}

}   // namespace

void apply_engine_defaults(InferenceConfig& in, const AcceleratorSpec& gpu, const ModelSpec& model,
                           const EngineStated& stated) {
    const auto& e = in.engine;
    const Defaults d = e.kind == EngineKind::vllm     ? vllm(e.version, gpu, model)
                       : e.kind == EngineKind::sglang ? sglang(gpu)
                                                      : tensorrt_llm(e.version);
    if (!stated.scheduler) in.scheduler = d.scheduler;
    if (!stated.max_batch_tokens) in.max_batch_tokens = d.chunk_tokens;
    if (!stated.max_batch) in.max_batch = d.max_batch;
    if (!stated.cuda_graphs) in.cuda_graphs = d.cuda_graphs;
    if (!stated.kv_admission) in.kv_reserve = d.kv_reserve;
    in.prompt_budget_tokens = d.prompt_budget_tokens;
    in.decode_attention = d.decode_attention;
}

}   // namespace llmsim
