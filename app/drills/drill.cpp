#include "app/drills/drill.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "app/drills/calc.hpp"
#include "cost_models/collectives.hpp"
#include "cost_models/layer/layer.hpp"
#include "cost_models/model_params.hpp"
#include "hardware_db/errors.hpp"

namespace llmsim::drills {

// ------------------------------------------------------------------------------------------------
// Draws
// ------------------------------------------------------------------------------------------------
std::int64_t Rng::integer(std::int64_t lo, std::int64_t hi) {
    if (hi <= lo) return lo;
    const std::uint64_t span = static_cast<std::uint64_t>(hi - lo) + 1;
    // Rejection sampling: no modulo bias, same on every platform.
    const std::uint64_t limit =
        std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % span;
    std::uint64_t x = g_();
    while (x >= limit) x = g_();
    return lo + static_cast<std::int64_t>(x % span);
}

double Rng::real(double lo, double hi) {
    const double u = static_cast<double>(g_() >> 11) * 0x1.0p-53;
    return lo + (hi - lo) * u;
}

bool difficulty_from_string(std::string_view s, Difficulty& out) {
    if (s == "easy")
        out = Difficulty::easy;
    else if (s == "medium")
        out = Difficulty::medium;
    else if (s == "hard")
        out = Difficulty::hard;
    else
        return false;
    return true;
}

double tolerance_for(Difficulty d) {
    switch (d) {
        case Difficulty::easy: return 0.10;
        case Difficulty::medium: return 0.05;
        case Difficulty::hard: return 0.02;
    }
    return 0.05;
}

std::string Question::answer_text() const {
    if (multiple_choice()) return std::string(1, static_cast<char>('a' + static_cast<int>(answer)));
    return num(answer) + (unit.empty() ? "" : " " + unit);
}

namespace {

// ------------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------------
std::vector<ModelSpec> dense_models(const Bank& b) {
    std::vector<ModelSpec> out;
    for (const auto& m : b.models)
        if (!has_moe_layers(m)) out.push_back(m);
    if (out.empty()) throw ConfigError("drill: the model bank has no dense model");
    return out;
}

const ModelSpec& any_dense(Rng& rng, const Bank& b) {
    thread_local std::vector<ModelSpec> cache;
    cache = dense_models(b);
    return rng.pick(cache);
}

const AcceleratorSpec& any_gpu(Rng& rng, const Bank& b) {
    if (b.gpus.empty()) throw ConfigError("drill: the accelerator bank is empty");
    return rng.pick(b.gpus);
}

// A dense model whose weights (at `bytes_per_param`) take at most 70% of `gpu`'s memory, so a serving
// question on one GPU makes sense (the smallest model when none is drawn in 64 tries).
const ModelSpec& serving_model(Rng& rng, const Bank& b, const AcceleratorSpec& gpu, double bytes_per_param) {
    thread_local std::vector<ModelSpec> cache;
    cache = dense_models(b);
    for (int i = 0; i < 64; ++i) {
        const auto& m = rng.pick(cache);
        if (count_parameters(m).total * bytes_per_param <= 0.7 * gpu.hbm_capacity_bytes) return m;
    }
    return *std::min_element(cache.begin(), cache.end(), [](const ModelSpec& x, const ModelSpec& y) {
        return count_parameters(x).total < count_parameters(y).total;
    });
}

// A GPU count from `counts` whose memory holds the model's training states (about 20 B per parameter),
// so a training question describes a run that could exist (the largest count when none does).
int training_gpus(Rng& rng, std::vector<int> counts, double params, const AcceleratorSpec& gpu) {
    std::vector<int> ok;
    for (int n : counts)
        if (n * gpu.hbm_capacity_bytes >= 20.0 * params) ok.push_back(n);
    if (ok.empty()) return counts.back();
    return rng.pick(ok);
}

// A question whose answer is step `index` of `c`.
Question numeric(std::string_view topic, std::string text, Calc c, std::size_t index, Difficulty d) {
    c.answer = index;
    Question q;
    q.topic = std::string(topic);
    q.answer = c.result().value;
    q.unit = c.result().unit;
    q.tolerance = tolerance_for(d);
    q.text = fmt::format("{}\n  Answer in {} (within ±{:g}% of the exact value).", text, q.unit, 100 * q.tolerance);
    q.solution = render(c);
    return q;
}

// A multiple-choice question; `right` is the index in `options` of the right one. Options are shuffled.
Question choice(Rng& rng, std::string_view topic, const std::string& text, std::vector<std::string> options, int right,
                std::string reasoning) {
    std::vector<int> order(options.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    for (std::size_t i = order.size(); i > 1; --i)
        std::swap(order[i - 1], order[static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(i) - 1))]);
    Question q;
    q.topic = std::string(topic);
    q.unit = "choice";
    q.tolerance = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
        q.choices.push_back(
            fmt::format("{}) {}", static_cast<char>('a' + i), options[static_cast<std::size_t>(order[i])]));
        if (order[i] == right) q.answer = static_cast<double>(i);
    }
    q.text = text;
    for (const auto& c : q.choices) q.text += "\n    " + c;
    q.text += "\n  Answer with a letter.";
    q.solution = fmt::format("{}\n  answer: {}\n  {}\n", text.substr(0, text.find('\n')),
                             q.choices[static_cast<std::size_t>(q.answer)], reasoning);
    return q;
}

