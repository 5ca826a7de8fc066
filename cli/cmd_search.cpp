// llmsim search: every valid parallel layout of a model on a GPU budget, pruned by rules and
// memory, ranked by the closed-form step time, the best confirmed on the simulator (docs/search.md).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "app/serving.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/estimate_report.hpp"
#include "cli/flag_checks.hpp"
#include "cli/plot.hpp"
#include "cli/progress.hpp"
#include "cli/search_flags.hpp"
#include "cli/search_report.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/limits.hpp"
#include "hardware_db/scenario.hpp"
#include "report/search_request.hpp"
#include "sim/serving.hpp"
#include "sim/step_sim.hpp"

namespace llmsim::cli {

namespace {

// With qps "max": each layout's largest rate meeting the SLO and that rate per GPU (docs/serving.md).
int capacity_per_gpu(const SearchFlags& f, const Scenario& s, int max_gpus) {
    const auto r = [&] {   // the bar is cleared before anything is printed
        ProgressBar bar("capacity per layout");
        return app::capacity_per_gpu_search(s, max_gpus, {}, f.threads.value_or(0),
                                            [&bar](std::size_t done, std::size_t all) {
                                                bar.update(static_cast<double>(done) / static_cast<double>(all));
                                            });
    }();
    if (f.json) {
        print_json(report::capacity_per_gpu_json(r, max_gpus));
    } else {
        std::cout << wrap_text(
            fmt::format("{} on {}: the largest {} each replica layout holds within {} ({} simulations)", s.model.name,
                        s.system.name, capacity_rate_text(s.inference), stream_slo_text(s.inference), r.simulations));
        Table t({"tp x pp", "weights/KV", "req/s", "per GPU", "offline", "published runs"});
        for (const auto& row : r.rows) {
            const auto& c = row.capacity;
            t.row({fmt::format("{} x {}", row.layout.tp, row.layout.pp),
                   fmt::format("{}/{}", to_string(row.layout.weight_precision), to_string(row.layout.kv_precision)),
                   c.qps > 0 ? fmt::format("{:.4g}", c.qps) : std::string("none"),
                   c.qps > 0 ? fmt::format("{:.4g}", row.qps_per_gpu) : std::string("-"),
                   fmt::format("{:.4g}", c.offline_qps),
                   c.published ? fmt::format("{:.4g}-{:.4g}", c.published->low, c.published->high) : std::string("-")});
        }
        std::cout << t.str();
        if (!r.why_none.empty()) std::cout << wrap_text("no answer: " + r.why_none);
        for (const auto& row : r.rows)
            if (row.capacity.qps <= 0)
                std::cout << wrap_text(fmt::format("{} x {}: {}", row.layout.tp, row.layout.pp, row.capacity.why_none));
        if (!r.rows.empty() && r.rows.front().capacity.published)
            std::cout << wrap_text("published runs: what " + r.rows.front().capacity.published->basis +
                                   " measured against llmsim's capacity, applied to each row (docs/serving.md, How "
                                   "sure)");
    }
    return r.rows.empty() || r.rows.front().capacity.qps <= 0 ? 1 : 0;
}

// How sure the answer is and what to plan on: the winner's layout sized for the slowest published run like it.
std::string fleet_sizing_text(const Scenario& s, const app::FleetSizing& f) {
    if (!f.published)
        return fmt::format(
            "how sure: no published runs of {} like this deployment in validation/ (docs/serving.md, "
            "How sure): the answer carries no range",
            to_string(s.inference.engine.kind));
    const auto& p = *f.published;
    std::string t = fmt::format("how sure: {} measured {:.0f}-{:.0f}% of llmsim's capacity ({:.0f}% range)", p.basis,
                                100 * p.low_ratio, 100 * p.high_ratio, 100 * p.level);
    if (!f.sized) return t + fmt::format("; sized for the slowest ({:.4g} req/s): {}", f.sized_qps, f.sized_why_none);
    const auto& c = *f.sized;
    return t + fmt::format(
                   "; to hold {:g} req/s if the engine is as slow as the slowest, plan on {} GPUs ({} x {} x "
                   "{}, meeting the SLO at {:.4g} req/s)",
                   s.inference.qps, c.gpus(), c.tp, c.pp, c.replicas, f.sized_qps);
}

// A disaggregated scenario with qps "max": the capacity of each split of its GPUs between the pools.
int split_capacities(const SearchFlags& f, const Scenario& s) {
    const auto r = [&] {
        ProgressBar bar("capacity per split");
        return app::split_capacities(s, {}, f.threads.value_or(0), [&bar](std::size_t done, std::size_t all) {
            bar.update(static_cast<double>(done) / static_cast<double>(all));
        });
    }();
    const auto& p = s.parallel;
    const int prefill_tp = s.inference.disaggregation.prefill_tp;
    if (f.json) {
        print_json(report::split_capacities_json(s, r));
    } else {
        std::cout << wrap_text(fmt::format(
            "{} on {} x {}: the largest {} each split between a prefill pool (replicas of tp {}) and a decode pool "
            "(tp {} pp {}) holds within {} ({} simulations)",
            s.model.name, s.gpus, s.system.name, capacity_rate_text(s.inference), prefill_tp, p.tp, p.pp,
            stream_slo_text(s.inference), r.simulations));
        Table t({"prefill", "decode", "GPUs", "req/s", "per GPU"});
        auto row = [&](std::string pre, std::string dec, int gpus, const app::SloCapacity& c) {
            t.row({std::move(pre), std::move(dec), std::to_string(gpus),
                   c.qps > 0 ? fmt::format("{:.4g}", c.qps) : std::string("none"),
                   c.qps > 0 ? fmt::format("{:.4g}", c.qps / gpus) : std::string("-")});
        };
        for (const auto& x : r.rows)
            row(fmt::format("{} x tp {}", x.prefill_replicas, prefill_tp), std::to_string(x.decode_replicas), x.gpus,
                x.capacity);
        row("colocated", std::to_string(r.colocated_gpus / p.model_parallel()), r.colocated_gpus, r.colocated);
        std::cout << t.str();
        for (const auto& x : r.rows)
            if (x.capacity.qps <= 0)
                std::cout << wrap_text(fmt::format("{} prefill replicas: {}", x.prefill_replicas, x.capacity.why_none));
        if (r.colocated.qps <= 0) std::cout << wrap_text("colocated: " + r.colocated.why_none);
        if (r.splits > static_cast<int>(r.rows.size()))
            std::cout << wrap_text(fmt::format("{} of the {} splits, evenly spaced (at most {})", r.rows.size(),
                                               r.splits, app::kMaxSplits));
    }
    for (const auto& x : r.rows)
        if (x.capacity.qps > 0) return 0;
    return 1;
}

// A disaggregated scenario with a rate: the fewest GPUs of its pools, beside the colocated answer.
int pool_sizing(const SearchFlags& f, const Scenario& s, int max_gpus) {
    const auto r = [&] {
        ProgressBar bar("serving search");
        return app::disaggregated_fleet_search(s, max_gpus, f.threads.value_or(0),
                                               [&bar](std::size_t done, std::size_t all) {
                                                   bar.update(static_cast<double>(done) / static_cast<double>(all));
                                               });
    }();
    if (f.json) {
        print_json(report::pool_search_json(s, r, max_gpus));
    } else {
        std::cout << wrap_text(
            fmt::format("{} on {} at {:g} req/s, {}: the fewest GPUs, disaggregated and colocated "
                        "({} simulations)",
                        s.model.name, s.system.name, s.inference.qps, stream_slo_text(s.inference),
                        r.pools.simulations + r.colocated.search.simulations));
        Table t({"deployment", "GPUs", "layout", "TTFT p99", "TPOT p99"});
        if (const auto& b = r.pools.best)
            t.row({"disaggregated", std::to_string(b->gpus()),
                   fmt::format("{} x tp {} prefill + {} x tp {} pp {} decode", b->prefill_replicas, b->prefill_tp,
                               b->decode_replicas, s.parallel.tp, s.parallel.pp),
                   human_seconds(b->result.ttft_s.p99), human_seconds(b->result.tpot_s.p99)});
        if (!r.colocated.search.best.empty()) {
            const auto& c = r.colocated.search.best.front();
            t.row({"colocated", std::to_string(c.gpus()), fmt::format("{} x {} x {}", c.tp, c.pp, c.replicas),
                   human_seconds(c.result.ttft_s.p99), human_seconds(c.result.tpot_s.p99)});
        }
        std::cout << t.str();
        if (!r.pools.best) std::cout << wrap_text("disaggregated: no answer: " + r.pools.why_none);
        if (r.colocated.search.best.empty())
            std::cout << wrap_text("colocated: no answer: " + r.colocated.search.why_none);
        if (r.pools.best && !r.colocated.search.best.empty()) {
            const int a = r.pools.best->gpus(), b = r.colocated.search.best.front().gpus();
            std::cout << wrap_text(
                a == b ? fmt::format("the pools need as many GPUs as colocated replicas ({})", a)
                       : fmt::format("the pools need {} GPUs {} than colocated replicas ({:.2f}x the goodput per GPU)",
                                     std::abs(a - b), a < b ? "fewer" : "more", static_cast<double>(b) / a));
        }
    }
    return r.pools.best ? 0 : 1;
}

// Capacity planning on a serving scenario (docs/serving.md): the fewest GPUs meeting its SLO at its qps.
int serving_capacity(const SearchFlags& f, const Scenario& s) {
    const int max_gpus = f.max_gpus.value_or(f.gpus.value_or(64));
    if (s.inference.disaggregation.enabled())
        return s.inference.qps_max ? split_capacities(f, s) : pool_sizing(f, s, max_gpus);
    if (s.inference.qps_max) return capacity_per_gpu(f, s, max_gpus);
    const auto fleet = [&] {   // the bar is cleared before anything is printed
        ProgressBar bar("serving search");
        return app::serving_fleet_search(s, max_gpus, f.threads.value_or(0), [&bar](std::size_t done, std::size_t all) {
            bar.update(static_cast<double>(done) / static_cast<double>(all));
        });
    }();
    const sim::CapacityResult& r = fleet.search;
    if (f.json) {
        print_json(report::capacity_search_json(s, fleet, max_gpus));
    } else {
        const auto& in = s.inference;
        const std::string shape =
            arrival_shape_worth_naming(in) ? fmt::format(" ({})", arrival_process_text(in)) : std::string();
        std::cout << wrap_text(fmt::format("{} on {} at {}{:g} req/s{}, {} ({} configurations, {} simulations)",
                                           s.model.name, s.system.name, in.rate_profile.enabled() ? "a mean " : "",
                                           in.qps, shape, stream_slo_text(in), r.variants, r.simulations));
        Table t({"gpus", "tp x pp x replicas", "weights/KV", "max batch", "chunk", "TTFT p99", "TPOT p99", "req/s"});
        bool sampled = false;   // a row judged on one replica's share only (its whole deployment may need more)
        for (const auto& c : r.best) {
            sampled = sampled || !c.judged_whole;
            t.row({std::to_string(c.gpus()) + (c.judged_whole ? "" : "*"),
                   fmt::format("{} x {} x {}", c.tp, c.pp, c.replicas),
                   fmt::format("{}/{}", to_string(c.weight_precision), to_string(c.kv_precision)),
                   c.max_batch > 0 ? std::to_string(c.max_batch) : std::string("KV"),
                   c.max_batch_tokens > 0 ? std::to_string(c.max_batch_tokens) : std::string("none"),
                   human_seconds(c.result.ttft_s.p99), human_seconds(c.result.tpot_s.p99),
                   fmt::format("{:.2f}", c.result.requests_per_s)});
        }
        std::cout << t.str();
        if (sampled)
            std::cout << wrap_text(
                "* judged on one sampled replica's share of the stream only: the whole deployment may need more "
                "replicas (rows without * were judged whole)");
        if (!r.why_none.empty()) std::cout << wrap_text("no answer: " + r.why_none);
        if (r.fewer)
            std::cout << fmt::format("one replica fewer ({} GPUs): TTFT p99 {}, TPOT p99 {} -> {}\n", r.fewer->gpus(),
                                     human_seconds(r.fewer->result.ttft_s.p99),
                                     human_seconds(r.fewer->result.tpot_s.p99),
                                     r.fewer->meets ? "meets" : "misses the SLO");
        if (!r.best.empty() && r.best.front().routed_round_robin)
            std::cout << wrap_text(fmt::format(
                "router: the answer is judged as round robin (one sampled replica): \"{}\" over {} replicas and {} "
                "requests is past the simulator's work limit, and routing on load needs no more replicas than turns",
                to_string(s.inference.router), r.best.front().replicas, sim::capacity_stream_requests(s.inference)));
        if (!r.best.empty()) std::cout << wrap_text(fleet_sizing_text(s, fleet));
        if (!r.best.empty() && s.inference.price_per_gpu_hour > 0) {
            // Per token at the traffic asked for (a fleet sized for a higher rate serves qps).
            auto cost = [&](const sim::CapacityCandidate& c, double simulated_qps) {
                Scenario at = s;
                at.inference.qps = simulated_qps;
                const auto x = app::candidate_economics(at, c, s.inference.qps);
                return fmt::format("{} GPUs ${:.2f}/hour (${:.3g} per million output tokens)", c.gpus(), x.usd_per_hour,
                                   x.usd_per_million_output_tokens);
            };
            std::string line = fmt::format("cost at ${:g} per GPU-hour: {}", s.inference.price_per_gpu_hour,
                                           cost(r.best.front(), s.inference.qps));
            if (fleet.sized && fleet.sized->gpus() != r.best.front().gpus())
                line += "; planned " + cost(*fleet.sized, fleet.sized_qps);
            std::cout << wrap_text(line);
        }
    }
    return r.best.empty() ? 1 : 0;
}

}   // namespace

void setup_search(CLI::App* cmd, Context& ctx) {
    auto f = std::make_shared<SearchFlags>();

    add_search_flags(cmd, *f, true);
    cmd->add_option("--top-k", f->top_k, "Layouts to report (default 10)")->check(int_in(1, limits::kSearchTopK));
    cmd->add_option("--confirm", f->confirm,
                    "Re-rank the best K on the discrete-event simulator (default 5; 0: closed form only)")
        ->check(int_in(0, limits::kSearchTopK));
    cmd->add_flag("--json", f->json, "Print JSON instead of tables");
    auto plot_file = std::make_shared<std::string>();
    cmd->add_option("--plot", *plot_file, "Write the reported layouts and the Pareto front as an SVG chart");
    // Capacity planning without a file: estimate's serving flags describe the stream, the SLO and the
    // search's starting points (docs/serving.md); any of them makes the search a serving one.
    auto serving = std::make_shared<ScenarioFlags>();
    add_serving_flags(cmd, *serving, "Serving (capacity planning: the fewest GPUs meeting the SLO at --qps)");
    cmd->callback([f, serving, plot_file, &ctx] {
        const bool serving_flag = first_serving_flag(*serving) != nullptr;
        bool file_inference = false;
        if (!f->scenario.empty()) {
            std::string base_dir;
            const Json doc = read_scenario_file(f->scenario, base_dir);
            file_inference = doc.is_object() && doc.contains("inference");
        }
        if (serving_flag || file_inference) {
            // Layout-search flags do not apply to a serving search: refused, never silently ignored. Honoured:
            // --scenario, --model, --system, --gpus / --max-gpus (the GPU budget), --threads, --json and
            // --price-per-gpu-hour (the answers' cost).
            std::vector<std::string> lines;
            for (const auto& [given, flag] : {std::pair{f->seq_len.has_value(), "--seq-len"},
                                              std::pair{f->global_batch.has_value(), "--global-batch"},
                                              std::pair{!f->global_batch_range.empty(), "--global-batch-range"},
                                              std::pair{!f->precision.empty(), "--precision"},
                                              std::pair{!f->micro_batch.empty(), "--micro-batch"},
                                              std::pair{!f->recompute.empty(), "--recompute"},
                                              std::pair{!f->zero.empty(), "--zero"},
                                              std::pair{!f->offload.empty(), "--offload"},
                                              std::pair{!f->schedules.empty(), "--schedules"},
                                              std::pair{!f->tp.empty(), "--tp"},
                                              std::pair{!f->pp.empty(), "--pp"},
                                              std::pair{!f->cp.empty(), "--cp"},
                                              std::pair{!f->ep.empty(), "--ep"},
                                              std::pair{!f->vp.empty(), "--vp"},
                                              std::pair{!f->dp.empty(), "--dp"},
                                              std::pair{f->min_gpus.has_value(), "--min-gpus"},
                                              std::pair{f->max_tp.has_value(), "--max-tp"},
                                              std::pair{f->min_pp.has_value(), "--min-pp"},
                                              std::pair{f->max_pp.has_value(), "--max-pp"},
                                              std::pair{f->allow_cross_node_tp, "--allow-cross-node-tp"},
                                              std::pair{f->activation_offload.has_value(), "--activation-offload"},
                                              std::pair{!f->objective.empty(), "--objective"},
                                              std::pair{f->memory_headroom.has_value(), "--memory-headroom"},
                                              std::pair{!f->memory_headroom_bytes.empty(), "--memory-headroom-bytes"},
                                              std::pair{!f->framework.empty(), "--framework"},
                                              std::pair{!f->torch_compile.empty(), "--torch-compile"},
                                              std::pair{!f->grad_precision.empty(), "--grad-precision"},
                                              std::pair{!f->sp.empty(), "--sp"},
                                              std::pair{!f->tp_comm_overlap.empty(), "--tp-comm-overlap"},
                                              std::pair{!f->overlap_grad_reduce.empty(), "--overlap-grad-reduce"},
                                              std::pair{!f->overlap_param_gather.empty(), "--overlap-param-gather"},
                                              std::pair{f->top_k.has_value(), "--top-k"},
                                              std::pair{f->confirm.has_value(), "--confirm"},
                                              std::pair{!plot_file->empty(), "--plot"}})
                if (given)
                    lines.push_back(
                        fmt::format("{}: given with a serving search: expected {} only when searching "
                                    "training layouts (serving: --input-len, --output-len, --qps, "
                                    "--slo-ttft-p99, --slo-tpot-p99, --slo-ttft-p90, --slo-tpot-p90, --max-gpus, "
                                    "--price-per-gpu-hour)",
                                    flag, flag));
            if (f->scenario.empty()) {
                if (!serving->qps_text)
                    lines.emplace_back("--qps: missing: expected the arrival rate the deployment must serve");
                if (!serving->slo_ttft_p99 && !serving->slo_tpot_p99 && !serving->slo_ttft_p90 &&
                    !serving->slo_tpot_p90)
                    lines.emplace_back(
                        "--slo-ttft-p99: missing: expected at least one of --slo-ttft-p99, --slo-tpot-p99, "
                        "--slo-ttft-p90, --slo-tpot-p90");
            }
            if (!lines.empty()) throw ConfigError(lines);
            ScenarioFlags sf = *serving;
            sf.price_per_gpu_hour = f->price;
            sf.scenario = f->scenario;
            sf.model = f->model;
            sf.system = f->system;
            const Scenario s = resolve_scenario(sf);
            try {
                ctx.exit_code = serving_capacity(*f, s);
            } catch (const ConfigError& err) {   // a refusal or work limit names an input: its flag or the file's
                throw locate_problems(sf, err);
            }
            return;
        }
        auto req = resolve_search_request(*f);
        if (f->top_k) req.options.top_k = *f->top_k;
        req.options.confirm = f->confirm.value_or(req.options.confirm > 0 ? req.options.confirm : 5);
        req.options.confirm_step_time = report::simulated_step_time;
        ProgressBar bar("search");
        req.options.progress = [&bar](double done) { bar.update(done); };
        const auto res = search::run_search(req.base, req.space, req.options);
        if (!plot_file->empty()) plot::write(*plot_file, plot::pareto_chart(req.base, res));
        if (f->json)
            print_json(search_result_json(req.base, res, req.options));
        else
            std::cout << search_result_text(req.base, res, req.options);
        ctx.exit_code = res.top.empty() ? 1 : 0;
    });
}

}   // namespace llmsim::cli
