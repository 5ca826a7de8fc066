// The subcommands' charts (cli/plot.hpp): which numbers each one shows, in which unit.
#include <algorithm>

#include <fmt/format.h>

#include "cli/plot.hpp"
#include "cli/qps_sweep.hpp"
#include "hardware_db/units.hpp"

namespace llmsim::cli::plot {

namespace {

// Seconds or milliseconds, whichever reads better for a span of `s` seconds.
std::pair<double, const char*> time_unit(double s) { return s >= 1 ? std::pair{1.0, "s"} : std::pair{1e3, "ms"}; }

std::string layout_title(const Scenario& s) {
    const auto& p = s.parallel;
    return fmt::format("{} on {} x {} (tp {} pp {} dp {}{}{})", s.model.name, s.gpus, s.system.name, p.tp, p.pp, p.dp,
                       p.cp > 1 ? fmt::format(" cp {}", p.cp) : "", p.ep > 1 ? fmt::format(" ep {}", p.ep) : "");
}

}   // namespace

std::string memory_chart(const Scenario& s, const MemoryBreakdown& m) {
    StackedBars c;
    c.title = "Memory per GPU by pipeline stage: " + layout_title(s);
    c.y_label = "memory per GPU (GiB, 2^30 bytes)";
    c.parts = {"weights", "gradients", "optimizer states", "activations", "other (reserve, buffers)"};
    for (const auto& st : m.stages) {
        c.categories.push_back(fmt::format("stage {}", st.stage));
        c.values.push_back({st.weights_bytes / kGiB, st.gradients_bytes / kGiB, st.optimizer_bytes / kGiB,
                            st.activations_bytes / kGiB, st.other_bytes / kGiB});
    }
    if (m.stages.empty()) {
        c.categories = {"GPU"};
        c.values = {{m.weights_bytes / kGiB, m.gradients_bytes / kGiB, m.optimizer_bytes / kGiB,
                     m.activations_bytes / kGiB, m.other_bytes / kGiB}};
    }
    c.limit = m.capacity_bytes / kGiB;
    c.limit_label = fmt::format("capacity {:.0f} GiB", m.capacity_bytes / kGiB);
    return stacked_bars(c);
}

std::string step_chart(const Scenario& s, const app::TrainingEstimate& e) {
    StackedBars c;
    // Not a structured binding: the lambda below captures them (clang 14 cannot capture bindings).
    const auto scale_unit = time_unit(e.chosen().step_time_s);
    const double scale = scale_unit.first;
    const char* const unit = scale_unit.second;
    c.title = "Where the step goes: " + layout_title(s);
    c.y_label = fmt::format("time per step ({})", unit);
    c.parts = {"compute", "TP comm", "CP comm", "EP comm", "PP comm", "DP comm", "pipeline bubble", "optimizer"};
    auto add = [&](const char* name, const StepEstimate& est) {
        const auto& b = est.breakdown;
        c.categories.push_back(fmt::format("{} ({:.3g} {})", name, est.step_time_s * scale, unit));
        c.values.push_back({b.compute * scale, b.tp_comm * scale, b.cp_comm * scale, b.ep_comm * scale,
                            b.pp_comm * scale, b.dp_comm * scale, b.bubble * scale, b.optimizer * scale});
    };
    add("closed form", e.closed_form);
    if (e.simulated) add("simulator", *e.simulated);
    return stacked_bars(c);
}

std::string timeline_chart(const Scenario& s, const sim::StepSimulator& played) {
    Gantt g;
    const auto& res = played.result();
    const auto& tasks = played.engine().tasks();
    double span = res.step_time_s;
    for (const auto& t : tasks) span = std::max(span, t.end);
    const auto scale_unit = time_unit(span);
    const double scale = scale_unit.first;
    const char* const unit = scale_unit.second;
    g.title = fmt::format("Simulated step ({} schedule): {}", res.schedule ? res.schedule->name : "?", layout_title(s));
    g.x_label = fmt::format("time in the step ({})", unit);
    g.kinds = {"forward", "backward", "weight gradient", "optimizer", "DP gradient reduction", "ZeRO all-gather"};
    const int stages = s.parallel.pp;
    bool any_dp = false;
    for (const auto& t : tasks) any_dp |= t.stream % sim::kStreamsPerStage == sim::kDpStream && t.end > t.start;
    for (int st = 0; st < stages; ++st) {
        g.lanes.push_back(fmt::format("stage {}", st));
        if (any_dp) g.lanes.push_back(fmt::format("stage {} DP", st));
    }
    const int per = any_dp ? 2 : 1;
    for (const auto& t : tasks) {
        const int stream = t.stream % sim::kStreamsPerStage, stage = t.stream / sim::kStreamsPerStage;
        int kind = -1;
        switch (static_cast<sim::TaskKind>(t.tag.kind)) {
            case sim::TaskKind::F: kind = 0; break;
            case sim::TaskKind::B: kind = 1; break;
            case sim::TaskKind::W: kind = 2; break;
            case sim::TaskKind::Optimizer: kind = 3; break;
            case sim::TaskKind::GradBucket: kind = 4; break;
            case sim::TaskKind::ParamGather: kind = 5; break;
            default: break;
        }
        if (kind < 0 || stage >= stages || (stream != sim::kCompute && stream != sim::kDpStream)) continue;
        g.bars.push_back(
            {stage * per + (stream == sim::kDpStream && any_dp ? 1 : 0), kind, t.start * scale, t.end * scale});
    }
    return gantt(g);
}

std::string pareto_chart(const Scenario& base, const search::SearchResult& r) {
    LineChart c;
    c.title = fmt::format("Layouts of {} on {}: throughput vs memory", base.model.name, base.system.name);
    c.x = {"memory per GPU (GiB, 2^30 bytes)", false};
    c.y = {"training tokens/s per GPU", false};
    c.scatter = true;
    Series top{fmt::format("best {} layouts", r.top.size()), {}, {}}, front{"Pareto front", {}, {}};
    for (const auto& e : r.top) {
        top.x.push_back(e.memory.total_bytes / kGiB);
        top.y.push_back(e.time.tokens_per_s / e.c.gpus);
    }
    auto pareto = r.pareto;
    std::sort(pareto.begin(), pareto.end(),
              [](const auto& a, const auto& b) { return a.memory.total_bytes < b.memory.total_bytes; });
    for (const auto& e : pareto) {
        front.x.push_back(e.memory.total_bytes / kGiB);
        front.y.push_back(e.time.tokens_per_s / e.c.gpus);
    }
    c.series = {top, front};
    return line_chart(c);
}

std::string qps_sweep_chart(const QpsSweep& sweep) {
    const Scenario& s = sweep.scenario;
    LineChart c;
    c.title = fmt::format("Latency vs load: {} on {} x {} (tp {} pp {}), {} requests per rate", s.model.name, s.gpus,
                          s.system.name, s.parallel.tp, s.parallel.pp, s.inference.requests);
    c.x = {"offered rate (requests/s)", true};
    c.y = {"latency (ms)", true};
    Series ttft50{"TTFT p50", {}, {}}, ttft99{"TTFT p99", {}, {}}, tpot50{"TPOT p50", {}, {}},
        tpot99{"TPOT p99", {}, {}};
    for (const auto& p : sweep.points) {
        for (auto* se : {&ttft50, &ttft99, &tpot50, &tpot99}) se->x.push_back(p.qps);
        ttft50.y.push_back(p.result.ttft_s.p50 * 1e3);
        ttft99.y.push_back(p.result.ttft_s.p99 * 1e3);
        tpot50.y.push_back(p.result.tpot_s.p50 * 1e3);
        tpot99.y.push_back(p.result.tpot_s.p99 * 1e3);
    }
    c.series = {ttft50, ttft99, tpot50, tpot99};
    if (sweep.knee) {
        c.reference_x = sweep.points[*sweep.knee].qps;
        c.reference_x_label = fmt::format("capacity knee {:g} req/s", *c.reference_x);
    }
    return line_chart(c);
}

}   // namespace llmsim::cli::plot
