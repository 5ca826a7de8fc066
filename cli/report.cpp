#include "cli/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/common.hpp"

namespace llmsim::cli {

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

std::string training_options_text(const TrainingConfig& t) {
    std::string out = std::string(to_string(t.recompute)) + " recompute";
    if (t.recompute == Recompute::full && t.recompute_num_layers > 0)
        out += fmt::format(" (first {} layers of each chunk)", t.recompute_num_layers);
    if (t.activation_offload_layers > 0)
        out += fmt::format(" | activations of {} layers offloaded", t.activation_offload_layers);
    // The model states' precisions where they differ from the defaults.
    if (t.fp8_params) out += " | fp8 params";
    if (t.grad_precision != Precision::fp32)
        out += fmt::format(" | {} grads{}", to_string(t.grad_precision), t.assumed_bf16_grads ? " (assumed)" : "");
    if (t.optimizer_state_precision != Precision::fp32)
        out += fmt::format(" | {} moments", to_string(t.optimizer_state_precision));
    if (t.master_weights != MasterWeights::fp32)
        out += t.master_weights == MasterWeights::remainder
                   ? (t.assumed_master_remainders ? " | master remainders (assumed)" : " | master remainders")
                   : " | no master weights";
    return out;
}

Json inference_memory_json(const InferenceMemory& m) {
    return {{"weights_bytes", m.weights_bytes},
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

std::string assumed_levers_text(const std::vector<std::string>& levers) {
    if (levers.empty()) return {};
    return fmt::format("assumed to fit (not stated, as NVIDIA's recipes run it): {}; state them to pin them\n",
                       fmt::join(levers, ", "));
}

std::string memory_text(const MemoryBreakdown& m) {
    Table t({"component", "per GPU", "share"});
    auto share = [&](double b) { return m.total_bytes > 0 ? fmt::format("{:.0f}%", 100.0 * b / m.total_bytes) : "-"; };
    t.row({"weights", gib(m.weights_bytes), share(m.weights_bytes)});
    t.row({"gradients", gib(m.gradients_bytes), share(m.gradients_bytes)});
    t.row({"optimizer states", gib(m.optimizer_bytes), share(m.optimizer_bytes)});
    t.row(
        {fmt::format("activations ({:.3g} layers x {:.3g} micro-batches)", m.layers_on_stage, m.microbatches_in_flight),
         gib(m.activations_bytes), share(m.activations_bytes)});
    t.row({"buffers and reserve", gib(m.other_bytes), share(m.other_bytes)});
    t.row({"total", gib(m.total_bytes), "100%"});
    std::string out = t.str();
    out += fmt::format("capacity {}  ->  {}  (headroom {})\n", gib(m.capacity_bytes), m.fits ? "fits" : "DOES NOT FIT",
                       gib(m.headroom_bytes));
    out += fmt::format("most loaded: pipeline stage {}; dominant: {}\n", m.stage, m.dominant);
    out += assumed_levers_text(m.assumed_levers);
    if (m.offloaded_bytes_per_gpu > 0)
        out +=
            fmt::format("offloaded to host: {} per GPU, {} per node of {} ({})\n", gib(m.offloaded_bytes_per_gpu),
                        gib(m.host_bytes_per_node), gib(m.host_capacity_bytes), m.host_fits ? "fits" : "DOES NOT FIT");
    return out;
}

}   // namespace llmsim::cli
