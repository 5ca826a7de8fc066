// Serving estimate (static batching): prefill of the whole batch (time to first token), then
// decode steps, each reading the weights and the KV cache (docs/step-time-model.md, "Serving").
#pragma once

#include "cost_models/memory.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim {

struct InferenceEstimate {
    double ttft_s = 0;                // prefill of `batch` prompts
    double tpot_s = 0;                // one decode step, averaged over the output
    double e2e_latency_s = 0;         // ttft + output_len · tpot
    double output_tokens_per_s = 0;   // whole deployment (all replicas)
    double output_tokens_per_s_per_gpu = 0;
    bool prefill_compute_bound = true;
    bool decode_compute_bound = false;
    InferenceMemory memory;
};

[[nodiscard]] InferenceEstimate estimate_inference(const ServingJob& s);

}   // namespace llmsim
