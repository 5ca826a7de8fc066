#include "app/serving.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cost_models/memory.hpp"
#include "hardware_db/errors.hpp"
#include "sim/length_dist.hpp"
#include "sim/parallel.hpp"
#include "sim/router.hpp"

namespace llmsim::app {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string gib_text(double bytes) { return fmt::format("{:.1f} GiB", bytes / kGiB); }

// Why a stream's longest request does not fit the KV cache of one replica (empty when it does).
std::string longest_fits(const Scenario& s, const InferenceConfig& in) {
    const auto pool = kv_pool(s.serving_job());
    const std::int32_t longest = sim::longest_request(in);
    const std::int64_t need = sim::admission_blocks(in, longest);
    if (pool.blocks > 0 && need <= pool.blocks) return {};
    return fmt::format(
        "the KV cache left per GPU ({}) holds {} tokens; the stream's longest request needs {} (input + output, "
        "{} blocks of {} tokens)",
        gib_text(pool.pool_bytes), pool.blocks * kKvBlockTokens, need * kKvBlockTokens, need, kKvBlockTokens);
}

Scenario at_rate(const Scenario& s, double qps, std::int64_t requests);

// Whether the offline probe's stream (offline_capacity_qps) has no request the KV cache cannot hold.
bool fits_longest_offline(const Scenario& s, std::int64_t max_requests) {
    const int replicas = s.serving_job().replicas();
    InferenceConfig in = s.inference;
    in.qps = 0;
    in.qps_max = false;
    in.requests = std::min<std::int64_t>(max_requests, kOfflineProbeRequests * replicas);
    return longest_fits(s, in).empty();
}

Scenario at_rate(const Scenario& s, double qps, std::int64_t requests) {
    Scenario r = s;
    r.inference.qps_max = false;
    r.inference.qps = qps;
    r.inference.requests = requests;
    return r;
}

std::string slo_misses(const InferenceConfig& in, const sim::ServingResult& r) {
    std::vector<std::string> parts;
    for (const auto& [cls, m] : sim::stream_slo_misses(in, r))
        parts.push_back(fmt::format("{}{} {:.3g} s > {:.3g} s", cls.empty() ? "" : cls + " ", m.target.name(),
                                    m.measured_s, m.target.seconds));
    if (!r.steadiness.keeps_up)
        parts.push_back(fmt::format("served {:.4g} of {:.4g} req/s offered (the queue grows)", r.steadiness.served_qps,
                                    r.steadiness.offered_qps));
    return fmt::format("{}", fmt::join(parts, "; "));
}

}   // namespace

namespace {
// Each pool of a disaggregated deployment holds the model, the decode pool every request whole, the prefill
// pool every prompt (and its first token).
ServingFit disaggregated_fit(const Scenario& s) {
    const auto& d = s.inference.disaggregation;
    Scenario decode = s;
    decode.inference = sim::pool_inference(s.inference, false);
    decode.gpus = s.gpus - d.prefill_gpus;
    ServingFit f = serving_fit(decode);
    if (!f.fits) {
        f.reason = "decode pool: " + f.reason;
        return f;
    }
    Scenario prefill = s;
    prefill.parallel = sim::prefill_layout(d);
    prefill.inference = sim::pool_inference(s.inference, true);
    prefill.gpus = d.prefill_gpus;
    const auto m = inference_memory(prefill.model, prefill.system, prefill.parallel, prefill.inference);
    if (m.weights_bytes + m.other_bytes >= m.capacity_bytes) {
        f.fits = false;
        f.reason = fmt::format("prefill pool: weights {} + runtime {} per GPU > {} capacity (tp {})",
                               gib_text(m.weights_bytes), gib_text(m.other_bytes), gib_text(m.capacity_bytes),
                               prefill.parallel.tp);
        return f;
    }
    std::int32_t longest = 0;
    for (const auto& r : sim::request_stream(prefill.inference)) longest = std::max(longest, r.input);
    const auto pool = kv_pool(prefill.serving_job());
    const std::int64_t need = sim::admission_blocks(prefill.inference, longest + 1.0);
    if (pool.blocks <= 0 || need > pool.blocks) {
        f.fits = false;
        f.reason = fmt::format(
            "prefill pool: the KV cache left per GPU ({}) holds {} tokens; the stream's longest "
            "prompt needs {} (tp {})",
            gib_text(pool.pool_bytes), pool.blocks * kKvBlockTokens, need * kKvBlockTokens, prefill.parallel.tp);
    }
    return f;
}
}   // namespace

