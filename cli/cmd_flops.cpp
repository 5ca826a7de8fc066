// llmsim flops: FLOPs per step and per token, model vs hardware.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report.hpp"
#include "cost_models/flops.hpp"
#include "cost_models/model_params.hpp"
#include "cost_models/recompute.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/scenario.hpp"

namespace llmsim::cli {

namespace {

Json token_json(const InferenceTokenFlops& f) {
    return {{"context_tokens", f.context},    {"gemm_flops", f.gemm},     {"lm_head_flops", f.lm_head},
            {"attention_flops", f.attention}, {"router_flops", f.router}, {"model_flops", f.model()},
            {"hardware_flops", f.hardware()}};
}

// A serving scenario: forward FLOPs per prompt token (causal, over the mean prompt) and per generated
// token (at the mean context input + output/2, as the static estimate prices decode), split into GEMMs
// and attention (docs/serving.md, "FLOPs per token").
void serving_flops(const Scenario& s, bool json) {
    const auto& in = s.inference;
    const double prompt = static_cast<double>(in.input_len);
    const double context = prompt + static_cast<double>(in.output_len) / 2.0;
    const auto pre = inference_token_flops(s.model, prompt, true);
    const auto gen = inference_token_flops(s.model, context, false);
    const auto gen0 = inference_token_flops(s.model, 0, false);
    const auto pc = count_parameters(s.model);
    if (json) {
        print_json({{"flops",
                     {{"prefill_token", token_json(pre)},
                      {"generated_token", token_json(gen)},
                      {"two_n_active_flops", 2.0 * pc.active},
                      {"params", pc.total},
                      {"active_params", pc.active}}},
                    {"scenario", to_json(s)}});
        return;
    }
    std::cout << fmt::format(
        "{}: {} params ({} active), forward FLOPs per token at inference; prompt {} tokens (causal: each attends "
        "to {:g} on average), generated tokens at the mean context {:g} = input + output/2\n",
        s.model.name, human_count(pc.total), human_count(pc.active), in.input_len, prompt / 2, context);
    Table t({"FLOPs per token", "prefill token", "generated token"});
    t.row({"GEMMs (linear layers + LM head)", human_flops(pre.gemm), human_flops(gen.gemm)});
    t.row({"  of which LM head", human_flops(pre.lm_head), human_flops(gen.lm_head)});
    t.row({"attention (QK^T, A.V)", human_flops(pre.attention), human_flops(gen.attention)});
    t.row({"model FLOPs", human_flops(pre.model()), human_flops(gen.model())});
    if (pre.router > 0)
        t.row({"hardware FLOPs (+ MoE routers)", human_flops(pre.hardware()), human_flops(gen.hardware())});
    std::cout << t.str()
              << fmt::format(
                     "hand formula: GEMMs = 2·N_active less the input embedding (a lookup) and norms = {:.4e} "
                     "(2·N_active = {:.4e})\n",
                     gen0.gemm, 2.0 * pc.active)
              << fmt::format("              attention = 2·layers·heads·(d_qk + d_v)·context = {:.4e} x context\n",
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
        const auto f = training_flops(s.model, s.training, s.parallel.framework,
                                      full_recompute_share(s.model.layers, s.parallel, s.training));
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
