// The divisibility rules a parallel layout must keep (Megatron-LM / Megatron-Core enforce them): one
// definition for the scenario reader (check_layout reports every violation with its JSON pointer) and
// the layout search (counts rejected layouts per rule). Pure functions of the structs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hardware_db/specs.hpp"

namespace llmsim {

enum class LayoutRule : std::uint8_t {
    tp_heads,        // tp divides the attention heads
    tp_kv_heads,     // tp divides kv_heads or is a multiple of it (KV heads split or replicated)
    tp_ffn,          // tp divides ffn_hidden
    tp_expert_ffn,   // tp divides moe.expert_ffn_hidden
    pp_layers,       // pp at most layers
    vp_layers,       // pp·vp at most layers + 2 (embedding and loss chunks)
    vp_needs_pp,     // model chunks need pipeline stages
    ep_dense,        // expert parallelism needs a MoE model
    ep_experts,      // ep divides moe.experts
    ep_dp,           // ep divides dp·cp (experts are sharded inside the data-parallel group)
    cp_seq_len,      // seq_len a multiple of 2·cp (load-balanced causal context parallelism)
    batch_dp,        // global_batch a multiple of micro_batch·dp
    zero_pp,         // ZeRO-2/3 with pipeline stages only where the framework allows it (torchtitan)
    pp_framework,    // pipeline stages only where the framework has them (not llm-foundry)
    count
};

// A set of violated rules (bit i = rule i).
using LayoutRules = std::uint32_t;
constexpr LayoutRules bit(LayoutRule r) { return LayoutRules{1} << static_cast<int>(r); }
// The first rule of a non-empty set (the order of the enum).
[[nodiscard]] LayoutRule first_rule(LayoutRules rules);

// The rules one dimension of a layout breaks.
[[nodiscard]] LayoutRules tp_rules(const ModelSpec& m, int tp);
// Model chunks a pipeline may hold (pp·vp): every transformer layer, plus one chunk each for the embedding
// and the loss (Megatron-Core's account_for_embedding/loss_in_pipeline_split).
[[nodiscard]] std::int64_t max_pipeline_chunks(int layers);
[[nodiscard]] LayoutRules pp_rules(const ModelSpec& m, int pp, int vp);
// `expert_slots`: the experts' places over the group (the experts and any redundant copies; 0: the experts).
[[nodiscard]] LayoutRules ep_rules(const ModelSpec& m, int ep, int dp_cp, int expert_slots = 0);
[[nodiscard]] LayoutRules cp_rules(std::int64_t seq_len, int cp);
[[nodiscard]] LayoutRules batch_rules(std::int64_t global_batch, std::int64_t micro_batch, int dp);
// What the framework runs: DeepSpeed's pipeline engine asserts ZeRO stage < 2 and Megatron-Core offers
// ZeRO-1 (distributed optimizer) with pipelines; torchtitan composes FSDP2 with pipeline parallelism;
// llm-foundry (Composer) has no pipeline parallelism.
[[nodiscard]] LayoutRules framework_rules(int zero, int pp, Framework framework);
// The ZeRO stage a training step runs with. torchtitan with pipeline stages keeps FSDP's parameters and
// gradients unsharded for the whole step: its apply_fsdp passes reshard_after_forward = not pp_enabled, and
// the pipeline stage (torch.distributed.pipelining, backward_maybe_with_nosync) turns reshard-after-backward
// and gradient sync off until the last micro-batch. The parameters are gathered once and the gradients
// reduce-scattered once per step, and the GPU holds the stage's unsharded 16-bit parameters and gradients
// beside the sharded fp32 master and optimizer states: ZeRO-1's traffic and memory. Otherwise `zero`.
[[nodiscard]] int zero_stage_in_step(int zero, int pp, Framework framework);
[[nodiscard]] int zero_stage_in_step(const ParallelConfig& p);

// Where the frameworks refuse a precision of the optimizer's states (Apex/Transformer Engine remainders
// complete bf16 weights only; fp32 training has no separate master; DeepSpeed's CPU Adam keeps fp32;
// Adafactor's factored statistics are not modelled per precision): the key's JSON pointer, its value
// and what is expected. One definition for the scenario reader and explain's levers; empty: allowed.
struct OptionViolation {
    std::string pointer, value, expected;
};
[[nodiscard]] std::vector<OptionViolation> optimizer_precision_violations(const TrainingConfig& t);

// What a violation says: the JSON pointer of the key to change, its value and what is expected.
struct RuleViolation {
    std::string pointer;
    std::int64_t value = 0;
    std::string expected;
};
[[nodiscard]] RuleViolation describe(LayoutRule r, const ModelSpec& m, const ParallelConfig& p,
                                     const TrainingConfig& t);
// An expert-parallel rule's violation (ep_dense, ep_experts, ep_dp) at `pointer`: ep over `group` (what
// ep must divide, in words: "dp·cp = 4 (...)", "the prefill replicas (...)"), with the expert slots
// moe.experts + redundant_experts. One definition for /parallel/ep and the prefill pool's prefill_ep;
// describe() gives the /parallel/ep form without redundant copies.
[[nodiscard]] RuleViolation describe_ep(LayoutRule r, const ModelSpec& m, std::string pointer, int ep,
                                        int redundant_experts, const std::string& group);
// The group /parallel/ep shards experts inside, in describe_ep's words: "dp·cp = 4 (...)".
[[nodiscard]] std::string ep_data_parallel_group(const ParallelConfig& p);
// The rule in words that do not depend on the layout ("tp: a divisor of heads (96)"), for counts.
[[nodiscard]] std::string rule_summary(LayoutRule r, const ModelSpec& m, const TrainingConfig& t);

}   // namespace llmsim