constexpr std::array<int, 6> kPow2Ranks{8, 16, 64, 256, 512, 1024};
constexpr std::array<double, 5> kLinkGBps{25, 50, 100, 200, 400};
constexpr std::array<std::int64_t, 4> kSeqs{2048, 4096, 8192, 16384};

// ------------------------------------------------------------------------------------------------
// Topics
// ------------------------------------------------------------------------------------------------
Question gen_params(Rng& rng, const Bank& b, Difficulty d) {
    const auto& m = any_dense(rng, b);
    const auto c = params_calc(m);
    const int which = static_cast<int>(rng.integer(0, 2));
    const std::size_t idx = which == 0 ? 0 : which == 1 ? 2 : 4;
    const char* what = idx == 0   ? "the QKV projection of one layer"
                       : idx == 2 ? "the MLP of one layer"
                                  : "the whole model";
    return numeric(
        "params",
        fmt::format("{}: {} layers, hidden {}, {} heads, {} KV heads, head dim {}, FFN {} ({}), vocab {}{}.\n"
                    "  How many parameters in {}?",
                    m.name, m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.ffn_hidden, to_string(m.mlp),
                    m.vocab, m.tied_embeddings ? ", tied embeddings" : "", what),
        c, idx, d);
}

Question gen_memory(Rng& rng, const Bank& b, Difficulty d) {
    const auto& m = any_dense(rng, b);
    const int dp = static_cast<int>(rng.pick(std::vector<int>{8, 16, 32, 64, 128}));
    const int zero = static_cast<int>(rng.integer(0, 3));
    const auto c = model_states_calc(m, dp, zero);
    return numeric(
        "memory",
        fmt::format("Training {} ({} parameters) with bf16 mixed precision and Adam (fp32 master weights "
                    "and fp32 gradients, Megatron style), pure data parallelism over {} GPUs with ZeRO stage "
                    "{}.\n  How much memory do the model states (weights, gradients, optimizer) take per GPU?",
                    m.name, count_str(count_parameters(m).total), dp, zero),
        c, 3, d);
}

Question gen_activations(Rng& rng, const Bank& b, Difficulty d) {
    const auto& m = any_dense(rng, b);
    const std::int64_t seq = rng.pick(std::span<const std::int64_t>(kSeqs));
    const std::int64_t mb = rng.pick(std::vector<std::int64_t>{1, 2, 4});
    const int tp = static_cast<int>(rng.pick(std::vector<int>{1, 2, 4, 8}));
    const bool sp = tp > 1 && rng.integer(0, 1) == 1;
    const auto c = activations_calc(m, seq, mb, tp, sp);
    const std::size_t idx = static_cast<std::size_t>(rng.pick(std::vector<int>{1, 3}));
    return numeric(
        "activations",
        fmt::format("{} ({} layers, hidden {}, {} heads, {} KV heads, FFN {}), sequence {}, micro-batch {}, "
                    "tensor parallel {}{}, FlashAttention, bf16.\n  What activation memory do all layers keep "
                    "for backward {}?",
                    m.name, m.layers, m.hidden, m.heads, m.kv_heads, m.ffn_hidden, seq, mb, tp,
                    sp ? " with sequence parallelism" : "",
                    idx == 1 ? "without recompute" : "with full recompute (only layer inputs kept)"),
        c, idx, d);
}

Question gen_checkpointing(Rng& rng, const Bank&, Difficulty d) {
    const int L = static_cast<int>(rng.pick(std::vector<int>{16, 24, 32, 48, 50, 64, 80, 96}));
    const double a = static_cast<double>(rng.integer(2, 40)) * 0.1e9;
    const auto c = checkpointing_calc(L, a);
    return numeric("checkpointing",
                   fmt::format("A {}-layer transformer keeps {} of activations per layer. With √L activation "
                               "checkpoints (rounded), what is the peak activation memory (stored checkpoints plus one "
                               "segment being recomputed)?",
                               L, bytes_str(a)),
                   c, 2, d);
}

Question gen_training_time(Rng& rng, const Bank& b, Difficulty d) {
    const auto& m = any_dense(rng, b);
    const auto& g = any_gpu(rng, b);
    const double n = count_parameters(m).total;
    const double tokens = rng.pick(std::vector<double>{20 * n, 1e12, 2e12, 15e12});
    const int gpus = training_gpus(rng, {256, 1024, 2048, 4096, 8192}, n, g);
    const double mfu = static_cast<double>(rng.integer(30, 55)) / 100.0;
    const auto c = training_time_calc(n, tokens, gpus, g.peak(Precision::bf16), mfu, 0);
    return numeric("training_time",
                   fmt::format("Train {} ({} parameters) on {} tokens with {} {} GPUs ({}/s dense bf16 each) at {}% "
                               "MFU. How many days?",
                               m.name, count_str(n), count_str(tokens), gpus, g.display_name,
                               flops_str(g.peak(Precision::bf16)), num(100 * mfu)),
                   c, 1, d);
}

