#include "cost_models/recompute.hpp"

#include <algorithm>

#include "cost_models/layer/layer.hpp"
#include "cost_models/layout.hpp"

namespace llmsim {

bool op_level_selective(Framework f, Recompute r) noexcept {
    return r == Recompute::selective && f == Framework::torchtitan;
}

namespace {

int chunks_per_stage(const ParallelConfig& p) { return p.schedule && p.schedule->uses_chunks ? std::max(1, p.vp) : 1; }

}   // namespace

int max_layers_per_chunk(int layers, const ParallelConfig& p) {
    const auto per = layers_per_stage(layers, p.pp);
    const int chunks = chunks_per_stage(p);
    return (*std::max_element(per.begin(), per.end()) + chunks - 1) / chunks;
}

double full_recompute_share(int layers, const ParallelConfig& p, const TrainingConfig& t) {
    if (t.recompute != Recompute::full || layers <= 0) return 0.0;
    if (t.recompute_num_layers <= 0) return 1.0;
    const int chunks = chunks_per_stage(p);
    double recomputed = 0;
    for (const int n : layers_per_stage(layers, p.pp))
        for (int c = 0; c < chunks; ++c) {
            const int size = n / chunks + (c < n % chunks ? 1 : 0);
            recomputed += std::min(t.recompute_num_layers, size);
        }
    return std::min(1.0, recomputed / layers);
}

double activation_offload_share(int layers, const TrainingConfig& t) {
    if (t.activation_offload_layers <= 0 || layers <= 0) return 0.0;
    return std::min(1.0, static_cast<double>(t.activation_offload_layers) / layers);
}

OpSacPlan op_sac_plan(const ModelSpec& m, int tp, double sp_div, bool moe_layer) {
    // The layer's GEMMs unfused, in the order torchtitan's models call them (cost_models/layer).
    constexpr int kParts = static_cast<int>(LayerPart::shared_fc2) + 1;
    double total[kParts] = {}, recomputed[kParts] = {};
    OpSacPlan plan;
    int calls = 0;
    for (const auto& op : describe_layer(m, LayerShape{.tp = tp, .sp_div = sp_div, .moe = moe_layer})) {
        if (op.kind != LayerOpKind::gemm) continue;
        const int part = static_cast<int>(op.part);
        const double flops = op.rows * op.n * op.k;   // N·K per token on this rank (FLOPs up to a constant)
        total[part] += flops;
        if (calls++ % 2 == 0) {   // the 1st, 3rd, ... mm of the block: saved (row-parallel: h / sp_div)
            plan.saved_elements_per_token += op.row_parallel ? op.rows * op.n / sp_div : op.rows * op.n;
        } else {
            recomputed[part] += flops;
            plan.recomputed_flops_per_token += op.flops_per_token();
        }
    }
    auto share = [&](LayerPart p) {
        const int i = static_cast<int>(p);
        return total[i] > 0 ? recomputed[i] / total[i] : 0.0;
    };
    plan.qkv = share(LayerPart::qkv);
    plan.attn_out = share(LayerPart::attn_out);
    plan.fc1 = share(LayerPart::fc1);
    plan.fc2 = share(LayerPart::fc2);
    plan.router = share(LayerPart::router);
    plan.shared_fc1 = share(LayerPart::shared_fc1);
    plan.shared_fc2 = share(LayerPart::shared_fc2);
    return plan;
}

}   // namespace llmsim
