// The rollout of a PPO iteration as a serving job (docs/step-time-model.md, "RLHF (PPO) iteration"): the
// layout the training memory (its rollout KV cache) and the RLHF iteration (its generation time) both
// price. Here, not in rlhf.hpp, so that memory and rlhf each depend on it and not on each other.
#pragma once

#include "hardware_db/specs.hpp"

namespace llmsim {

// The serving job the rollout is priced as: the actor on the training layout's tp (one generation
// replica per tp GPUs, pp 1: the hybrid engine gathers the weights into TP groups), each replica
// generating its share of the global batch: prompt_len tokens in, seq_len − prompt_len out, at the
// training precision.
struct RolloutJob {
    ParallelConfig parallel;
    InferenceConfig inference;
};
[[nodiscard]] RolloutJob rlhf_rollout_job(const TrainingJob& s);

}   // namespace llmsim
