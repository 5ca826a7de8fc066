#include "sim/estimate.hpp"

namespace llmsim::sim {

TrainingEstimate estimate_training(const TrainingJob& job, const EstimateOptions& o, StepSimulator& simulator) {
    TrainingEstimate r;
    r.fast = o.fast;
    StepCosts costs = step_costs(job);
    apply_straggler(costs, o.straggler_stage, o.straggler_factor);
    r.closed_form = estimate_step(job, costs);
    if (job.training.rlhf.enabled) r.rlhf = estimate_rlhf(job);
    if (!o.fast || o.simulate || o.timeline) {
        SimOptions so;
        so.straggler_stage = o.straggler_stage;
        so.straggler_factor = o.straggler_factor;
        r.simulated = simulate_step(job, so, simulator);
        r.played = simulator.result();
        r.comparison = compare_methods(job, r.closed_form, *r.simulated, r.played);
        if (o.timeline) r.timeline = simulator.timeline(100);
    }
    return r;
}

std::map<std::string, double> predicted_quantities(const Scenario& s, bool closed_form) {
    if (s.is_inference && s.inference.batching == "continuous") {
        const auto r = simulate_serving(s.serving_job());
        return {{"ttft_s", r.ttft_s.mean},
                {"ttft_p50_s", r.ttft_s.p50},
                {"ttft_p90_s", r.ttft_s.p90},
                {"ttft_p99_s", r.ttft_s.p99},
                {"tpot_s", r.tpot_s.mean},
                {"tpot_p50_s", r.tpot_s.p50},
                {"tpot_p90_s", r.tpot_s.p90},
                {"tpot_p99_s", r.tpot_s.p99},
                {"e2e_latency_s", r.e2e_latency_s.mean},
                {"e2e_latency_p99_s", r.e2e_latency_s.p99},
                {"requests_per_s", r.requests_per_s},
                {"output_tokens_per_s", r.output_tokens_per_s},
                {"output_tokens_per_s_per_gpu", r.output_tokens_per_s_per_gpu}};
    }
    if (s.is_inference) {
        const auto e = estimate_inference(s.serving_job());
        return {{"ttft_s", e.ttft_s},
                {"tpot_s", e.tpot_s},
                {"e2e_latency_s", e.e2e_latency_s},
                {"output_tokens_per_s", e.output_tokens_per_s},
                {"output_tokens_per_s_per_gpu", e.output_tokens_per_s_per_gpu}};
    }
    const auto e = closed_form ? estimate_step(s.training_job()) : simulate_step(s.training_job());
    return {{"step_time_s", e.step_time_s},
            {"tokens_per_s", e.tokens_per_s},
            {"tokens_per_s_per_gpu", e.tokens_per_s_per_gpu},
            {"mfu", e.mfu},
            {"hfu", e.hfu},
            {"bubble_fraction", e.bubble_fraction}};
}

}   // namespace llmsim::sim