ServingFit serving_fit(const Scenario& s) {
    if (s.inference.disaggregation.enabled()) return disaggregated_fit(s);
    ServingFit f;
    const auto& in = s.inference;
    const auto m = inference_memory(s.model, s.system, s.parallel, in);
    if (m.weights_bytes + m.other_bytes >= m.capacity_bytes) {
        f.fits = false;
        f.reason = fmt::format("weights {} + runtime {} per GPU > {} capacity", gib_text(m.weights_bytes),
                               gib_text(m.other_bytes), gib_text(m.capacity_bytes));
        return f;
    }
    if (!in.continuous()) {
        if (m.fits) return f;
        f.fits = false;
        f.reason = fmt::format(
            "{} per GPU needed (weights {}, KV cache {} for the batch of {}, activations {}) > {} capacity; {} "
            "sequences fit",
            gib_text(m.total_bytes), gib_text(m.weights_bytes), gib_text(m.kv_cache_bytes), in.batch,
            gib_text(m.activations_bytes), gib_text(m.capacity_bytes), m.max_batch);
        return f;
    }
    f.reason = longest_fits(s, in);
    f.fits = f.reason.empty();
    return f;
}

std::int64_t stream_requests(const InferenceConfig& in, double qps, double span_s, std::int64_t max_requests) {
    const double want = sim::wanted_stream_requests(in, qps, span_s);
    const double n = std::max(static_cast<double>(in.requests), std::isfinite(want) ? want : 0.0);
    return static_cast<std::int64_t>(std::min(n, static_cast<double>(max_requests)));
}

std::vector<std::string> steadiness_notes(const InferenceConfig& in, const sim::ServingResult& r) {
    std::vector<std::string> out;
    const auto& d = r.steadiness;
    if (!d.applies) return out;
    if (!(in.qps > 0)) {
        if (!d.long_enough)
            out.push_back(fmt::format(
                "too few requests to measure the capacity: a replica had requests waiting for only {:.3g} s, and "
                "fewer than {:g} of its batches finished there after its first; the rates are this batch's ({} "
                "requests over its {:.3g}-s makespan, drain included), below the deployment's steady "
                "throughput: expected several times more requests",
                d.saturated_s, sim::kSaturatedBatches, in.requests, r.makespan_s));
        return out;
    }
    if (!d.keeps_up)
        out.push_back(fmt::format(
            "past capacity: {:.4g} req/s served of {:.4g} offered in the steady window; the queue grows with the "
            "stream, so these percentiles depend on its length (try qps \"max\" for the largest rate it holds)",
            d.served_qps, d.offered_qps));
    if (!d.covers_period)
        out.push_back(fmt::format(
            "the stream ends {:.4g} s into the rate profile's {:.4g}-s period: its later slices have no requests "
            "and the percentiles describe only the part covered: expected about {} requests",
            d.last_arrival_s, in.rate_profile.period_s,
            stream_requests(in, in.qps, in.rate_profile.period_s, INT64_MAX)));
    if (d.arrival_span_s < sim::kSteadySpans * d.warmup_s)
        out.push_back(fmt::format(
            "stream too short for a steady state: {} requests arrive over {:.3g} s, {:.1f} times the mean time in "
            "system ({:.3g} s); warm-up and drain decide the percentiles: expected at least {:g} times (about {} "
            "requests)",
            in.requests, d.arrival_span_s, d.warmup_s > 0 ? d.arrival_span_s / d.warmup_s : 0.0, d.warmup_s,
            sim::kSteadySpans, stream_requests(in, in.qps, sim::kSteadySpans * d.warmup_s * 1.2, INT64_MAX)));
    return out;
}

