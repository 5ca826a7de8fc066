// One PPO iteration of RLHF (docs/step-time-model.md, "RLHF (PPO) iteration"): rollout generation
// with the actor (the serving model's static-batch prefill + decode), the experience forwards
// (actor log-probabilities, reference, reward and critic over prompt + response), then ppo_epochs
// training steps of the actor and of the critic. Each phase is priced by the existing functions:
// estimate_inference() for the rollout, step_costs() forwards for the experience, estimate_step()
// for training. DeepSpeed-Chat's hybrid engine runs the phases one after another on the same GPUs.
#pragma once

#include "cost_models/inference.hpp"
#include "cost_models/step_time.hpp"

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

// KV cache per GPU of the rollout (the serving memory model, inference_memory(), on rlhf_rollout_job):
// each replica's share of the global batch, prompt + response tokens, all layers over tp GPUs.
[[nodiscard]] double rlhf_rollout_kv_cache_bytes(const TrainingJob& s);

// A forward-only pass over the global batch on the training layout: every micro-batch crosses every
// stage, (m − 1)·max_s fwd_s + Σ_s fwd_s (a pipeline without backward).
[[nodiscard]] double forward_only_s(const StepCosts& costs);

struct RlhfEstimate {
    double rollout_s = 0;         // generation (prefill + decode) of the global batch's responses
    double actor_logprob_s = 0;   // actor forward over prompt + response (old-policy log-probabilities)
    double reference_s = 0;       // reference model forward (KL penalty)
    double reward_s = 0;          // reward model forward (the score)
    double critic_value_s = 0;    // critic forward (value estimates)
    double actor_train_s = 0;     // ppo_epochs actor training steps
    double critic_train_s = 0;    // ppo_epochs critic training steps
    double iteration_s = 0;       // the sum of the above
    double reference_flops = 0;   // forward FLOPs of the reference pass (as executed)
    double sft_step_s = 0;        // one actor training step (the SFT step of the same layout)
    int ppo_epochs = 1;
    std::int64_t prompt_len = 0, response_len = 0;
    std::int64_t rollout_batch_per_replica = 0;
    int rollout_replicas = 0;
    InferenceEstimate rollout;
};

// Requires s.training.rlhf.enabled.
[[nodiscard]] RlhfEstimate estimate_rlhf(const TrainingJob& s);

}   // namespace llmsim
