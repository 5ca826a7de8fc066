// llmsim flops: FLOPs per step and per token, model vs hardware.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cost_models/flops.hpp"
#include "cost_models/model_params.hpp"
#include "cost_models/recompute.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/scenario.hpp"
#include "report/results.hpp"

namespace llmsim::cli {

namespace {

// A serving scenario: forward FLOPs per prompt token and per generated token (report::serving_token_flops).
void serving_flops(const Scenario& s, bool json) {
    if (json) {
        print_json(report::flops_document(s));
        return;
    }
    const auto& in = s.inference;
    const auto tf = report::serving_token_flops(s);
    const double prompt = tf.prompt, context = tf.context;
    const auto &pre = tf.prefill, &gen = tf.generated, &gen0 = tf.generated_at_zero;
    const auto& pc = tf.params;
    std::cout << wrap_text(fmt::format(
        "{}: {} params ({} active), forward FLOPs per token at inference; prompt {} tokens (causal: each attends "
        "to {:g} on average), generated tokens at the mean context {:g} = input + output/2",
        s.model.name, human_count(pc.total), human_count(pc.active), in.input_len, prompt / 2, context));
    Table t({"FLOPs per token", "prefill token", "generated token"});
    t.row({"GEMMs (linear layers + LM head)", human_flops(pre.gemm), human_flops(gen.gemm)});
    t.row({"  of which LM head", human_flops(pre.lm_head), human_flops(gen.lm_head)});
    t.row({"attention (QK^T, A.V)", human_flops(pre.attention), human_flops(gen.attention)});
    t.row({"model FLOPs", human_flops(pre.model()), human_flops(gen.model())});
    if (pre.router > 0)
        t.row({"hardware FLOPs (+ MoE routers)", human_flops(pre.hardware()), human_flops(gen.hardware())});
    std::cout << t.str()
              << fmt::format(
                     "hand formula: GEMMs = 2·N_active less the input embedding (a lookup) and norms\n"
                     "              = {:.4e} (2·N_active = {:.4e})\n",
                     gen0.gemm, 2.0 * pc.active)
              << fmt::format(
                     "              attention = 2·layers·heads·(d_qk + d_v)·context\n"
                     "              = {:.4e} x context\n",
                     2.0 * s.model.layers * static_cast<double>(s.model.q_dim() + s.model.v_dim()));
}

}   // namespace

void setup_flops(CLI::App* cmd, Context& ctx) {
    auto flags = std::make_shared<ScenarioFlags>();

    add_scenario_flags(cmd, *flags);
    // Days and GPU-hours for a token budget are estimate's (they need the step time).
    cmd->remove_option(cmd->get_option("--token-budget"));
    cmd->callback([flags, &ctx] {
        const Scenario s = resolve_scenario(*flags);
        if (s.is_inference) {
            serving_flops(s, flags->json);
            ctx.exit_code = 0;
            return;
        }
        if (flags->json) {
            print_json(report::flops_document(s));
        } else {
            const auto f = training_flops(s.model, s.training, s.parallel.framework,
                                          full_recompute_share(s.model.layers, s.parallel, s.training));
            const auto pc = count_parameters(s.model);
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
