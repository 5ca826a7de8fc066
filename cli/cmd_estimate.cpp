// llmsim estimate: step time, MFU, time breakdown and memory of a scenario. Training steps are played
// on the discrete-event simulator (sim/) unless --fast asks for the closed form only.
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/estimate_report.hpp"
#include "cli/flag_checks.hpp"
#include "cli/plot.hpp"
#include "cli/qps_sweep.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/limits.hpp"
#include "hardware_db/scenario.hpp"
#include "hardware_db/units.hpp"

namespace llmsim::cli {

void setup_estimate(CLI::App* cmd, Context& ctx) {
    auto flags = std::make_shared<ScenarioFlags>();
    auto opts = std::make_shared<app::EstimateOptions>();
    auto trace = std::make_shared<std::string>();
    auto straggler = std::make_shared<std::string>();

    add_scenario_flags(cmd, *flags);
    cmd->add_option("--price-per-gpu-hour", flags->price_per_gpu_hour,
                    "Dollars per GPU-hour: a serving estimate adds its cost per hour and per million tokens")
        ->group("Serving");
    cmd->add_flag("--fast", opts->fast, "Closed-form pipeline only (skip the discrete-event simulation)");
    cmd->add_option("--trace", *trace, "Write a Chrome/Perfetto trace (JSON) of the simulated step");
    cmd->add_flag("--timeline", opts->timeline, "Print a text Gantt chart of the simulated step");
    cmd->add_option("--straggler", *straggler, "Slow one pipeline stage: STAGE:FACTOR (e.g. 3:1.2)");
    cmd->footer(
        "Serving: a scenario with \"inference\" (or any serving flag) is priced one iteration at a time: the "
        "weights are read once per iteration, each sequence's KV cache is read at its own context, GEMMs and "
        "attention go through the training roofline (split-K for small batches), TP all-reduces through the "
        "collectives registry. --batch alone: static batching (one prefill, then decode steps). --qps, --requests, "
        "--max-batch, --chunk or an SLO: continuous batching, a seeded discrete-event simulation of a request "
        "stream (Poisson at --qps, or offline) with a paged KV cache, chunked prefill (--chunk) and preemption; it "
        "reports TTFT/TPOT/e2e mean and percentiles, requests/s and tokens/s. --trace FILE writes its iterations "
        "for Perfetto. Training flags on a serving scenario (and the reverse) are errors. docs/serving.md.");
    auto plot_file = std::make_shared<std::string>(), timeline_file = std::make_shared<std::string>();
    cmd->add_option("--plot", *plot_file,
                    "Write where the step goes (closed form and simulator) as an SVG chart; with --qps-sweep, "
                    "p50/p99 TTFT and TPOT against the rate");
    cmd->add_option("--plot-timeline", *timeline_file, "Write the simulated step, stage by stage, as an SVG chart");
    auto sweep = std::make_shared<std::optional<std::string>>();
    cmd->add_option("--qps-sweep", *sweep,
                    "Serving: simulate each of these arrival rates (comma-separated, increasing, e.g. 1,2,4,8; at most "
                    "64) and print the latency-throughput curve and the capacity knee")
        ->group("Serving");
    cmd->callback([flags, opts, trace, straggler, plot_file, timeline_file, sweep, &ctx] {
        if (*sweep) {
            std::vector<std::string> lines;   // the step simulator's flags and --trace have no sweep meaning
            for (const auto& [given, flag] :
                 {std::pair{!straggler->empty(), "--straggler"}, std::pair{opts->timeline, "--timeline"},
                  std::pair{opts->fast, "--fast"}, std::pair{!trace->empty(), "--trace"},
                  std::pair{!timeline_file->empty(), "--plot-timeline"}})
                if (given) lines.push_back(fmt::format("{}: given with --qps-sweep: expected one of them", flag));
            if (!lines.empty()) throw ConfigError(lines);
            const auto rates = parse_qps_sweep(**sweep);
            const auto r = run_qps_sweep(*flags, rates);
            if (!plot_file->empty()) plot::write(*plot_file, plot::qps_sweep_chart(r));
            if (flags->json)
                print_json(qps_sweep_json(r));
            else
                std::cout << qps_sweep_text(r);
            ctx.exit_code = 0;
            return;
        }
        if (opts->fast) {   // the closed form's step beside the simulator's trace of another step: refused
            std::vector<std::string> lines;
            for (const auto& [given, flag] :
                 {std::pair{!trace->empty(), "--trace"}, std::pair{!timeline_file->empty(), "--plot-timeline"},
                  std::pair{opts->timeline, "--timeline"}})
                if (given)
                    lines.push_back(
                        fmt::format("--fast: given with {}: expected one of them ({} shows the simulated "
                                    "step, which --fast skips: the step printed would be another)",
                                    flag, flag));
            if (!lines.empty()) throw ConfigError(lines);
        }
        const Scenario s = resolve_scenario(*flags);
        app::EstimateOptions o = *opts;
        o.timeline_columns = table_width() > 0 ? static_cast<int>(table_width()) : 120;   // --wide: 0
        o.simulate = !trace->empty() || !timeline_file->empty();
        if (s.is_inference) {   // the step simulator's flags do not apply to a serving estimate: refused, not ignored
            // (--trace does: it writes the serving iterations of a continuous-batching run)
            std::vector<std::string> lines;
            for (const auto& [given, flag] :
                 {std::pair{!straggler->empty(), "--straggler"}, std::pair{o.timeline, "--timeline"},
                  std::pair{!plot_file->empty(), "--plot"}, std::pair{!timeline_file->empty(), "--plot-timeline"}})
                if (given)
                    lines.push_back(
                        fmt::format("{}: given with an inference scenario: expected {} only with "
                                    "training scenarios (it plays the training step)",
                                    flag, flag));
            // A static batch has no iterations of its own to write: one prefill, then decode steps in closed form.
            if (!trace->empty() && !s.inference.continuous())
                lines.push_back(
                    "--trace: given with a static-batching inference scenario: expected a training "
                    "scenario or continuous batching (it writes the serving iterations)");
            if (!lines.empty()) throw ConfigError(lines);
        }
        if (!straggler->empty()) {
            const auto colon = straggler->find(':');
            // Decimal only (parse_int, parse_decimal): not "0x2", "inf" or " 1".
            const auto stage_read = colon == std::string::npos ? std::nullopt : parse_int(straggler->substr(0, colon));
            const auto factor_read =
                colon == std::string::npos ? std::nullopt : parse_decimal(straggler->substr(colon + 1));
            if (!stage_read || !factor_read || *stage_read > limits::kGpus)
                throw ConfigError(fmt::format("--straggler: '{}': expected STAGE:FACTOR, e.g. 3:1.2", *straggler));
            const int stage = static_cast<int>(*stage_read);
            const double factor = *factor_read;
            if (s.is_inference)
                throw ConfigError("--straggler: a training flag on a serving scenario: expected a training scenario");
            if (stage < 0 || stage >= s.parallel.pp || !(factor > 0) || !(factor <= limits::kMaxSlowdown))
                throw ConfigError(fmt::format("--straggler: '{}': expected a stage in 0..{} and a factor in (0, {:g}]",
                                              *straggler, s.parallel.pp - 1, limits::kMaxSlowdown));
            o.straggler_stage = stage;
            o.straggler_factor = factor;
        }
        sim::StepSimulator simulator;
        std::optional<Estimate> e;
        try {
            e.emplace(run_estimate(s, o, simulator));
        } catch (const ConfigError& err) {   // a work limit names an input: the flag or the file's pointer
            throw locate_problems(*flags, err);
        }
        Json j = estimate_json(s, *e, o);
        if (!trace->empty() && (e->training || (e->serving && e->serving->continuous))) {
            std::ofstream f(*trace, std::ios::binary);
            if (!f) throw ConfigError(*trace + ": cannot open for writing (--trace)");
            if (e->training)
                simulator.write_trace(f);
            else
                sim::write_serving_trace(f, *e->serving->continuous);
            check_written(f, *trace, "--trace");
            j["trace_file"] = *trace;
        }
        if (e->training && !plot_file->empty()) plot::write(*plot_file, plot::step_chart(s, *e->training));
        if (e->training && !timeline_file->empty()) plot::write(*timeline_file, plot::timeline_chart(s, simulator));
        if (flags->json)
            print_json(j);
        else
            std::cout << estimate_text(s, *e);
        ctx.exit_code = 0;
    });
}

}   // namespace llmsim::cli