std::optional<sim::ServingResult> offline_probe(const Scenario& s, std::int64_t max_requests, std::int64_t peak_batch) {
    const std::int64_t replicas = s.serving_job().replicas();
    sim::ServingOptions one;
    one.sample_replica = 0;
    auto run = [&](std::int64_t per_replica) -> std::optional<sim::ServingResult> {
        Scenario off = at_rate(s, 0.0, std::min<std::int64_t>(max_requests, per_replica * replicas));
        // Everything queued at once: a load-aware router past the work limit deals the requests as turns do.
        if (sim::router_past_work_limit(off.inference.router, replicas, static_cast<double>(off.inference.requests),
                                        one.max_sequence_steps))
            off.inference.router = RouterPolicy::round_robin;
        if (!longest_fits(off, off.inference).empty()) return std::nullopt;
        return sim::simulate_serving(off.serving_job(), one);
    };
    auto r = run(kOfflineProbeRequests);
    if (!r || r->steadiness.long_enough) return r;
    const std::int64_t longer = kOfflineProbeBatches * std::max(peak_batch, r->peak_batch);
    if (longer > kOfflineProbeRequests && kOfflineProbeRequests * replicas < max_requests)
        if (auto l = run(longer)) r = std::move(l);
    return r;
}

double offline_capacity_qps(const Scenario& s, std::int64_t max_requests) {
    const auto r = offline_probe(s, max_requests, 0);
    return r ? r->requests_per_s : 0.0;
}

