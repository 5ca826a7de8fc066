// llmsim scaling: the best layout at each GPU count, strong scaling (fixed global batch) and weak
// scaling (global batch grown with the GPUs) efficiencies relative to the smallest count.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/flag_checks.hpp"
#include "cli/plot.hpp"
#include "cli/progress.hpp"
#include "cli/search_flags.hpp"
#include "cli/search_report.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/limits.hpp"
#include "report/search.hpp"

namespace llmsim::cli {

namespace {

std::vector<int> parse_gpu_list(const std::string& text) {
    std::vector<int> out;
    for (auto v : parse_int_list(text, "--gpus", 1, limits::kGpus)) out.push_back(static_cast<int>(v));
    if (out.size() > 64)   // two searches per count: a work limit
        throw ConfigError(fmt::format("--gpus: {} counts: expected at most 64 GPU counts", out.size()));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}   // namespace

void setup_scaling(CLI::App* cmd, Context& ctx) {
    auto f = std::make_shared<SearchFlags>();
    auto gpus = std::make_shared<std::string>("64,128,256,512,1024,2048,4096");

    add_search_flags(cmd, *f, false);
    // One strong-scaling batch (weak scaling grows it with the GPUs): a range of batches has no meaning here.
    cmd->remove_option(cmd->get_option("--global-batch-range"));
    cmd->add_option("--gpus", *gpus, "GPU counts (default 64,128,...,4096)");
    cmd->add_flag("--json", f->json, "Print JSON instead of a table");
    auto plot_file = std::make_shared<std::string>();
    cmd->add_option("--plot", *plot_file, "Write the strong and weak scaling curves as an SVG chart");
    cmd->callback([f, gpus, plot_file, &ctx] {
        const auto counts = parse_gpu_list(*gpus);
        SearchFlags flags = *f;
        flags.gpus = counts.front();
        auto req = resolve_search_request(flags);
        if (req.space.global_batches.size() != 1)
            throw ConfigError("--global-batch: scaling needs one global batch (the strong-scaling batch)");
        const std::int64_t gb0 = req.space.global_batches.front();
        req.options.top_k = 1;
        // Each count's best few confirmed on the simulator, as search confirms its answer: the rows report
        // the step estimate gives for their layout (the closed form's ranked pp 12 x 6 at 662 ms above the
        // search's pp 6 x 13, which simulate at 643 and 615 ms).
        req.options.confirm = 3;
        req.options.confirm_step_time = report::simulated_step_time;
        struct Row {
            int gpus;
            bool strong_ok = false, weak_ok = false;
            search::SearchEntry strong, weak;
            std::int64_t weak_batch = 0;
        };
        std::vector<Row> rows;
        ProgressBar bar("scaling");
        // The weak-scaling reference: the first count where a layout fits (its strong step is weak's 100%; the
        // batch grows from it, never from a count that fits nothing: 2 GPUs of a 70B model scaled the 8-GPU
        // reference's own weak batch to 4x and read its weak efficiency as 28%).
        int base_gpus = 0;
        for (int p : counts) {
            bar.update(static_cast<double>(rows.size()) / static_cast<double>(counts.size()));
            Row row;
            row.gpus = p;
            auto sp = req.space;
            sp.gpu_counts = {p};
            sp.max_gpus = 0;
            // A count past the search's layout limit, said in scaling's words (no --max-gpus or batch range).
            auto searched = [&](const search::SearchSpace& space) {
                try {
                    return search::run_search(req.base, space, req.options);
                } catch (const search::SearchWorkLimit& e) {
                    throw ConfigError(fmt::format(
                        "--gpus: {}: expected GPU counts whose search has at most {} layouts each (this one has "
                        "{}): fewer GPUs, or fewer layouts (--tp, --pp, --cp, --micro-batch, --recompute, "
                        "--schedules)",
                        p, e.limit, e.layouts));
                }
            };
            const auto strong = searched(sp);
            if (!strong.top.empty()) {
                row.strong_ok = true;
                row.strong = strong.top.front();
                if (base_gpus == 0) base_gpus = p;
            }
            // Weak scaling: the batch grows in proportion to the GPUs from the reference count; at the reference
            // it is the strong step itself.
            row.weak_batch = base_gpus > 0 ? std::max<std::int64_t>(1, gb0 * p / base_gpus) : 0;   // <= 2^24 · 2^20
            if (base_gpus == p) {
                row.weak_ok = true;
                row.weak = row.strong;
            } else if (base_gpus > 0 && row.weak_batch <= limits::kBatch) {   // beyond: no weak point (batch bound)
                sp.global_batches = {row.weak_batch};
                const auto weak = searched(sp);
                if (!weak.top.empty()) {
                    row.weak_ok = true;
                    row.weak = weak.top.front();
                }
            }
            rows.push_back(row);
        }
        const Row* ref = nullptr;
        for (const auto& r : rows)
            if (r.strong_ok) {
                ref = &r;
                break;
            }
        Json out = Json::array();
        bool above_100 = false;
        plot::Series strong_curve{"strong (fixed global batch)", {}, {}},
            weak_curve{"weak (batch grows with GPUs)", {}, {}};
        const double price = req.options.price_per_gpu_hour;
        std::vector<std::string> head{"gpus",       "layout (strong)", "step",      "tok/s/gpu", "MFU",
                                      "strong eff", "weak gbs",        "weak step", "weak eff"};
        if (price > 0) head.push_back("$/Mtok");   // the strong layout's (--price-per-gpu-hour)
        Table t(head);
        t.detail(1);   // under each row when the table would pass the terminal's edge
        for (const auto& r : rows) {
            Json j = {{"gpus", r.gpus}, {"global_batch", gb0}, {"weak_global_batch", nullptr}};
            if (r.weak_batch > 0) j["weak_global_batch"] = r.weak_batch;
            std::vector<std::string> cells{std::to_string(r.gpus)};
            if (r.strong_ok) {
                const double eff =
                    ref ? (ref->gpus * ref->strong.time.step_time_s) / (r.gpus * r.strong.time.step_time_s) : 0.0;
                j["strong"] = search_entry_json(req.base, r.strong, false, req.options.price_per_gpu_hour);
                j["strong_scaling_efficiency"] = eff;
                above_100 |= eff > 1.0005;
                strong_curve.x.push_back(r.gpus);
                strong_curve.y.push_back(100 * eff);
                cells.insert(cells.end(),
                             {layout_brief(r.strong.c), human_seconds(r.strong.time.step_time_s),
                              fixed_commas(r.strong.time.tokens_per_s / r.gpus, 0),
                              fmt::format("{:.1f}%", 100 * r.strong.time.mfu), fmt::format("{:.1f}%", 100 * eff)});
            } else {
                j["strong"] = nullptr;
                cells.insert(cells.end(), {"no layout fits", "", "", "", ""});
            }
            cells.push_back(r.weak_batch > 0 ? std::to_string(r.weak_batch) : std::string("-"));
            if (r.weak_ok && ref) {
                // Ideal weak scaling keeps the step time of the smallest count.
                const double eff = ref->strong.time.step_time_s / r.weak.time.step_time_s;
                j["weak"] = search_entry_json(req.base, r.weak, false, req.options.price_per_gpu_hour);
                j["weak_scaling_efficiency"] = eff;
                above_100 |= eff > 1.0005;
                weak_curve.x.push_back(r.gpus);
                weak_curve.y.push_back(100 * eff);
                cells.insert(cells.end(), {human_seconds(r.weak.time.step_time_s), fmt::format("{:.1f}%", 100 * eff)});
            } else {
                j["weak"] = nullptr;
                cells.insert(cells.end(), {"-", "-"});
            }
            if (price > 0)
                cells.push_back(r.strong_ok
                                    ? fmt::format("{:.2f}", report::cost_per_million_tokens_usd(r.strong, price))
                                    : std::string("-"));
            out.push_back(j);
            t.row(cells);
        }
        if (!plot_file->empty()) {
            plot::LineChart c;
            c.title = fmt::format("Scaling of {} on {} (seq {}, global batch {} at {} GPUs)", req.base.model.name,
                                  req.base.system.name, req.base.training.seq_len, gb0, ref ? ref->gpus : 0);
            c.x = {"GPUs", true};
            c.y = {fmt::format("efficiency vs {} GPUs (%)", ref ? ref->gpus : 0), false};
            c.series = {strong_curve, weak_curve};
            c.reference = 100;
            c.reference_label = "ideal (100%)";
            plot::write(*plot_file, plot::line_chart(c));
        }
        if (!ref && !f->json) {
            std::cout << wrap_text(fmt::format("scaling: {} on {}: no layout fits at any of the GPU counts given",
                                               req.base.model.name, req.base.system.name));
            std::cout << t.str();
            ctx.exit_code = 1;
            return;
        }
        if (f->json) {
            print_json({{"model", req.base.model.name},
                        {"system", req.base.system.name},
                        {"seq_len", req.base.training.seq_len},
                        {"global_batch", gb0},
                        {"reference_gpus", ref ? ref->gpus : 0},
                        {"sizes", out}});
        } else {
            std::cout << wrap_text(fmt::format(
                "scaling: {} on {}, seq {}, global batch {} (strong); efficiency relative to {} GPUs",
                req.base.model.name, req.base.system.name, req.base.training.seq_len, gb0, ref ? ref->gpus : 0));
            std::cout << t.str();
            std::cout << wrap_text(
                "strong eff = (p0·T(p0)) / (p·T(p)) at a fixed global batch; weak eff = T(p0) / "
                "T(p) with the global batch grown in proportion to the GPUs.");
            if (above_100)
                std::cout << wrap_text(
                    "Efficiencies above 100%: each count gets its own best layout, and a larger "
                    "count can afford a better one (less pipeline parallelism and bubble, no "
                    "recompute, more micro-batches per pipeline) than the reference count.");
        }
        ctx.exit_code = ref ? 0 : 1;
    });
}

}   // namespace llmsim::cli