Question gen_flops(Rng& rng, const Bank& b, Difficulty d) {
    const auto& m = any_dense(rng, b);
    const auto c = flops_per_token_calc(m, 4096);
    const bool infer = rng.integer(0, 1) == 1;
    return numeric("flops",
                   fmt::format("{} has {} parameters. How many FLOPs per token does {} take (the 6N / 2N rules)?",
                               m.name, count_str(count_parameters(m).active),
                               infer ? "generating one token (inference)" : "training (forward + backward)"),
                   c, infer ? 2 : 0, d);
}

Question gen_mfu(Rng& rng, const Bank& b, Difficulty d) {
    const auto& m = any_dense(rng, b);
    const auto& g = any_gpu(rng, b);
    const double n = count_parameters(m).active;
    const int gpus = training_gpus(rng, {64, 256, 512, 1024, 2048}, count_parameters(m).total, g);
    const double target = static_cast<double>(rng.integer(25, 60)) / 100.0;
    double tps = target * gpus * g.peak(Precision::bf16) / (6 * n);
    tps = std::stod(num(tps));   // a round figure, as a dashboard shows it
    const auto c = mfu_calc(m, 4096, tps, gpus, g, Precision::bf16);
    return numeric(
        "mfu",
        fmt::format("A run of {} ({} parameters) on {} {} GPUs ({}/s bf16 peak each) processes {} tokens/s. "
                    "What is its MFU with the 6N rule?",
                    m.name, count_str(n), gpus, g.display_name, flops_str(g.peak(Precision::bf16)), num(tps)),
        c, 0, d);
}

Question gen_roofline(Rng& rng, const Bank& b, Difficulty d) {
    const auto& m = any_dense(rng, b);
    const auto& g = any_gpu(rng, b);
    const double tokens = static_cast<double>(rng.pick(std::vector<int>{1, 8, 32, 128, 512, 4096}));
    const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn_hidden);
    const auto c = gemm_calc(g, tokens, f, h, Precision::bf16);
    if (rng.integer(0, 2) == 0) {
        const bool compute = c.steps[2].value >= c.steps[3].value;
        return choice(rng, "roofline",
                      fmt::format("The MLP up-projection of {} on {} tokens is a GEMM [{} × {}] · [{} × {}] in bf16 on "
                                  "{} (ridge point {} FLOP/byte). Which bound applies?",
                                  m.name, num(tokens), num(tokens), num(h), num(h), num(f), g.display_name,
                                  num(c.steps[3].value)),
                      {"compute-bound: faster tensor cores would help", "memory-bound: HBM bandwidth limits it"},
                      compute ? 0 : 1,
                      fmt::format("arithmetic intensity {} FLOP/byte vs ridge {} FLOP/byte.\n{}", num(c.steps[2].value),
                                  num(c.steps[3].value), render(c)));
    }
    return numeric("roofline",
                   fmt::format("The MLP up-projection of {} on {} tokens is C[{}×{}] = A[{}×{}]·B[{}×{}] in bf16 "
                               "(2-byte inputs and output, each read or written once). What is its arithmetic "
                               "intensity?",
                               m.name, num(tokens), num(tokens), num(f), num(tokens), num(h), num(h), num(f)),
                   c, 2, d);
}

Question gen_allreduce(Rng& rng, const Bank& b, Difficulty d) {
    const auto& m = any_dense(rng, b);
    const double bytes = 2.0 * count_parameters(m).total;
    CollectiveQuery q;
    q.bytes = bytes;
    q.ranks = rng.pick(std::span<const int>(kPow2Ranks));
    q.GBps = rng.pick(std::span<const double>(kLinkGBps));
    const auto c = all_reduce_calc(q);
    const int which = static_cast<int>(rng.integer(0, 2));
    const char* what = which == 0   ? "a ring all-reduce"
                       : which == 1 ? "NCCL's pipelined tree all-reduce (bandwidth term 2·M/B)"
                                    : "the textbook non-pipelined tree all-reduce (2·log2(p)·M/B)";
    return numeric(
        "allreduce",
        fmt::format("The fp16 gradients of {} ({} parameters = {}) are all-reduced over {} GPUs, {} GB/s per "
                    "GPU, latency ignored. How long does {} take?",
                    m.name, count_str(count_parameters(m).total), bytes_str(bytes), q.ranks, num(q.GBps), what),
        c, static_cast<std::size_t>(which), d);
}

