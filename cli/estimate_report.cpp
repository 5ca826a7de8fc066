#include "cli/estimate_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cli/common.hpp"
#include "cli/report.hpp"

#include "cost_models/inference.hpp"
#include "cost_models/step_time.hpp"
#include "hardware_db/engines.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/layout_rules.hpp"
#include "hardware_db/scenario.hpp"
#include "sim/step_sim.hpp"

namespace llmsim::cli {

std::string replicas_text(const Scenario& s, std::int64_t replicas) {
    std::string t =
        fmt::format("{} replica{} of tp {} pp {}", replicas, replicas == 1 ? "" : "s", s.parallel.tp, s.parallel.pp);
    if (const auto& d = s.inference.disaggregation; d.enabled()) {
        const int prefill = d.prefill_gpus / d.prefill_tp;
        t = fmt::format("prefill {} replica{} of tp {}{}, decode {}", prefill, prefill == 1 ? "" : "s", d.prefill_tp,
                        d.prefill_ep > 1 ? fmt::format(" (experts over ep {})", d.prefill_ep) : "", t);
    }
    if (s.parallel.ep > 1) {
        const auto& e = s.inference.expert_parallel;
        t += fmt::format(", experts over ep {}{}", s.parallel.ep, e.two_batch_overlap ? " (two-batch overlap)" : "");
    }
    if (replicas > 1 && s.inference.router != RouterPolicy::round_robin)
        t += fmt::format(", {} routing", to_string(s.inference.router));
    return t;
}

namespace {
// A time within a window report's span (a profile's period, or all the windows): hh:mm from two hours,
// mm:ss from two minutes, else seconds.
std::string profile_clock(double t_s, double period_s) {
    if (period_s < 120) return fmt::format("{:g} s", std::round(t_s * 10) / 10);
    const bool hours = period_s >= 7200;   // hh:mm, else mm:ss
    const auto units = static_cast<std::int64_t>(std::llround(hours ? t_s / 60 : t_s));
    return fmt::format("{:02}:{:02}", units / 60, units % 60);
}
constexpr std::size_t kWindowRows = 48;   // slices or windows shown in text (every one in --json)
}   // namespace

std::string windows_text(const InferenceConfig& in, const std::vector<sim::ServingWindow>& windows) {
    if (windows.empty()) return {};
    // A profile's slices are times within its period; windows of window_s, times from the stream's start.
    const bool slices = windows.front().level >= 0;
    const double period = slices ? in.rate_profile.period_s : windows.back().end_s;
    std::vector<std::size_t> shown(windows.size());
    for (std::size_t i = 0; i < shown.size(); ++i) shown[i] = i;
    if (shown.size() > kWindowRows) {   // the slowest slices (by TTFT p99), in time order
        std::stable_sort(shown.begin(), shown.end(),
                         [&](std::size_t a, std::size_t b) { return windows[a].ttft_s.p99 > windows[b].ttft_s.p99; });
        shown.resize(kWindowRows);
        std::sort(shown.begin(), shown.end());
    }
    const bool slo = in.slo.any();
    const char* clock = period < 120 ? "" : period < 7200 ? " (mm:ss)" : " (hh:mm)";   // as profile_clock writes
    std::vector<std::string> head = {fmt::format("{}{}", slices ? "slice of the period" : "window", clock), "req/s",
                                     "TTFT p99", "TPOT p99"};
    if (slo) head.emplace_back("within SLO");
    const bool scaled = std::any_of(windows.begin(), windows.end(), [](const auto& w) { return w.mean_replicas >= 0; });
    if (scaled) head.emplace_back("replicas");
    Table t(head);
    for (const std::size_t i : shown) {
        const auto& w = windows[i];
        std::vector<std::string> row = {
            fmt::format("{}-{}", profile_clock(w.start_s, period), profile_clock(w.end_s, period)),
            fmt::format("{:.4g}", w.offered_qps), w.requests > 0 ? human_seconds(w.ttft_s.p99) : "-",
            w.requests > 0 ? human_seconds(w.tpot_s.p99) : "-"};
        if (slo) row.push_back(w.slo_attainment >= 0 ? fmt::format("{:.1f}%", 100 * w.slo_attainment) : "-");
        if (scaled) row.push_back(w.mean_replicas >= 0 ? fmt::format("{:.1f}", w.mean_replicas) : "-");
        t.row(row);
    }
    std::string out = "\n" + t.str();
    if (shown.size() < windows.size())
        out += wrap_text(fmt::format("{} of the {} {} shown, those of the longest TTFT p99 (--json has every one)",
                                     shown.size(), windows.size(), slices ? "profile's slices" : "windows"));
    return out;
}

std::string classes_text(const InferenceConfig& in, const sim::ServingResult& r) {
    const auto& classes = r.classes;
    if (classes.empty()) return {};
    const bool slo = in.slo.any();
    std::vector<std::string> head = {"class", "share", "requests", "mean in / out", "TTFT p99", "TPOT p99"};
    if (slo) {
        head.emplace_back("within SLO");
        head.emplace_back("SLO");
    }
    Table t(head);
    for (const auto& c : classes) {
        std::vector<std::string> row = {c.name,
                                        fmt::format("{:.3g}%", 100 * c.share),
                                        with_commas(c.requests),
                                        fmt::format("{:.0f} / {:.0f}", c.mean_input, c.mean_output),
                                        c.requests > 0 ? human_seconds(c.ttft_s.p99) : "-",
                                        c.requests > 0 ? human_seconds(c.tpot_s.p99) : "-"};
        if (slo) {
            row.push_back(c.slo_attainment >= 0 ? fmt::format("{:.1f}%", 100 * c.slo_attainment) : "-");
            row.emplace_back(c.slo_met ? "met" : "MISSED");
        }
        t.row(row);
    }
    std::string misses;
    for (const auto& [cls, m] : sim::stream_slo_misses(in, r))
        misses += fmt::format("{}{} {} {} > {}", misses.empty() ? "" : "; ", cls, m.target.name(),
                              human_seconds(m.measured_s), human_seconds(m.target.seconds));
    std::string out = "\n" + t.str();
    if (!misses.empty()) out += wrap_text("missed: " + misses);
    return out;
}

std::string shared_prefix_text(const InferenceConfig& in) {
    const auto& sp = in.shared_prefix;
    if (!sp.enabled()) return "";
    return fmt::format(" ({} shared prefix{} of {} tokens{})", sp.groups, sp.groups == 1 ? "" : "es", sp.tokens,
                       sp.zipf > 0 ? fmt::format(", Zipf {:g}", sp.zipf) : "");
}

namespace {
// A rate profile's extremes over its mean (its levels).
std::string profile_range_text(const RateProfile& p) {
    const auto [lo, hi] = std::minmax_element(p.levels.begin(), p.levels.end());
    return fmt::format("{:.3g}-{:.3g}x the mean in {} slices of a {} period", *lo, *hi, p.levels.size(),
                       human_seconds(p.period_s));
}
}   // namespace

bool arrival_shape_worth_naming(const InferenceConfig& in) {
    return !in.arrivals && (in.rate_profile.enabled() || in.arrival_cv != 1.0);
}

std::string arrival_process_text(const InferenceConfig& in) {
    std::string shape = in.arrival_cv == 1.0 ? "Poisson"
                        : in.arrival_cv <= 0 ? "evenly spaced"
                                             : fmt::format("Gamma gaps, cv {:g}", in.arrival_cv);
    if (!in.rate_profile.enabled()) return shape;
    return fmt::format("{}, the rate {}", shape, profile_range_text(in.rate_profile));
}

std::string capacity_rate_text(const InferenceConfig& in) {
    if (in.arrivals) return "mean rate of the trace " + in.arrivals->path + " (its times scaled)";
    if (in.rate_profile.enabled()) return fmt::format("mean rate of the profile ({})", arrival_process_text(in));
    if (in.arrival_cv == 1.0) return "Poisson rate";
    if (in.arrival_cv <= 0) return "rate of evenly spaced arrivals";
    return fmt::format("mean rate of {} arrivals ({})", in.arrival_cv > 1 ? "bursty" : "regular",
                       arrival_process_text(in));
}

std::string slo_text(const ServingSlo& slo) {
    if (!slo.ttft_p90_s && !slo.tpot_p90_s)
        return fmt::format("p99 TTFT {} / TPOT {}", slo.ttft_p99_s ? human_seconds(*slo.ttft_p99_s) : "-",
                           slo.tpot_p99_s ? human_seconds(*slo.tpot_p99_s) : "-");
    std::vector<std::string> parts;
    for (const auto& t : slo.targets()) parts.push_back(t.name() + " " + human_seconds(t.seconds));
    return fmt::format("{}", fmt::join(parts, ", "));
}

std::string stream_slo_text(const InferenceConfig& in) {
    const auto same = [&](const ServingSlo& a) {
        return a.ttft_p99_s == in.slo.ttft_p99_s && a.tpot_p99_s == in.slo.tpot_p99_s &&
               a.ttft_p90_s == in.slo.ttft_p90_s && a.tpot_p90_s == in.slo.tpot_p90_s;
    };
    if (std::all_of(in.classes.begin(), in.classes.end(), [&](const RequestClass& c) { return same(c.slo); }))
        return "SLO " + slo_text(in.slo);
    std::vector<std::string> parts;
    for (const auto& c : in.classes) parts.push_back(c.name + ": " + slo_text(c.slo));
    return fmt::format("each class's SLO ({})", fmt::join(parts, "; "));
}

std::string published_range_text(const std::optional<app::PublishedRange>& r, const char* what, const char* unit) {
    if (!r)
        return wrap_text(
            fmt::format("how sure: no published runs of this engine in validation/ to compare the {} with", what));
    return wrap_text(
        fmt::format("how sure: the {} measured {:.0f}-{:.0f}% of llmsim's {}: {:.4g}-{:.4g} {} ({:.0f}% "
                    "range for a run like them)",
                    r->basis, 100 * r->low_ratio, 100 * r->high_ratio, what, r->low, r->high, unit, 100 * r->level));
}

namespace {

// Energy and cost rows of a serving table (app::ServingEconomics).
void economics_rows(Table& t, const app::ServingEconomics& x) {
    if (x.board_power_W > 0 && x.joules_per_output_token_max > 0)
        t.row({"energy per output token", fmt::format("<= {:.3g} J (board power {} W)", x.joules_per_output_token_max,
                                                      fixed_commas(x.board_power_W, 0))});
    if (x.usd_per_hour > 0) {
        t.row({"cost per hour", fmt::format("${:.2f}", x.usd_per_hour)});
        t.row({"cost per million output tokens", fmt::format("${:.3g}", x.usd_per_million_output_tokens)});
        t.row({"cost per million tokens (in + out)", fmt::format("${:.3g}", x.usd_per_million_tokens)});
    }
}

std::string serving_text(const Scenario&, const Estimate& est) {
    const app::ServingEvaluation& e = *est.serving;
    const Scenario& s = e.scenario;
    const InferenceEstimate& r = e.closed_form;
    const auto& in = s.inference;
    std::string out;
    const auto& p = s.parallel;
    std::string lens = fmt::format("{}{} in / {}{} out", in.input_dist.is_fixed() ? "" : "mean ", in.input_len,
                                   in.output_dist.is_fixed() ? "" : "mean ", in.output_len);
    lens += shared_prefix_text(in);
    if (!e.fit.fits) {
        out += wrap_text(fmt::format(
            "{} serving on {} x {} (tp {}, pp {}, {}, {}, weights {}, KV {})", s.model.name, s.gpus, s.system.name,
            p.tp, p.pp, in.continuous() ? std::string("continuous batching") : fmt::format("static batch {}", in.batch),
            lens, to_string(in.weight_precision), to_string(in.kv_precision)));
        out += wrap_text("DOES NOT FIT: " + e.fit.reason);
        Table t({"memory per GPU", "value"});
        t.row({"weights", gib(r.memory.weights_bytes)});
        t.row({"runtime reserve", gib(r.memory.other_bytes)});
        t.row({"capacity", gib(r.memory.capacity_bytes)});
        t.row({"max batch that fits", std::to_string(r.memory.max_batch)});
        return out + t.str();
    }
    if (!e.continuous && !in.continuous()) {
        out += wrap_text(fmt::format("{} serving on {} x {} (tp {}, pp {}, static batch {}, {}, weights {}, KV {})",
                                     s.model.name, s.gpus, s.system.name, p.tp, p.pp, in.batch, lens,
                                     to_string(in.weight_precision), to_string(in.kv_precision)));
        Table t({"metric", "value"});
        t.row({"time to first token", human_seconds(r.ttft_s)});
        t.row({"time per output token", human_seconds(r.tpot_s)});
        t.row({"output tokens/s", fixed_commas(r.output_tokens_per_s, 0)});
        t.row({"output tokens/s per GPU", fixed_commas(r.output_tokens_per_s_per_gpu, 0)});
        t.row({"KV cache", gib(r.memory.kv_cache_bytes)});
        t.row({"max batch that fits", std::to_string(r.memory.max_batch)});
        t.row({"prefill / decode bound by", std::string(r.prefill_compute_bound ? "compute" : "memory") + " / " +
                                                (r.decode_compute_bound ? "compute" : "memory")});
        if (in.speculative.enabled)
            t.row({"speculative tokens per target step", fmt::format("{:.2f}", r.spec_tokens_per_step)});
        economics_rows(t, e.economics);
        return out + t.str();
    }
    if (e.capacity) {
        const auto& c = *e.capacity;
        if (c.qps > 0)
            out += wrap_text(
                fmt::format("capacity {:.4g} req/s: the largest {} meeting the SLO ({} simulations; offline {:.4g} "
                            "req/s); at {:.4g} req/s (+5%): {}; judged on {} requests (feed it back with "
                            "--requests {})",
                            c.qps, capacity_rate_text(s.inference), c.simulations, c.offline_qps, c.above_qps,
                            c.above_misses.empty() ? std::string("still met") : c.above_misses, with_commas(c.requests),
                            c.requests));
        if (c.qps > 0)
            out += published_range_text(c.published, "rate", "req/s");
        else
            out += wrap_text(fmt::format("capacity 0: {}", c.why_none));
    }
    if (!e.continuous) {
        for (const auto& n : e.notes) out += wrap_text("note: " + n);
        return out;
    }
    const auto& c = *e.continuous;
    auto stream_text = [](const InferenceConfig& q) -> std::string {
        if (!(q.qps > 0)) return "offline (all at t = 0)";
        if (!q.arrivals) return fmt::format("at {:.4g} req/s ({})", q.qps, arrival_process_text(q));
        const double own = q.arrivals->rate_qps(static_cast<std::size_t>(q.requests));
        const bool scaled = own > 0 && std::fabs(q.qps / own - 1) > 1e-9;
        return fmt::format("at {:.4g} req/s (trace {}{})", q.qps, q.arrivals->path, scaled ? ", times scaled" : "");
    };
    out +=
        wrap_text(fmt::format("{} serving on {} x {} ({}), continuous batching, {} requests {}, {}, weights {}, KV {}",
                              s.model.name, s.gpus, s.system.name, replicas_text(s, c.replicas), c.requests,
                              stream_text(in), lens, to_string(in.weight_precision), to_string(in.kv_precision)));
    std::vector<std::string> headline = {
        fmt::format("{:.2f} req/s", c.requests_per_s),
        fmt::format("{} output tokens/s ({} per GPU)", fixed_commas(c.output_tokens_per_s, 0),
                    fixed_commas(c.output_tokens_per_s_per_gpu, 0)),
        fmt::format("TTFT p99 {}  TPOT p99 {}", human_seconds(c.ttft_s.p99), human_seconds(c.tpot_s.p99))};
    if (in.slo.any()) {
        std::vector<std::string> missed;   // the classes that miss their own SLO
        for (const auto& x : c.classes)
            if (!x.slo_met) missed.push_back(x.name);
        std::string verdict = c.classes.empty() ? (c.slo_met ? "SLO met" : "SLO MISSED")
                              : c.slo_met       ? "every class's SLO met"
                              : missed.empty()  ? "SLO MISSED"
                                                : fmt::format("SLO MISSED ({})", fmt::join(missed, ", "));
        // Met on this stream only: past the offline throughput the queue grows with the stream, and a stream
        // too short for a steady state is decided by its warm-up (the notes below say which and why).
        if (c.slo_met && in.qps > 0) {
            if (e.utilisation > 1.0)
                verdict += " on this stream only (past capacity: note)";
            else if (c.steadiness.applies && !c.steadiness.long_enough)
                verdict += " on this short stream (note)";
        }
        headline.emplace_back(verdict);
    }
    out += join_fields(headline) + "\n";
    Table t({"latency", "mean", "p50", "p90", "p99"});
    auto row = [&](const char* name, const sim::Distribution& d) {
        t.row({name, human_seconds(d.mean), human_seconds(d.p50), human_seconds(d.p90), human_seconds(d.p99)});
    };
    row("time to first token", c.ttft_s);
    row("time per output token", c.tpot_s);
    row("end to end", c.e2e_latency_s);
    row("queueing delay", c.queue_s);
    out += t.str();
    out += classes_text(in, c) + "\n";
    Table u({"deployment", "value"});
    u.row({"makespan", human_seconds(c.makespan_s)});
    u.row({"iterations (all replicas)", with_commas(c.iterations)});
    if (const auto& d = c.disaggregated) {
        u.row({"prefill pool: time iterating, sequences",
               fmt::format("{:.0f}%, {:.1f}", 100 * d->prefill.busy_fraction, d->prefill.mean_batch)});
        u.row({"decode pool: time iterating, sequences",
               fmt::format("{:.0f}%, {:.1f}", 100 * d->decode.busy_fraction, d->decode.mean_batch)});
        u.row({"KV transfer mean / p99",
               fmt::format("{} / {}", human_seconds(d->transfer_s.mean), human_seconds(d->transfer_s.p99))});
        u.row(
            {"KV link per GPU, busy", fmt::format("{:.4g} GB/s, {:.0f}%", d->link_GBps, 100 * d->link_busy_fraction)});
    } else {
        u.row({"mean sequences per iteration", fmt::format("{:.1f}", c.mean_batch)});
    }
    u.row({"KV blocks per replica", fmt::format("{} x {} tokens", with_commas(c.kv_blocks), kKvBlockTokens)});
    u.row({"KV occupancy mean / max",
           fmt::format("{:.0f}% / {:.0f}%", 100 * c.kv_occupancy_mean, 100 * c.kv_occupancy_max)});
    // The engine and the behaviours it sets here (docs/serving.md "Engines"), stated or its defaults.
    u.row({"engine", fmt::format("{} ({})", to_string(in.engine.kind),
                                 !in.engine.stated   ? "the default"
                                 : in.engine.version ? to_string(*in.engine.version)
                                                     : "current")});
    u.row({"scheduler, kernels",
           fmt::format("{}, {}", to_string(in.scheduler), in.cuda_graphs ? "CUDA graphs" : "launched one by one")});
    // The admission policy decides whether a full cache preempts or holds requests back (docs/serving.md).
    u.row({"KV admission", in.kv_reserve ? "reserve: prompt + output limit" : "on demand: preempt when full"});
    u.row({"preemptions (recomputed)", std::to_string(c.preemptions)});
    if (const auto& a = c.autoscale) {   // inference.autoscale (docs/serving.md "Autoscaling")
        u.row({"replicas: mean / peak (autoscaled)",
               fmt::format("{:.2f} / {} of {}", a->mean_replicas, a->peak_replicas, c.replicas)});
        u.row({"GPU-hours held", fmt::format("{:.4g}", a->gpu_hours)});
        u.row({"scale-ups / downs, cold start",
               fmt::format("{} / {}, {}", a->scale_ups, a->scale_downs, human_seconds(a->cold_start_s))});
    }
    if (in.shared_prefix.enabled() || in.prefix_cache_hit > 0)
        u.row({"prompt tokens found in the prefix cache", fmt::format("{:.1f}%", 100 * c.prefix_hit_fraction)});
    if (e.utilisation > 0)
        u.row({e.offline_of_held ? "load / offline throughput of replicas held" : "load / offline throughput",
               fmt::format("{:.0f}% of {:.4g} req/s", 100.0 * e.utilisation, e.offline_qps)});
    u.row({"prefill / decode bound by", fmt::format("{} / {}", c.prefill_compute_fraction >= 0.5 ? "compute" : "memory",
                                                    c.decode_compute_fraction >= 0.5 ? "compute" : "memory")});
    u.row({"compute-bound time: prefill / decode",
           fmt::format("{:.0f}% / {:.0f}%", 100 * c.prefill_compute_fraction, 100 * c.decode_compute_fraction)});
    if (in.speculative.enabled)
        u.row({"speculative tokens per target step", fmt::format("{:.2f}", c.spec_tokens_per_step)});
    economics_rows(u, e.economics);
    out += u.str();
    out += windows_text(in, c.windows);
    if (!(in.qps > 0) && !in.qps_max)
        out += published_range_text(e.throughput_published, "throughput", "output tokens/s per GPU");
    for (const auto& n : e.notes) out += wrap_text("note: " + n);
    return out;
}

std::string rlhf_text(const RlhfEstimate& r) {
    std::string out =
        "\n" + wrap_text(fmt::format("RLHF (PPO) iteration {} ({:.1f}x the SFT step above, closed form): {} prompt + "
                                     "{} response tokens, {} rollout replicas x {} sequences, {} PPO epoch(s)",
                                     human_seconds(r.iteration_s), r.iteration_s / r.sft_step_s, r.prompt_len,
                                     r.response_len, r.rollout_replicas, r.rollout_batch_per_replica, r.ppo_epochs));
    Table t({"phase", "time", "share"});
    const std::pair<const char*, double> parts[] = {
        {"rollout (generation)", r.rollout_s},         {"actor log-probs (forward)", r.actor_logprob_s},
        {"reference (forward)", r.reference_s},        {"reward (forward)", r.reward_s},
        {"critic values (forward)", r.critic_value_s}, {"actor training", r.actor_train_s},
        {"critic training", r.critic_train_s}};
    for (const auto& [k, v] : parts) t.row({k, human_seconds(v), fmt::format("{:.1f}%", 100.0 * v / r.iteration_s)});
    t.row({"iteration", human_seconds(r.iteration_s), "100%"});
    return out + t.str();
}

std::string training_text(const Scenario& s, const app::TrainingEstimate& te,
                          const std::optional<app::PublishedRange>& range) {
    const StepEstimate& e = te.chosen();
    const double step = e.step_time_s;
    const auto& p = s.parallel;
    const int zero_run = zero_stage_in_step(p);
    const std::string zero = zero_run == p.zero
                                 ? std::to_string(p.zero)
                                 : fmt::format("{} (runs as {}: FSDP with pipeline stages)", p.zero, zero_run);
    std::vector<std::string> head = {
        fmt::format("{} on {} x {}", s.model.name, s.gpus, s.system.name),
        fmt::format("tp {} pp {} dp {} cp {} ep {} vp {} ({})", p.tp, p.pp, p.dp, p.cp, p.ep, p.vp, p.schedule->name),
        fmt::format("zero {}", zero),
        fmt::format("mb {} x {}", s.training.micro_batch, e.microbatches),
        to_string(s.training.precision),
        training_options_text(s.training)};
    if (p.framework != Framework::unspecified) head.push_back(framework_label(p));
    std::string out = join_fields(head, " | ");
    if (!e.memory.fits)
        out += wrap_text(fmt::format("DOES NOT FIT: {} per GPU needed, {} available (the numbers below assume it did)",
                                     gib(e.memory.total_bytes), gib(e.memory.capacity_bytes)));
    out += join_fields({fmt::format("step time {}", human_seconds(step)),
                        fmt::format("MFU {:.1f}%  HFU {:.1f}%", 100 * e.mfu, 100 * e.hfu),
                        fmt::format("{} tokens/s ({} per GPU)", fixed_commas(e.tokens_per_s, 0),
                                    fixed_commas(e.tokens_per_s_per_gpu, 0)),
                        fmt::format("{:.0f} TFLOP/s per GPU", e.achieved_tflops_per_gpu)});
    if (range) out += published_range_text(range, "step time", "s");
    out += "\n";
    Table t({"where the step goes", "time", "share"});
    const auto& b = e.breakdown;
    const std::pair<const char*, double> parts[] = {
        {"compute", b.compute}, {"tp_comm", b.tp_comm},     {"cp_comm", b.cp_comm},
        {"ep_comm", b.ep_comm}, {"pp_comm", b.pp_comm},     {"dp_comm", b.dp_comm},
        {"bubble", b.bubble},   {"optimizer", b.optimizer}, {"offload", b.offload}};
    for (const auto& [k, v] : parts) {
        if (v <= 0 && std::string(k) != "compute") continue;
        t.row({k, human_seconds(v), fmt::format("{:.1f}%", 100.0 * v / step)});
    }
    t.row({"total", human_seconds(step), "100%"});
    out += t.str();
    out += fmt::format("dominant: {}; pipeline bubble {:.1f}% of the step\n", e.dominant, 100 * e.bubble_fraction);
    const std::string note = te.simulated ? (te.fast ? "closed form (--fast); " : "") + te.comparison.note
                                          : std::string("closed form (--fast)");
    out += wrap_text(fmt::format("method: {} ({})", e.method, note)) + "\n";
    if (!te.timeline.empty()) out += fit_text(te.timeline) + "\n";
    Table c({"communication", "algorithm", "ranks", "size (MB, 10^6 B)", "one call", "calls/step"});
    for (const auto& ev : e.costs.comms)
        c.row({ev.what, std::string(ev.algorithm ? ev.algorithm->name : "none"),
               fmt::format("{}{}", ev.ranks, ev.domains > 1 ? fmt::format(" / {} nodes", ev.domains) : ""),
               fixed_commas(ev.bytes / 1e6, 1), human_seconds(ev.time_s), fixed_commas(ev.calls_per_step, 0)});
    if (!e.costs.comms.empty()) out += c.str() + "\n";
    out += "memory per GPU (most loaded):\n";
    const auto& m = e.memory;
    Table mt({"component", "per GPU (GiB)"});
    mt.row({"weights", gib(m.weights_bytes)});
    mt.row({"gradients", gib(m.gradients_bytes)});
    mt.row({"optimizer", gib(m.optimizer_bytes)});
    mt.row({"activations", gib(m.activations_bytes)});
    mt.row({"other", gib(m.other_bytes)});
    mt.row({"total", gib(m.total_bytes)});
    out += mt.str();
    out += wrap_text(fmt::format("capacity {} -> {} (headroom {}); dominant: {}", gib(m.capacity_bytes),
                                 m.fits ? "fits" : "DOES NOT FIT", gib(m.headroom_bytes), m.dominant));
    out += assumed_levers_text(m.assumed_levers);
    if (e.token_budget > 0)
        out +=
            wrap_text(fmt::format("token budget {:.3g}: {:.1f} days{}, {:.3g} GPU-hours", e.token_budget, e.train_days,
                                  range ? fmt::format(" ({:.1f}-{:.1f} at the published runs' range)",
                                                      e.train_days * range->low_ratio, e.train_days * range->high_ratio)
                                        : std::string(),
                                  e.gpu_hours));
    if (te.rlhf) out += rlhf_text(*te.rlhf);
    return out;
}

}   // namespace

std::string estimate_text(const Scenario& s, const Estimate& e) {
    return e.serving ? serving_text(s, e) : training_text(s, *e.training, e.step_time_range);
}

}   // namespace llmsim::cli
