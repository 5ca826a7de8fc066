#include "cost_models/rollout.hpp"

namespace llmsim {

RolloutJob rlhf_rollout_job(const TrainingJob& s) {
    const auto& t = s.training;
    RolloutJob r;
    r.parallel.tp = s.parallel.tp;
    r.parallel.dp = s.gpus() / s.parallel.tp;
    const std::int64_t replicas = r.parallel.dp;
    r.inference.batch = (t.global_batch + replicas - 1) / replicas;
    r.inference.input_len = t.rlhf.prompt_tokens(t.seq_len);
    r.inference.output_len = t.seq_len - r.inference.input_len;
    r.inference.weight_precision = t.precision;
    r.inference.kv_precision = t.precision;
    r.inference.compute_precision = t.precision;
    return r;
}

}   // namespace llmsim
