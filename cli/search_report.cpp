#include "cli/search_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cli/common.hpp"
#include "cli/estimate_report.hpp"
#include "cli/report.hpp"
#include "cost_models/memory.hpp"
#include "hardware_db/scenario.hpp"

namespace llmsim::cli {

using search::Candidate;
using search::SearchEntry;
using search::SearchOptions;
using search::SearchResult;

namespace {

// How many layouts were looked at and why the rest were rejected, by reason (most first).
std::string rejections(const SearchResult& r) {
    std::string out = "\n";
    out += wrap_text(fmt::format("{} layouts considered: {} evaluated, {} rejected ({} threads, {})",
                                 with_commas(r.considered()), with_commas(r.evaluated), with_commas(r.rejected_total),
                                 r.threads, human_seconds(r.wall_s)));
    if (!r.rejected.empty()) {
        std::vector<std::pair<std::int64_t, std::string>> rej;
        for (const auto& [k, v] : r.rejected) rej.emplace_back(v, k);
        std::sort(rej.begin(), rej.end(), [](const auto& a, const auto& b) {
            return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
        out += "rejected, by reason:\n";
        // The count right-aligned, the reason wrapped under itself.
        constexpr std::size_t kCount = 18;   // "  " + 14 + "  "
        const std::size_t width = table_width() > kCount ? table_width() - kCount : std::string::npos;   // --wide: 0
        for (const auto& [v, k] : rej) {
            const auto lines = wrap_lines(k, width);
            for (std::size_t i = 0; i < lines.size(); ++i)
                out +=
                    (i == 0 ? fmt::format("  {:>14}  ", with_commas(v)) : std::string(kCount, ' ')) + lines[i] + "\n";
        }
    }
    return out;
}

}   // namespace

std::string search_result_text(const Scenario& base, const SearchResult& r, const SearchOptions& o) {
    std::string out;
    std::string gpus;
    if (r.gpu_counts.size() == 1)
        gpus = fmt::format("{} GPUs", r.gpu_counts.front());
    else
        gpus = fmt::format("{} to {} GPUs ({} counts)", r.gpu_counts.front(), r.gpu_counts.back(), r.gpu_counts.size());
    out += fmt::format("search: {} on {}, {}, seq {}, {}{}\n", base.model.name, base.system.name, gpus,
                       base.training.seq_len, to_string(base.training.precision),
                       base.parallel.framework == Framework::unspecified
                           ? std::string()
                           : fmt::format(", framework {}", framework_label(base.parallel)));
    if (r.rlhf)
        out += wrap_text(
            "RLHF: step = one PPO iteration (rollout, experience forwards, actor and critic training; "
            "llmsim estimate's rlhf.iteration_s), closed form");
    if (r.top.empty()) {
        out += "no layout fits\n";
        out += rejections(r);
        return out;
    }
    {
        const auto& e = r.top.front();
        out += wrap_text(fmt::format(
            "answer: {}{} on {} GPUs, global batch {}: step {}, MFU {:.1f}%, {} tokens/s per GPU, {} per GPU",
            layout_brief(e.c), r.overlap_searched ? " (overlap " + overlap_brief(e.c) + ")" : std::string(),
            with_commas(e.c.gpus), with_commas(e.c.global_batch), human_seconds(e.time.step_time_s), 100 * e.time.mfu,
            with_commas(std::llround(e.time.tokens_per_s / e.c.gpus)), gib(e.memory.total_bytes, 1)));
        out += published_range_text(report::search_step_time_range(base, e), "step time", "s") + "\n";
    }
    auto table = [&](const std::vector<SearchEntry>& v, bool rank) {
        std::vector<std::string> head{rank ? "#" : "", "gpus", "layout"};
        if (r.overlap_searched) head.push_back("overlap");
        for (const char* h : {"gbs", "step", "tok/s/gpu", "MFU", "bubble", "mem/GPU"}) head.push_back(h);
        if (r.confirmed && rank) head.push_back("closed form");
        if (o.price_per_gpu_hour > 0) head.push_back("$/Mtok");
        Table t(head);
        t.detail(2);   // the layout (and its overlaps) under each row when the table is too wide
        if (r.overlap_searched) t.detail(3);
        int i = 0;
        for (const auto& e : v) {
            std::vector<std::string> row{rank ? std::to_string(++i) : "", with_commas(e.c.gpus), layout_brief(e.c)};
            if (r.overlap_searched) row.push_back(overlap_brief(e.c));
            for (auto&& x :
                 {with_commas(e.c.global_batch), human_seconds(e.time.step_time_s),
                  with_commas(std::llround(e.time.tokens_per_s / e.c.gpus)), fmt::format("{:.1f}%", 100 * e.time.mfu),
                  fmt::format("{:.1f}%", 100 * e.time.bubble_fraction), gib(e.memory.total_bytes, 1)})
                row.push_back(x);
            if (r.confirmed && rank)
                row.push_back(e.closed_form_step_time_s > 0 ? human_seconds(e.closed_form_step_time_s) : "");
            if (o.price_per_gpu_hour > 0)
                row.push_back(fmt::format("{:.2f}", report::cost_per_million_tokens_usd(e, o.price_per_gpu_hour)));
            t.row(row);
        }
        return t.str();
    };
    out += fmt::format("best {} by {}{}:\n", r.top.size(), search::to_string(o.objective),
                       r.confirmed ? " (best confirmed on the simulator)" : "");
    out += table(r.top, true);
    if (!r.pareto.empty()) {
        out += fmt::format("Pareto front (time per token vs memory per GPU vs GPUs), {} layouts:\n", r.pareto.size());
        std::vector<SearchEntry> shown = r.pareto;
        if (shown.size() > 12) {
            std::vector<SearchEntry> thin;
            for (std::size_t i = 0; i < 12; ++i) thin.push_back(shown[i * (shown.size() - 1) / 11]);
            shown.swap(thin);
        }
        out += table(shown, false);
    }
    return out + rejections(r);
}

}   // namespace llmsim::cli