Question gen_allreduce_choice(Rng& rng, const Bank&, Difficulty) {
    CollectiveQuery q;
    q.bytes = rng.pick(std::vector<double>{64e3, 1e6, 16e6, 1e9});
    q.ranks = rng.pick(std::span<const int>(kPow2Ranks));
    q.GBps = rng.pick(std::span<const double>(kLinkGBps));
    q.alpha_s = rng.pick(std::vector<double>{2e-6, 5e-6, 10e-6});
    auto c = all_reduce_calc(q);
    const bool ring = c.steps[0].value <= c.steps[1].value;
    c.answer = ring ? 0 : 1;
    return choice(
        rng, "allreduce_choice",
        fmt::format("All-reduce of {} over {} ranks, {} GB/s per rank, α = {} per step. Which algorithm is "
                    "faster?",
                    bytes_str(q.bytes), q.ranks, num(q.GBps), seconds_str(q.alpha_s)),
        {"ring", "NCCL's pipelined tree"}, ring ? 0 : 1,
        fmt::format("ring pays 2(p−1)·α of latency, the tree 2·log2(p)·α; the ring moves 2(p−1)/p·M, the tree "
                    "2·M.\n{}",
                    render(c)));
}

Question gen_bubble(Rng& rng, const Bank&, Difficulty d) {
    const int p = static_cast<int>(rng.pick(std::vector<int>{4, 8, 16, 32}));
    const std::int64_t m = rng.pick(std::vector<std::int64_t>{8, 16, 32, 64, 128});
    const bool inter = rng.integer(0, 1) == 1;
    const int v = inter ? static_cast<int>(rng.pick(std::vector<int>{2, 3, 4})) : 1;
    const auto* s = find_schedule(inter ? "interleaved" : "1f1b");
    const auto c = bubble_calc(*s, p, m, v);
    return numeric(
        "bubble",
        fmt::format("A pipeline of {} equal stages runs {} micro-batches per step with the {} schedule{}. What "
                    "fraction of the step is bubble (idle time over total time)?",
                    p, m, s->name, inter ? fmt::format(" and {} model chunks per stage", v) : ""),
        c, 2, d);
}

Question gen_grad_accum(Rng& rng, const Bank&, Difficulty d) {
    const int dp = static_cast<int>(rng.pick(std::vector<int>{8, 16, 32, 64, 128}));
    const std::int64_t mb = rng.pick(std::vector<std::int64_t>{1, 2, 4});
    const std::int64_t n = rng.pick(std::vector<std::int64_t>{2, 4, 8, 16});
    const std::int64_t seq = rng.pick(std::span<const std::int64_t>(kSeqs));
    const auto c = grad_accum_calc(mb * dp * n, mb, dp, seq);
    const bool steps = rng.integer(0, 1) == 0;
    return numeric(
        "grad_accum",
        fmt::format("Global batch {} sequences of {} tokens, micro-batch {} per GPU, {} data-parallel ranks. "
                    "{}",
                    mb * dp * n, seq, mb, dp,
                    steps ? "How many gradient-accumulation steps per optimizer step?"
                          : "How many tokens per optimizer step (in millions)?"),
        c, steps ? 0 : 1, d);
}

Question gen_tp_comm(Rng& rng, const Bank& b, Difficulty d) {
    const auto& m = any_dense(rng, b);
    const std::int64_t seq = rng.pick(std::span<const std::int64_t>(kSeqs));
    const std::int64_t mb = rng.pick(std::vector<std::int64_t>{1, 2, 4});
    const int tp = static_cast<int>(rng.pick(std::vector<int>{2, 4, 8}));
    const bool sp = rng.integer(0, 1) == 1;
    const auto c = tp_comm_calc(m, seq, mb, tp, sp, 450);
    return numeric(
        "tp_comm",
        fmt::format("Megatron tensor parallelism (tp = {}{}) on {} (hidden {}), sequence {}, micro-batch {}, "
                    "bf16. What is the total size of the collectives' messages of one layer, forward plus "
                    "backward (one message = s·b·h·2 bytes{})?",
                    tp, sp ? ", sequence parallel" : "", m.name, m.hidden, seq, mb,
                    sp ? "; an all-gather and reduce-scatter pair counts as the one all-reduce it replaces" : ""),
        c, 1, d);
}

Question gen_fsdp(Rng& rng, const Bank& b, Difficulty d) {
    const auto& m = any_dense(rng, b);
    const int n = rng.pick(std::span<const int>(kPow2Ranks));
    const auto c = fsdp_vs_ddp_calc(count_parameters(m).total, n, 2.0);
    const bool fsdp = rng.integer(0, 1) == 1;
    return numeric("fsdp_vs_tp",
                   fmt::format("{} ({} parameters) in bf16 over {} GPUs. How many bytes does each GPU send per step "
                               "with {}?",
                               m.name, count_str(count_parameters(m).total), n,
                               fsdp ? "FSDP / ZeRO-3 (parameters gathered forward and backward, gradients "
                                      "reduce-scattered)"
                                    : "plain DDP (one ring all-reduce of the gradients)"),
                   c, fsdp ? 1 : 0, d);
}

