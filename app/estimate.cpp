#include "app/estimate.hpp"

namespace llmsim::app {

TrainingEstimate estimate_training(const TrainingJob& job, const EstimateOptions& o, sim::StepSimulator& simulator) {
    TrainingEstimate r;
    r.fast = o.fast;
    StepCosts costs = step_costs(job);
    sim::apply_straggler(costs, o.straggler_stage, o.straggler_factor);
    r.closed_form = estimate_step(job, costs);
    if (job.training.rlhf.enabled) r.rlhf = estimate_rlhf(job);
    if (!o.fast || o.simulate || o.timeline) {
        sim::SimOptions so;
        so.straggler_stage = o.straggler_stage;
        so.straggler_factor = o.straggler_factor;
        r.simulated = sim::simulate_step(job, so, simulator);
        r.played = simulator.result();
        r.comparison = sim::compare_methods(job, r.closed_form, *r.simulated, r.played);
        if (o.timeline) r.timeline = simulator.timeline(o.timeline_columns);
    }
    return r;
}

}   // namespace llmsim::app