SloCapacity slo_capacity(const Scenario& s, const CapacityOptions& o) {
    const auto& in = s.inference;
    if (!in.slo.any())
        throw ConfigError(
            "/inference/slo: missing: expected ttft_p99_s, tpot_p99_s, ttft_p90_s and/or tpot_p90_s, the targets the "
            "capacity "
            "(qps \"max\") must meet");
    SloCapacity c;
    const int replicas = s.serving_job().replicas();
    sim::ServingOptions one, all;
    one.sample_replica = 0;
    // The offline throughput bounds every rate that keeps up.
    {
        const Scenario off = at_rate(s, 0.0, std::min<std::int64_t>(o.max_requests, kOfflineProbeRequests * replicas));
        const std::string why = longest_fits(off, off.inference);
        if (!why.empty()) {
            c.why_none = "does not fit: " + why;
            return c;
        }
        c.offline_qps = offline_capacity_qps(s, o.max_requests);
        ++c.simulations;
    }
    if (!(c.offline_qps > 0)) {
        c.why_none = "the deployment completes no request offline";
        return c;
    }
    // A rate profile: every probe's stream must span the period, up to the offline rate (the search's range).
    if (in.rate_profile.enabled() &&
        c.offline_qps * in.rate_profile.period_s * sim::arrival_dispersion(in) > static_cast<double>(o.max_requests))
        sim::refuse_uncovered_profile(in, c.offline_qps, o.max_requests);
    struct Probe {
        bool meets = false;
        std::int64_t requests = 0;
        sim::ServingResult r;
    };
    std::string refused;   // a probe's stream drew a request the KV cache cannot hold
    auto run = [&](const Scenario& sc, const sim::ServingOptions& so) {
        Probe p;
        p.requests = sc.inference.requests;
        if (const auto why = longest_fits(sc, sc.inference); !why.empty()) {
            refused = why;
            return p;
        }
        p.r = sim::simulate_serving(sc.serving_job(), so);
        ++c.simulations;
        p.meets = p.r.slo_met;
        return p;
    };
    // A rate judged on one sampled replica's share of a stream spanning span_s (a probe), or on the whole
    // deployment: a fleet whose stream would pass max_requests is judged as fewer of its replicas at the
    // same rate each (sim::sampled_probe_scenario), even whole, as its capped stream would give each
    // replica too few requests to miss.
    // A router that reads the replicas' load over a stream past the simulator's work limit (every arrival
    // reads every replica) is judged as round robin, as `search` judges its candidates: balancing on load
    // serves a fleet at least as well as turns, so the rate found is a lower bound of its own (said so).
    auto judged = [&](double qps, double span_s, bool whole) {
        Scenario full = at_rate(s, qps, stream_requests(in, qps, span_s, o.max_requests));
        if (sim::router_past_work_limit(full.inference.router, replicas, static_cast<double>(full.inference.requests),
                                        o.max_router_loads)) {
            full.inference.router = RouterPolicy::round_robin;
            c.routed_round_robin = true;
        }
        const Scenario fewer = sim::sampled_probe_scenario(full, span_s, o.max_requests);
        if (whole && fewer.parallel.dp == full.parallel.dp) return run(full, all);
        sim::ServingOptions so = one;
        so.fleet_replicas = replicas;
        return run(fewer, so);
    };
    auto probe_run = [&](double qps, double span_s) { return judged(qps, span_s, false); };
    auto probe = [&](double qps) {
        Probe p = probe_run(qps, o.stream_s);
        // (A stream past capacity is not lengthened: its time in system grows with it.)
        const auto& d = p.r.steadiness;
        if (refused.empty() && !d.long_enough && d.keeps_up && p.requests < o.max_requests) {
            p = probe_run(qps, 1.25 * sim::kSteadySpans * d.warmup_s);
        }
        if (refused.empty() && !p.r.steadiness.long_enough && p.r.steadiness.keeps_up && p.meets)
            c.stream_capped = true;
        return p;
    };
    double hi = 1.2 * c.offline_qps;
    Probe ph = probe(hi);
    for (int i = 0; i < 4 && ph.meets && refused.empty(); ++i) ph = probe(hi *= 2.0);
    double lo = 0.5 * c.offline_qps;
    Probe pl = probe(lo);
    for (int i = 0; i < 8 && !pl.meets && refused.empty(); ++i) {
        hi = lo;
        ph = pl;
        pl = probe(lo *= 0.25);
    }
    if (!refused.empty()) {
        c.why_none = "does not fit: " + refused;
        return c;
    }
    if (!pl.meets) {
        c.why_none = fmt::format("no rate meets the SLO: at {:.3g} req/s ({:.2g}% of the offline capacity) {}", lo,
                                 100.0 * lo / c.offline_qps, slo_misses(in, pl.r));
        return c;
    }
    if (ph.meets) lo = hi;   // still meeting far past the offline capacity (a loose SLO): take the last rate
    while (hi / lo - 1.0 > o.tolerance && c.simulations < o.max_simulations) {
        const double mid = std::sqrt(lo * hi);
        if (probe(mid).meets)
            lo = mid;
        else
            hi = mid;
    }
    // The answer on the whole deployment: it must meet (stepped down while the replicas' mix misses).
    Probe at = judged(lo, o.stream_s, true);
    for (int i = 0; i < 8 && !at.meets && refused.empty(); ++i) {
        lo *= 1.0 - 2.0 * o.tolerance;
        at = judged(lo, o.stream_s, true);
    }
    // A rate profile's answer judged on part of its period could miss a later peak: refused, not answered.
    if (refused.empty() && in.rate_profile.enabled() && !at.r.steadiness.covers_period)
        sim::refuse_uncovered_profile(in, lo, o.max_requests);
    if (!at.meets) {
        c.why_none = refused.empty()
                         ? fmt::format("the whole deployment misses at {:.4g} req/s: {}", lo, slo_misses(in, at.r))
                         : "does not fit: " + refused;
        return c;
    }
    c.qps = lo;
    c.requests = stream_requests(in, lo, o.stream_s, o.max_requests);   // the whole deployment's stream
    c.above_qps = 1.05 * lo;
    const Probe up = judged(c.above_qps, o.stream_s, true);
    c.above_requests = up.requests;
    c.above = up.r;
    c.above_misses = refused.empty() ? slo_misses(in, up.r) : "does not fit: " + refused;
    return c;
}

