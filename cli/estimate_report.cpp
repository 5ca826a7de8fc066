#include "cli/estimate_report.hpp"

#include <fmt/format.h>

#include <fstream>
#include "cli/common.hpp"
#include "cli/report.hpp"

#include "cost_models/inference.hpp"
#include "cost_models/step_time.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/layout_rules.hpp"
#include "hardware_db/scenario.hpp"
#include "sim/step_sim.hpp"

namespace llmsim::cli {

namespace {

Json training_json(const Scenario& s, const sim::TrainingEstimate& te, const sim::EstimateOptions& o) {
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
    if (e.token_budget > 0)
        j["token_budget"] = {{"tokens", e.token_budget}, {"days", e.train_days}, {"gpu_hours", e.gpu_hours}};
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

Json distribution_json(const sim::Distribution& d) {
    return {{"mean", d.mean}, {"p50", d.p50}, {"p90", d.p90}, {"p99", d.p99}, {"max", d.max}};
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
                   {"stream_capped", c.stream_capped}};
        if (c.qps > 0) {
            cj["above_qps"] = c.above_qps;
            cj["above_ttft_p99_s"] = c.above.ttft_s.p99;
            cj["above_tpot_p99_s"] = c.above.tpot_s.p99;
            cj["above_misses"] = c.above_misses;
        } else {
            cj["why_none"] = c.why_none;
        }
        j["capacity"] = cj;
    }
    if (!e.notes.empty()) j["notes"] = e.notes;
    if (e.utilisation > 0) {
        j["offline_qps"] = e.offline_qps;
        j["utilisation"] = e.utilisation;
    }
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
        if (s.inference.slo.any()) j["slo_met"] = c.slo_met;
        j["steadiness"] = {{"arrival_span_s", c.steadiness.arrival_span_s},
                           {"warmup_s", c.steadiness.warmup_s},
                           {"offered_qps", c.steadiness.offered_qps},
                           {"served_qps", c.steadiness.served_qps},
                           {"keeps_up", c.steadiness.keeps_up},
                           {"long_enough", c.steadiness.long_enough},
                           {"steady", c.steadiness.steady()}};
    } else if (s.inference.continuous()) {
        j["method"] = "continuous batching: no rate meets the SLO";
    } else {
        j["method"] = "static batching, closed form";
    }
    j["scenario"] = to_json(s);
    return j;
}

}   // namespace

Estimate run_estimate(const Scenario& s, const sim::EstimateOptions& o, sim::StepSimulator& simulator) {
    Estimate e;
    if (s.is_inference) {
        app::ServingEvalOptions so;
        so.timeline = o.simulate;
        e.serving = app::evaluate_serving(s, so);
    } else {
        e.training = sim::estimate_training(s.training_job(), o, simulator);
    }
    return e;
}

Json estimate_json(const Scenario& s, const Estimate& e, const sim::EstimateOptions& o) {
    return e.serving ? serving_json(s, e) : training_json(s, *e.training, o);
}

