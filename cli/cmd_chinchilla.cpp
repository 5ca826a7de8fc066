// llmsim chinchilla: compute-optimal parameters and tokens for a budget (or the budget for a model
// size or a token count) under Chinchilla's fits (cost_models/scaling_laws.hpp, docs/search.md).
#include <cmath>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/flag_checks.hpp"
#include "cost_models/scaling_laws.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/limits.hpp"
#include "hardware_db/units.hpp"

namespace llmsim::cli {

void setup_chinchilla(CLI::App* cmd, Context& ctx) {
    struct Flags {
        std::string compute, params, tokens, fit = "all";
        bool json = false;
    };
    auto f = std::make_shared<Flags>();

    auto* oc = cmd->add_option("--compute", f->compute, "Training budget in FLOPs (C ≈ 6·N·D), e.g. 5.76e23");
    auto* on = cmd->add_option("--params", f->params, "Model parameters N (e.g. 70B): the budget it is optimal for");
    auto* od = cmd->add_option("--tokens", f->tokens, "Training tokens D (e.g. 1.4T): the budget they are optimal for");
    oc->excludes(on)->excludes(od);
    on->excludes(od);
    cmd->add_option("--fit", f->fit, "hoffmann | hoffmann-unrounded | epoch | approach1 | all (default all)");
    cmd->add_flag("--json", f->json, "Print JSON instead of a table");
    cmd->callback([f, &ctx] {
        std::vector<ScalingFit> fits;
        if (f->fit == "all") {
            fits = {ScalingFit::approach1, ScalingFit::hoffmann, ScalingFit::hoffmann_unrounded, ScalingFit::epoch};
        } else {
            ScalingFit one;
            if (!scaling_fit_from_string(f->fit, one))
                throw ConfigError(fmt::format(
                    "--fit: \"{}\": expected hoffmann, hoffmann-unrounded, epoch, approach1 or all", f->fit));
            fits = {one};
        }
        std::string query;
        double value = 0;
        if (!f->compute.empty()) {
            query = "compute";
            value = quantity_in(f->compute, "--compute", QuantityKind::count, 1, limits::kMaxFlops);
        } else if (!f->params.empty()) {
            query = "params";
            value = quantity_in(f->params, "--params", QuantityKind::count, 1, limits::kMaxParams);
            // A bare small number is almost surely billions meant without the suffix.
            if (value < 1e6 && f->params.find_first_not_of("0123456789.") == std::string::npos)
                std::cerr << fmt::format(
                    "warning: --params {} means {} parameters; for {} billion write --params {}B\n", f->params,
                    f->params, f->params, f->params);
        } else if (!f->tokens.empty()) {
            query = "tokens";
            value = quantity_in(f->tokens, "--tokens", QuantityKind::count, 1, limits::kMaxTokens);
        } else {
            throw ConfigError("--compute: missing: expected one of --compute FLOPS, --params N, --tokens D");
        }
        Json rows = Json::array();
        Table t({"fit", "params N", "tokens D", "FLOPs C", "tokens/param", "loss", "6ND/C"});
        auto point = [&](ScalingFit fit) {
            return query == "compute"  ? optimal_for_compute(fit, value)
                   : query == "params" ? optimal_for_params(fit, value)
                                       : optimal_for_tokens(fit, value);
        };
        // A compute-optimal model of less than one parameter or one token is no answer (--compute 1 printed
        // "params N 0"); the fits themselves were made on models of 70M to 16B parameters.
        double smallest = INFINITY;
        for (ScalingFit fit : fits) {
            const ScalingPoint p = point(fit);
            smallest = std::min(smallest, p.params);
            if (!(p.params >= 1) || !(p.tokens >= 1))
                throw ConfigError(fmt::format(
                    "--{}: {}: expected a {} whose compute-optimal model has at least one parameter and one token "
                    "(under {}: {:.3g} parameters, {:.3g} tokens)",
                    query,
                    query == "compute"  ? f->compute
                    : query == "params" ? f->params
                                        : f->tokens,
                    query == "compute" ? "budget" : "value", to_string(fit), p.params, p.tokens));
        }
        for (ScalingFit fit : fits) {
            const ScalingPoint p = point(fit);
            const LossFit k = loss_fit(fit);
            rows.push_back({{"fit", to_string(fit)},
                            {"params", p.params},
                            {"tokens", p.tokens},
                            {"flops", p.flops},
                            {"tokens_per_param", p.tokens_per_param()},
                            {"loss", p.loss},
                            {"loss_fit", fit == ScalingFit::approach1 ? "hoffmann" : to_string(fit)},
                            {"constants", {{"E", k.E}, {"A", k.A}, {"B", k.B}, {"alpha", k.alpha}, {"beta", k.beta}}}});
            t.row({to_string(fit), human_count(p.params), human_count(p.tokens), fmt::format("{:.3g}", p.flops),
                   fmt::format("{:.1f}", p.tokens_per_param()), fmt::format("{:.3f}", p.loss),
                   fmt::format("{:.3f}", 6.0 * p.params * p.tokens / p.flops)});
        }
        if (f->json) {
            print_json({{"query", {{query, value}}}, {"results", rows}});
        } else {
            std::cout << wrap_text(fmt::format(
                "compute-optimal ({} = {:.4g}; C = 6·N·D; loss in nats/token, L = E + A/N^α + B/D^β)", query, value));
            std::cout << t.str();
            std::cout << wrap_text(
                             "approach1: Hoffmann et al. 2022 Table 3 interpolated log-log (its loss uses the "
                             "hoffmann fit);")
                      << "hoffmann, epoch: Approach 3 closed form N_opt = G·(C/6)^(β/(α+β)).\n";
            if (smallest < 7e7)
                std::cout << wrap_text(fmt::format(
                    "note: extrapolated below the fits' smallest model (70M parameters; Hoffmann et al. 2022 "
                    "trained 70M to 16B): {} here",
                    human_count(smallest)));
        }
        ctx.exit_code = 0;
    });
}

}   // namespace llmsim::cli
