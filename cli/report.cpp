#include "cli/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/common.hpp"

namespace llmsim::cli {

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

std::string assumed_levers_text(const std::vector<std::string>& levers) {
    if (levers.empty()) return {};
    return wrap_text(fmt::format("assumed to fit (not stated, as NVIDIA's recipes run it): {}; state them to pin them",
                                 fmt::join(levers, ", ")));
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
    out += wrap_text(fmt::format("capacity {}  ->  {}  (headroom {})", gib(m.capacity_bytes),
                                 m.fits ? "fits" : "DOES NOT FIT", gib(m.headroom_bytes)));
    out += wrap_text(fmt::format("most loaded: pipeline stage {}; dominant: {}", m.stage, m.dominant));
    out += assumed_levers_text(m.assumed_levers);
    if (m.offloaded_bytes_per_gpu > 0)
        out += wrap_text(fmt::format("offloaded to host: {} per GPU, {} per node of {} ({})",
                                     gib(m.offloaded_bytes_per_gpu), gib(m.host_bytes_per_node),
                                     gib(m.host_capacity_bytes), m.host_fits ? "fits" : "DOES NOT FIT"));
    return out;
}

}   // namespace llmsim::cli