Question gen_kv(Rng& rng, const Bank& b, Difficulty d) {
    const auto& g = any_gpu(rng, b);
    const auto& m = serving_model(rng, b, g, 2.0);
    const std::int64_t ctx = rng.pick(std::span<const std::int64_t>(kSeqs));
    const std::int64_t batch = rng.pick(std::vector<std::int64_t>{1, 8, 16, 32, 64});
    const bool int8 = rng.integer(0, 1) == 1;
    const auto c = kv_cache_calc(m, g, ctx, batch, int8 ? Precision::int8 : Precision::bf16, Precision::bf16);
    return numeric(
        "kv_cache",
        fmt::format("Serving {} ({} layers, {} KV heads, head dim {}) with a {} KV cache: {} sequences of {} "
                    "tokens. How large is the KV cache?",
                    m.name, m.layers, m.kv_heads, m.head_dim, int8 ? "INT8" : "bf16", batch, ctx),
        c, 1, d);
}

Question gen_decode(Rng& rng, const Bank& b, Difficulty d) {
    const auto& g = any_gpu(rng, b);
    const bool int8 = rng.integer(0, 1) == 1;
    const auto& m = serving_model(rng, b, g, int8 ? 1.0 : 2.0);
    const auto c = decode_bound_calc(m, g, 1, 0, int8 ? Precision::int8 : Precision::bf16);
    return numeric(
        "decode",
        fmt::format("{} ({} parameters) with {} weights decodes at batch 1 on one {} ({} GB/s HBM). Ignoring "
                    "the KV cache, what is the upper bound on tokens/s?",
                    m.name, count_str(count_parameters(m).total), int8 ? "INT8 (group scales included)" : "bf16",
                    g.display_name, num(g.hbm_GBps)),
        c, 1, d);
}

Question gen_decode_choice(Rng& rng, const Bank& b, Difficulty) {
    const auto& g = any_gpu(rng, b);
    const auto& m = serving_model(rng, b, g, 2.0);
    const auto c = decode_bound_calc(m, g, 1, 0, Precision::bf16);
    return choice(
        rng, "decode_lever",
        fmt::format("{} serves {} at batch 1 and reaches ~{} tokens/s. Which lever raises tokens/s per GPU the "
                    "most?",
                    g.display_name, m.name, num(0.8 * c.steps[1].value)),
        {"batch more sequences per step (continuous batching)", "a GPU with more tensor-core FLOP/s",
         "FP32 accumulation off", "a larger GEMM tile"},
        0,
        "decode at batch 1 is memory-bound: every step reads all weights for one token. Batching reuses "
        "each weight read for many sequences until KV reads or FLOPs bind.\n" +
            render(c));
}

Question gen_littles_law(Rng& rng, const Bank& b, Difficulty d) {
    const auto& m = any_dense(rng, b);
    const double rate = static_cast<double>(rng.integer(2, 50));
    const double lat = static_cast<double>(rng.integer(2, 30));
    const std::int64_t ctx = rng.pick(std::vector<std::int64_t>{1024, 2048, 4096});
    const double kv = 2.0 * m.layers * m.kv_heads * m.head_dim * 2.0 * ctx;
    const auto c = littles_law_calc(rate, lat, kv);
    const bool mem = rng.integer(0, 1) == 1;
    return numeric("littles_law",
                   fmt::format("A {} endpoint with continuous batching receives {} requests/s; each spends {} s in the "
                               "system and holds {} tokens of bf16 KV cache ({} per sequence). {}",
                               m.name, num(rate), num(lat), ctx, bytes_str(kv),
                               mem ? "How much KV cache is in use on average?" : "How many sequences are in flight?"),
                   c, mem ? 1 : 0, d);
}

Question gen_speculative(Rng& rng, const Bank&, Difficulty d) {
    const double alpha = static_cast<double>(rng.integer(5, 9)) / 10.0;
    const int k = static_cast<int>(rng.integer(2, 8));
    const double cost = rng.pick(std::vector<double>{0.02, 0.05, 0.1});
    const auto c = speculative_calc(alpha, k, cost);
    const bool speed = rng.integer(0, 1) == 1;
    return numeric("speculative",
                   fmt::format("Speculative decoding with acceptance rate α = {}, k = {} draft tokens, each draft step "
                               "costing {} of a target step. {}",
                               num(alpha), k, num(cost),
                               speed ? "What speedup over plain decoding?"
                                     : "How many tokens does one target verification pass yield on average?"),
                   c, speed ? 1 : 0, d);
}

Question gen_lora(Rng& rng, const Bank& b, Difficulty d) {
    const auto& m = any_dense(rng, b);
    const int r = static_cast<int>(rng.pick(std::vector<int>{8, 16, 64}));
    const bool q = rng.integer(0, 1) == 1;
    const auto c = lora_calc(m, r, q);
    return numeric(
        "lora",
        fmt::format("{} fine-tuning of {} ({} parameters), rank {} on q, k, v, o. Base {}; adapters trained in "
                    "bf16 with Adam (16 B per adapter parameter). What do the model states take?",
                    q ? "QLoRA" : "LoRA", m.name, count_str(count_parameters(m).total), r,
                    q ? "in NF4 with double-quantised scales (4.127 bits), embeddings bf16" : "frozen in bf16"),
        c, 3, d);
}