namespace {
// The published Server runs' range for a capacity answer of this deployment (app/accuracy).
std::optional<PublishedRange> capacity_range(const Scenario& s, double qps) {
    return published_range(builtin_residuals(), "slo_capacity_qps", "poisson", to_string(s.inference.engine.kind),
                           s.system.gpu.name, qps);
}
}   // namespace

ServingEconomics serving_economics(const Scenario& s, double output_tokens_per_s, double input_tokens_per_s,
                                   double gpus_held) {
    ServingEconomics e;
    const double gpus = gpus_held > 0 ? gpus_held : s.gpus;
    e.board_power_W = gpus * s.system.gpu.tdp_W;
    if (output_tokens_per_s > 0) e.joules_per_output_token_max = e.board_power_W / output_tokens_per_s;
    const double price = s.inference.price_per_gpu_hour;
    if (price > 0) {
        e.usd_per_hour = gpus * price;
        if (output_tokens_per_s > 0)
            e.usd_per_million_output_tokens = e.usd_per_hour / 3600 / output_tokens_per_s * 1e6;
        const double all = output_tokens_per_s + input_tokens_per_s;
        if (all > 0) e.usd_per_million_tokens = e.usd_per_hour / 3600 / all * 1e6;
    }
    return e;
}

ServingEconomics candidate_economics(const Scenario& at, const sim::CapacityCandidate& c, double traffic_qps) {
    const double share = at.inference.qps > 0 ? traffic_qps / at.inference.qps : 1.0;
    return serving_economics(sim::capacity_scenario(at, c), share * c.result.output_tokens_per_s,
                             share * c.result.input_tokens_per_s);
}

