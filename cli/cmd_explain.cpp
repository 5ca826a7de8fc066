// llmsim explain: the binding constraint of a training or serving scenario, its breakdown, every lever
// with its predicted effect and trade-off, and the first action (app/explain computes; this file prints).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "app/explain.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report.hpp"
#include "hardware_db/scenario.hpp"

namespace llmsim::cli {

namespace {

// Days to train the scenario's token budget with a lever applied: the estimate's days scaled by the
// throughput the lever reaches (the same tokens at tokens/s per GPU x its GPUs).
double lever_days(const app::Explanation& e, const app::Lever& l) {
    const double tokens_per_s = l.tokens_per_s_per_gpu * l.gpus;
    return tokens_per_s > 0 ? e.base.train_days * e.base.tokens_per_s / tokens_per_s : 0.0;
}

Json measures_json(const Scenario& s, const app::ServingMeasures& m) {
    Json j = {{"fits", m.fits}};
    if (!m.fits) return j;
    j.update({{"ttft_s", m.ttft_s},
              {"ttft_p99_s", m.ttft_p99_s},
              {"tpot_s", m.tpot_s},
              {"tpot_p99_s", m.tpot_p99_s},
              {"e2e_latency_p99_s", m.e2e_p99_s},
              {"output_tokens_per_s", m.output_tokens_per_s},
              {"output_tokens_per_s_per_gpu", m.output_tokens_per_s_per_gpu},
              {"requests_per_s", m.requests_per_s}});
    if (s.inference.slo.any()) j["slo_met"] = m.slo_met;
    return j;
}

void explain_serving(const Scenario& s, bool json) {
    const auto e = app::explain_serving(s);
    const auto& b = e.base;
    const auto& in = s.inference;
    const bool continuous = in.continuous();
    if (json) {
        Json mem = Json::object(), levers = Json::array();
        for (const auto& [k, v] : e.memory_parts) mem[k + "_bytes"] = v;
        Json base = measures_json(s, b);
        if (b.fits) {
            base.update({{"queueing_s", b.queue_s},
                         {"preemptions", b.preemptions},
                         {"peak_batch", b.peak_batch},
                         {"mean_batch", b.mean_batch},
                         {"kv_occupancy_max", b.kv_occupancy_max},
                         {"kv_held_fraction", b.kv_held_fraction},
                         {"seats_held_fraction", b.seats_held_fraction},
                         {"budget_held_fraction", b.budget_held_fraction},
                         {"prefill_s", b.prefill_s},
                         {"decode_s", b.decode_s},
                         {"prefill_compute_bound_fraction", b.prefill_compute_fraction},
                         {"decode_compute_bound_fraction", b.decode_compute_fraction},
                         {"compute_bound_fraction", b.compute_fraction}});
        }
        for (const auto& l : e.levers) {
            Json j = {{"lever", l.name},
                      {"change", l.change},
                      {"tradeoff", l.tradeoff},
                      {"gpus", l.gpus},
                      {"binding_after", l.binding_after},
                      {"improves_binding", l.improves}};
            j.update(measures_json(l.scenario, l.after));
            levers.push_back(j);
        }
        Json out = {{"binding", e.binding},
                    {"constraint", e.constraint},
                    {"binding_quantity", e.quantity},
                    {"binding_unit", e.unit},
                    {"higher_is_better", e.higher_is_better},
                    {"binding_value", e.binding_value},
                    {"memory", mem},
                    {"serving", base},
                    {"levers", levers},
                    {"recommended",
                     e.recommended >= 0 ? Json(e.levers[static_cast<std::size_t>(e.recommended)].name) : Json(nullptr)},
                    {"recommendation", e.recommendation},
                    {"scenario", to_json(s)}};
        if (e.capacity_requests_per_s > 0) {
            out["capacity_requests_per_s"] = e.capacity_requests_per_s;
            out["utilisation"] = e.utilisation;
        }
        print_json(out);
        return;
    }
    const auto& p = s.parallel;
    const std::string lens = fmt::format("{}{} in / {}{} out", in.input_dist.is_fixed() ? "" : "mean ", in.input_len,
                                         in.output_dist.is_fixed() ? "" : "mean ", in.output_len);
    std::cout << join_fields(
        {fmt::format("{} serving on {} x {}", s.model.name, s.gpus, s.system.name),
         fmt::format("tp {} pp {}", p.tp, p.pp), fmt::format("{} replica{}", p.dp, p.dp == 1 ? "" : "s"),
         continuous ? fmt::format("continuous batching, {} requests {}", in.requests,
                                  in.qps > 0 ? fmt::format("at {:.3g} req/s", in.qps) : std::string("offline"))
                    : fmt::format("static batch {}", in.batch),
         lens, fmt::format("weights {} KV {}", to_string(in.weight_precision), to_string(in.kv_precision)),
         continuous ? fmt::format("max_batch {}", in.max_batch > 0 ? std::to_string(in.max_batch) : "KV-limited")
                    : std::string(),
         continuous ? fmt::format("chunk {}", in.max_batch_tokens > 0 ? std::to_string(in.max_batch_tokens) : "none")
                    : std::string()});
    std::cout << "\n" << wrap_text("binding constraint: " + e.constraint) << "\n";
    Table mt({"memory per GPU", "GiB"});
    for (const auto& [k, v] : e.memory_parts) mt.row({k, fmt::format("{:.1f}", v / kGiB)});
    std::cout << mt.str() << "\n";
    if (b.fits) {
        Table st({"serving (now)", "value"});
        st.row({"TTFT mean / p99", human_seconds(b.ttft_s) + " / " + human_seconds(b.ttft_p99_s)});
        st.row({"TPOT mean / p99", human_seconds(b.tpot_s) + " / " + human_seconds(b.tpot_p99_s)});
        st.row({"output tokens/s (per GPU)",
                fixed_commas(b.output_tokens_per_s, 0) + " (" + fixed_commas(b.output_tokens_per_s_per_gpu, 0) + ")"});
        if (continuous) {
            st.row({"queueing mean (share of TTFT)",
                    human_seconds(b.queue_s) +
                        fmt::format(" ({:.0f}%)", b.ttft_s > 0 ? 100 * b.queue_s / b.ttft_s : 0.0)});
            if (e.capacity_requests_per_s > 0)
                st.row({"capacity (offline) / utilisation",
                        fmt::format("{:.3g} req/s / {:.0f}%", e.capacity_requests_per_s, 100 * e.utilisation)});
            st.row({"batch mean / peak", fmt::format("{:.1f} / {}", b.mean_batch, b.peak_batch)});
            st.row({"preemptions", std::to_string(b.preemptions)});
            st.row({"KV cache peak", fmt::format("{:.0f}%", 100 * b.kv_occupancy_max)});
            st.row({"requests held back by KV / max_batch / chunk",
                    fmt::format("{:.0f}% / {:.0f}% / {:.0f}% of the run", 100 * b.kv_held_fraction,
                                100 * b.seats_held_fraction, 100 * b.budget_held_fraction)});
        }
        const double total = b.prefill_s + b.decode_s;
        st.row({continuous ? "prefill-carrying iterations" : "prefill (TTFT)",
                fmt::format("{:.0f}% of the time, {:.0f}% compute-bound", total > 0 ? 100 * b.prefill_s / total : 0.0,
                            100 * b.prefill_compute_fraction)});
        st.row({continuous ? "decode-only iterations" : "decode",
                fmt::format("{:.0f}% of the time, {:.0f}% compute-bound", total > 0 ? 100 * b.decode_s / total : 0.0,
                            100 * b.decode_compute_fraction)});
        if (in.slo.any()) st.row({"SLO", b.slo_met ? "met" : "missed"});
        std::cout << st.str() << "\n";
    }
    // The binding quantity's change in percent (memory: GiB needed per GPU).
    auto binding = [&](double q) {
        if (e.unit == "bytes") return fmt::format("{:.1f} GiB", q / kGiB);
        if (!(e.binding_value > 0)) return std::string();
        return fmt::format("{:+.0f}%", 100 * (q / e.binding_value - 1));
    };
    Table lt({"lever", "change", "GPUs", "TTFT p99", "TPOT p99", "tok/s/GPU", "SLO",
              e.unit == "bytes" ? "GiB needed" : e.quantity + " Δ", "trade-off"});
    lt.left(1).left(6).left(8);
    auto row = [&](const std::string& name, const std::string& change, int gpus, const app::ServingMeasures& m,
                   const std::string& change_in_binding, const std::string& tradeoff) {
        const bool ok = m.fits;
        lt.row({name, change, std::to_string(gpus), ok ? human_seconds(m.ttft_p99_s) : "-",
                ok ? human_seconds(m.tpot_p99_s) : "-", ok ? fixed_commas(m.output_tokens_per_s_per_gpu, 0) : "-",
                !in.slo.any() ? ""
                : !ok         ? "no fit"
                : m.slo_met   ? "met"
                              : "missed",
                change_in_binding, tradeoff});
    };
    row("(now)", "", s.gpus, b, e.unit == "bytes" ? binding(e.binding_value) : "", "");
    for (std::size_t i = 0; i < e.levers.size(); ++i) {
        const auto& l = e.levers[i];
        row((static_cast<int>(i) == e.recommended ? "* " : "") + l.name, l.change, l.gpus, l.after,
            l.after.fits || e.unit == "bytes" ? binding(l.binding_after) : "does not fit", l.tradeoff);
    }
    std::cout << "levers (each applied alone, re-run; * = recommended):\n" << lt.str();
    std::cout << "\n" << wrap_text("first action: " + e.recommendation);
}

}   // namespace

void setup_explain(CLI::App* cmd, Context& ctx) {
    auto flags = std::make_shared<ScenarioFlags>();
    add_scenario_flags(cmd, *flags);
    cmd->callback([flags, &ctx] {
        const Scenario s = resolve_scenario(*flags);
        if (s.is_inference) {
            try {
                explain_serving(s, flags->json);
            } catch (const ConfigError& err) {   // a refusal or work limit names an input: its flag or the file's
                throw locate_problems(*flags, err);
            }
            ctx.exit_code = 0;
            return;
        }
        const auto e = app::explain_training(s);
        if (flags->json) {
            Json mem = Json::object(), time = Json::object(), levers = Json::array();
            for (const auto& [k, v] : e.memory_parts) mem[k + "_bytes"] = v;
            for (const auto& [k, v] : e.time_parts) time[k + "_s"] = v;
            Json fit = Json::array();
            if (e.binding == "memory")
                for (const auto& l : app::fit_path(s))
                    fit.push_back({{"lever", l.name},
                                   {"change", l.change},
                                   {"peak_memory_bytes", l.peak_bytes},
                                   {"step_time_s", l.step_time_s},
                                   {"fits", l.fits}});
            for (const auto& l : e.levers) {
                levers.push_back({{"lever", l.name},
                                  {"change", l.change},
                                  {"tradeoff", l.tradeoff},
                                  {"gpus", l.gpus},
                                  {"step_time_s", l.step_time_s},
                                  {"tokens_per_s_per_gpu", l.tokens_per_s_per_gpu},
                                  {"mfu", l.mfu},
                                  {"peak_memory_bytes", l.peak_bytes},
                                  {"fits", l.fits},
                                  {"improves_binding", l.improves}});
                if (e.base.token_budget > 0) levers.back()["train_days"] = lever_days(e, l);
            }

            Json out = {
                {"binding", e.binding},
                {"constraint", e.constraint},
                {"binding_value", e.binding_value},
                {"memory", mem},
                {"time", time},
                {"levers", levers},
                {"recommended",
                 e.recommended >= 0 ? Json(e.levers[static_cast<std::size_t>(e.recommended)].name) : Json(nullptr)},
                {"recommendation", e.recommendation},
                {"scenario", to_json(s)}};
            if (e.base.token_budget > 0) {
                out["token_budget"] = e.base.token_budget;
                out["train_days"] = e.base.train_days;
                out["gpu_hours"] = e.base.gpu_hours;
            }
            print_json(out);
            ctx.exit_code = 0;
            return;
        }
        std::cout << join_fields(
            {fmt::format("{} on {} x {}", s.model.name, s.gpus, s.system.name),
             fmt::format("tp {} pp {} dp {} cp {} vp {}", s.parallel.tp, s.parallel.pp, s.parallel.dp, s.parallel.cp,
                         s.parallel.vp),
             fmt::format("zero {}", s.parallel.zero), fmt::format("mb {}", s.training.micro_batch),
             fmt::format("gb {}", s.training.global_batch), training_options_text(s.training),
             fmt::format("seq {}", s.training.seq_len),
             s.parallel.framework == Framework::unspecified ? std::string() : framework_label(s.parallel)},
            " | ");
        std::cout << "\n" << wrap_text("binding constraint: " + e.constraint) << "\n";
        Table mt({"memory (most loaded GPU)", "GiB"});
        for (const auto& [k, v] : e.memory_parts) mt.row({k, fmt::format("{:.1f}", v / kGiB)});
        Table tt({"time per step", "s", "share"});
        const double step = e.base.step_time_s;
        for (const auto& [k, v] : e.time_parts)
            if (v > 0) tt.row({k, fmt::format("{:.3g}", v), fmt::format("{:.0f}%", 100 * v / step)});
        std::cout << mt.str() << "\n" << tt.str() << "\n";
        Table lt({"lever", "change", "GPUs", "step s", "MFU", "peak GiB", "fits", "trade-off"});
        lt.left(1).left(7);
        lt.row({"(now)", "", std::to_string(s.gpus), fmt::format("{:.3g}", step),
                fmt::format("{:.1f}%", 100 * e.base.mfu), fmt::format("{:.1f}", e.base.memory.total_bytes / kGiB),
                e.base.memory.fits ? "yes" : "NO", ""});
        for (std::size_t i = 0; i < e.levers.size(); ++i) {
            const auto& l = e.levers[i];
            lt.row({(static_cast<int>(i) == e.recommended ? "* " : "") + l.name, l.change, std::to_string(l.gpus),
                    fmt::format("{:.3g}", l.step_time_s), fmt::format("{:.1f}%", 100 * l.mfu),
                    fmt::format("{:.1f}", l.peak_bytes / kGiB), l.fits ? "yes" : "NO", l.tradeoff});
        }
        std::cout << "levers (each applied alone, re-estimated; * = recommended):\n" << lt.str();
        std::cout << "\n" << wrap_text("first action: " + e.recommendation);
        if (e.base.token_budget > 0) {
            std::string with;
            if (e.recommended >= 0) {
                const auto& l = e.levers[static_cast<std::size_t>(e.recommended)];
                with = fmt::format("; with the first action {:.1f} days, {:.3g} GPU-hours", lever_days(e, l),
                                   lever_days(e, l) * 24.0 * l.gpus);
            }
            std::cout << wrap_text(fmt::format("token budget {:.3g}: {:.1f} days, {:.3g} GPU-hours now{}",
                                               e.base.token_budget, e.base.train_days, e.base.gpu_hours, with));
        }
        if (e.binding == "memory" && e.recommended >= 0 && !e.levers[static_cast<std::size_t>(e.recommended)].fits) {
            const auto path = app::fit_path(s);
            std::string line;
            for (const auto& l : path) line += (line.empty() ? "" : "; then ") + l.change;
            if (!path.empty())
                std::cout << wrap_text(
                    fmt::format("path to fit (first actions in turn): {}: peak {:.1f} GiB{}, step "
                                "{:.3g} s",
                                line, path.back().peak_bytes / kGiB,
                                path.back().fits ? " (fits)" : " (still too large)", path.back().step_time_s));
        }
        ctx.exit_code = 0;
    });
}

}   // namespace llmsim::cli
