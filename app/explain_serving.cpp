// `llmsim explain` for serving scenarios (app/explain.hpp): the binding constraint from one run of the
// serving simulator (continuous batching) or the static-batching estimate, and every serving lever
// re-run through the same model.
#include <algorithm>
#include <cmath>
#include <functional>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/explain.hpp"
#include "app/serving.hpp"
#include "cost_models/inference.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/layout_rules.hpp"

namespace llmsim::app {

namespace {

// The speculative-decoding lever: EAGLE drafts (one target layer per proposed token) of 4 tokens with
// 3.5 tokens accepted per target step, the low end of the 3.6-4.0 that EAGLE (Li et al., ICML 2024,
// Table 1: MT-bench, temperature 0, Vicuna and LLaMA2-Chat 7B-70B) reports with tree drafts; a chain of
// 4 accepts no more than a tree.
constexpr int kSpecLeverTokens = 4;
constexpr double kSpecLeverAcceptanceLength = 3.5;
// The chunked-prefill lever's token budget: vLLM V1's default max_num_batched_tokens for online serving.
constexpr std::int64_t kChunkLeverTokens = 2048;

std::string secs(double s) {
    if (!(s > 0)) return "0 s";
    if (s < 1e-3) return fmt::format("{:.3g} us", s * 1e6);
    if (s < 1) return fmt::format("{:.3g} ms", s * 1e3);
    return fmt::format("{:.3g} s", s);
}

// The measured percentiles an SLO reads (sim slo_misses, slo_ratio): TTFT's (ttft) or TPOT's.
sim::Distribution percentiles(const ServingMeasures& m, bool ttft) {
    sim::Distribution d;
    d.mean = ttft ? m.ttft_s : m.tpot_s;
    d.p90 = ttft ? m.ttft_p90_s : m.tpot_p90_s;
    d.p99 = ttft ? m.ttft_p99_s : m.tpot_p99_s;
    return d;
}
sim::Distribution ttft_of(const ServingMeasures& m) { return percentiles(m, true); }
sim::Distribution tpot_of(const ServingMeasures& m) { return percentiles(m, false); }

std::string slo_text(const Scenario& s, const ServingMeasures& m) {
    const auto& slo = s.inference.slo;
    if (!slo.any()) return "";
    std::vector<std::string> missed;
    for (const auto& x : sim::slo_misses(slo, ttft_of(m), tpot_of(m)))
        missed.push_back(fmt::format("{} {} > {}", x.target.name(), secs(x.measured_s), secs(x.target.seconds)));
    return missed.empty() ? "; SLO met" : fmt::format("; SLO missed ({})", fmt::join(missed, ", "));
}

}   // namespace

ServingMeasures measure_serving(const Scenario& s) {
    ServingMeasures m;
    const auto job = s.serving_job();
    const auto& in = s.inference;
    const auto mem = inference_memory(s.model, s.system, s.parallel, in);
    m.weights_bytes = mem.weights_bytes;
    m.other_bytes = mem.other_bytes;
    m.capacity_bytes = mem.capacity_bytes;
    if (!in.continuous()) {
        const auto e = estimate_inference(job);
        const double replicas = job.replicas();
        m.fits = mem.fits;
        m.kv_bytes = mem.kv_cache_bytes;
        m.need_bytes = mem.total_bytes;
        m.ttft_s = m.ttft_p90_s = m.ttft_p99_s = e.ttft_s;
        m.tpot_s = m.tpot_p90_s = m.tpot_p99_s = e.tpot_s;
        m.e2e_p99_s = e.e2e_latency_s;
        m.output_tokens_per_s = e.output_tokens_per_s;
        m.output_tokens_per_s_per_gpu = e.output_tokens_per_s_per_gpu;
        m.requests_per_s = replicas * static_cast<double>(in.batch) / e.e2e_latency_s;
        m.peak_batch = in.batch;
        m.mean_batch = static_cast<double>(in.batch);
        m.prefill_s = e.ttft_s;
        m.decode_s = e.e2e_latency_s - e.ttft_s;
        m.prefill_compute_fraction = e.prefill_compute_bound ? 1 : 0;
        m.decode_compute_fraction = e.decode_compute_bound ? 1 : 0;
        m.compute_fraction =
            (m.prefill_s * m.prefill_compute_fraction + m.decode_s * m.decode_compute_fraction) / e.e2e_latency_s;
        m.slo_met = sim::slo_misses(in.slo, ttft_of(m), tpot_of(m)).empty();
        return m;
    }
    const auto pool = kv_pool(job);
    m.kv_bytes = pool.pool_bytes;
    m.need_bytes =
        mem.weights_bytes + mem.other_bytes + pool.bytes_per_token * static_cast<double>(in.input_len + in.output_len);
    // The simulator's own admission condition for the longest request (it refuses the run otherwise).
    if (sim::admission_blocks(in, sim::longest_request(in)) > pool.blocks) {
        m.fits = false;
        return m;
    }
    const auto r = sim::simulate_serving(job);
    m.ttft_s = r.ttft_s.mean;
    m.ttft_p90_s = r.ttft_s.p90;
    m.ttft_p99_s = r.ttft_s.p99;
    m.tpot_s = r.tpot_s.mean;
    m.tpot_p90_s = r.tpot_s.p90;
    m.tpot_p99_s = r.tpot_s.p99;
    m.e2e_p99_s = r.e2e_latency_s.p99;
    m.queue_s = r.queue_s.mean;
    m.output_tokens_per_s = r.output_tokens_per_s;
    m.output_tokens_per_s_per_gpu = r.output_tokens_per_s_per_gpu;
    m.requests_per_s = r.requests_per_s;
    m.slo_met = r.slo_met;
    m.preemptions = r.preemptions;
    m.peak_batch = r.peak_batch;
    m.mean_batch = r.mean_batch;
    m.kv_occupancy_max = r.kv_occupancy_max;
    m.kv_held_fraction = r.kv_held_fraction;
    m.seats_held_fraction = r.seats_held_fraction;
    m.budget_held_fraction = r.budget_held_fraction;
    m.prefill_s = r.prefill_iteration_s;
    m.decode_s = r.decode_iteration_s;
    m.prefill_compute_fraction = r.prefill_compute_fraction;
    m.decode_compute_fraction = r.decode_compute_fraction;
    const double total = m.prefill_s + m.decode_s;
    m.compute_fraction =
        total > 0 ? (m.prefill_s * m.prefill_compute_fraction + m.decode_s * m.decode_compute_fraction) / total : 0;
    return m;
}

namespace {

using Get = std::function<double(const ServingMeasures&)>;

// The binding constraint of the base run (e.base): e.binding, e.constraint and the quantity it binds
// (e.quantity, e.unit, e.higher_is_better); returns how to read that quantity from a run.
Get serving_binding(const Scenario& s, ServingExplanation& e) {
    const auto& in = s.inference;
    const bool continuous = in.continuous();
    const bool online = continuous && in.qps > 0;
    const auto& b = e.base;
    Get get;
    auto set_quantity = [&](const char* name, const char* unit, bool higher, Get g) {
        e.quantity = name;
        e.unit = unit;
        e.higher_is_better = higher;
        get = std::move(g);
    };
    const Get ttft_p99 = [](const ServingMeasures& m) { return m.ttft_p99_s; };
    const Get tpot_p99 = [](const ServingMeasures& m) { return m.tpot_p99_s; };
    const Get per_gpu = [](const ServingMeasures& m) { return m.output_tokens_per_s_per_gpu; };
    const std::string slo = slo_text(s, b);
    const double kv_gib = b.kv_bytes / kGiB;
    if (!b.fits) {
        set_quantity("memory needed per GPU", "bytes", false, [](const ServingMeasures& m) { return m.need_bytes; });
        if (b.weights_bytes + b.other_bytes >= b.capacity_bytes) {
            e.binding = "memory";
            e.constraint = fmt::format(
                "memory: the weights ({:.1f} GiB per GPU at {}) and the runtime ({:.1f} GiB) "
                "exceed the {:.1f} GiB of one GPU",
                b.weights_bytes / kGiB, to_string(in.weight_precision), b.other_bytes / kGiB, b.capacity_bytes / kGiB);
        } else {
            e.binding = "KV capacity";
            e.constraint = continuous ? fmt::format(
                                            "KV capacity: the KV cache left per GPU ({:.2f} GiB after {:.1f} GiB of "
                                            "weights) cannot hold the longest request",
                                            kv_gib, b.weights_bytes / kGiB)
                                      : fmt::format(
                                            "KV capacity: the batch of {} needs {:.1f} GiB of KV cache per GPU; with "
                                            "{:.1f} GiB of weights it needs {:.1f} GiB of {:.1f} GiB",
                                            in.batch, kv_gib, b.weights_bytes / kGiB, b.need_bytes / kGiB,
                                            b.capacity_bytes / kGiB);
        }
    } else if (continuous) {
        if (online) {
            // The offline rate estimate reports (offline_capacity_qps: saturated, fill and drain left out); a
            // 1,000-request stream read 38.32 req/s where estimate said 39.45.
            e.capacity_requests_per_s = offline_capacity_qps(s, CapacityOptions{}.max_requests);
            e.utilisation = e.capacity_requests_per_s > 0 ? in.qps / e.capacity_requests_per_s : 0;
        }
        const double queue_share = b.ttft_s > 0 ? b.queue_s / b.ttft_s : 0;
        // The SLO percentile missed by the largest ratio, if any.
        enum class Missed { none, ttft, tpot } missed = Missed::none;
        const auto& target = in.slo;
        const double ttft_ratio = sim::slo_ratio(target, true, ttft_of(b), tpot_of(b));
        const double tpot_ratio = sim::slo_ratio(target, false, ttft_of(b), tpot_of(b));
        if (std::max(ttft_ratio, tpot_ratio) > 1) missed = ttft_ratio >= tpot_ratio ? Missed::ttft : Missed::tpot;
        const double total = b.prefill_s + b.decode_s;
        const double decode_share = total > 0 ? b.decode_s / total : 0;
        const bool kv_bound = b.preemptions > 0 || b.kv_held_fraction >= kHeldShare;
        if (online && (e.utilisation >= kQueueingUtilisation || (!kv_bound && queue_share >= 0.5))) {
            e.binding = "queueing";
            set_quantity("TTFT p99", "s", false, ttft_p99);
            e.constraint = fmt::format(
                "queueing: {:.3g} req/s is {:.0f}% of the deployment's capacity ({:.3g} req/s offline); queueing is "
                "{:.0f}% of the mean TTFT ({} of {}){}; TTFT p99 {}{}",
                in.qps, 100 * e.utilisation, e.capacity_requests_per_s, 100 * queue_share, secs(b.queue_s),
                secs(b.ttft_s),
                b.kv_held_fraction >= kHeldShare
                    ? fmt::format("; the KV cache held requests back {:.0f}% of the run (peak batch {})",
                                  100 * b.kv_held_fraction, b.peak_batch)
                : b.seats_held_fraction >= kHeldShare
                    ? fmt::format("; max_batch {} held requests back {:.0f}% of the run", in.max_batch,
                                  100 * b.seats_held_fraction)
                    : std::string(),
                secs(b.ttft_p99_s), slo);
        } else if (kv_bound) {
            e.binding = "KV capacity";
            if (online && missed == Missed::tpot)
                set_quantity("TPOT p99", "s", false, tpot_p99);
            else if (online)
                set_quantity("TTFT p99", "s", false, ttft_p99);
            else
                set_quantity("output tokens/s per GPU", "tokens/s", true, per_gpu);
            e.constraint = fmt::format(
                "KV capacity: {} preemptions; a waiting request was held back for KV blocks {:.0f}% of the run; "
                "peak batch {} sequences, KV cache peak {:.0f}% of {:.2f} GiB per GPU; TTFT p99 {}, TPOT p99 {}{}",
                b.preemptions, 100 * b.kv_held_fraction, b.peak_batch, 100 * b.kv_occupancy_max, kv_gib,
                secs(b.ttft_p99_s), secs(b.tpot_p99_s), slo);
        } else {
            // The latency that binds: the SLO percentile missed by most, else TTFT p99 when compute-bound
            // prefill holds most of the time, else TPOT p99. A TTFT is the prefill's bound, a TPOT all
            // iterations' (prefill chunks delay decodes).
            const bool ttft = online && (missed == Missed::ttft ||
                                         (missed == Missed::none && b.compute_fraction >= 0.5 && decode_share < 0.5));
            const bool compute = ttft ? b.prefill_compute_fraction >= 0.5 : b.compute_fraction >= 0.5;
            e.binding = compute ? "compute" : "HBM";
            if (!online)
                set_quantity("output tokens/s per GPU", "tokens/s", true, per_gpu);
            else if (ttft)
                set_quantity("TTFT p99", "s", false, ttft_p99);
            else
                set_quantity("TPOT p99", "s", false, tpot_p99);
            e.constraint = fmt::format(
                "{}: {:.0f}% of {} is bound by {}; decode-only iterations are {:.0f}% of the iteration time ({:.0f}% "
                "compute-bound), prefill-carrying {:.0f}% ({:.0f}% compute-bound); mean batch {:.1f} sequences, "
                "weights {:.1f} GiB per GPU read every iteration; {}{}",
                e.binding,
                100 * (ttft ? (compute ? b.prefill_compute_fraction : 1 - b.prefill_compute_fraction)
                            : (compute ? b.compute_fraction : 1 - b.compute_fraction)),
                ttft ? "the prefill-carrying iterations (what TTFT waits for)" : "iteration time",
                compute ? "tensor-core throughput" : "HBM bandwidth", 100 * decode_share,
                100 * b.decode_compute_fraction, 100 * (1 - decode_share), 100 * b.prefill_compute_fraction,
                b.mean_batch, b.weights_bytes / kGiB,
                online ? fmt::format("TTFT p99 {}, TPOT p99 {}", secs(b.ttft_p99_s), secs(b.tpot_p99_s))
                       : fmt::format("{:.0f} output tokens/s per GPU", b.output_tokens_per_s_per_gpu),
                slo);
        }
    } else {
        const bool decode = b.decode_s >= b.prefill_s;
        const bool compute = decode ? b.decode_compute_fraction >= 0.5 : b.prefill_compute_fraction >= 0.5;
        e.binding = compute ? "compute" : "HBM";
        if (decode)
            set_quantity("TPOT", "s", false, [](const ServingMeasures& m) { return m.tpot_s; });
        else
            set_quantity("TTFT", "s", false, [](const ServingMeasures& m) { return m.ttft_s; });
        e.constraint = fmt::format(
            "{}: the {} phase holds {:.0f}% of the latency ({} of {}) and is bound by {}; batch {}, weights {:.1f} "
            "GiB per GPU{}",
            e.binding, decode ? "decode" : "prefill", 100 * (decode ? b.decode_s : b.prefill_s) / b.e2e_p99_s,
            secs(decode ? b.decode_s : b.prefill_s), secs(b.e2e_p99_s),
            compute ? "tensor-core throughput" : "HBM bandwidth (weights and KV read every step)", in.batch,
            b.weights_bytes / kGiB, slo);
    }
    return get;
}

// Every serving lever, each re-run through measure_serving, appended to e.levers with its effect on the
// binding quantity (`get`).
void serving_levers(const Scenario& s, ServingExplanation& e, const Get& get) {
    const auto& in = s.inference;
    const bool continuous = in.continuous();
    const auto& b = e.base;
    const int gpus0 = s.parallel.world();
    const auto& p0 = s.parallel;
    auto better = [&](double a, double x) { return e.higher_is_better ? a > x * (1 + 1e-9) : a < x * (1 - 1e-9); };
    auto lever = [&](std::string name, std::string change, std::string tradeoff,
                     const std::function<void(Scenario&)>& apply) {
        Scenario x = s;
        apply(x);
        x.gpus = x.parallel.world();
        if (x.parallel.tp < 1 || x.parallel.dp < 1 || tp_rules(x.model, x.parallel.tp) != 0) return;
        if (x.parallel.tp > std::max(1, s.system.scaleup_domain)) return;
        ServingMeasures m;
        try {
            m = measure_serving(x);
        } catch (const ConfigError&) {
            return;
        }
        ServingLever l;
        l.name = std::move(name);
        l.change = std::move(change);
        l.tradeoff = std::move(tradeoff);
        l.gpus = x.parallel.world();
        l.after = m;
        l.binding_after = get(m);
        l.improves = (m.fits || !b.fits) && better(l.binding_after, e.binding_value);
        l.scenario = std::move(x);
        e.levers.push_back(std::move(l));
    };
    const auto& B = in.batch;
    if (continuous) {
        if (in.max_batch > 0) {
            lever("larger max batch", fmt::format("max_batch {} -> {}", in.max_batch, 2 * in.max_batch),
                  "more sequences per iteration: throughput up, less queueing; longer iterations (TPOT) and more KV",
                  [](Scenario& x) { x.inference.max_batch *= 2; });
            if (in.max_batch >= 2)
                lever("smaller max batch", fmt::format("max_batch {} -> {}", in.max_batch, in.max_batch / 2),
                      "shorter iterations (TPOT down); fewer sequences in flight, more queueing",
                      [](Scenario& x) { x.inference.max_batch /= 2; });
        } else if (b.fits && b.peak_batch >= 2) {
            const std::int64_t cap = b.peak_batch / 2;
            lever("cap the batch", fmt::format("max_batch (KV-limited, peak {}) -> {}", b.peak_batch, cap),
                  "shorter decode iterations and fewer preemptions; fewer sequences in flight, more queueing",
                  [cap](Scenario& x) { x.inference.max_batch = cap; });
        }
        const double st = decode_step_tokens(in.speculative);
        if (in.max_batch_tokens > 0) {
            lever("larger prefill chunks",
                  fmt::format("max_batch_tokens {} -> {}", in.max_batch_tokens, 2 * in.max_batch_tokens),
                  "fewer, larger prefill iterations: TTFT down; decodes stall longer behind them (TPOT p99 up)",
                  [](Scenario& x) { x.inference.max_batch_tokens *= 2; });
            if (static_cast<double>(in.max_batch_tokens) / 2.0 >= st)
                lever("smaller prefill chunks",
                      fmt::format("max_batch_tokens {} -> {}", in.max_batch_tokens, in.max_batch_tokens / 2),
                      "decodes stall less behind prefills (TPOT p99 down); long prompts take more iterations (TTFT up)",
                      [](Scenario& x) { x.inference.max_batch_tokens /= 2; });
        } else {
            lever("chunked prefill", fmt::format("max_batch_tokens none -> {}", kChunkLeverTokens),
                  "prompts prefilled in chunks mixed with decodes (Sarathi-Serve): TPOT p99 down; TTFT of long "
                  "prompts up",
                  [](Scenario& x) { x.inference.max_batch_tokens = kChunkLeverTokens; });
        }
    } else {
        lever("larger batch", fmt::format("batch {} -> {}", B, 2 * B),
              "more sequences share each weight read: throughput up; TTFT, TPOT and KV cache up",
              [](Scenario& x) { x.inference.batch *= 2; });
        const std::int64_t fit = inference_memory(s.model, s.system, s.parallel, in).max_batch;
        if (fit >= 1 && fit < B / 2)
            lever("largest batch that fits", fmt::format("batch {} -> {}", B, fit),
                  "the KV cache of the batch fits beside the weights; fewer sequences per weight read",
                  [fit](Scenario& x) { x.inference.batch = fit; });
        if (B >= 2)
            lever("smaller batch", fmt::format("batch {} -> {}", B, B / 2),
                  "shorter prefill and decode steps, less KV; lower throughput",
                  [](Scenario& x) { x.inference.batch /= 2; });
    }
    const int g = in.quant_group_size;
    const double wb = weight_bytes_per_param(in.weight_precision, g);
    const std::tuple<Precision, const char*, const char*> quant[] = {
        {Precision::fp8, "FP8 weights",
         "half the weight bytes of 16-bit and FP8 tensor cores; a small accuracy loss (calibrated scales)"},
        {Precision::int8, "INT8 weights",
         "half the weight bytes of 16-bit (weight-only, 16-bit compute); accuracy "
         "loss to check per model"},
        {Precision::int4, "INT4 weights",
         "a quarter of the weight bytes of 16-bit (AWQ/GPTQ, weight-only); the largest accuracy risk"}};
    for (const auto& [prec, name, tradeoff] : quant) {
        if (prec == Precision::fp8 && !(s.system.gpu.peak(Precision::fp8) > 0)) continue;
        if (!(weight_bytes_per_param(prec, g) < wb)) continue;
        const Precision pr = prec;
        lever(name, fmt::format("weights {} -> {}", to_string(in.weight_precision), to_string(prec)), tradeoff,
              [pr](Scenario& x) { x.inference.weight_precision = pr; });
    }
    if (precision_bytes(in.kv_precision) > precision_bytes(Precision::fp8))
        lever("FP8 KV cache", fmt::format("kv {} -> fp8", to_string(in.kv_precision)),
              "twice the tokens per GiB of KV cache and half the KV reads per decode step; a small accuracy loss at "
              "long context",
              [](Scenario& x) { x.inference.kv_precision = Precision::fp8; });
    if (p0.tp * 2 <= s.system.scaleup_domain) {
        if (p0.dp % 2 == 0)
            lever("more tensor parallelism",
                  fmt::format("tp {} -> {}, replicas {} -> {}", p0.tp, 2 * p0.tp, p0.dp, p0.dp / 2),
                  "weights and KV split over twice the GPUs: shorter iterations, more KV per replica; per-layer "
                  "all-reduces and half the replicas",
                  [](Scenario& x) {
                      x.parallel.tp *= 2;
                      x.parallel.dp /= 2;
                  });
        else
            lever("more tensor parallelism", fmt::format("tp {} -> {} ({} GPUs)", p0.tp, 2 * p0.tp, 2 * gpus0),
                  "weights and KV split over twice the GPUs: shorter iterations, more KV per replica; per-layer "
                  "all-reduces and twice the GPUs",
                  [](Scenario& x) { x.parallel.tp *= 2; });
    }
    if (p0.tp >= 2 && p0.tp % 2 == 0)
        lever("less tensor parallelism",
              fmt::format("tp {} -> {}, replicas {} -> {}", p0.tp, p0.tp / 2, p0.dp, 2 * p0.dp),
              "twice the replicas (half the traffic each) and no TP all-reduces; half the HBM per replica for weights "
              "and KV, slower steps",
              [](Scenario& x) {
                  x.parallel.tp /= 2;
                  x.parallel.dp *= 2;
              });
    lever("more replicas", fmt::format("replicas {} -> {} ({} GPUs)", p0.dp, 2 * p0.dp, 2 * gpus0),
          "half the traffic per replica: less queueing; twice the GPUs", [](Scenario& x) { x.parallel.dp *= 2; });
    if (p0.dp % 2 == 0)
        lever("fewer replicas", fmt::format("replicas {} -> {} ({} GPUs)", p0.dp, p0.dp / 2, gpus0 / 2),
              "half the GPUs; twice the traffic per replica", [](Scenario& x) { x.parallel.dp /= 2; });
    if (!in.speculative.enabled)
        lever("speculative decoding (EAGLE)",
              fmt::format("speculative off -> eagle, {} tokens, {} accepted per step", kSpecLeverTokens,
                          kSpecLeverAcceptanceLength),
              "fewer target steps per token while decode is HBM-bound; verifying k + 1 tokens costs compute at large "
              "batch, and the gain follows the traffic's acceptance",
              [](Scenario& x) {
                  auto& sp = x.inference.speculative;
                  sp = SpeculativeConfig{};
                  sp.enabled = true;
                  sp.method = "eagle";
                  sp.tokens = kSpecLeverTokens;
                  sp.acceptance_length = kSpecLeverAcceptanceLength;
              });
    else
        lever("no speculative decoding", fmt::format("speculative {} -> off", in.speculative.method),
              "no draft work or verification tokens; one token per target step",
              [](Scenario& x) { x.inference.speculative = SpeculativeConfig{}; });
}

// The recommended lever (e.recommended) and its sentence (e.recommendation).
void serving_recommendation(const Scenario& s, ServingExplanation& e) {
    const auto& in = s.inference;
    const bool online = in.continuous() && in.qps > 0;
    const auto& b = e.base;
    const int gpus0 = s.parallel.world();
    // Recommendation: improves and runs; then meets the SLO, then the same GPU count, then the best binding
    // quantity (memory: the best outcome among the levers that fit).
    const bool has_slo = in.slo.any();
    auto outcome = [&](const ServingLever& l) {
        if (b.fits) return e.higher_is_better ? -l.binding_after : l.binding_after;
        return online ? l.after.e2e_p99_s : -l.after.output_tokens_per_s_per_gpu;
    };
    int best = -1;
    for (std::size_t i = 0; i < e.levers.size(); ++i) {
        const auto& l = e.levers[i];
        if (!l.after.fits || !l.improves) continue;
        if (best < 0) {
            best = static_cast<int>(i);
            continue;
        }
        const auto& c = e.levers[static_cast<std::size_t>(best)];
        const auto key = [&](const ServingLever& v) {
            return std::make_tuple(has_slo && !v.after.slo_met, v.gpus != gpus0, outcome(v));
        };
        if (key(l) < key(c)) best = static_cast<int>(i);
    }
    // Nothing fits alone: the largest saving at the same GPU count.
    for (std::size_t i = 0; best < 0 && !b.fits && i < e.levers.size(); ++i) {
        const auto& l = e.levers[i];
        if (!l.improves || l.gpus != gpus0) continue;
        int k = static_cast<int>(i);
        for (std::size_t j = i + 1; j < e.levers.size(); ++j)
            if (e.levers[j].improves && e.levers[j].gpus == gpus0 &&
                e.levers[j].binding_after < e.levers[static_cast<std::size_t>(k)].binding_after)
                k = static_cast<int>(j);
        best = k;
    }
    e.recommended = best;
    auto value = [&](double v) {
        if (e.unit == "bytes") return fmt::format("{:.1f} GiB", v / kGiB);
        if (e.unit == "s") return secs(v);
        return fmt::format("{:.0f} tokens/s", v);
    };
    if (best >= 0) {
        const auto& l = e.levers[static_cast<std::size_t>(best)];
        const auto& a = l.after;
        // The other measures, before -> after (only after when the scenario did not fit).
        std::vector<std::string> also;
        auto change = [&](const std::string& before, const std::string& after) {
            return b.fits ? before + " -> " + after : after;
        };
        if (a.fits) {
            if (e.quantity.rfind("TTFT", 0) != 0)
                also.push_back("TTFT p99 " + change(secs(b.ttft_p99_s), secs(a.ttft_p99_s)));
            if (e.quantity.rfind("TPOT", 0) != 0 && (b.tpot_p99_s > 0 || a.tpot_p99_s > 0))
                also.push_back("TPOT p99 " + change(secs(b.tpot_p99_s), secs(a.tpot_p99_s)));
            if (e.quantity != "output tokens/s per GPU")
                also.push_back(change(fmt::format("{:.0f}", b.output_tokens_per_s_per_gpu),
                                      fmt::format("{:.0f}", a.output_tokens_per_s_per_gpu)) +
                               " output tokens/s per GPU");
        }
        e.recommendation = fmt::format("{} ({}): {} {} -> {}{}{}{}{}", l.name, l.change, e.quantity,
                                       value(e.binding_value), value(l.binding_after),
                                       b.fits   ? ""
                                       : a.fits ? " (fits)"
                                                : " (still too large)",
                                       has_slo && a.fits ? (a.slo_met ? ", SLO met" : ", SLO still missed") : "",
                                       also.empty() ? "" : "; ", fmt::format("{}", fmt::join(also, ", ")));
    } else {
        e.recommendation =
            fmt::format("no single lever improves the {}: combine levers or run `llmsim search`", e.quantity);
    }
}

}   // namespace

ServingExplanation explain_serving(const Scenario& s) {
    if (!s.is_inference) throw ConfigError("/training: present: `explain_serving` covers serving scenarios");
    // Its levers (replicas, tp, max_batch, chunk) are a colocated deployment's; a disaggregated one's are
    // the split between its pools, which `llmsim estimate` reports pool by pool.
    if (s.inference.disaggregation.enabled())
        throw ConfigError(
            "/inference/disaggregation: explain reads colocated deployments; `llmsim estimate` reports each pool of a "
            "disaggregated one (time iterating, batch, KV transfers), and `--qps max` its capacity");
    if (s.inference.qps_max)   // it explained an offline run (qps 0) and reported the SLO missed
        throw ConfigError(
            "/inference/qps: \"max\": expected a rate: explain reads a deployment at a rate; `llmsim estimate --qps "
            "max` finds the largest one meeting the SLO, and explain at that rate says what binds there");
    sim::refuse_expert_parallel(s, "explain's levers (replicas, tp)");
    sim::refuse_autoscale(s, "explain's levers (replicas, tp)");
    ServingExplanation e;
    e.base = measure_serving(s);
    const auto& b = e.base;
    e.memory_parts = {{"weights", b.weights_bytes},
                      {"runtime", b.other_bytes},
                      {s.inference.continuous() ? "KV cache pool" : "KV cache (batch)", b.kv_bytes},
                      {"capacity", b.capacity_bytes}};
    const Get get = serving_binding(s, e);
    e.binding_value = get(b);
    serving_levers(s, e, get);
    serving_recommendation(s, e);
    return e;
}

}   // namespace llmsim::app
