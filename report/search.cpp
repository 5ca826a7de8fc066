#include "report/search.hpp"

#include <fmt/format.h>

#include "cost_models/memory.hpp"
#include "hardware_db/scenario.hpp"
#include "report/estimate.hpp"
#include "report/results.hpp"
#include "sim/step_sim.hpp"

namespace llmsim::report {

using search::Candidate;
using search::SearchEntry;
using search::SearchOptions;
using search::SearchResult;

std::string layout_brief(const Candidate& c) {
    std::string s = fmt::format("tp{} pp{}", c.tp, c.pp);
    if (c.vp > 1) s += fmt::format("x{}", c.vp);
    s += fmt::format(" cp{} ep{} dp{} zero{}", c.cp, c.ep, c.dp, c.zero);
    if (c.sp) s += " sp";
    s += fmt::format(" mb{} {}", c.micro_batch, to_string(c.recompute));
    if (c.recompute == Recompute::full && c.recompute_layers > 0) s += fmt::format("({}/chunk)", c.recompute_layers);
    // Appended piecewise: GCC 12 reports a false -Wstringop-overflow on `" " + std::string(...)` here when
    // built position-independent (the Python module).
    if (c.pp > 1) s.append(" ").append(c.schedule->name);
    if (c.offload != Offload::none) s.append(" offload:").append(to_string(c.offload));
    if (c.offload_layers > 0) s += fmt::format(" act-offload:{}", c.offload_layers);
    return s;
}

std::string overlap_brief(const Candidate& c) {
    std::string s;
    auto add = [&s](bool on, const char* name) {
        if (!on) return;
        if (!s.empty()) s += "+";
        s += name;
    };
    add(c.overlap.tp_comm, "tp");
    add(c.overlap.grad_reduce, "grad");
    add(c.overlap.param_gather, "param");
    return s.empty() ? "none" : s;
}

std::optional<app::PublishedRange> search_step_time_range(const Scenario& base, const SearchEntry& e) {
    // (a confirmed row's time is already the simulated step: search::confirm_entry)
    return app::step_time_range(app::builtin_residuals(), to_string(base.parallel.framework), base.system.gpu.name,
                                e.time.step_time_s);
}

double cost_per_million_tokens_usd(const SearchEntry& e, double price_per_gpu_hour) {
    return 1e6 / e.time.tokens_per_s * e.c.gpus / 3600.0 * price_per_gpu_hour;
}

Json search_entry_json(const Scenario& base, const SearchEntry& e, bool detailed, double price) {
    const Scenario s = search::apply_candidate(base, e.c);
    Json training = {{"seq_len", s.training.seq_len},
                     {"micro_batch", s.training.micro_batch},
                     {"global_batch", s.training.global_batch},
                     {"recompute", to_string(s.training.recompute)},
                     {"offload", to_string(s.training.offload)},
                     {"precision", to_string(s.training.precision)}};
    if (s.training.recompute_num_layers > 0) training["recompute_num_layers"] = s.training.recompute_num_layers;
    if (s.training.activation_offload_layers > 0)
        training["activation_offload_layers"] = s.training.activation_offload_layers;
    Json j = {{"gpus", e.c.gpus},
              {"layout", layout_brief(e.c)},
              {"overlap", overlap_brief(e.c)},
              {"parallel", to_json(s.parallel)},
              {"training", training},
              {"step_time_s", e.time.step_time_s},
              {"tokens_per_s", e.time.tokens_per_s},
              {"tokens_per_s_per_gpu", e.time.tokens_per_s / e.c.gpus},
              {"mfu", e.time.mfu},
              {"bubble_fraction", e.time.bubble_fraction},
              {"objective", e.objective}};
    if (e.confirmed_step_time_s > 0) j["simulated_step_time_s"] = e.confirmed_step_time_s;
    if (e.closed_form_step_time_s > 0) j["closed_form_step_time_s"] = e.closed_form_step_time_s;
    if (const auto range = search_step_time_range(base, e)) {
        j["step_time_interval_s"] = {range->low, range->high};
        j["step_time_published_range"] = published_range_json(*range);
    }
    if (price > 0) {
        j["cost_per_step_usd"] = e.time.step_time_s * e.c.gpus / 3600.0 * price;
        j["cost_per_million_tokens_usd"] = cost_per_million_tokens_usd(e, price);
    }
    if (detailed) {
        Json mem = memory_json(training_memory(s.training_job()));
        mem.erase("stages");
        j["memory"] = mem;
    } else {
        j["memory"] = {{"total_bytes", e.memory.total_bytes},
                       {"capacity_bytes", base.system.gpu.hbm_capacity_bytes},
                       {"most_loaded_stage", e.memory.stage},
                       {"dominant", search::memory_part_name(e.memory.dominant)}};
    }
    return j;
}

Json search_result_json(const Scenario& base, const SearchResult& r, const SearchOptions& o) {
    Json results = Json::array(), pareto = Json::array();
    for (const auto& e : r.top) results.push_back(search_entry_json(base, e, true, o.price_per_gpu_hour));
    for (const auto& e : r.pareto) pareto.push_back(search_entry_json(base, e, false, o.price_per_gpu_hour));
    Json rejected = Json::object();
    for (const auto& [k, v] : r.rejected) rejected[k] = v;
    return {{"results", results},
            {"evaluated", r.evaluated},
            {"rejected", rejected},
            {"rejected_total", r.rejected_total},
            {"considered", r.considered()},
            {"pareto", pareto},
            {"objective", search::to_string(o.objective)},
            {"gpu_counts", r.gpu_counts},
            {"confirmed_by_simulator", r.confirmed},
            {"step", r.rlhf ? "rlhf_iteration" : "training_step"},
            {"threads", r.threads},
            {"wall_s", r.wall_s},
            {"model", base.model.name},
            {"system", base.system.name},
            {"seq_len", base.training.seq_len},
            {"precision", to_string(base.training.precision)}};
}

double simulated_step_time(const Scenario& s) {
    try {
        return sim::simulate_step(s.training_job()).step_time_s;
    } catch (const std::exception&) {
        return 0.0;
    }
}

namespace {

// `c` as simulated at `s`'s qps; its economics at `traffic_qps` (the rate the search was asked for).
Json candidate_json(const Scenario& s, const sim::CapacityCandidate& c, double traffic_qps) {
    const auto& r = c.result;
    Json inference = {{"weight_precision", to_string(c.weight_precision)},
                      {"kv_precision", to_string(c.kv_precision)},
                      {"batching", "continuous"},
                      {"qps", s.inference.qps},
                      {"requests", sim::capacity_stream_requests(s.inference)},
                      {"seed", s.inference.seed}};
    // Unset keys stay out (the scenario's defaults: as many sequences as the KV cache holds, whole prompts).
    if (c.max_batch > 0) inference["max_batch"] = c.max_batch;
    if (c.max_batch_tokens > 0) inference["max_batch_tokens"] = c.max_batch_tokens;
    return {{"gpus", c.gpus()},
            {"economics", economics_json(app::candidate_economics(s, c, traffic_qps))},
            {"parallel", {{"tp", c.tp}, {"pp", c.pp}, {"dp", c.replicas}}},
            {"inference", inference},
            {"replicas", c.replicas},
            {"slo_met", c.meets},
            {"ttft_p99_s", r.ttft_s.p99},
            {"tpot_p99_s", r.tpot_s.p99},
            {"ttft_s", r.ttft_s.mean},
            {"tpot_s", r.tpot_s.mean},
            {"requests_per_s", r.requests_per_s},
            {"output_tokens_per_s_per_gpu", r.output_tokens_per_s_per_gpu},
            {"mean_batch", r.mean_batch},
            {"judged_round_robin", c.routed_round_robin},
            {"judged_whole", c.judged_whole}};
}

}   // namespace

Json capacity_search_json(const Scenario& s, const app::FleetSizing& f, int max_gpus) {
    const sim::CapacityResult& r = f.search;
    Json results = Json::array();
    for (const auto& c : r.best) results.push_back(candidate_json(s, c, s.inference.qps));
    Json j = {
        {"results", results}, {"simulations", r.simulations}, {"configurations", r.variants}, {"max_gpus", max_gpus}};
    if (r.fewer) j["one_replica_fewer"] = candidate_json(s, *r.fewer, s.inference.qps);
    if (!r.why_none.empty()) j["why_none"] = r.why_none;
    if (f.published) {
        j["published_range"] = published_range_json(*f.published);
        Scenario at = s;
        at.inference.qps = f.sized_qps;
        if (f.sized)
            j["sized_for_published_low"] = candidate_json(at, *f.sized, s.inference.qps);
        else
            j["sized_for_published_low"] = {{"qps", f.sized_qps}, {"why_none", f.sized_why_none}};
    }
    return j;
}

Json capacity_per_gpu_json(const app::CapacityPerGpu& r, int max_gpus) {
    Json rows = Json::array();
    for (const auto& row : r.rows) {
        const auto& c = row.capacity;
        Json j = {{"tp", row.layout.tp},
                  {"pp", row.layout.pp},
                  {"gpus", row.layout.gpus()},
                  {"weight_precision", to_string(row.layout.weight_precision)},
                  {"kv_precision", to_string(row.layout.kv_precision)},
                  {"slo_capacity_qps", c.qps},
                  {"slo_capacity_qps_per_gpu", row.qps_per_gpu},
                  {"offline_qps", c.offline_qps},
                  {"simulations", c.simulations}};
        if (c.qps > 0) {
            j["above_misses"] = c.above_misses;
            if (c.published) j["published_range"] = published_range_json(*c.published);
        } else {
            j["why_none"] = c.why_none;
        }
        rows.push_back(j);
    }
    Json j = {{"results", rows}, {"simulations", r.simulations}, {"max_gpus", max_gpus}};
    if (!r.why_none.empty()) j["why_none"] = r.why_none;
    return j;
}

Json pool_search_json(const Scenario& s, const app::PoolSizing& p, int max_gpus) {
    Json d = {{"simulations", p.pools.simulations}, {"max_gpus", max_gpus}};
    if (const auto& b = p.pools.best) {
        const auto& r = b->result;
        d["gpus"] = b->gpus();
        d["prefill"] = {{"replicas", b->prefill_replicas}, {"tp", b->prefill_tp}, {"gpus", b->prefill_gpus()}};
        d["decode"] = {{"replicas", b->decode_replicas},
                       {"tp", s.parallel.tp},
                       {"pp", s.parallel.pp},
                       {"gpus", b->gpus() - b->prefill_gpus()}};
        d["slo_met"] = b->meets;
        d["ttft_p99_s"] = r.ttft_s.p99;
        d["tpot_p99_s"] = r.tpot_s.p99;
        d["requests_per_s"] = r.requests_per_s;
        d["output_tokens_per_s_per_gpu"] = r.output_tokens_per_s_per_gpu;
        if (r.disaggregated) d["kv_transfer_p99_s"] = r.disaggregated->transfer_s.p99;
    } else {
        d["why_none"] = p.pools.why_none;
    }
    return {{"disaggregated", d}, {"colocated", capacity_search_json(s, p.colocated, max_gpus)}};
}

Json split_capacities_json(const Scenario& s, const app::SplitCapacities& r) {
    auto capacity = [](const app::SloCapacity& c, int gpus) {
        Json j = {{"gpus", gpus}, {"slo_capacity_qps", c.qps}, {"simulations", c.simulations}};
        if (c.qps > 0)
            j["slo_capacity_qps_per_gpu"] = c.qps / gpus;
        else
            j["why_none"] = c.why_none;
        return j;
    };
    Json rows = Json::array();
    for (const auto& row : r.rows) {
        Json j = capacity(row.capacity, row.gpus);
        j["prefill_replicas"] = row.prefill_replicas;
        j["decode_replicas"] = row.decode_replicas;
        rows.push_back(j);
    }
    Json colocated = capacity(r.colocated, r.colocated_gpus);
    colocated["replicas"] = r.colocated_gpus / s.parallel.model_parallel();
    return {{"splits", rows},
            {"prefill_tp", s.inference.disaggregation.prefill_tp},
            {"decode_tp", s.parallel.tp},
            {"decode_pp", s.parallel.pp},
            {"colocated", colocated},
            {"splits_possible", r.splits},
            {"simulations", r.simulations}};
}

Json serving_search_json(const Scenario& s, int max_gpus, int threads) {
    if (s.inference.disaggregation.enabled())
        return s.inference.qps_max
                   ? split_capacities_json(s, app::split_capacities(s, {}, threads))
                   : pool_search_json(s, app::disaggregated_fleet_search(s, max_gpus, threads), max_gpus);
    if (s.inference.qps_max)
        return capacity_per_gpu_json(app::capacity_per_gpu_search(s, max_gpus, {}, threads), max_gpus);
    return capacity_search_json(s, app::serving_fleet_search(s, max_gpus, threads), max_gpus);
}

}   // namespace llmsim::report