Question gen_rlhf(Rng& rng, const Bank& b, Difficulty d) {
    const auto& m = any_dense(rng, b);
    const auto c = rlhf_calc(m);
    return numeric(
        "rlhf",
        fmt::format("PPO on {} ({} parameters): actor and critic trained (bf16 weights, fp32 gradients, fp32 "
                    "master + Adam = 18 B per parameter), reference and reward frozen in bf16, all the same "
                    "size. What do the model states of all four take (before sharding)?",
                    m.name, count_str(count_parameters(m).total)),
        c, 3, d);
}

Question gen_chinchilla(Rng& rng, const Bank& b, Difficulty d) {
    const auto& m = any_dense(rng, b);
    const double n = count_parameters(m).total;
    const auto c = chinchilla_calc(n);
    return numeric("chinchilla",
                   fmt::format("By the Chinchilla rule of thumb (20 tokens per parameter), how many tokens should a "
                               "{}-parameter model ({}) train on?",
                               count_str(n), m.name),
                   c, 0, d);
}

Question gen_scaling(Rng& rng, const Bank&, Difficulty d) {
    switch (rng.integer(0, 3)) {
        case 0: {
            const double s = static_cast<double>(rng.integer(1, 20)) / 100.0;
            const int p = static_cast<int>(rng.pick(std::vector<int>{8, 16, 64, 256, 1024}));
            return numeric("scaling",
                           fmt::format("Amdahl: {}% of a job is serial. What speedup on {} GPUs?", num(100 * s), p),
                           amdahl_calc(s, p), 0, d);
        }
        case 1: {
            const double s = static_cast<double>(rng.integer(1, 20)) / 100.0;
            const int p = static_cast<int>(rng.pick(std::vector<int>{8, 16, 64, 256, 1024}));
            return numeric("scaling",
                           fmt::format("Gustafson: on {} GPUs, {}% of the (scaled) run is serial. What is the scaled "
                                       "speedup?",
                                       p, num(100 * s)),
                           gustafson_calc(s, p), 0, d);
        }
        case 2: {
            const int p1 = static_cast<int>(rng.pick(std::vector<int>{8, 16, 32}));
            const int p2 = p1 * static_cast<int>(rng.pick(std::vector<int>{2, 4, 8}));
            const double t1 = static_cast<double>(rng.integer(60, 600));
            const double eff = static_cast<double>(rng.integer(50, 98)) / 100.0;
            const double t2 = std::stod(num(t1 * p1 / (p2 * eff)));
            return numeric("scaling",
                           fmt::format("Strong scaling: a fixed job takes {} s on {} GPUs and {} s on {} GPUs. What is "
                                       "the scaling efficiency?",
                                       num(t1), p1, num(t2), p2),
                           scaling_efficiency_calc(p1, t1, p2, t2, false), 1, d);
        }
        default: {
            const int p1 = static_cast<int>(rng.pick(std::vector<int>{8, 16, 32}));
            const int p2 = p1 * static_cast<int>(rng.pick(std::vector<int>{4, 16, 64}));
            const double t1 = static_cast<double>(rng.integer(100, 900)) / 100.0;
            const double t2 = std::stod(num(t1 * (1.0 + static_cast<double>(rng.integer(2, 40)) / 100.0)));
            return numeric("scaling",
                           fmt::format("Weak scaling: a step with the same work per GPU takes {} s on {} GPUs and {} s "
                                       "on {} GPUs. What is the weak-scaling efficiency?",
                                       num(t1), p1, num(t2), p2),
                           scaling_efficiency_calc(p1, t1, p2, t2, true), 0, d);
        }
    }
}

Question gen_memory_lever(Rng& rng, const Bank& b, Difficulty) {
    const auto& m = any_dense(rng, b);
    const int dp = static_cast<int>(rng.pick(std::vector<int>{8, 16, 32, 64}));
    const int tp = 8;
    const std::int64_t seq = rng.pick(std::span<const std::int64_t>(kSeqs));
    const std::int64_t mb = rng.pick(std::vector<std::int64_t>{1, 2, 4});
    // Model states under tp = 8 (a node), activations with tp = 8, no SP, no recompute.
    const auto states = model_states_calc(m, dp, 0);
    const double weights = states.steps[0].value / tp, grads = states.steps[1].value / tp,
                 opt = states.steps[2].value / tp;
    const auto act = activations_calc(m, seq, mb, tp, false);
    const double acts = act.steps[1].value;
    const bool opt_dominant = opt >= acts;
    return choice(
        rng, "memory_lever",
        fmt::format("Training {} with tp = 8 and {} data-parallel ranks, sequence {}, micro-batch {}, no "
                    "ZeRO, no recompute: per GPU weights {} GB, gradients {} GB, optimizer {} GB, activations "
                    "{} GB. It does not fit. Which lever first?",
                    m.name, dp, seq, mb, num(weights), num(grads), num(opt), num(acts)),
        {"ZeRO-1: shard the optimizer states over the data-parallel ranks",
         "sequence parallelism + selective recompute: cut the activations",
         "more pipeline stages with the same micro-batch count", "a larger global batch"},
        opt_dominant ? 0 : 1,
        opt_dominant ? "the optimizer states are the largest component and ZeRO-1 divides them by dp at almost "
                       "no communication cost (a reduce-scatter + all-gather instead of an all-reduce)."
                     : "activations are the largest component; SP divides the norm/dropout activations by tp "
                       "and selective recompute drops the attention internals for a few % compute.");
}

