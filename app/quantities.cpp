#include "app/quantities.hpp"

#include "app/serving.hpp"
#include "cost_models/step_time.hpp"
#include "sim/step_sim.hpp"

namespace llmsim::app {

std::map<std::string, double> predicted_quantities(const Scenario& s, bool closed_form) {
    if (s.is_inference) {
        const auto e = evaluate_serving(s);
        if (!e.fit.fits) return {};
        if (e.continuous) {
            const auto& r = *e.continuous;
            std::map<std::string, double> q = {{"ttft_s", r.ttft_s.mean},
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
            if (e.capacity) q["slo_capacity_qps"] = e.capacity->qps;
            return q;
        }
        if (s.inference.continuous())
            return e.capacity ? std::map<std::string, double>{{"slo_capacity_qps", 0.0}}
                              : std::map<std::string, double>{};
        const auto& c = e.closed_form;
        return {{"ttft_s", c.ttft_s},
                {"tpot_s", c.tpot_s},
                {"e2e_latency_s", c.e2e_latency_s},
                {"output_tokens_per_s", c.output_tokens_per_s},
                {"output_tokens_per_s_per_gpu", c.output_tokens_per_s_per_gpu}};
    }
    const auto e = closed_form ? estimate_step(s.training_job()) : sim::simulate_step(s.training_job());
    return {{"step_time_s", e.step_time_s},
            {"tokens_per_s", e.tokens_per_s},
            {"tokens_per_s_per_gpu", e.tokens_per_s_per_gpu},
            {"mfu", e.mfu},
            {"hfu", e.hfu},
            {"bubble_fraction", e.bubble_fraction}};
}

}   // namespace llmsim::app