ServingEvaluation evaluate_serving(const Scenario& s, const ServingEvalOptions& o) {
    ServingEvaluation e;
    e.scenario = s;
    const auto& in = s.inference;
    e.closed_form = estimate_inference(s.serving_job());
    e.fit = serving_fit(s);
    if (!e.fit.fits) return e;
    if (!in.continuous()) {
        const double out = e.closed_form.output_tokens_per_s;
        const double prompt_share = in.output_len > 0 ? static_cast<double>(in.input_len) / in.output_len : 0.0;
        e.economics = serving_economics(s, out, out * prompt_share);
        return e;
    }
    sim::ServingOptions so;
    so.timeline = o.timeline;
    if (in.qps_max) {
        e.capacity = slo_capacity(s, o.capacity);
        const auto& c = *e.capacity;
        if (c.qps <= 0) return e;   // the reason is the capacity's why_none (text: "capacity 0: ...")
        e.scenario = at_rate(s, c.qps, c.requests);
        if (c.routed_round_robin) {
            Scenario turns = e.scenario;
            turns.inference.router = RouterPolicy::round_robin;
            e.continuous = sim::simulate_serving(turns.serving_job(), so);
            e.notes.push_back(
                fmt::format("\"{}\" over {} replicas reads every replica's load per arrival, past the simulator's work "
                            "limit at these streams: the rates were judged as round robin, so the capacity is a lower "
                            "bound of this router's",
                            to_string(in.router), s.serving_job().replicas()));
        } else {
            e.continuous = sim::simulate_serving(e.scenario.serving_job(), so);
        }
        e.capacity->published = capacity_range(s, c.qps);
        if (c.stream_capped)
            e.notes.push_back(
                fmt::format("the probed streams were capped at {} requests before they spanned {:g} mean "
                            "times in system: the capacity is less certain",
                            o.capacity.max_requests, sim::kSteadySpans));
        // The offline rate is every request queued at once; a paced stream can form better batches (an
        // iteration's cost is not monotone in its batch: tiles, waves), so it is a reference, not a ceiling.
        if (c.offline_qps > 0 && c.qps > c.offline_qps)
            e.notes.push_back(fmt::format(
                "the capacity is {:.2g}% above the offline rate ({:.4g} req/s, every request queued at once): a paced "
                "stream forms its batches differently from a queue emptied at once, and an iteration's cost is not "
                "monotone in its batch (GEMM tiles and waves), so the offline rate is not a ceiling here",
                100.0 * (c.qps / c.offline_qps - 1.0), c.offline_qps));
        if (c.above_misses.empty())
            e.notes.push_back(
                fmt::format("the SLO is still met at {:.4g} req/s (5% more): the search stopped at its "
                            "simulation limit or meeting is not monotone here",
                            c.above_qps));
    } else {
        e.continuous = sim::simulate_serving(s.serving_job(), so);
        if (!(in.qps > 0) && !e.continuous->steadiness.long_enough) {
            // Too few requests to see the saturated rates (the offline throughput is the deployment's
            // capacity): measure them on one replica's share of a longer stream.
            const auto probe = offline_probe(s, o.capacity.max_requests, e.continuous->peak_batch);
            if (probe && probe->steadiness.long_enough) {
                auto& r = *e.continuous;
                e.notes.push_back(fmt::format(
                    "the throughput is the deployment's capacity, measured on a longer stream ({} requests): this "
                    "batch of {} finishes in {:.4g} s ({:.4g} req/s, its drain included)",
                    probe->requests * r.replicas, r.requests, r.makespan_s, r.requests_per_s));
                r.requests_per_s = probe->requests_per_s;
                r.output_tokens_per_s = probe->output_tokens_per_s;
                r.output_tokens_per_s_per_gpu = probe->output_tokens_per_s_per_gpu;
                r.input_tokens_per_s = probe->input_tokens_per_s;
                r.steadiness = probe->steadiness;
                e.throughput_stream_requests = probe->requests * r.replicas;
            }
        }
        if (in.qps > 0 && fits_longest_offline(s, o.capacity.max_requests)) {
            e.offline_qps = offline_capacity_qps(s, o.capacity.max_requests);
            // An autoscaled fleet's load is against the replicas it held on average, not every one it may hold.
            if (e.continuous && e.continuous->autoscale && e.continuous->replicas > 0 &&
                e.continuous->autoscale->mean_replicas > 0) {
                e.offline_qps *= e.continuous->autoscale->mean_replicas / static_cast<double>(e.continuous->replicas);
                e.offline_of_held = true;
            }
            if (e.offline_qps > 0) e.utilisation = in.qps / e.offline_qps;
            if (e.utilisation >= kFragileUtilisation)
                e.notes.push_back(fmt::format(
                    "at {:.0f}% of the deployment's offline throughput ({:.4g} req/s): near capacity a few percent "
                    "more load (or a few percent error in an iteration's time) moves the latencies severalfold; "
                    "qps \"max\" gives the largest rate meeting the SLO",
                    100.0 * e.utilisation, e.offline_qps));
        }
    }
    if (!in.qps_max && !(in.qps > 0))   // offline: the published offline runs' throughput
        e.throughput_published =
            published_range(builtin_residuals(), "output_tokens_per_s_per_gpu", "offline", to_string(in.engine.kind),
                            s.system.gpu.name, e.continuous->output_tokens_per_s_per_gpu);
    for (auto& n : steadiness_notes(e.scenario.inference, *e.continuous)) e.notes.push_back(std::move(n));
    if (e.continuous) {
        // An autoscaled deployment pays for the GPUs it held, on average over the stream.
        const auto& a = e.continuous->autoscale;
        const double held = a ? a->mean_replicas * s.parallel.tp * s.parallel.pp : 0.0;
        e.economics =
            serving_economics(e.scenario, e.continuous->output_tokens_per_s, e.continuous->input_tokens_per_s, held);
    }
    return e;
}

namespace {
// A search for the largest rate meeting the SLO needs one.
void require_slo(const InferenceConfig& in) {
    if (!in.slo.any())
        throw ConfigError(
            "/inference/slo: missing: expected ttft_p99_s, tpot_p99_s, ttft_p90_s and/or tpot_p90_s (qps \"max\" asks "
            "for "
            "the largest rate meeting them)");
}
}   // namespace