constexpr TopicDef kTopics[] = {
    {"params", "parameter counting: QKV with GQA, SwiGLU MLP, embeddings", gen_params},
    {"memory", "training memory per component and ZeRO stage", gen_memory},
    {"activations", "activation memory with and without recompute", gen_activations},
    {"checkpointing", "√L activation checkpointing: memory and recompute", gen_checkpointing},
    {"flops", "FLOPs per token, training (6N) and inference (2N)", gen_flops},
    {"training_time", "training days from N, D, GPUs and MFU", gen_training_time},
    {"mfu", "MFU from measured tokens/s", gen_mfu},
    {"roofline", "GEMM arithmetic intensity and the roofline", gen_roofline},
    {"allreduce", "ring vs tree all-reduce time", gen_allreduce},
    {"allreduce_choice", "ring or tree: bandwidth vs latency regime", gen_allreduce_choice},
    {"bubble", "pipeline bubble (1F1B, interleaved)", gen_bubble},
    {"grad_accum", "gradient accumulation and global batch", gen_grad_accum},
    {"tp_comm", "tensor/sequence-parallel communication volume", gen_tp_comm},
    {"fsdp_vs_tp", "FSDP (ZeRO-3) vs DDP communication volume", gen_fsdp},
    {"kv_cache", "KV cache size, bf16 and INT8", gen_kv},
    {"decode", "decode tokens/s bound from HBM bandwidth", gen_decode},
    {"decode_lever", "which lever raises decode throughput", gen_decode_choice},
    {"littles_law", "continuous batching and Little's law", gen_littles_law},
    {"speculative", "speculative decoding tokens per pass and speedup", gen_speculative},
    {"lora", "LoRA / QLoRA memory", gen_lora},
    {"rlhf", "RLHF (PPO) memory of four models", gen_rlhf},
    {"chinchilla", "Chinchilla: 20 tokens per parameter", gen_chinchilla},
    {"scaling", "Amdahl, Gustafson, strong and weak scaling efficiency", gen_scaling},
    {"memory_lever", "which memory lever first", gen_memory_lever},
};

// ------------------------------------------------------------------------------------------------
// Answer parsing
// ------------------------------------------------------------------------------------------------
enum class Family { bytes, time, ratio, count, flops };

struct UnitInfo {
    Family family;
    double factor;   // one `unit` in the family's base unit
};

UnitInfo unit_info(const std::string& unit) {
    static const std::map<std::string, UnitInfo> k{
        {"KB", {Family::bytes, 1e3}},       {"MB", {Family::bytes, 1e6}},    {"GB", {Family::bytes, 1e9}},
        {"s", {Family::time, 1}},           {"ms", {Family::time, 1e-3}},    {"us", {Family::time, 1e-6}},
        {"days", {Family::time, 86400}},    {"%", {Family::ratio, 0.01}},    {"x", {Family::ratio, 1}},
        {"B", {Family::count, 1e9}},        {"M", {Family::count, 1e6}},     {"B tokens", {Family::count, 1e9}},
        {"M tokens", {Family::count, 1e6}}, {"GFLOP", {Family::flops, 1e9}}, {"FLOP", {Family::flops, 1}},
    };
    const auto it = k.find(unit);
    return it == k.end() ? UnitInfo{Family::count, 1} : it->second;
}

// Multipliers of a suffix in a family (lower-case); negative: unknown.
double suffix_factor(Family f, const std::string& s) {
    static const std::map<std::string, double> bytes{
        {"b", 1},        {"bytes", 1},       {"byte", 1},           {"kb", 1e3},
        {"mb", 1e6},     {"gb", 1e9},        {"tb", 1e12},          {"pb", 1e15},
        {"kib", 1024.0}, {"mib", 1048576.0}, {"gib", 1073741824.0}, {"tib", 1099511627776.0}};
    static const std::map<std::string, double> time{
        {"s", 1},     {"sec", 1},      {"secs", 1},    {"second", 1}, {"seconds", 1},  {"ms", 1e-3},
        {"us", 1e-6}, {"µs", 1e-6},    {"min", 60},    {"mins", 60},  {"minutes", 60}, {"h", 3600},
        {"hr", 3600}, {"hours", 3600}, {"hour", 3600}, {"d", 86400},  {"day", 86400},  {"days", 86400}};
    static const std::map<std::string, double> ratio{{"%", 0.01}, {"x", 1}, {"×", 1}};
    static const std::map<std::string, double> count{{"k", 1e3},  {"m", 1e6},        {"million", 1e6},
                                                     {"b", 1e9},  {"bn", 1e9},       {"billion", 1e9},
                                                     {"t", 1e12}, {"trillion", 1e12}};
    static const std::map<std::string, double> flops{
        {"flop", 1},     {"flops", 1},     {"kflop", 1e3},  {"mflop", 1e6},  {"gflop", 1e9}, {"gflops", 1e9},
        {"tflop", 1e12}, {"tflops", 1e12}, {"pflop", 1e15}, {"eflop", 1e18}, {"zflop", 1e21}};
    const std::map<std::string, double>* t = nullptr;
    switch (f) {
        case Family::bytes: t = &bytes; break;
        case Family::time: t = &time; break;
        case Family::ratio: t = &ratio; break;
        case Family::count: t = &count; break;
        case Family::flops: t = &flops; break;
    }
    const auto it = t->find(s);
    return it == t->end() ? -1.0 : it->second;
}

