#include "hardware_db/layout_rules.hpp"

#include <bit>
#include <utility>

#include <fmt/format.h>

namespace llmsim {

LayoutRule first_rule(LayoutRules rules) { return static_cast<LayoutRule>(std::countr_zero(rules)); }

LayoutRules tp_rules(const ModelSpec& m, int tp) {
    LayoutRules r = 0;
    if (m.heads % tp != 0)
        r |= bit(LayoutRule::tp_heads);
    else if (m.kv_heads % tp != 0 && tp % m.kv_heads != 0)
        r |= bit(LayoutRule::tp_kv_heads);
    if (m.ffn_hidden % tp != 0) r |= bit(LayoutRule::tp_ffn);
    if (m.moe.enabled() && m.moe.expert_ffn_hidden % tp != 0) r |= bit(LayoutRule::tp_expert_ffn);
    return r;
}

std::int64_t max_pipeline_chunks(int layers) {
    // The embedding and the loss may each fill a model chunk of their own (Llama 3.1 405B's 126 layers on
    // pp 16 x vp 8 = 128 chunks, as Megatron-Bridge runs it); beyond that a chunk would hold nothing.
    return static_cast<std::int64_t>(layers) + 2;
}

LayoutRules pp_rules(const ModelSpec& m, int pp, int vp) {
    LayoutRules r = 0;
    if (pp > m.layers)
        r |= bit(LayoutRule::pp_layers);
    else if (static_cast<std::int64_t>(pp) * vp > max_pipeline_chunks(m.layers))
        r |= bit(LayoutRule::vp_layers);
    if (vp > 1 && pp == 1) r |= bit(LayoutRule::vp_needs_pp);
    return r;
}

LayoutRules ep_rules(const ModelSpec& m, int ep, int dp_cp, int expert_slots) {
    LayoutRules r = 0;
    if (ep <= 1) return r;
    if (!m.moe.enabled())
        r |= bit(LayoutRule::ep_dense);
    else if ((expert_slots > 0 ? expert_slots : m.moe.experts) % ep != 0)
        r |= bit(LayoutRule::ep_experts);
    if (dp_cp % ep != 0) r |= bit(LayoutRule::ep_dp);
    return r;
}

LayoutRules cp_rules(std::int64_t seq_len, int cp) {
    return cp > 1 && seq_len % (2 * static_cast<std::int64_t>(cp)) != 0 ? bit(LayoutRule::cp_seq_len) : 0;
}

LayoutRules batch_rules(std::int64_t global_batch, std::int64_t micro_batch, int dp) {
    return global_batch > 0 && global_batch % (micro_batch * dp) != 0 ? bit(LayoutRule::batch_dp) : 0;
}

LayoutRules framework_rules(int zero, int pp, Framework framework) {
    if (pp > 1 && framework == Framework::llm_foundry) return bit(LayoutRule::pp_framework);
    return zero >= 2 && pp > 1 && framework != Framework::torchtitan ? bit(LayoutRule::zero_pp) : 0;
}

int zero_stage_in_step(int zero, int pp, Framework framework) {
    return zero >= 2 && pp > 1 && framework == Framework::torchtitan ? 1 : zero;
}

int zero_stage_in_step(const ParallelConfig& p) { return zero_stage_in_step(p.zero, p.pp, p.framework); }

std::vector<OptionViolation> optimizer_precision_violations(const TrainingConfig& t) {
    std::vector<OptionViolation> v;
    if (t.master_weights == MasterWeights::remainder &&
        (t.precision == Precision::fp32 || t.precision == Precision::fp16 || t.fp8_params))
        v.push_back({"/training/master_weights", "remainder",
                     t.fp8_params ? std::string("\"fp32\" or \"none\" with fp8_params (FP8 weights keep full "
                                                "fp32 masters: NeMo sets store_params)")
                                  : fmt::format("\"fp32\" or \"none\" with training.precision = \"{}\" (16-bit "
                                                "remainders complete bf16 weights to fp32: bf16 or fp8 training)",
                                                to_string(t.precision))});
    if (t.master_weights == MasterWeights::none && t.precision == Precision::fp32)
        v.push_back({"/training/master_weights", "none",
                     "\"fp32\" with training.precision = \"fp32\" (fp32 training has no separate master copy)"});
    const std::string cpu_adam =
        fmt::format("\"fp32\" with training.offload = \"{}\" (DeepSpeed's CPU Adam keeps fp32 masters and moments)",
                    to_string(t.offload));
    if (t.offload != Offload::none && t.master_weights != MasterWeights::fp32)
        v.push_back({"/training/master_weights", to_string(t.master_weights), cpu_adam});
    if (t.offload != Offload::none && t.optimizer_state_precision != Precision::fp32)
        v.push_back({"/training/optimizer_state_precision", to_string(t.optimizer_state_precision), cpu_adam});
    if (t.optimizer == Optimizer::adafactor && t.optimizer_state_precision != Precision::fp32)
        v.push_back({"/training/optimizer_state_precision", to_string(t.optimizer_state_precision),
                     "\"fp32\" with optimizer adafactor (its factored statistics are not modelled per precision)"});
    return v;
}

RuleViolation describe(LayoutRule r, const ModelSpec& m, const ParallelConfig& p, const TrainingConfig& t) {
    switch (r) {
        case LayoutRule::tp_heads: return {"/parallel/tp", p.tp, fmt::format("a divisor of heads ({})", m.heads)};
        case LayoutRule::tp_kv_heads:
            return {
                "/parallel/tp", p.tp,
                fmt::format("a divisor or a multiple of kv_heads ({}) (kv heads are split or replicated)", m.kv_heads)};
        case LayoutRule::tp_ffn:
            return {"/parallel/tp", p.tp, fmt::format("a divisor of ffn_hidden ({})", m.ffn_hidden)};
        case LayoutRule::tp_expert_ffn:
            return {"/parallel/tp", p.tp,
                    fmt::format("a divisor of moe.expert_ffn_hidden ({})", m.moe.expert_ffn_hidden)};
        case LayoutRule::pp_layers: return {"/parallel/pp", p.pp, fmt::format("at most layers ({})", m.layers)};
        case LayoutRule::vp_layers:
            return {"/parallel/vp", p.vp,
                    fmt::format("pp·vp at most layers + 2 ({}: the embedding and the loss may fill a chunk each), "
                                "pp = {}",
                                max_pipeline_chunks(m.layers), p.pp)};
        case LayoutRule::vp_needs_pp:
            return {"/parallel/vp", p.vp, "1 when pp = 1 (interleaving needs pipeline stages)"};
        case LayoutRule::ep_dense:
        case LayoutRule::ep_experts:
        case LayoutRule::ep_dp: return describe_ep(r, m, "/parallel/ep", p.ep, 0, ep_data_parallel_group(p));
        case LayoutRule::cp_seq_len:
            return {"/training/seq_len", t.seq_len,
                    fmt::format("a multiple of 2·cp = {} (load-balanced causal context parallelism)", 2 * p.cp)};
        case LayoutRule::batch_dp:
            return {
                "/training/global_batch", t.global_batch,
                fmt::format("a multiple of micro_batch·dp = {}·{} = {}", t.micro_batch, p.dp, t.micro_batch * p.dp)};
        case LayoutRule::zero_pp:
            return {"/parallel/zero", p.zero,
                    fmt::format("at most 1 with pp > 1 (pp = {}): DeepSpeed's pipeline engine refuses ZeRO-2/3 and "
                                "Megatron-Core's distributed optimizer is ZeRO-1; set parallel.framework to "
                                "\"torchtitan\" (FSDP2 with pipeline parallelism) to allow it",
                                p.pp)};
        case LayoutRule::pp_framework:
            return {"/parallel/pp", p.pp,
                    fmt::format("1 under parallel.framework \"{}\" (Composer trains with FSDP and has no pipeline "
                                "parallelism)",
                                to_string(p.framework))};
        case LayoutRule::count: break;
    }
    return {"/parallel", 0, "a valid layout"};
}

std::string ep_data_parallel_group(const ParallelConfig& p) {
    return fmt::format("dp·cp = {} (experts are sharded inside the data-parallel group)",
                       static_cast<std::int64_t>(p.dp) * p.cp);
}

RuleViolation describe_ep(LayoutRule r, const ModelSpec& m, std::string pointer, int ep, int redundant_experts,
                          const std::string& group) {
    switch (r) {
        case LayoutRule::ep_dense:
            return {std::move(pointer), ep, "1 for a dense model (expert parallelism needs moe)"};
        case LayoutRule::ep_experts:
            if (redundant_experts > 0)
                return {std::move(pointer), ep,
                        fmt::format("a divisor of the expert slots, moe.experts + "
                                    "inference.expert_parallel.redundant_experts = {} + {} = {}",
                                    m.moe.experts, redundant_experts, m.moe.experts + redundant_experts)};
            return {std::move(pointer), ep, fmt::format("a divisor of moe.experts ({})", m.moe.experts)};
        case LayoutRule::ep_dp: return {std::move(pointer), ep, "a divisor of " + group};
        default: break;
    }
    return {std::move(pointer), ep, "a valid expert-parallel layout"};
}

std::string rule_summary(LayoutRule r, const ModelSpec& m, const TrainingConfig& t) {
    switch (r) {
        case LayoutRule::tp_heads: return fmt::format("tp does not divide heads ({})", m.heads);
        case LayoutRule::tp_kv_heads:
            return fmt::format("tp neither divides nor is a multiple of kv_heads ({})", m.kv_heads);
        case LayoutRule::tp_ffn: return fmt::format("tp does not divide ffn_hidden ({})", m.ffn_hidden);
        case LayoutRule::tp_expert_ffn:
            return fmt::format("tp does not divide moe.expert_ffn_hidden ({})", m.moe.expert_ffn_hidden);
        case LayoutRule::pp_layers: return fmt::format("pp above layers ({})", m.layers);
        case LayoutRule::vp_layers: return fmt::format("pp·vp above layers + 2 ({})", max_pipeline_chunks(m.layers));
        case LayoutRule::vp_needs_pp: return "vp > 1 without pipeline stages";
        case LayoutRule::ep_dense: return "ep > 1 on a dense model";
        case LayoutRule::ep_experts: return fmt::format("ep does not divide moe.experts ({})", m.moe.experts);
        case LayoutRule::ep_dp: return "ep does not divide dp·cp";
        case LayoutRule::cp_seq_len: return fmt::format("seq_len ({}) not a multiple of 2·cp", t.seq_len);
        case LayoutRule::batch_dp: return "global batch not a multiple of dp";
        case LayoutRule::zero_pp: return "ZeRO-2/3 with pipeline parallelism (DeepSpeed and Megatron refuse it)";
        case LayoutRule::pp_framework: return "pipeline parallelism under a framework without it (llm-foundry)";
        case LayoutRule::count: break;
    }
    return "invalid layout";
}

}   // namespace llmsim
