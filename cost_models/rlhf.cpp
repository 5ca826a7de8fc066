#include "cost_models/rlhf.hpp"

#include <algorithm>

#include "cost_models/memory.hpp"
#include "hardware_db/errors.hpp"

namespace llmsim {

double forward_only_s(const StepCosts& c) {
    double sum = 0, slowest = 0;
    for (const auto& st : c.stages) {
        sum += st.fwd_s;
        slowest = std::max(slowest, st.fwd_s);
    }
    return static_cast<double>(c.microbatches - 1) * slowest + sum;
}

RlhfEstimate estimate_rlhf(const TrainingJob& s) {
    const auto& t = s.training;
    if (!t.rlhf.enabled) throw ConfigError("estimate_rlhf: training.rlhf is not enabled");
    RlhfEstimate r;
    r.ppo_epochs = t.rlhf.ppo_epochs;
    const ModelSpec& actor = s.model;
    const ModelSpec& critic = t.rlhf.critic ? *t.rlhf.critic : actor;
    const ModelSpec& reference = t.rlhf.reference ? *t.rlhf.reference : actor;
    const ModelSpec& reward = t.rlhf.reward ? *t.rlhf.reward : critic;

    const RolloutJob rj = rlhf_rollout_job(s);
    r.prompt_len = rj.inference.input_len;
    r.response_len = rj.inference.output_len;
    r.rollout_batch_per_replica = rj.inference.batch;
    r.rollout_replicas = rj.parallel.dp;
    if (r.prompt_len < 1 || r.response_len < 1)
        throw ConfigError("estimate_rlhf: training.seq_len must hold a prompt and a response (at least 2 tokens)");
    r.rollout = estimate_inference(ServingJob{actor, s.system, rj.parallel, rj.inference});
    r.rollout_s = r.rollout.e2e_latency_s;

    // Experience forwards and training steps run on the training layout with each model in turn.
    auto job = [&](const ModelSpec& m) { return TrainingJob{m, s.system, s.parallel, t}; };
    const StepCosts actor_costs = step_costs(s);
    r.actor_logprob_s = forward_only_s(actor_costs);
    r.reference_s = forward_only_s(step_costs(job(reference)));
    r.reward_s = forward_only_s(step_costs(job(reward)));
    const StepCosts critic_costs = step_costs(job(critic));
    r.critic_value_s = forward_only_s(critic_costs);
    r.reference_flops = training_flops(reference, t).forward_flops_per_step;

    r.sft_step_s = estimate_step(s, actor_costs).step_time_s;
    r.actor_train_s = r.ppo_epochs * r.sft_step_s;
    r.critic_train_s = r.ppo_epochs * estimate_step(job(critic), critic_costs).step_time_s;
    r.iteration_s = r.rollout_s + r.actor_logprob_s + r.reference_s + r.reward_s + r.critic_value_s + r.actor_train_s +
                    r.critic_train_s;
    return r;
}

}   // namespace llmsim