std::string lower_trim(std::string_view in) {
    std::string s;
    for (char ch : in)
        if (ch != ',' && ch != '_' && ch != '~') s += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const auto a = s.find_first_not_of(" \t\r\n");
    if (a == std::string::npos) return "";
    const auto z = s.find_last_not_of(" \t\r\n");
    return s.substr(a, z - a + 1);
}

// Drops a trailing word that names what is counted ("tokens", "tokens/s", "sequences", ...).
std::string drop_noun(std::string s) {
    static const char* const nouns[] = {"tokens/s", "tok/s", "flop/byte",   "flops/byte", "gpu-hours",
                                        "tokens",   "token", "params",      "parameters", "sequences",
                                        "seqs",     "steps", "checkpoints", "requests"};
    for (const char* n : nouns) {
        const std::string w(n);
        if (s.size() >= w.size() && s.compare(s.size() - w.size(), w.size(), w) == 0) {
            s.erase(s.size() - w.size());
            while (!s.empty() && s.back() == ' ') s.pop_back();
            break;
        }
    }
    return s;
}

}   // namespace

std::span<const TopicDef> topics() { return kTopics; }

const TopicDef* find_topic(std::string_view name) {
    for (const auto& t : kTopics)
        if (t.name == name) return &t;
    return nullptr;
}

std::string topic_names() {
    std::string s;
    for (const auto& t : kTopics) s += (s.empty() ? "" : ", ") + std::string(t.name);
    return s;
}

std::vector<Question> make_session(const Bank& bank, const SessionOptions& o) {
    if (o.count < 1 || o.count > 10000) throw ConfigError(fmt::format("--count: {}: expected 1..10000", o.count));
    std::vector<const TopicDef*> chosen;
    for (const auto& name : o.topics) {
        const auto* t = find_topic(name);
        if (!t) throw ConfigError(fmt::format("--topic: {}: expected one of {}", name, topic_names()));
        chosen.push_back(t);
    }
    Rng rng(o.seed);
    if (chosen.empty()) {
        for (const auto& t : kTopics) chosen.push_back(&t);
        for (std::size_t i = chosen.size(); i > 1; --i)
            std::swap(chosen[i - 1],
                      chosen[static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(i) - 1))]);
    }
    std::vector<Question> out;
    out.reserve(static_cast<std::size_t>(std::max(0, o.count)));
    for (int i = 0; i < o.count; ++i)
        out.push_back(chosen[static_cast<std::size_t>(i) % chosen.size()]->generate(rng, bank, o.difficulty));
    return out;
}

Grade grade(const Question& q, std::string_view answer) {
    Grade g;
    const std::string s = lower_trim(answer);
    if (s.empty()) return g;
    if (q.multiple_choice()) {
        int idx = -1;
        const bool letter = s.size() == 1 || (s.size() == 2 && s[1] == ')');   // "b" or "b)"
        if (letter && s[0] >= 'a' && s[0] < 'a' + static_cast<int>(q.choices.size()))
            idx = s[0] - 'a';
        else if (s.size() == 1 && s[0] >= '1' && s[0] < '1' + static_cast<int>(q.choices.size()))
            idx = s[0] - '1';
        else
            for (std::size_t i = 0; i < q.choices.size(); ++i)
                if (lower_trim(q.choices[i].substr(3)) == s) idx = static_cast<int>(i);
        if (idx < 0) return g;
        g.parsed = true;
        g.given = idx;
        g.correct = idx == static_cast<int>(q.answer);
        return g;
    }
    const char* begin = s.c_str();
    char* end = nullptr;
    const double v = std::strtod(begin, &end);
    if (end == begin || !std::isfinite(v)) return g;
    std::string suffix = drop_noun(lower_trim(std::string_view(end)));
    const UnitInfo u = unit_info(q.unit);
    const double expected = q.answer * u.factor;
    std::vector<double> candidates;   // in the family's base unit
    if (suffix.empty()) {
        candidates = {v * u.factor, v};
    } else {
        const double f = suffix_factor(u.family, suffix);
        if (f < 0) return g;
        candidates = {v * f};
    }
    g.parsed = true;
    g.given = candidates.front() / u.factor;
    for (double c : candidates) {
        if (std::fabs(c - expected) <= q.tolerance * std::fabs(expected) + 1e-12) {
            g.correct = true;
            g.given = c / u.factor;
        }
    }
    return g;
}

}   // namespace llmsim::drills
