#include "report/results.hpp"

#include "cost_models/model_params.hpp"
#include "cost_models/recompute.hpp"
#include "hardware_db/scenario.hpp"

namespace llmsim::report {

Json memory_json(const MemoryBreakdown& m) {
    Json stages = Json::array();
    for (const auto& s : m.stages)
        stages.push_back({{"stage", s.stage},
                          {"layers", s.layers},
                          {"weights_bytes", s.weights_bytes},
                          {"gradients_bytes", s.gradients_bytes},
                          {"optimizer_bytes", s.optimizer_bytes},
                          {"activations_bytes", s.activations_bytes},
                          {"other_bytes", s.other_bytes},
                          {"total_bytes", s.total_bytes},
                          {"microbatches_in_flight", s.microbatches_in_flight}});
    return {{"weights_bytes", m.weights_bytes},
            {"gradients_bytes", m.gradients_bytes},
            {"optimizer_bytes", m.optimizer_bytes},
            {"activations_bytes", m.activations_bytes},
            {"other_bytes", m.other_bytes},
            {"total_bytes", m.total_bytes},
            {"capacity_bytes", m.capacity_bytes},
            {"fits", m.fits},
            {"headroom_bytes", m.headroom_bytes},
            {"dominant", m.dominant},
            {"assumed_levers", m.assumed_levers},
            {"most_loaded_stage", m.stage},
            {"params_on_gpu", m.params_on_gpu},
            {"detail",
             {{"master_weights_bytes", m.master_weights_bytes},
              {"optimizer_states_bytes", m.optimizer_states_bytes},
              {"activations_per_layer_bytes", m.activations_per_layer_bytes},
              {"layers_on_stage", m.layers_on_stage},
              {"microbatches_in_flight", m.microbatches_in_flight},
              {"recompute_working_bytes", m.recompute_working_bytes},
              {"embedding_activations_bytes", m.embedding_activations_bytes},
              {"logits_bytes", m.logits_bytes},
              {"zero3_gather_bytes", m.zero3_gather_bytes},
              {"fp8_weight_cache_bytes", m.fp8_weight_cache_bytes},
              {"adapter_bytes", m.adapter_bytes},
              {"frozen_models_bytes", m.frozen_models_bytes},
              {"rollout_kv_cache_bytes", m.rollout_kv_cache_bytes},
              {"reserve_bytes", m.reserve_bytes},
              {"fragmentation_bytes", m.fragmentation_bytes}}},
            {"offload",
             {{"offloaded_bytes_per_gpu", m.offloaded_bytes_per_gpu},
              {"activations_offloaded_bytes", m.activations_offloaded_bytes},
              {"host_bytes_per_node", m.host_bytes_per_node},
              {"host_capacity_bytes", m.host_capacity_bytes},
              {"host_fits", m.host_fits}}},
            {"stages", stages}};
}

Json inference_memory_json(const InferenceMemory& m) {
    return {{"weights_bytes", m.weights_bytes},
            {"draft_weights_bytes", m.draft_weights_bytes},
            {"gradients_bytes", 0.0},
            {"optimizer_bytes", 0.0},
            {"kv_cache_bytes", m.kv_cache_bytes},
            {"kv_bytes_per_token", m.kv_bytes_per_token},
            {"activations_bytes", m.activations_bytes},
            {"other_bytes", m.other_bytes},
            {"total_bytes", m.total_bytes},
            {"capacity_bytes", m.capacity_bytes},
            {"fits", m.fits},
            {"max_batch", m.max_batch}};
}

Json flops_json(const TrainingFlops& f) {
    return {{"tokens_per_step", f.tokens_per_step},
            {"model_flops_per_step", f.model_flops_per_step},
            {"model_flops_per_step_noncausal", f.model_flops_per_step_noncausal},
            {"hardware_flops_per_step", f.hardware_flops_per_step},
            {"recompute_flops_per_step", f.recompute_flops_per_step},
            {"logits_flops_per_step", f.logits_flops_per_step},
            {"model_flops_per_token", f.model_flops_per_token},
            {"hardware_flops_per_token", f.hardware_flops_per_token},
            {"six_n_flops_per_token", f.six_n_flops_per_token},
            {"narayanan_flops_per_step", f.narayanan_flops_per_step},
            {"convention",
             "model FLOPs: Megatron-LM num_floating_point_operations (3 x forward GEMMs; causal attention "
             "counted as half the s^2 term); hardware FLOPs add recompute (docs/flops-model.md)"}};
}

Json distribution_json(const sim::Distribution& d) {
    return {{"mean", d.mean}, {"p50", d.p50}, {"p90", d.p90}, {"p99", d.p99}, {"max", d.max}};
}

namespace {

Json token_json(const InferenceTokenFlops& f) {
    return {{"context_tokens", f.context},    {"gemm_flops", f.gemm},     {"lm_head_flops", f.lm_head},
            {"attention_flops", f.attention}, {"router_flops", f.router}, {"model_flops", f.model()},
            {"hardware_flops", f.hardware()}};
}

}   // namespace

Json memory_document(const Scenario& s) {
    if (s.is_inference)
        return {{"memory", inference_memory_json(inference_memory(s.model, s.system, s.parallel, s.inference))},
                {"scenario", to_json(s)}};
    return {{"memory", memory_json(training_memory(s.training_job()))}, {"scenario", to_json(s)}};
}

ServingTokenFlops serving_token_flops(const Scenario& s) {
    const auto& in = s.inference;
    ServingTokenFlops f;
    f.prompt = static_cast<double>(in.input_len);
    f.context = f.prompt + static_cast<double>(in.output_len) / 2.0;
    f.prefill = inference_token_flops(s.model, f.prompt, true);
    f.generated = inference_token_flops(s.model, f.context, false);
    f.generated_at_zero = inference_token_flops(s.model, 0, false);
    f.params = count_parameters(s.model);
    return f;
}

Json flops_document(const Scenario& s) {
    if (s.is_inference) {
        const auto f = serving_token_flops(s);
        return {{"flops",
                 {{"prefill_token", token_json(f.prefill)},
                  {"generated_token", token_json(f.generated)},
                  {"two_n_active_flops", 2.0 * f.params.active},
                  {"params", f.params.total},
                  {"active_params", f.params.active}}},
                {"scenario", to_json(s)}};
    }
    const auto f = training_flops(s.model, s.training, s.parallel.framework,
                                  full_recompute_share(s.model.layers, s.parallel, s.training));
    const auto pc = count_parameters(s.model);
    Json j = flops_json(f);
    j["params"] = pc.total;
    j["active_params"] = pc.active;
    return {{"flops", j}, {"scenario", to_json(s)}};
}

}   // namespace llmsim::report
