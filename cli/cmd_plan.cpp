// llmsim plan: from a budget (FLOPs, GPU-hours or days on N GPUs) to a compute-optimal model
// (Chinchilla), its shape, the best layout (search), the time, GPU-hours, cost and MFU, and with a
// node MTBF Daly's checkpoint interval, expected interruptions and goodput (docs/search.md).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "app/search/plan.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/flag_checks.hpp"
#include "cli/progress.hpp"
#include "cli/search_report.hpp"
#include "cost_models/model_params.hpp"
#include "cost_models/scaling_laws.hpp"
#include "hardware_db/database.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/limits.hpp"
#include "hardware_db/units.hpp"
#include "report/search.hpp"

namespace llmsim::cli {

void setup_plan(CLI::App* cmd, Context& ctx) {
    struct Flags {
        std::string compute, system, fit = "approach1", precision;   // precision: the chip's 16-bit one
        std::optional<double> gpu_hours, days, price, mtbf_node_hours, checkpoint_write_s;
        double restart_s = 0;
        std::optional<int> gpus, threads;
        std::int64_t seq_len = 4096;
        std::optional<std::int64_t> global_batch;
        std::int64_t vocab = 32000;
        bool json = false;
    };
    auto f = std::make_shared<Flags>();

    auto* oc = cmd->add_option("--compute", f->compute, "Budget in training FLOPs (e.g. 5.76e23)");
    auto* oh = cmd->add_option("--gpu-hours", f->gpu_hours, "Budget in GPU-hours")->check(number_in(0, 1e15, false));
    auto* od =
        cmd->add_option("--days", f->days, "Budget in days of wall time on --gpus")->check(number_in(0, 1e9, false));
    oc->excludes(oh)->excludes(od);
    oh->excludes(od);
    cmd->add_option("--system", f->system, "System name (llmsim hw list)")->required();
    cmd->add_option("--gpus", f->gpus, "GPUs to train on")->required()->check(int_in(1, limits::kGpus));
    cmd->add_option("--price-per-gpu-hour", f->price, "Dollars per GPU-hour")->check(number_in(0, 1e9));
    cmd->add_option("--fit", f->fit, "approach1 (default) | hoffmann | hoffmann-unrounded | epoch");
    cmd->add_option("--seq-len", f->seq_len, "Sequence length (default 4096)")->check(int_in(1, limits::kSeqLen));
    cmd->add_option("--global-batch", f->global_batch,
                    "Global batch in sequences (default: the budget's compute-optimal batch, DeepSeek LLM's "
                    "0.292 C^0.3271 tokens, a power of two)")
        ->check(int_in(1, limits::kBatch));
    cmd->add_option("--precision", f->precision, "bf16 (default; fp16 on chips without bf16) | fp8 | fp16");
    cmd->add_option("--vocab", f->vocab, "Vocabulary of the designed model (default 32000)")
        ->check(int_in(1, limits::kVocab));
    cmd->add_option("--mtbf-node-hours", f->mtbf_node_hours,
                    "Mean time between failures of one node (hours; default: BLOOM's 1.5 GPU failures a week per "
                    "400 GPUs, docs/search.md)")
        ->check(number_in(0, 1e9, false));
    cmd->add_option("--checkpoint-write-s", f->checkpoint_write_s,
                    "Seconds to write one checkpoint (with it: Daly's interval, goodput and wall days)")
        ->check(number_in(0, 1e9, false));
    cmd->add_option("--restart-s", f->restart_s, "Seconds to restart after a failure (default 0)")
        ->check(number_in(0, 1e9));
    cmd->add_option("--threads", f->threads, "Search threads (default: all cores)")->check(int_in(1, 4096));
    auto headroom = std::make_shared<double>(0.0);
    cmd->add_option("--memory-headroom", *headroom, "Fraction of each GPU's memory kept free (0 to 0.95)")
        ->check(number_in(0, 0.95));
    cmd->add_flag("--json", f->json, "Print JSON instead of text");
    cmd->callback([f, headroom, &ctx] {
        ScalingFit fit;
        if (!scaling_fit_from_string(f->fit, fit))
            throw ConfigError(
                fmt::format("--fit: \"{}\": expected approach1, hoffmann, hoffmann-unrounded or epoch", f->fit));
        const SystemSpec system = Database::builtin().system(f->system);
        if (f->precision.empty()) f->precision = to_string(system.gpu.half_precision());
        const auto prec = precision_from_string(f->precision);
        if (!prec || (*prec != Precision::bf16 && *prec != Precision::fp16 && *prec != Precision::fp8 &&
                      *prec != Precision::fp32))
            throw ConfigError(fmt::format("--precision: \"{}\": expected bf16, fp16, fp8 or fp32", f->precision));
        if (f->restart_s > 0 && !f->checkpoint_write_s)
            throw ConfigError(
                fmt::format("--restart-s: {}: expected together with --checkpoint-write-s (the restart "
                            "is priced in the goodput it gives)",
                            f->restart_s));
        search::PlanRequest q;
        q.system = system;
        q.precision = *prec;
        q.seq_len = f->seq_len;
        q.global_batch = f->global_batch.value_or(0);
        q.vocab = f->vocab;
        q.fit = fit;
        if (q.system.gpu.peak(*prec) <= 0)
            throw ConfigError(
                fmt::format("--precision: \"{}\": expected a precision {} supports", f->precision, q.system.gpu.name));
        const int gpus = *f->gpus;
        q.gpus = gpus;
        std::string budget_kind;
        if (!f->compute.empty()) {
            budget_kind = "compute_flops";
            q.budget = search::PlanRequest::Budget::compute_flops;
            q.budget_value = quantity_in(f->compute, "--compute", QuantityKind::count, 1, limits::kMaxFlops);
        } else if (f->gpu_hours) {
            budget_kind = "gpu_hours";
            q.budget = search::PlanRequest::Budget::gpu_hours;
            q.budget_value = *f->gpu_hours;
        } else if (f->days) {
            budget_kind = "days";
            q.budget = search::PlanRequest::Budget::days;
            q.budget_value = *f->days;
        } else {
            throw ConfigError("--compute: missing: expected one of --compute FLOPS, --gpu-hours H, --days D");
        }
        q.options.threads = f->threads.value_or(0);
        q.options.price_per_gpu_hour = f->price.value_or(0);
        q.options.confirm_step_time = report::simulated_step_time;   // the planned layout only (plan.cpp)
        q.memory_headroom_fraction = *headroom;
        ProgressBar bar("plan (each search of the bisection)");
        q.options.progress = [&bar](double done) { bar.update(done); };
        const std::string budget_flag = budget_kind == "compute_flops" ? "--compute"
                                        : budget_kind == "gpu_hours"   ? "--gpu-hours"
                                                                       : "--days";
        const search::PlanResult plan = [&] {
            try {
                return search::plan(q);
            } catch (const ConfigError& e) {   // the work limit names the budget: here, its flag
                std::vector<std::string> lines;
                for (const auto& l : e.problems())
                    lines.push_back(l.rfind("budget:", 0) == 0 ? budget_flag + l.substr(6) : l);
                throw ConfigError(lines);
            }
        }();
        const auto& pt = plan.chinchilla;
        const auto& model = plan.model;
        const auto& base = plan.base;
        const std::int64_t gb = plan.global_batch;
        const double budget_value = q.budget_value;
        if (plan.search.top.empty()) {
            std::cerr << fmt::format(
                "error: no layout of the {:.3g}-parameter model fits {} GPUs of {}; try more GPUs\n", pt.params, gpus,
                base.system.name);
            ctx.exit_code = 1;
            return;
        }
        const auto& best = plan.search.top.front();
        const double tps = plan.tokens_per_s;
        const double train_s = plan.train_s;
        const double gpu_hours = plan.gpu_hours;
        const double actual_params = count_parameters(model).total;
        Json j = {{"budget", {{budget_kind, budget_value}, {"iterations", plan.iterations}}},
                  {"chinchilla",
                   {{"fit", to_string(fit)},
                    {"params", pt.params},
                    {"tokens", pt.tokens},
                    {"flops", pt.flops},
                    {"loss", pt.loss},
                    {"tokens_per_param", pt.tokens_per_param()}}},
                  {"model", to_json(model)},
                  {"model_params", actual_params},
                  {"system", base.system.name},
                  {"gpus", gpus},
                  {"layout", search_entry_json(base, best, true, q.options.price_per_gpu_hour)},
                  {"training",
                   {{"tokens", pt.tokens},
                    {"global_batch_source", f->global_batch ? "--global-batch" : "compute-optimal (DeepSeek LLM fit)"},
                    {"steps", pt.tokens / (static_cast<double>(gb) * f->seq_len)},
                    {"tokens_per_s", tps},
                    {"mfu", best.time.mfu},
                    {"days", train_s / 86400.0},
                    {"gpu_hours", gpu_hours}}}};
        if (f->price) j["training"]["cost_usd"] = gpu_hours * *f->price;
        // A time budget the plan cannot spend: no larger compute-optimal model trains on these GPUs (the
        // largest that fits their memory, or the largest design), which 1e9 days on one H100 answered with a
        // 761-day plan and no word.
        const double budget_s = budget_kind == "days"        ? budget_value * 86400.0
                                : budget_kind == "gpu_hours" ? budget_value * 3600.0 / gpus
                                                             : 0.0;
        const double used = budget_s > 0 ? train_s / budget_s : 0.0;
        if (budget_s > 0) j["budget"]["used_fraction"] = used;
        // Days, GPU-hours and cost scale with the step: the published runs' range of step times (how sure).
        const auto range = report::search_step_time_range(base, best);
        if (range) {
            j["training"]["days_interval"] = {train_s / 86400.0 * range->low_ratio,
                                              train_s / 86400.0 * range->high_ratio};
            j["training"]["gpu_hours_interval"] = {gpu_hours * range->low_ratio, gpu_hours * range->high_ratio};
            if (f->price)
                j["training"]["cost_usd_interval"] = {gpu_hours * *f->price * range->low_ratio,
                                                      gpu_hours * *f->price * range->high_ratio};
        }
        // Failures: every plan says how often the job stops (the stated node MTBF, else BLOOM's rate); with a
        // checkpoint write time, what they cost (Daly 2006).
        CheckpointPlan ck;
        const int gpus_per_node = std::max(1, base.system.gpus_per_node);
        const int nodes = (gpus + gpus_per_node - 1) / gpus_per_node;
        const double node_mtbf_h = f->mtbf_node_hours.value_or(default_node_mtbf_hours(gpus_per_node));
        const double job_mtbf_h = node_mtbf_h / nodes;
        j["reliability"] = {
            {"nodes", nodes},
            {"node_mtbf_hours", node_mtbf_h},
            {"node_mtbf_source", f->mtbf_node_hours ? "--mtbf-node-hours" : "BLOOM (kGpuFailuresPerHour)"},
            {"job_mtbf_hours", job_mtbf_h},
            {"interruptions_per_day", 24.0 / job_mtbf_h},
            {"expected_interruptions", train_s / 3600.0 / job_mtbf_h}};
        if (f->checkpoint_write_s) {
            ck = plan_checkpoints(train_s, nodes, node_mtbf_h * 3600.0, *f->checkpoint_write_s, f->restart_s);
            auto& r = j["reliability"];
            r["checkpoint_write_s"] = *f->checkpoint_write_s;
            r["restart_s"] = f->restart_s;
            r["checkpoint_interval_s"] = ck.interval_s;
            r["checkpoints"] = ck.checkpoints;
            r["goodput"] = ck.goodput;
            r["stalls"] = ck.stalls;
            if (!ck.stalls) {   // (a job that does not progress has no expected interruptions or wall time)
                r["expected_interruptions"] = ck.expected_interruptions;
                r["wall_days"] = ck.wall_s / 86400.0;
                r["wall_gpu_hours"] = ck.wall_s / 3600.0 * gpus;
                if (f->price) r["wall_cost_usd"] = ck.wall_s / 3600.0 * gpus * *f->price;
            } else {
                r.erase("expected_interruptions");
            }
        }
        if (f->json) {
            print_json(j);
        } else {
            std::string out;
            out += wrap_text(fmt::format("plan: {} GPUs of {} ({}), budget {} = {:.4g}", gpus, base.system.name,
                                         to_string(*prec), budget_kind, budget_value));
            out += wrap_text(fmt::format(
                "compute-optimal ({}): N = {} parameters, D = {} tokens ({:.1f} per parameter), C = {:.3g} FLOPs, loss "
                "{:.3f}",
                to_string(fit), human_count(pt.params), human_count(pt.tokens), pt.tokens_per_param(), pt.flops,
                pt.loss));
            out += wrap_text(fmt::format(
                "model shape: {} layers, hidden {}, {} heads ({} KV), SwiGLU ffn {}, vocab {} = {} parameters",
                model.layers, model.hidden, model.heads, model.kv_heads, model.ffn_hidden, model.vocab,
                human_count(actual_params)));
            out += wrap_text(fmt::format("best layout: {}, global batch {} x {} tokens{}", layout_brief(best.c), gb,
                                         f->seq_len,
                                         f->global_batch ? ""
                                                         : fmt::format(" (the compute-optimal batch for {:.3g} FLOPs, "
                                                                       "DeepSeek LLM's fit; --global-batch)",
                                                                       pt.flops)));
            out += wrap_text(fmt::format("step {}, {} tokens/s ({} per GPU), MFU {:.1f}%, memory {} per GPU",
                                         human_seconds(best.time.step_time_s), fixed_commas(tps, 0),
                                         fixed_commas(tps / gpus, 0), 100 * best.time.mfu,
                                         gib(best.memory.total_bytes, 1)));
            // Below 5% free, allocator fragmentation and NCCL buffers the model leaves out can tip it over.
            const double capacity = base.system.gpu.hbm_capacity_bytes;
            const double free_fraction = capacity > 0 ? 1.0 - best.memory.total_bytes / capacity : 1.0;
            if (free_fraction < 0.05)
                out += wrap_text(
                    fmt::format("warning: this layout leaves {:.1f}% of the {} per GPU free (< 5%); rerun with "
                                "--memory-headroom 0.1 to keep a margin",
                                100 * free_fraction, gib(capacity, 0)));
            std::string training =
                fmt::format("training: {:.1f} days, {} GPU-hours", train_s / 86400.0, human_count(gpu_hours));
            if (f->price) training += fmt::format(", ${}", human_count(gpu_hours * *f->price));
            if (range)
                training += fmt::format(" ({:.1f}-{:.1f} days from the range the {} measured against llmsim)",
                                        train_s / 86400.0 * range->low_ratio, train_s / 86400.0 * range->high_ratio,
                                        range->basis);
            out += wrap_text(training);
            if (budget_s > 0 && used < 0.5)
                out += wrap_text(fmt::format(
                    "note: the plan spends {:.2g}% of the {} budget: no larger compute-optimal model trains on {} GPUs "
                    "of {} (their memory, or the largest design), so the rest of the budget buys nothing here; more "
                    "GPUs or --compute say what it would",
                    100 * used, budget_flag, gpus, base.system.name));
            const std::string mtbf_from =
                f->mtbf_node_hours ? std::string("--mtbf-node-hours")
                                   : std::string("BLOOM's 1.5 GPU failures a week per 400 GPUs; --mtbf-node-hours");
            if (f->checkpoint_write_s && ck.stalls) {
                out += wrap_text(fmt::format(
                    "reliability: {} nodes, job MTBF {} ({}): the job does not progress, a failure comes before "
                    "a checkpoint of {} can be written and kept (goodput 0); expected fewer nodes, a longer "
                    "MTBF or a faster checkpoint",
                    nodes, human_seconds(job_mtbf_h * 3600.0), mtbf_from, human_seconds(*f->checkpoint_write_s)));
            } else if (f->checkpoint_write_s) {
                out += wrap_text(fmt::format(
                    "reliability: {} nodes, job MTBF {:.3g} h ({}); checkpoint every {} (Daly's optimum, about "
                    "sqrt(2·δ·M)); {:.4g} interruptions expected; goodput {:.3g}%; {:.4g} days wall",
                    nodes, job_mtbf_h, mtbf_from, human_seconds(ck.interval_s), ck.expected_interruptions,
                    100 * ck.goodput, ck.wall_s / 86400.0));
                if (ck.goodput < 0.5)
                    out += wrap_text(
                        "warning: failures and checkpoints take more than half the wall time; a faster (sharded, "
                        "asynchronous or in-memory) checkpoint, a shorter restart or fewer nodes buy it back");
            } else {
                out += wrap_text(fmt::format(
                    "failures: {} nodes, job MTBF {:.3g} h ({}): {:.3g} interruptions a day, {:.3g} over the "
                    "training; --checkpoint-write-s prices them (goodput, wall days)",
                    nodes, job_mtbf_h, mtbf_from, 24.0 / job_mtbf_h, train_s / 3600.0 / job_mtbf_h));
            }
            std::cout << out;
        }
        ctx.exit_code = 0;
    });
}

}   // namespace llmsim::cli
