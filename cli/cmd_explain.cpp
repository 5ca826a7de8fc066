// llmsim explain: the binding constraint of a training scenario, its breakdown, every lever with its
// predicted effect and trade-off, and the first action (sim/explain computes; this file prints).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "hardware_db/scenario.hpp"
#include "sim/explain.hpp"

namespace llmsim::cli {

void setup_explain(CLI::App* cmd, Context& ctx) {
    auto flags = std::make_shared<ScenarioFlags>();
    add_scenario_flags(cmd, *flags);
    cmd->callback([flags, &ctx] {
        const Scenario s = resolve_scenario(*flags);
        const auto e = sim::explain_training(s);
        if (flags->json) {
            Json mem = Json::object(), time = Json::object(), levers = Json::array();
            for (const auto& [k, v] : e.memory_parts) mem[k + "_bytes"] = v;
            for (const auto& [k, v] : e.time_parts) time[k + "_s"] = v;
            Json fit = Json::array();
            if (e.binding == "memory")
                for (const auto& l : sim::fit_path(s))
                    fit.push_back({{"lever", l.name},
                                   {"change", l.change},
                                   {"peak_memory_bytes", l.peak_bytes},
                                   {"step_time_s", l.step_time_s},
                                   {"fits", l.fits}});
            for (const auto& l : e.levers)
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
            print_json(
                {{"binding", e.binding},
                 {"constraint", e.constraint},
                 {"binding_value", e.binding_value},
                 {"memory", mem},
                 {"time", time},
                 {"levers", levers},
                 {"recommended",
                  e.recommended >= 0 ? Json(e.levers[static_cast<std::size_t>(e.recommended)].name) : Json(nullptr)},
                 {"recommendation", e.recommendation},
                 {"scenario", to_json(s)}});
            ctx.exit_code = 0;
            return;
        }
        std::cout << fmt::format(
            "{} on {} x {} | tp {} pp {} dp {} cp {} vp {} | zero {} | mb {} | gb {} | {} "
            "recompute | seq {}\n",
            s.model.name, s.gpus, s.system.name, s.parallel.tp, s.parallel.pp, s.parallel.dp, s.parallel.cp,
            s.parallel.vp, s.parallel.zero, s.training.micro_batch, s.training.global_batch,
            to_string(s.training.recompute), s.training.seq_len);
        std::cout << "\nbinding constraint: " << e.constraint << "\n\n";
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
        std::cout << "\nfirst action: " << e.recommendation << "\n";
        if (e.binding == "memory" && e.recommended >= 0 && !e.levers[static_cast<std::size_t>(e.recommended)].fits) {
            const auto path = sim::fit_path(s);
            std::string line;
            for (const auto& l : path) line += (line.empty() ? "" : "; then ") + l.change;
            if (!path.empty())
                std::cout << fmt::format("path to fit (first actions in turn): {}: peak {:.1f} GiB{}, step {:.3g} s\n",
                                         line, path.back().peak_bytes / kGiB,
                                         path.back().fits ? " (fits)" : " (still too large)", path.back().step_time_s);
        }
        ctx.exit_code = 0;
    });
}

}   // namespace llmsim::cli
