#include "report/estimate.hpp"

#include "app/accuracy.hpp"
#include "cost_models/inference.hpp"
#include "cost_models/step_time.hpp"
#include "hardware_db/scenario.hpp"
#include "report/results.hpp"
#include "sim/step_sim.hpp"

namespace llmsim::report {

Json economics_json(const app::ServingEconomics& x) {
    Json j = {{"board_power_W", x.board_power_W}, {"joules_per_output_token_max", x.joules_per_output_token_max}};
    if (x.usd_per_hour > 0) {
        j["usd_per_hour"] = x.usd_per_hour;
        j["usd_per_million_output_tokens"] = x.usd_per_million_output_tokens;
        j["usd_per_million_tokens"] = x.usd_per_million_tokens;
    }
    return j;
}

Json published_range_json(const app::PublishedRange& r) {
    return {{"low", r.low},   {"high", r.high},       {"low_ratio", r.low_ratio}, {"high_ratio", r.high_ratio},
            {"runs", r.runs}, {"sources", r.sources}, {"level", r.level},         {"basis", r.basis}};
}

namespace {

Json training_json(const Scenario& s, const app::TrainingEstimate& te, const std::optional<app::PublishedRange>& range,
                   const app::EstimateOptions& o) {
    const StepEstimate& e = te.chosen();
    const auto& b = e.breakdown;
    Json stages = Json::array();
    for (const auto& st : e.costs.stages)
        stages.push_back({{"stage", st.stage},
                          {"layers", st.layers},
                          {"fwd_s", st.fwd_s},
                          {"bwd_s", st.bwd_s},
                          {"compute_s", st.compute_s},
                          {"tp_comm_s", st.tp_s},
                          {"cp_comm_s", st.cp_s},
                          {"ep_comm_s", st.ep_s},
                          {"pp_comm_s", st.pp_s},
                          {"dp_grad_s", st.dp_grad_s},
                          {"optimizer_s", st.optimizer_s}});
    Json comms = Json::array();
    for (const auto& c : e.costs.comms)
        comms.push_back({{"what", c.what},
                         {"dim", c.dim},
                         {"collective", to_string(c.collective)},
                         {"algorithm", std::string(c.algorithm ? c.algorithm->name : "none")},
                         {"bytes", c.bytes},
                         {"ranks", c.ranks},
                         {"domains", c.domains},
                         {"time_s", c.time_s},
                         {"calls_per_step", c.calls_per_step}});
    Json ops = Json::array();
    for (const auto& op : e.costs.dense_layer.ops)
        ops.push_back({{"name", op.name},
                       {"kind", op.kind},
                       {"fwd_s", op.fwd_s},
                       {"bwd_s", op.bwd_s},
                       {"recompute_s", op.recompute_s},
                       {"flops_fwd", op.flops_fwd},
                       {"bytes_fwd", op.bytes_fwd}});
    Json j = {{"step_time_s", e.step_time_s},
              {"tokens_per_s", e.tokens_per_s},
              {"tokens_per_s_per_gpu", e.tokens_per_s_per_gpu},
              {"model_flops_per_step", e.model_flops_per_step},
              {"hardware_flops_per_step", e.hardware_flops_per_step},
              {"mfu", e.mfu},
              {"hfu", e.hfu},
              {"bubble_fraction", e.bubble_fraction},
              {"achieved_tflops_per_gpu", e.achieved_tflops_per_gpu},
              {"microbatches", e.microbatches},
              {"pipeline_time_s", e.pipeline_time_s},
              {"method", e.method},
              {"dominant", e.dominant},
              {"critical_stage", e.critical_stage},
              {"memory", memory_json(e.memory)},
              {"breakdown_s",
               {{"compute", b.compute},
                {"tp_comm", b.tp_comm},
                {"cp_comm", b.cp_comm},
                {"ep_comm", b.ep_comm},
                {"pp_comm", b.pp_comm},
                {"dp_comm", b.dp_comm},
                {"bubble", b.bubble},
                {"optimizer", b.optimizer},
                {"offload", b.offload},
                {"exposed_comm", b.exposed_comm}}},
              {"stages", stages},
              {"communication", comms},
              {"layer_ops", ops},
              {"flops", flops_json(e.flops)},
              {"scenario", to_json(s)}};
    if (range) {
        j["step_time_interval_s"] = {range->low, range->high};
        j["step_time_published_range"] = published_range_json(*range);
    }
    if (e.token_budget > 0) {
        j["token_budget"] = {{"tokens", e.token_budget}, {"days", e.train_days}, {"gpu_hours", e.gpu_hours}};
        if (range)   // days scale with the step
            j["token_budget"]["days_interval"] = {e.train_days * range->low_ratio, e.train_days * range->high_ratio};
    }
    j["closed_form_step_time_s"] = te.closed_form.step_time_s;
    if (te.rlhf) {
        const auto& r = *te.rlhf;
        j["rlhf"] = {{"iteration_s", r.iteration_s},
                     {"rollout_s", r.rollout_s},
                     {"actor_logprob_s", r.actor_logprob_s},
                     {"reference_s", r.reference_s},
                     {"reward_s", r.reward_s},
                     {"critic_value_s", r.critic_value_s},
                     {"actor_train_s", r.actor_train_s},
                     {"critic_train_s", r.critic_train_s},
                     {"sft_step_s", r.sft_step_s},
                     {"ppo_epochs", r.ppo_epochs},
                     {"prompt_len", r.prompt_len},
                     {"response_len", r.response_len},
                     {"rollout_replicas", r.rollout_replicas},
                     {"rollout_batch_per_replica", r.rollout_batch_per_replica},
                     {"rollout_ttft_s", r.rollout.ttft_s},
                     {"rollout_tpot_s", r.rollout.tpot_s},
                     {"rollout_kv_cache_bytes", r.rollout.memory.kv_cache_bytes},
                     {"reference_forward_flops", r.reference_flops}};
    }
    if (te.simulated) {
        const auto& r = te.played;
        j["simulator_step_time_s"] = te.simulated->step_time_s;
        j["method_note"] = te.fast ? "closed form (--fast); " + te.comparison.note : te.comparison.note;
        Json st = Json::array();
        for (const auto& x : r.stages)
            st.push_back({{"stage", x.stage},
                          {"busy_s", x.busy_s},
                          {"idle_s", x.idle_s},
                          {"last_backward_end_s", x.last_backward_end_s},
                          {"grads_reduced_s", x.grads_reduced_s},
                          {"optimizer_end_s", x.optimizer_end_s},
                          {"activation_bytes_per_microbatch", x.activation_bytes_per_microbatch},
                          {"peak_activation_bytes", x.peak_activation_bytes},
                          {"peak_microbatches_in_flight", x.peak_microbatches}});
        j["simulation"] = {{"schedule", std::string(r.schedule->name)},
                           {"step_time_s", r.step_time_s},
                           {"pipeline_time_s", r.pipeline_time_s},
                           {"bubble_s", r.bubble_s},
                           {"bubble_fraction_of_pipeline", r.bubble_fraction},
                           {"grad_sync_s", r.grad_sync_s},
                           {"critical_stage", r.critical_stage},
                           {"exposed_comm_s",
                            {{"tp", r.exposed.tp},
                             {"cp", r.exposed.cp},
                             {"ep", r.exposed.ep},
                             {"pp", r.exposed.pp},
                             {"dp", r.exposed.dp}}},
                           {"tasks", r.tasks},
                           {"stages", st}};
        if (o.straggler_stage >= 0)
            j["simulation"]["straggler"] = {{"stage", o.straggler_stage}, {"factor", o.straggler_factor}};
        if (o.timeline) j["timeline"] = te.timeline;
    } else {
        j["method_note"] = "closed form (--fast)";
    }
    return j;
}

Json serving_json(const Scenario&, const Estimate& est) {
    const app::ServingEvaluation& e = *est.serving;
    const Scenario& s = e.scenario;
    const InferenceEstimate& r = e.closed_form;
    Json j = {{"kv_cache_bytes", r.memory.kv_cache_bytes},
              {"max_batch", r.memory.max_batch},
              {"fits", e.fit.fits},
              {"memory", inference_memory_json(r.memory)}};
    if (!e.fit.fits) {
        j["does_not_fit"] = e.fit.reason;
        j["method"] = s.inference.continuous() ? "continuous batching: not simulated (does not fit)"
                                               : "static batching: does not fit";
        j["scenario"] = to_json(s);
        return j;
    }
    j["ttft_s"] = r.ttft_s;
    j["tpot_s"] = r.tpot_s;
    j["output_tokens_per_s"] = r.output_tokens_per_s;
    j["output_tokens_per_s_per_gpu"] = r.output_tokens_per_s_per_gpu;
    j["e2e_latency_s"] = r.e2e_latency_s;
    j["prefill_bound"] = r.prefill_compute_bound ? "compute" : "memory";
    j["decode_bound"] = r.decode_compute_bound ? "compute" : "memory";
    if (s.inference.speculative.enabled) j["speculative_tokens_per_step"] = r.spec_tokens_per_step;
    if (e.capacity) {
        const auto& c = *e.capacity;
        j["slo_capacity_qps"] = c.qps;
        Json cj = {{"qps", c.qps},
                   {"requests", c.requests},
                   {"offline_qps", c.offline_qps},
                   {"simulations", c.simulations},
                   {"stream_capped", c.stream_capped},
                   {"judged_round_robin", c.routed_round_robin}};
        if (c.qps > 0) {
            cj["above_qps"] = c.above_qps;
            cj["above_ttft_p99_s"] = c.above.ttft_s.p99;
            cj["above_tpot_p99_s"] = c.above.tpot_s.p99;
            cj["above_misses"] = c.above_misses;
        } else {
            cj["why_none"] = c.why_none;
        }
        if (c.published) cj["published_range"] = published_range_json(*c.published);
        j["capacity"] = cj;
    }
    if (e.throughput_published)
        j["output_tokens_per_s_per_gpu_published_range"] = published_range_json(*e.throughput_published);
    if (!e.notes.empty()) j["notes"] = e.notes;
    if (e.utilisation > 0) {
        j["offline_qps"] = e.offline_qps;
        j["utilisation"] = e.utilisation;
        if (e.offline_of_held) j["offline_qps_of"] = "replicas held on average (autoscale.mean_replicas)";
    }
    if (e.throughput_stream_requests > 0) j["throughput_stream_requests"] = e.throughput_stream_requests;
    if (const auto& x = e.economics; x.board_power_W > 0 || x.usd_per_hour > 0) j["economics"] = economics_json(x);
    if (e.continuous) {
        const auto& c = *e.continuous;
        j["method"] = "continuous batching, discrete-event simulation";
        j["ttft_s"] = c.ttft_s.mean;
        j["ttft_p50_s"] = c.ttft_s.p50;
        j["ttft_p90_s"] = c.ttft_s.p90;
        j["ttft_p99_s"] = c.ttft_s.p99;
        j["tpot_s"] = c.tpot_s.mean;
        j["tpot_p50_s"] = c.tpot_s.p50;
        j["tpot_p90_s"] = c.tpot_s.p90;
        j["tpot_p99_s"] = c.tpot_s.p99;
        j["e2e_latency_s"] = c.e2e_latency_s.mean;
        j["e2e_latency_p99_s"] = c.e2e_latency_s.p99;
        j["queue_delay_s"] = distribution_json(c.queue_s);
        j["ttft_distribution_s"] = distribution_json(c.ttft_s);
        j["tpot_distribution_s"] = distribution_json(c.tpot_s);
        j["e2e_latency_distribution_s"] = distribution_json(c.e2e_latency_s);
        j["requests_per_s"] = c.requests_per_s;
        j["output_tokens_per_s"] = c.output_tokens_per_s;
        j["output_tokens_per_s_per_gpu"] = c.output_tokens_per_s_per_gpu;
        j["input_tokens_per_s"] = c.input_tokens_per_s;
        j["makespan_s"] = c.makespan_s;
        j["requests"] = c.requests;
        j["replicas"] = c.replicas;
        j["iterations"] = c.iterations;
        j["preemptions"] = c.preemptions;
        j["prefix_hit_fraction"] = c.prefix_hit_fraction;
        if (!c.windows.empty()) {
            Json w = Json::array();
            for (const auto& x : c.windows) {
                Json o{{"start_s", x.start_s},
                       {"end_s", x.end_s},
                       {"requests", x.requests},
                       {"offered_qps", x.offered_qps},
                       {"ttft_distribution_s", distribution_json(x.ttft_s)},
                       {"tpot_distribution_s", distribution_json(x.tpot_s)}};
                if (x.level >= 0) o["level"] = x.level;
                if (x.slo_attainment >= 0) o["slo_attainment"] = x.slo_attainment;
                if (x.mean_replicas >= 0) o["mean_replicas"] = x.mean_replicas;
                w.push_back(std::move(o));
            }
            j["windows"] = std::move(w);
        }
        if (!c.classes.empty()) {
            Json cl = Json::array();
            for (const auto& x : c.classes) {
                Json o{{"name", x.name},
                       {"share", x.share},
                       {"requests", x.requests},
                       {"mean_input_tokens", x.mean_input},
                       {"mean_output_tokens", x.mean_output},
                       {"ttft_distribution_s", distribution_json(x.ttft_s)},
                       {"tpot_distribution_s", distribution_json(x.tpot_s)},
                       {"e2e_latency_distribution_s", distribution_json(x.e2e_latency_s)}};
                if (s.inference.slo.any()) {
                    o["slo_met"] = x.slo_met;
                    o["slo_attainment"] = x.slo_attainment;
                }
                cl.push_back(std::move(o));
            }
            j["classes"] = std::move(cl);
        }
        if (const auto& a = c.autoscale) {
            // Every change, thinned to at most kMaxHeldPoints (every stride-th and the last) so that a fleet
            // that changes at each of 10^7 decisions does not write gigabytes.
            constexpr std::size_t kMaxHeldPoints = 10'000;
            const std::size_t stride = (a->held.size() + kMaxHeldPoints - 1) / kMaxHeldPoints;
            Json held = Json::array();
            for (std::size_t i = 0; i < a->held.size(); ++i)
                if (i % std::max<std::size_t>(1, stride) == 0 || i + 1 == a->held.size())
                    held.push_back({{"t_s", a->held[i].first}, {"replicas", a->held[i].second}});
            j["autoscale"] = {{"cold_start_s", a->cold_start_s},
                              {"replica_hours", a->replica_hours},
                              {"gpu_hours", a->gpu_hours},
                              {"mean_replicas", a->mean_replicas},
                              {"peak_replicas", a->peak_replicas},
                              {"scale_ups", a->scale_ups},
                              {"scale_downs", a->scale_downs},
                              {"replicas_held", std::move(held)},
                              {"replicas_held_stride", std::max<std::size_t>(1, stride)}};
        }
        j["mean_batch"] = c.mean_batch;
        j["mean_requests_in_system"] = c.mean_in_system;
        j["kv_blocks"] = c.kv_blocks;
        j["kv_block_tokens"] = kKvBlockTokens;
        j["kv_occupancy_mean"] = c.kv_occupancy_mean;
        j["kv_occupancy_max"] = c.kv_occupancy_max;
        j["prefill_bound"] = c.prefill_compute_fraction >= 0.5 ? "compute" : "memory";
        j["decode_bound"] = c.decode_compute_fraction >= 0.5 ? "compute" : "memory";
        j["prefill_compute_bound_fraction"] = c.prefill_compute_fraction;
        j["decode_compute_bound_fraction"] = c.decode_compute_fraction;
        if (s.inference.speculative.enabled) j["speculative_tokens_per_step"] = c.spec_tokens_per_step;
        if (const auto& d = c.disaggregated) {
            auto pool = [](const sim::PoolStats& p) {
                return Json{{"replicas", p.replicas},       {"tp", p.tp},
                            {"mean_batch", p.mean_batch},   {"iterations", p.iterations},
                            {"preemptions", p.preemptions}, {"busy_fraction", p.busy_fraction}};
            };
            j["disaggregation"] = {{"prefill", pool(d->prefill)},
                                   {"decode", pool(d->decode)},
                                   {"kv_transfer_distribution_s", distribution_json(d->transfer_s)},
                                   {"kv_transfer_bytes_per_gpu_mean", d->transfer_bytes_mean},
                                   {"link_GBps", d->link_GBps},
                                   {"link_busy_fraction", d->link_busy_fraction}};
        }
        if (s.inference.slo.any()) j["slo_met"] = c.slo_met;
        j["steadiness"] = {{"saturated_s", c.steadiness.saturated_s}, {"arrival_span_s", c.steadiness.arrival_span_s},
                           {"warmup_s", c.steadiness.warmup_s},       {"offered_qps", c.steadiness.offered_qps},
                           {"served_qps", c.steadiness.served_qps},   {"keeps_up", c.steadiness.keeps_up},
                           {"long_enough", c.steadiness.long_enough}, {"steady", c.steadiness.steady()}};
    } else if (s.inference.continuous()) {
        j["method"] = "continuous batching: no rate meets the SLO";
    } else {
        j["method"] = "static batching, closed form";
    }
    j["scenario"] = to_json(s);
    return j;
}

}   // namespace

Estimate run_estimate(const Scenario& s, const app::EstimateOptions& o, sim::StepSimulator& simulator) {
    Estimate e;
    if (s.is_inference) {
        app::ServingEvalOptions so;
        so.timeline = o.simulate;
        e.serving = app::evaluate_serving(s, so);
    } else {
        e.training = app::estimate_training(s.training_job(), o, simulator);
        e.step_time_range = app::step_time_range(app::builtin_residuals(), to_string(s.parallel.framework),
                                                 s.system.gpu.name, e.training->chosen().step_time_s);
    }
    return e;
}

Json estimate_json(const Scenario& s, const Estimate& e, const app::EstimateOptions& o) {
    return e.serving ? serving_json(s, e) : training_json(s, *e.training, e.step_time_range, o);
}

}   // namespace llmsim::report
