#include "cli/qps_sweep.hpp"

#include <fmt/format.h>

#include "cli/estimate_report.hpp"
#include "cli/flag_checks.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/scenario.hpp"
#include "hardware_db/scenario_keys.hpp"
#include "hardware_db/units.hpp"

namespace llmsim::cli {

std::vector<double> parse_qps_sweep(const std::string& text) {
    const auto items = split_list(text);
    auto fail = [&](const std::string& why) {
        return ConfigError(fmt::format("--qps-sweep: {}: {}", json_brief(Json(text)), why));
    };
    if (items.empty()) throw fail("empty: expected a comma-separated list of arrival rates (requests/s), e.g. 1,2,4,8");
    if (items.size() > kMaxSweepRates)
        throw fail(fmt::format("{} rates: expected at most {}", items.size(), kMaxSweepRates));
    std::vector<double> out;
    for (const auto& item : items) {
        const auto v = parse_decimal(item);
        if (!v)
            throw fail(fmt::format("{} is not a finite number: expected rates > 0 (requests/s){}",
                                   json_brief(Json(item)),
                                   item == "max" ? "; for the largest rate meeting the SLO, --qps max" : ""));
        // The scenario's own bounds on a rate (/inference/qps), said as a sweep's: no 0 (offline) or "max" here.
        const ScenarioKey& k = scenario_key("/inference", "qps");
        if (!(*v >= k.zero_or_min && *v <= k.max))
            throw fail(fmt::format("{}: expected rates in [{:g}, {:g}] (requests/s)", item, k.zero_or_min, k.max));
        if (!out.empty() && !(*v > out.back()))
            throw fail(fmt::format("{} after {}: expected increasing rates", item, out.back()));
        out.push_back(*v);
    }
    return out;
}

QpsSweep run_qps_sweep(const ScenarioFlags& flags, const std::vector<double>& rates) {
    if (flags.qps_text)
        throw ConfigError(fmt::format("--qps: {} given with --qps-sweep: expected one of them", *flags.qps_text));
    QpsSweep out;
    // The keys of the single estimate's JSON each row repeats (the contract's serving outputs and more).
    static const char* const kKeys[] = {"requests_per_s",
                                        "output_tokens_per_s",
                                        "output_tokens_per_s_per_gpu",
                                        "ttft_s",
                                        "ttft_p50_s",
                                        "ttft_p90_s",
                                        "ttft_p99_s",
                                        "tpot_s",
                                        "tpot_p50_s",
                                        "tpot_p90_s",
                                        "tpot_p99_s",
                                        "e2e_latency_s",
                                        "e2e_latency_p99_s",
                                        "kv_cache_bytes",
                                        "max_batch",
                                        "mean_batch",
                                        "kv_occupancy_max",
                                        "preemptions",
                                        "requests",
                                        "replicas",
                                        "slo_met"};
    for (double q : rates) {
        ScenarioFlags f = flags;
        f.qps = q;
        f.qps_flag = "--qps-sweep";
        const Scenario s = resolve_scenario(f);
        if (!s.is_inference)   // the overlay refuses --qps-sweep on a training file; kept as a guard
            throw ConfigError("--qps-sweep: given with a training scenario: expected a serving scenario");
        if (!s.inference.continuous())
            throw ConfigError(
                fmt::format("--qps-sweep: given with batching '{}': expected continuous batching (a request stream; "
                            "/inference/batching or --batching)",
                            to_string(s.inference.batching)));
        app::EstimateOptions o;
        sim::StepSimulator unused;
        Estimate e;
        try {
            e = run_estimate(s, o, unused);
        } catch (const ConfigError& err) {
            throw locate_problems(f, err);
        }
        if (!e.serving->fit.fits || !e.serving->continuous)
            throw ConfigError(fmt::format("--qps-sweep: the deployment does not fit: {}", e.serving->fit.reason));
        const Json j = estimate_json(s, e, o);
        SweepPoint p;
        p.qps = q;
        p.result = *e.serving->continuous;
        p.row = Json::object();
        p.row["qps"] = q;
        for (const char* k : kKeys)
            if (j.contains(k)) p.row[k] = j[k];
        p.row["e2e_latency_p50_s"] = j["e2e_latency_distribution_s"]["p50"];
        if (s.inference.shared_prefix.enabled()) p.row["prefix_hit_fraction"] = j["prefix_hit_fraction"];
        p.row["steady"] = p.result.steadiness.steady();
        p.row["keeps_up"] = p.result.steadiness.keeps_up;
        p.within = s.inference.slo.any() ? p.result.slo_met : p.result.requests_per_s >= kSweepCapacityShare * q;
        if (out.points.empty()) out.scenario = s;
        out.points.push_back(std::move(p));
    }
    for (std::size_t i = 0; i < out.points.size() && out.points[i].within; ++i) out.knee = i;
    for (std::size_t i = 0; i < out.points.size(); ++i) out.points[i].row["knee"] = out.knee && *out.knee == i;
    return out;
}

Json qps_sweep_json(const QpsSweep& sweep) {
    Json a = Json::array();
    for (const auto& p : sweep.points) a.push_back(p.row);
    return a;
}

namespace {
std::string knee_criterion(const Scenario& s) {
    return s.inference.slo.any()
               ? std::string("meeting the SLO")
               : fmt::format("serving at least {:.0f}% of the offered rate", 100 * kSweepCapacityShare);
}
}   // namespace

std::string qps_sweep_text(const QpsSweep& sweep) {
    const Scenario& s = sweep.scenario;
    const auto& in = s.inference;
    const std::int64_t replicas = sweep.points.empty() ? 1 : sweep.points.front().result.replicas;
    std::string out = fmt::format(
        "{} serving on {} x {} ({}), continuous batching, {} requests per rate (seed {}), "
        "{}{} in / {}{} out{}, weights {}, KV {}",
        s.model.name, s.gpus, s.system.name, replicas_text(s, replicas), in.requests, in.seed,
        in.input_dist.is_fixed() ? "" : "mean ", in.input_len, in.output_dist.is_fixed() ? "" : "mean ", in.output_len,
        shared_prefix_text(in), to_string(in.weight_precision), to_string(in.kv_precision));
    if (arrival_shape_worth_naming(in)) out += "; arrivals: " + arrival_process_text(in);
    if (in.slo.any()) out += "; " + stream_slo_text(in);
    out = wrap_text(out);
    std::vector<std::string> header = {"qps",      "req/s",   "out tok/s/GPU", "TTFT p50",   "TTFT p99", "TPOT p50",
                                       "TPOT p99", "e2e p50", "e2e p99",       "mean batch", "KV peak",  "stream"};
    if (in.slo.any()) header.push_back("SLO");
    const bool prefixes = in.shared_prefix.enabled();
    if (prefixes) header.push_back("cached");   // prompt tokens found in the prefix cache
    Table t(header);
    t.left(11);
    if (in.slo.any()) t.left(12);
    t.optional(3).optional(5).optional(7).optional(1);   // the p50s, then req/s (tok/s says it)
    for (const auto& pt : sweep.points) {
        const auto& r = pt.result;
        std::vector<std::string> row = {fmt::format("{:g}", pt.qps),
                                        fmt::format("{:.2f}", r.requests_per_s),
                                        fixed_commas(r.output_tokens_per_s_per_gpu, 0),
                                        human_seconds(r.ttft_s.p50),
                                        human_seconds(r.ttft_s.p99),
                                        human_seconds(r.tpot_s.p50),
                                        human_seconds(r.tpot_s.p99),
                                        human_seconds(r.e2e_latency_s.p50),
                                        human_seconds(r.e2e_latency_s.p99),
                                        fmt::format("{:.1f}", r.mean_batch),
                                        fmt::format("{:.0f}%", 100 * r.kv_occupancy_max),
                                        !r.steadiness.keeps_up      ? "past cap."
                                        : !r.steadiness.long_enough ? "too short"
                                                                    : "steady"};
        if (in.slo.any()) row.push_back(r.slo_met ? "met" : "MISSED");
        if (prefixes) row.push_back(fmt::format("{:.0f}%", 100 * r.prefix_hit_fraction));
        t.row(row);
    }
    out += t.str();
    if (prefixes) out += wrap_text("cached: the share of admitted prompt tokens found in the prefix cache");
    if (sweep.knee) {
        const auto k = *sweep.knee;
        out += wrap_text(fmt::format("capacity knee: {:g} req/s, the largest swept rate {}", sweep.points[k].qps,
                                     knee_criterion(s)) +
                         (k + 1 < sweep.points.size() ? fmt::format(" ({:g} req/s does not)", sweep.points[k + 1].qps)
                                                      : std::string(" (every swept rate does: the knee is higher)")));
    } else {
        out += wrap_text(fmt::format("capacity knee: below {:g} req/s (no swept rate is {})",
                                     sweep.points.empty() ? 0.0 : sweep.points.front().qps, knee_criterion(s)));
    }
    bool unsteady = false;
    for (const auto& pt : sweep.points) unsteady = unsteady || !pt.result.steadiness.steady();
    if (unsteady)
        out += wrap_text(
            "stream: \"too short\": the arrivals span fewer than 10 mean times in system, so warm-up and drain "
            "decide the percentiles (more --requests); \"past cap.\": fewer requests finish than arrive and the "
            "queue grows with the stream (docs/serving.md \"Capacity\")");
    return out;
}

}   // namespace llmsim::cli
