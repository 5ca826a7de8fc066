// llmsim run FILE...: scenarios at scale (docs/runs.md). Each file holds one scenario, a list
// ({"scenarios": [...]}) or a sweep ("sweep" / "zip" over dotted paths); training, serving and search
// scenarios (a "search" block) alike. The batch room (batch/) expands, shards, runs the thread pool
// and formats rows; this file gives it the evaluator (report/run.hpp: the same calls as estimate and
// search) and prints.
// llmsim merge PIECE...: joins the outputs of `run --shard K/N` back into the unsharded output.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "batch/batch.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/flag_checks.hpp"
#include "cli/plot.hpp"
#include "cli/progress.hpp"
#include "cost_models/memory.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/input_file.hpp"
#include "hardware_db/limits.hpp"
#include "hardware_db/scenario.hpp"
#include "report/run.hpp"

namespace llmsim::cli {

namespace {

// run --plot: throughput per GPU (training tokens, or serving output tokens) against the first swept
// path with numeric values, one series per combination of the other swept values.
class SweepPlot {
public:
    explicit SweepPlot(const batch::Plan& plan) : plan_(plan) {}
    void add(const batch::Row& row) {
        if (!row.ok) return;
        const Json& r = row.result;
        const bool serving = r.contains("output_tokens_per_s_per_gpu");
        const char* key = serving ? "output_tokens_per_s_per_gpu" : "tokens_per_s_per_gpu";
        if (!r.contains(key)) return;
        if (metric_.empty()) metric_ = key;
        if (metric_ != key) return;
        if (x_.empty())
            for (const auto& p : plan_.swept)
                if (row.item->swept.contains(p) && row.item->swept[p].is_number()) {
                    x_ = p;
                    break;
                }
        if (x_.empty() || !row.item->swept.contains(x_) || !row.item->swept[x_].is_number()) return;
        std::string label;
        for (const auto& [k, v] : row.item->swept.items())
            if (k != x_)
                label += fmt::format("{}{}={}", label.empty() ? "" : ", ", k.substr(k.rfind('.') + 1),
                                     v.is_string() ? v.get<std::string>() : v.dump());
        auto it = std::find_if(series_.begin(), series_.end(), [&](const auto& s) { return s.name == label; });
        if (it == series_.end()) it = series_.insert(series_.end(), plot::Series{label, {}, {}});
        it->x.push_back(row.item->swept[x_].get<double>());
        it->y.push_back(r[key].get<double>());
    }
    std::string svg() const {
        if (x_.empty())
            throw ConfigError("--plot: no successful row has a numeric swept value: expected a sweep over a number");
        plot::LineChart c;
        c.title = fmt::format("{} against {}",
                              metric_ == "tokens_per_s_per_gpu" ? "Training throughput" : "Serving throughput", x_);
        double lo = 0, hi = 0;
        for (const auto& s : series_)
            for (double x : s.x) {
                lo = lo == 0 ? x : std::min(lo, x);
                hi = std::max(hi, x);
            }
        c.x = {x_, lo > 0 && hi / lo >= 4};
        c.y = {metric_ == "tokens_per_s_per_gpu" ? "training tokens/s per GPU" : "output tokens/s per GPU", false};
        c.series = series_;
        if (c.series.size() == 1 && c.series[0].name.empty()) c.series[0].name = metric_;
        return plot::line_chart(c);
    }

private:
    const batch::Plan& plan_;
    std::string x_, metric_;
    std::vector<plot::Series> series_;
};

}   // namespace

void setup_run(CLI::App* cmd, Context& ctx) {
    struct Flags {
        std::vector<std::string> files;
        std::string output, shard, format, plot;
        bool json = false, fast = false, strided = false;
        int threads = 0;
    };
    auto f = std::make_shared<Flags>();
    cmd->add_option("files", f->files, "Run files: a scenario, {\"scenarios\": [...]} or a sweep")->required();
    cmd->add_option("-o,--output", f->output, "Write one row per scenario: FILE.jsonl (JSON lines) or FILE.csv");
    cmd->add_option("--format", f->format, "Row format when -o does not say (jsonl | csv)")
        ->check(CLI::IsMember({"jsonl", "csv"}));
    cmd->add_option("--shard", f->shard, "Run slice K of N (1 <= K <= N; contiguous unless --strided)");
    cmd->add_flag("--strided", f->strided, "Shards take every N-th scenario instead of a contiguous block");
    cmd->add_option("-j,--threads", f->threads, "Worker threads (default: all cores)")
        ->check(int_in(1, limits::kThreads));
    cmd->add_flag("--json", f->json, "Print {\"results\": [rows]} on stdout");
    cmd->add_flag("--fast", f->fast, "Closed-form step time (no discrete-event simulation)");
    cmd->add_option("--plot", f->plot, "Write throughput per GPU against the first swept path as an SVG chart");
    cmd->callback([f, &ctx] {
        batch::Plan plan = batch::expand_files(f->files);
        if (!f->plot.empty()) {
            // Decided before anything runs or prints: the chart needs a swept number on its x axis.
            const bool numeric = plan.items.any_swept_number();
            if (!numeric)
                throw ConfigError(
                    fmt::format("--plot: {}: the run files sweep no number: expected a sweep over a "
                                "number (the chart's x axis)",
                                f->plot));
        }
        // The chart's file is tried before anything runs: a path that cannot be written failed after every row
        // was written to -o and the summary printed (exit 2 with output). A file it creates is removed again.
        if (!f->plot.empty()) {
            std::error_code ec;
            const bool existed = std::filesystem::exists(f->plot, ec);
            {
                std::ofstream probe(f->plot, std::ios::binary | std::ios::app);
                if (!probe) throw ConfigError(fmt::format("--plot: {}: cannot be written", f->plot));
            }
            if (!existed) std::filesystem::remove(f->plot, ec);
        }
        if (f->json && !f->output.empty())
            throw ConfigError(
                fmt::format("--json: with -o {}: expected one of them (--json prints the rows on stdout "
                            "as {{\"results\": [rows]}}; -o writes them as JSON lines or CSV)",
                            f->output));
        batch::Shard shard;
        if (!f->shard.empty()) shard = batch::parse_shard(f->shard);
        shard.strided = f->strided;
        const auto indices = batch::shard_indices(plan.items.size(), shard);

        app::EstimateOptions opt;
        opt.fast = f->fast;
        batch::RunOptions ro;
        ro.threads = f->threads;
        ro.format = !f->format.empty() ? (f->format == "csv" ? batch::Format::csv : batch::Format::jsonl)
                                       : batch::format_of(f->output);
        ProgressBar bar("run");
        ro.progress = [&bar](double done) { bar.update(done); };
        const bool to_stdout = f->output == "-";
        Json results = Json::array();
        Table t({"#", "scenario", "kind", "step / TTFT", "MFU / TPOT", "tokens/s per GPU", "memory per GPU", "fits"});
        // A failed scenario's message goes under the table, wrapped, not into a cell (it widened the table to
        // ~220 columns and squeezed the names to 8).
        std::vector<std::string> errors;
        auto table_row = [&](const batch::Row& row) {
            if (f->json) {
                results.push_back(Json::parse(batch::jsonl_row(row)));
                return;
            }
            // A sweep's point is named by its swept values (last key of each path), else by its name.
            const Json& sc = row.scenario;
            std::string name;
            for (const auto& [k, v] : row.item->swept.items())
                name += fmt::format("{}{}={}", name.empty() ? "" : " ", k.substr(k.rfind('.') + 1),
                                    v.is_string() ? v.get<std::string>() : v.dump());
            if (name.empty() && sc.is_object() && sc.contains("name") && sc["name"].is_string())
                name = sc["name"].get<std::string>();
            if (name.empty()) name = row.item->origin;
            if (!row.ok) {
                t.row({std::to_string(row.index), name, "error", "(below)", "", "", "", ""});
                errors.push_back(fmt::format("#{}: {}", row.index, row.error));
                return;
            }
            const Json& r = row.result;
            const std::string mem = gib(r["memory"].value("total_bytes", 0.0));
            const std::string fits = r["memory"].value("fits", true) ? "yes" : "NO";
            if (r.contains("does_not_fit"))
                t.row({std::to_string(row.index), name, "serving", "does not fit", "", "", mem, fits});
            else if (r.contains("slo_capacity_qps") && !r.contains("ttft_s"))
                t.row({std::to_string(row.index), name, "serving", "no rate meets the SLO", "", "", mem, fits});
            else if (r.contains("ttft_s"))
                t.row({std::to_string(row.index), name, "serving", human_seconds(r["ttft_s"].get<double>()),
                       human_seconds(r["tpot_s"].get<double>()),
                       with_commas(std::llround(r["output_tokens_per_s_per_gpu"].get<double>())), mem, fits});
            else
                t.row({std::to_string(row.index), name, r.contains("layout") ? "search" : "training",
                       human_seconds(r["step_time_s"].get<double>()),
                       fmt::format("{:.1f}%", 100 * r["mfu"].get<double>()),
                       with_commas(std::llround(r["tokens_per_s_per_gpu"].get<double>())), mem, fits});
        };
        SweepPlot sweep_plot(plan);
        ro.on_row = [&](const batch::Row& row) {
            if (!f->plot.empty()) sweep_plot.add(row);
            if (f->output.empty()) table_row(row);
        };
        auto eval = [opt](const batch::Item& item) { return report::evaluate_row(item, opt); };
        batch::RunSummary sum;
        if (!f->output.empty() && !to_stdout) {
            std::ofstream out(f->output, std::ios::binary);
            if (!out) throw ConfigError(fmt::format("-o: {}: cannot be written", f->output));
            sum = batch::run(plan, indices, eval, ro, out);
            check_written(out, f->output, "-o");
            std::cout << fmt::format("{} scenarios ({} failed) -> {}\n", sum.rows, sum.failed, f->output);
        } else if (to_stdout) {
            sum = batch::run(plan, indices, eval, ro, std::cout);
        } else {
            std::ostringstream sink;
            sum = batch::run(plan, indices, eval, ro, sink);
            // The chart before the table: a chart that cannot be drawn or written exits before printing.
            if (!f->plot.empty() && sum.failed < sum.rows) plot::write(f->plot, sweep_plot.svg());
            if (f->json)
                print_json({{"results", results}});
            else {
                std::cout << t.left(1).left(2).str();
                for (const auto& e : errors) std::cout << wrap_text(e);
            }
        }
        if (!f->plot.empty() && sum.failed == sum.rows)
            std::cerr << fmt::format("--plot: {}: not written: no scenario succeeded\n", f->plot);
        else if (!f->plot.empty() && (!f->output.empty() || to_stdout))
            plot::write(f->plot, sweep_plot.svg());
        if (sum.threads_started < sum.threads_asked)
            std::cerr << fmt::format("note: -j {}: {} worker threads started ({}); the run used them\n",
                                     sum.threads_asked, sum.threads_started, sum.thread_error);
        if (sum.failed > 0 && !to_stdout)
            std::cerr << fmt::format("{} of {} scenarios failed ({})\n", sum.failed, sum.rows,
                                     f->output.empty() && !f->json ? "why: under the table" : "their rows say why");
        ctx.exit_code = sum.failed > 0 ? 1 : 0;
    });
}

namespace {

// merge --json: the merged JSON-lines rows as `run --json` prints a run's rows, {"results": [ROW, ...]} with
// print_json's indentation, streamed a row at a time (each row printed alone, then indented as the array's
// element). CSV pieces are refused before anything is written: their header is the first line.
class ResultsWriter {
public:
    explicit ResultsWriter(std::ostream& out) : out_(out) {}
    void operator()(const std::string& line) {
        if (line.empty() || line.front() != '{')
            throw ConfigError(
                "--json: the pieces are CSV rows: expected JSON lines (llmsim run --shard K/N -o FILE.jsonl)");
        const Json parsed = Json::parse(line, nullptr, false);
        if (parsed.is_discarded())
            throw ConfigError("--json: a row is not JSON: expected the JSON lines of llmsim run");
        const std::string row = parsed.dump(2, ' ', false, Json::error_handler_t::replace);
        out_ << (rows_++ == 0 ? "{\n  \"results\": [\n" : ",\n") << "    ";
        for (const char c : row) {
            out_ << c;
            if (c == '\n') out_ << "    ";
        }
    }
    void finish() { out_ << (rows_ == 0 ? "{\n  \"results\": []\n}\n" : "\n  ]\n}\n"); }

private:
    std::ostream& out_;
    std::size_t rows_ = 0;
};

}   // namespace

void setup_merge(CLI::App* cmd, Context& ctx) {
    auto files = std::make_shared<std::vector<std::string>>();
    auto output = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("pieces", *files, "Outputs of llmsim run --shard K/N (any order)")->required();
    cmd->add_option("-o,--output", *output, "Write the merged rows here (default: stdout)");
    cmd->add_flag("--json", *json,
                  "Print the merged rows (JSON lines pieces) as run --json prints them: {\"results\": [rows]}");
    cmd->callback([files, output, json, &ctx] {
        // Streamed (batch::merge_files): one row per piece in memory, whatever the pieces' sizes.
        for (const auto& file : *files) (void)check_input_file(file, INT64_MAX, "an output of llmsim run");
        const auto open = [&](std::size_t i) -> std::unique_ptr<std::istream> {
            auto in = std::make_unique<std::ifstream>((*files)[i], std::ios::binary);
            if (!*in)
                throw ConfigError(fmt::format("{}: cannot be read: expected an output of llmsim run", (*files)[i]));
            return in;
        };
        const auto merge_to = [&](std::ostream& out) {
            if (!*json) return batch::merge_files(*files, open, out);
            ResultsWriter results(out);
            batch::merge_files(*files, open, [&](const std::string& line) { results(line); });
            results.finish();
        };
        if (output->empty()) {
            merge_to(std::cout);
        } else {
            std::ofstream out(*output, std::ios::binary);
            if (!out) throw ConfigError(fmt::format("-o: {}: cannot be written", *output));
            try {
                merge_to(out);   // writes only once every piece checked out
            } catch (const ConfigError&) {
                out.close();
                std::error_code ec;
                if (std::filesystem::is_regular_file(*output, ec)) std::filesystem::remove(*output, ec);
                throw;
            }
            check_written(out, *output, "-o");
        }
        ctx.exit_code = 0;
    });
}

}   // namespace llmsim::cli