CapacityPerGpu capacity_per_gpu_search(const Scenario& base, int max_gpus, const CapacityOptions& o, int threads,
                                       const std::function<void(std::size_t, std::size_t)>& progress) {
    sim::refuse_expert_parallel(base, "the serving search");
    sim::refuse_autoscale(base, "the serving search");
    require_slo(base.inference);
    CapacityPerGpu out;
    std::vector<sim::CapacityCandidate> layouts = sim::capacity_groups(base, max_gpus);
    if (layouts.empty()) {
        out.why_none = fmt::format("no layout of at most {} GPUs holds the stream's longest request", max_gpus);
        return out;
    }
    out.rows.resize(layouts.size());
    sim::parallel_for(
        layouts.size(), threads,
        [&](std::size_t i) {
            auto& row = out.rows[i];
            row.layout = layouts[i];
            row.layout.replicas = 1;
            row.layout.max_batch = base.inference.max_batch;
            row.layout.max_batch_tokens = base.inference.max_batch_tokens;
            Scenario sc = sim::capacity_scenario(base, row.layout);
            sc.inference.qps_max = true;
            row.capacity = slo_capacity(sc, o);
            row.qps_per_gpu = row.capacity.qps / row.layout.gpus();
            if (row.capacity.qps > 0) row.capacity.published = capacity_range(sc, row.capacity.qps);
        },
        progress);
    for (const auto& r : out.rows) out.simulations += r.capacity.simulations;
    std::stable_sort(out.rows.begin(), out.rows.end(),
                     [](const LayoutCapacity& a, const LayoutCapacity& b) { return a.qps_per_gpu > b.qps_per_gpu; });
    return out;
}

FleetSizing serving_fleet_search(const Scenario& base, int max_gpus, int threads,
                                 const std::function<void(std::size_t, std::size_t)>& progress) {
    sim::refuse_expert_parallel(base, "the serving search");
    sim::refuse_autoscale(base, "the serving search");
    FleetSizing out;
    out.search = sim::serving_capacity_search(base, max_gpus, threads, progress);
    if (out.search.best.empty()) return out;
    const sim::CapacityCandidate& w = out.search.best.front();
    out.published = capacity_range(base, base.inference.qps);
    if (!out.published) return out;
    if (out.published->low_ratio >= 1) {   // every published run held more than llmsim's capacity
        out.sized_qps = base.inference.qps;
        out.sized = w;
        return out;
    }
    out.sized_qps = base.inference.qps / out.published->low_ratio;
    Scenario at = base;
    at.inference.qps = out.sized_qps;
    // A higher rate needs at least the winner's replicas (more replicas never hurt latency).
    out.sized = sim::fewest_replicas(at, w, w.replicas, max_gpus, out.search.simulations);
    if (!out.sized)
        out.sized_why_none = fmt::format("no deployment of this layout within {} GPUs meets the SLO at {:.4g} req/s",
                                         max_gpus, out.sized_qps);
    return out;
}

namespace {
// The colocated deployment of a disaggregated scenario's question: no pools, its decode layout's replicas.
Scenario colocated_of(const Scenario& base, int gpus) {
    Scenario c = base;
    c.inference.disaggregation = {};
    c.parallel.dp = std::max(1, gpus / base.parallel.model_parallel());
    c.gpus = c.parallel.world();
    return c;
}
}   // namespace

PoolSizing disaggregated_fleet_search(const Scenario& base, int max_gpus, int threads,
                                      const std::function<void(std::size_t, std::size_t)>& progress) {
    sim::refuse_expert_parallel(base, "the pool search");
    sim::refuse_autoscale(base, "the pool search");
    PoolSizing out;
    out.colocated = serving_fleet_search(colocated_of(base, base.gpus), max_gpus, threads, progress);
    out.pools = sim::fewest_pools(base, max_gpus);
    return out;
}