namespace {

std::string serving_text(const Scenario&, const Estimate& est) {
    const app::ServingEvaluation& e = *est.serving;
    const Scenario& s = e.scenario;
    const InferenceEstimate& r = e.closed_form;
    const auto& in = s.inference;
    std::string out;
    const auto& p = s.parallel;
    const std::string lens = fmt::format("{}{} in / {}{} out", in.input_dist.is_fixed() ? "" : "mean ", in.input_len,
                                         in.output_dist.is_fixed() ? "" : "mean ", in.output_len);
    if (!e.fit.fits) {
        out += fmt::format(
            "{} serving on {} x {} (tp {}, pp {}, {}, {}, weights {}, KV {})\n", s.model.name, s.gpus, s.system.name,
            p.tp, p.pp, in.continuous() ? std::string("continuous batching") : fmt::format("static batch {}", in.batch),
            lens, to_string(in.weight_precision), to_string(in.kv_precision));
        out += "DOES NOT FIT: " + e.fit.reason + "\n";
        Table t({"memory per GPU", "value"});
        t.row({"weights", gib(r.memory.weights_bytes)});
        t.row({"runtime reserve", gib(r.memory.other_bytes)});
        t.row({"capacity", gib(r.memory.capacity_bytes)});
        t.row({"max batch that fits", std::to_string(r.memory.max_batch)});
        return out + t.str();
    }
    if (!e.continuous && !in.continuous()) {
        out += fmt::format("{} serving on {} x {} (tp {}, pp {}, static batch {}, {}, weights {}, KV {})\n",
                           s.model.name, s.gpus, s.system.name, p.tp, p.pp, in.batch, lens,
                           to_string(in.weight_precision), to_string(in.kv_precision));
        Table t({"metric", "value"});
        t.row({"time to first token", human_seconds(r.ttft_s)});
        t.row({"time per output token", human_seconds(r.tpot_s)});
        t.row({"output tokens/s", fixed_commas(r.output_tokens_per_s, 0)});
        t.row({"output tokens/s per GPU", fixed_commas(r.output_tokens_per_s_per_gpu, 0)});
        t.row({"KV cache", gib(r.memory.kv_cache_bytes)});
        t.row({"max batch that fits", std::to_string(r.memory.max_batch)});
        t.row({"prefill / decode bound by", std::string(r.prefill_compute_bound ? "compute" : "memory") + " / " +
                                                (r.decode_compute_bound ? "compute" : "memory")});
        if (in.speculative.enabled)
            t.row({"speculative tokens per target step", fmt::format("{:.2f}", r.spec_tokens_per_step)});
        return out + t.str();
    }
    if (e.capacity) {
        const auto& c = *e.capacity;
        if (c.qps > 0)
            out += fmt::format(
                "capacity {:.4g} req/s: the largest Poisson rate meeting the SLO ({} simulations; offline {:.4g} "
                "req/s); at {:.4g} req/s (+5%): {}\n",
                c.qps, c.simulations, c.offline_qps, c.above_qps,
                c.above_misses.empty() ? std::string("still met") : c.above_misses);
        else
            out += fmt::format("capacity 0: {}\n", c.why_none);
    }
    if (!e.continuous) {
        for (const auto& n : e.notes) out += "note: " + n + "\n";
        return out;
    }
    const auto& c = *e.continuous;
    out += fmt::format(
        "{} serving on {} x {} ({} replica{} of tp {} pp {}), continuous batching, {} requests {}, {}, weights {}, "
        "KV {}\n",
        s.model.name, s.gpus, s.system.name, c.replicas, c.replicas == 1 ? "" : "s", p.tp, p.pp, c.requests,
        in.qps > 0 ? fmt::format("at {:.4g} req/s (Poisson)", in.qps) : std::string("offline (all at t = 0)"), lens,
        to_string(in.weight_precision), to_string(in.kv_precision));
    out +=
        fmt::format("{:.2f} req/s  |  {} output tokens/s ({} per GPU)  |  TTFT p99 {}  TPOT p99 {}{}\n\n",
                    c.requests_per_s, fixed_commas(c.output_tokens_per_s, 0),
                    fixed_commas(c.output_tokens_per_s_per_gpu, 0), human_seconds(c.ttft_s.p99),
                    human_seconds(c.tpot_s.p99), in.slo.any() ? (c.slo_met ? "  |  SLO met" : "  |  SLO MISSED") : "");
    Table t({"latency", "mean", "p50", "p90", "p99"});
    auto row = [&](const char* name, const sim::Distribution& d) {
        t.row({name, human_seconds(d.mean), human_seconds(d.p50), human_seconds(d.p90), human_seconds(d.p99)});
    };
    row("time to first token", c.ttft_s);
    row("time per output token", c.tpot_s);
    row("end to end", c.e2e_latency_s);
    row("queueing delay", c.queue_s);
    out += t.str() + "\n";
    Table u({"deployment", "value"});
    u.row({"makespan", human_seconds(c.makespan_s)});
    u.row({"iterations (all replicas)", with_commas(c.iterations)});
    u.row({"mean sequences per iteration", fmt::format("{:.1f}", c.mean_batch)});
    u.row({"KV blocks per replica", fmt::format("{} x {} tokens", with_commas(c.kv_blocks), kKvBlockTokens)});
    u.row({"KV occupancy mean / max",
           fmt::format("{:.0f}% / {:.0f}%", 100 * c.kv_occupancy_mean, 100 * c.kv_occupancy_max)});
    u.row({"preemptions (recomputed)", std::to_string(c.preemptions)});
    if (e.utilisation > 0)
        u.row({"load / offline throughput",
               fmt::format("{:.0f}% of {:.4g} req/s", 100.0 * e.utilisation, e.offline_qps)});
    u.row({"prefill / decode bound by",
           fmt::format("{} ({:.0f}% of prefill time compute-bound) / {} ({:.0f}% of decode time)",
                       c.prefill_compute_fraction >= 0.5 ? "compute" : "memory", 100 * c.prefill_compute_fraction,
                       c.decode_compute_fraction >= 0.5 ? "compute" : "memory", 100 * c.decode_compute_fraction)});
    if (in.speculative.enabled)
        u.row({"speculative tokens per target step", fmt::format("{:.2f}", c.spec_tokens_per_step)});
    out += u.str();
    for (const auto& n : e.notes) out += "note: " + n + "\n";
    return out;
}

std::string rlhf_text(const RlhfEstimate& r) {
    std::string out = fmt::format(
        "\nRLHF (PPO) iteration {} ({:.1f}x the SFT step above, closed form): {} prompt + {} response tokens, "
        "{} rollout replicas x {} sequences, {} PPO epoch(s)\n",
        human_seconds(r.iteration_s), r.iteration_s / r.sft_step_s, r.prompt_len, r.response_len, r.rollout_replicas,
        r.rollout_batch_per_replica, r.ppo_epochs);
    Table t({"phase", "time", "share"});
    const std::pair<const char*, double> parts[] = {
        {"rollout (generation)", r.rollout_s},         {"actor log-probs (forward)", r.actor_logprob_s},
        {"reference (forward)", r.reference_s},        {"reward (forward)", r.reward_s},
        {"critic values (forward)", r.critic_value_s}, {"actor training", r.actor_train_s},
        {"critic training", r.critic_train_s}};
    for (const auto& [k, v] : parts) t.row({k, human_seconds(v), fmt::format("{:.1f}%", 100.0 * v / r.iteration_s)});
    t.row({"iteration", human_seconds(r.iteration_s), "100%"});
    return out + t.str();
}

std::string training_text(const Scenario& s, const sim::TrainingEstimate& te) {
    const StepEstimate& e = te.chosen();
    const double step = e.step_time_s;
    const auto& p = s.parallel;
    const int zero_run = zero_stage_in_step(p);
    const std::string zero = zero_run == p.zero
                                 ? std::to_string(p.zero)
                                 : fmt::format("{} (runs as {}: FSDP with pipeline stages)", p.zero, zero_run);
    std::string out = fmt::format(
        "{} on {} x {} | tp {} pp {} dp {} cp {} ep {} vp {} ({}) | zero {} | mb {} x {} | {} | {}{}\n", s.model.name,
        s.gpus, s.system.name, p.tp, p.pp, p.dp, p.cp, p.ep, p.vp, p.schedule->name, zero, s.training.micro_batch,
        e.microbatches, to_string(s.training.precision), training_options_text(s.training),
        p.framework == Framework::unspecified ? std::string() : " | " + framework_label(p));
    if (!e.memory.fits)
        out += fmt::format("DOES NOT FIT: {} per GPU needed, {} available (the numbers below assume it did)\n",
                           gib(e.memory.total_bytes), gib(e.memory.capacity_bytes));
    out += fmt::format(
        "step time {}  |  MFU {:.1f}%  HFU {:.1f}%  |  {} tokens/s ({} per GPU)  |  {:.0f} TFLOP/s per "
        "GPU\n\n",
        human_seconds(step), 100 * e.mfu, 100 * e.hfu, fixed_commas(e.tokens_per_s, 0),
        fixed_commas(e.tokens_per_s_per_gpu, 0), e.achieved_tflops_per_gpu);
    Table t({"where the step goes", "time", "share"});
    const auto& b = e.breakdown;
    const std::pair<const char*, double> parts[] = {
        {"compute", b.compute}, {"tp_comm", b.tp_comm},     {"cp_comm", b.cp_comm},
        {"ep_comm", b.ep_comm}, {"pp_comm", b.pp_comm},     {"dp_comm", b.dp_comm},
        {"bubble", b.bubble},   {"optimizer", b.optimizer}, {"offload", b.offload}};
    for (const auto& [k, v] : parts) {
        if (v <= 0 && std::string(k) != "compute") continue;
        t.row({k, human_seconds(v), fmt::format("{:.1f}%", 100.0 * v / step)});
    }
    t.row({"total", human_seconds(step), "100%"});
    out += t.str();
    out += fmt::format("dominant: {}; pipeline bubble {:.1f}% of the step\n", e.dominant, 100 * e.bubble_fraction);
    const std::string note = te.simulated ? (te.fast ? "closed form (--fast); " : "") + te.comparison.note
                                          : std::string("closed form (--fast)");
    out += fmt::format("method: {} ({})\n\n", e.method, note);
    if (!te.timeline.empty()) out += te.timeline + "\n";
    Table c({"communication", "algorithm", "ranks", "size (MB, 10^6 B)", "one call", "calls/step"});
    for (const auto& ev : e.costs.comms)
        c.row({ev.what, std::string(ev.algorithm ? ev.algorithm->name : "none"),
               fmt::format("{}{}", ev.ranks, ev.domains > 1 ? fmt::format(" / {} nodes", ev.domains) : ""),
               fixed_commas(ev.bytes / 1e6, 1), human_seconds(ev.time_s), fixed_commas(ev.calls_per_step, 0)});
    if (!e.costs.comms.empty()) out += c.str() + "\n";
    out += "memory per GPU (most loaded):\n";
    const auto& m = e.memory;
    Table mt({"component", "per GPU (GiB)"});
    mt.row({"weights", gib(m.weights_bytes)});
    mt.row({"gradients", gib(m.gradients_bytes)});
    mt.row({"optimizer", gib(m.optimizer_bytes)});
    mt.row({"activations", gib(m.activations_bytes)});
    mt.row({"other", gib(m.other_bytes)});
    mt.row({"total", gib(m.total_bytes)});
    out += mt.str();
    out += fmt::format("capacity {} -> {} (headroom {}); dominant: {}\n", gib(m.capacity_bytes),
                       m.fits ? "fits" : "DOES NOT FIT", gib(m.headroom_bytes), m.dominant);
    out += assumed_levers_text(m.assumed_levers);
    if (e.token_budget > 0)
        out += fmt::format("token budget {:.3g}: {:.1f} days, {:.3g} GPU-hours\n", e.token_budget, e.train_days,
                           e.gpu_hours);
    if (te.rlhf) out += rlhf_text(*te.rlhf);
    return out;
}

}   // namespace

std::string estimate_text(const Scenario& s, const Estimate& e) {
    return e.serving ? serving_text(s, e) : training_text(s, *e.training);
}

}   // namespace llmsim::cli
