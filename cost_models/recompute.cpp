#include "cost_models/recompute.hpp"

#include <algorithm>
#include <vector>

#include "cost_models/layout.hpp"
#include "cost_models/model_params.hpp"

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
    enum Group { qkv, attn_out, fc1, fc2, router, shared_fc1, shared_fc2, groups };
    struct Slot {
        Group group;
        double flops;   // N·K of the GEMM per token on this rank (its FLOPs up to a constant)
        double out;     // output elements per token on this rank
    };
    const double t = tp, h = static_cast<double>(m.hidden);
    const double qd = static_cast<double>(m.q_dim()) / t;
    const double kv = kv_heads_per_tp_rank(m, tp) * static_cast<double>(m.head_dim);
    const double vd = static_cast<double>(m.v_dim()) / t;
    std::vector<Slot> slots;
    if (m.mla.enabled()) {
        const double rq = static_cast<double>(m.mla.q_lora_rank), rkv = static_cast<double>(m.mla.kv_lora_rank);
        const double dr = static_cast<double>(m.mla.qk_rope_head_dim);
        const double up = m.heads / t * static_cast<double>(m.qk_nope_head_dim() + m.v_head());
        if (rq > 0) {
            slots.push_back({qkv, rq * h, rq});
            slots.push_back({qkv, qd * rq, qd});
        } else {
            slots.push_back({qkv, qd * h, qd});
        }
        slots.push_back({qkv, (rkv + dr) * h, rkv + dr});
        slots.push_back({qkv, up * rkv, up});
    } else {
        slots.push_back({qkv, qd * h, qd});
        slots.push_back({qkv, kv * h, kv});
        slots.push_back({qkv, kv * h, kv});
    }
    slots.push_back({attn_out, vd * h, h / sp_div});
    auto mlp = [&](Group g1, Group g2, double f, double copies) {
        f /= t;
        if (m.mlp == MlpKind::swiglu) {
            slots.push_back({g1, copies * f * h, copies * f});   // gate (w1)
            slots.push_back({g1, copies * f * h, copies * f});   // up (w3)
        } else {
            slots.push_back({g1, copies * f * h, copies * f});
        }
        slots.push_back({g2, copies * f * h, copies * h / sp_div});   // down (w2)
    };
    if (moe_layer && m.moe.enabled()) {
        slots.push_back({router, static_cast<double>(m.moe.experts) * h, static_cast<double>(m.moe.experts)});
        mlp(fc1, fc2, static_cast<double>(m.moe.expert_ffn_hidden), m.moe.top_k);
        if (m.moe.shared_experts > 0)
            mlp(shared_fc1, shared_fc2, static_cast<double>(m.moe.shared_expert_ffn_hidden) * m.moe.shared_experts,
                1.0);
    } else {
        mlp(fc1, fc2, static_cast<double>(m.ffn_hidden), 1.0);
    }

    double total[groups] = {}, recomputed[groups] = {};
    OpSacPlan plan;
    for (std::size_t i = 0; i < slots.size(); ++i) {
        const Slot& s = slots[i];
        total[s.group] += s.flops;
        if (i % 2 == 0)   // the 1st, 3rd, ... mm of the block: saved
            plan.saved_elements_per_token += s.out;
        else
            recomputed[s.group] += s.flops;
    }
    auto share = [&](Group g) { return total[g] > 0 ? recomputed[g] / total[g] : 0.0; };
    plan.qkv = share(qkv);
    plan.attn_out = share(attn_out);
    plan.fc1 = share(fc1);
    plan.fc2 = share(fc2);
    plan.router = share(router);
    plan.shared_fc1 = share(shared_fc1);
    plan.shared_fc2 = share(shared_fc2);
    return plan;
}

}   // namespace llmsim