SplitCapacities split_capacities(const Scenario& base, const CapacityOptions& o, int threads,
                                 const std::function<void(std::size_t, std::size_t)>& progress) {
    sim::refuse_expert_parallel(base, "the pool search");
    sim::refuse_autoscale(base, "the pool search");
    require_slo(base.inference);
    SplitCapacities out;
    const int gp = std::max(1, base.inference.disaggregation.prefill_tp);
    const int gd = std::max(1, base.parallel.model_parallel());
    // Every split, or kMaxSplits of them evenly spaced from one prefill replica to the most (each split is a
    // capacity search: the command's work is bounded whatever /gpus says).
    const int most = (base.gpus - gd) / gp;
    out.splits = std::max(0, most);
    const int shown = std::min(out.splits, kMaxSplits);
    for (int i = 0; i < shown; ++i) {
        const int p =
            shown == 1 ? 1 : 1 + static_cast<int>(std::lround(static_cast<double>(i) * (most - 1) / (shown - 1)));
        out.rows.push_back({p, (base.gpus - p * gp) / gd, 0, {}, 0});
    }
    const Scenario colocated = colocated_of(base, base.gpus);
    out.colocated_gpus = colocated.gpus;
    // The splits and the colocated deployment, one task each (the last).
    sim::parallel_for(
        out.rows.size() + 1, threads,
        [&](std::size_t i) {
            if (i == out.rows.size()) {
                if (const auto fit = serving_fit(colocated); fit.fits)
                    out.colocated = slo_capacity(colocated, o);
                else
                    out.colocated.why_none = "does not fit: " + fit.reason;
                return;
            }
            auto& row = out.rows[i];
            const Scenario s = sim::pool_scenario(base, row.prefill_replicas, row.decode_replicas);
            row.gpus = s.gpus;
            if (const auto fit = serving_fit(s); !fit.fits) {
                row.capacity.why_none = "does not fit: " + fit.reason;
                return;
            }
            row.capacity = slo_capacity(s, o);
            row.qps_per_gpu = row.capacity.qps / s.gpus;
        },
        progress);
    out.simulations = out.colocated.simulations;
    for (const auto& r : out.rows) out.simulations += r.capacity.simulations;
    return out;
}

std::optional<LoadState> iteration_at_load(const Scenario& s, const double requests_per_s, const double tpot_s) {
    const auto& in = s.inference;
    if (!s.is_inference || !in.continuous() || in.speculative.enabled || in.disaggregation.enabled() ||
        !in.classes.empty() || s.parallel.pp > 1 || s.parallel.ep > 1 || !(requests_per_s > 0) || !(tpot_s > 0) ||
        !std::isfinite(requests_per_s) || !std::isfinite(tpot_s))
        return std::nullopt;
    const auto job = s.serving_job();
    const double lambda = requests_per_s / std::max(1, job.replicas());
    const auto out = sim::length_sampling(in.output_dist);
    const auto inp = sim::length_sampling(in.input_dist);
    if (!(out.mean > 1) || !(inp.mean > 0)) return std::nullopt;     // no decode phase to measure
    const double o2 = out.mean * out.mean + out.stdev * out.stdev;   // E[o²]
    const double i2 = inp.mean * inp.mean + inp.stdev * inp.stdev;   // E[I²]
    LoadState st;
    st.decode_seqs = lambda * (out.mean - 1.0) * tpot_s;
    st.context_tokens = inp.mean + (o2 - out.mean) / (2.0 * (out.mean - 1.0));
    st.prefill_tokens = lambda * inp.mean * tpot_s;
    IterationBatch b;
    b.decode_seqs = st.decode_seqs;
    b.decode_kv_tokens = st.decode_seqs * st.context_tokens;
    b.prefill_tokens = st.prefill_tokens;
    b.prefill_seqs = std::max(lambda * tpot_s, st.prefill_tokens > 0 ? 1.0 : 0.0);
    // Σ chunk·(chunk + 1)/2 over whole prompts, per token E[I(I + 1)]/(2 E[I]).
    b.prefill_pairs = st.prefill_tokens * (i2 + inp.mean) / (2.0 * inp.mean);
    b.prefill_kv_tokens = st.prefill_tokens;
    st.iteration_s = iteration_cost(job, b).time_s;
    if (!std::isfinite(st.iteration_s) || !(st.iteration_s > 0)) return std::nullopt;
    return st;
}

}   // namespace llmsim::app
