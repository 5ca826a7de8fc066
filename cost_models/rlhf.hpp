// One PPO iteration of RLHF (docs/step-time-model.md, "RLHF (PPO) iteration"): rollout generation
// with the actor (the serving model's static-batch prefill + decode), the experience forwards
// (actor log-probabilities, reference, reward and critic over prompt + response), then ppo_epochs
// training steps of the actor and of the critic. Each phase is priced by the existing functions:
// estimate_inference() for the rollout, step_costs() forwards for the experience, estimate_step()
// for training. DeepSpeed-Chat's hybrid engine runs the phases one after another on the same GPUs.
#pragma once

#include "cost_models/inference.hpp"
#include "cost_models/rollout.hpp"   // RolloutJob, rlhf_rollout_job (the rollout's layout)
#include "cost_models/step_time.hpp"

namespace llmsim {

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
