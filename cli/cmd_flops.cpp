// llmsim flops: FLOPs per step and per token, model vs hardware.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report.hpp"
#include "cost_models/flops.hpp"
#include "cost_models/model_params.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/scenario.hpp"

namespace llmsim::cli {

void setup_flops(CLI::App* cmd, Context& ctx) {
    auto flags = std::make_shared<ScenarioFlags>();

    add_scenario_flags(cmd, *flags);
    // Days and GPU-hours for a token budget are estimate's (they need the step time).
    cmd->remove_option(cmd->get_option("--token-budget"));
    cmd->callback([flags, &ctx] {
        const Scenario s = resolve_scenario(*flags);
        if (s.is_inference) throw ConfigError("/inference: present: expected a training scenario for `flops`");
        const auto f = training_flops(s.model, s.training);
        const auto pc = count_parameters(s.model);
        if (flags->json) {
            Json j = flops_json(f);
            j["params"] = pc.total;
            j["active_params"] = pc.active;
            print_json({{"flops", j}, {"scenario", to_json(s)}});
        } else {
            Table t({"quantity", "per step", "per token"});
            t.row({"model FLOPs (MFU)", human_flops(f.model_flops_per_step), human_flops(f.model_flops_per_token)});
            t.row({"hardware FLOPs (HFU)", human_flops(f.hardware_flops_per_step),
                   human_flops(f.hardware_flops_per_token)});
            t.row({"  of which recompute", human_flops(f.recompute_flops_per_step),
                   human_flops(f.recompute_flops_per_step / f.tokens_per_step)});
            t.row({"  of which logits", human_flops(f.logits_flops_per_step),
                   human_flops(f.logits_flops_per_step / f.tokens_per_step)});
            t.row({"model FLOPs, non-causal", human_flops(f.model_flops_per_step_noncausal),
                   human_flops(f.model_flops_per_step_noncausal / f.tokens_per_step)});
            t.row({"6·N (active params)", human_flops(f.six_n_flops_per_token * f.tokens_per_step),
                   human_flops(f.six_n_flops_per_token)});
            std::cout << fmt::format("{}: {} params ({} active), {} tokens per step\n", s.model.name,
                                     human_count(pc.total), human_count(pc.active), human_count(f.tokens_per_step))
                      << t.str();
        }
        ctx.exit_code = 0;
    });
}

}   // namespace llmsim::cli
