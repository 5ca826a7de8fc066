#include "cli/search_flags.hpp"
#include "cli/common.hpp"

#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/flag_checks.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/limits.hpp"
#include "hardware_db/units.hpp"

namespace llmsim::cli {

void add_search_flags(CLI::App* cmd, SearchFlags& f, bool with_gpus) {
    cmd->add_option("--scenario,-s", f.scenario,
                    "Training scenario; its \"parallel\" block holds constraints, not a layout (flags override)");
    cmd->add_option("--model", f.model, "Model-zoo name or Hugging Face config.json path");
    cmd->add_option("--system", f.system, "System name (llmsim hw list)");
    if (with_gpus) {
        cmd->add_option("--gpus", f.gpus, "Total accelerators (fixed)")->check(int_in(1, limits::kGpus));
        cmd->add_option("--max-gpus", f.max_gpus, "Search every count 2^k and 3·2^k up to this")
            ->check(int_in(1, limits::kGpus));
        cmd->add_option("--min-gpus", f.min_gpus, "Smallest count searched with --max-gpus")
            ->check(int_in(1, limits::kGpus));
    }
    cmd->add_option("--seq-len", f.seq_len, "Sequence length (tokens)")->check(int_in(1, limits::kSeqLen));
    cmd->add_option("--global-batch", f.global_batch, "Global batch (sequences)")->check(int_in(1, limits::kBatch));
    cmd->add_option("--global-batch-range", f.global_batch_range, "a:b, every power of two in [a, b]");
    cmd->add_option("--precision", f.precision, "fp32 | fp16 | bf16 | fp8");
    cmd->add_option("--objective", f.objective, "time (tokens/s) | cost | per-gpu (tokens/s per GPU)");
    cmd->add_option("--threads", f.threads, "Worker threads (default: all cores)")->check(int_in(1, 4096));
    cmd->add_option("--price-per-gpu-hour", f.price, "Dollars per GPU-hour (cost columns)")->check(number_in(0, 1e9));
    cmd->add_option("--memory-headroom", f.memory_headroom, "Fraction of each GPU's memory kept free (0 to 0.95)")
        ->check(number_in(0, 0.95));
    cmd->add_option("--memory-headroom-bytes", f.memory_headroom_bytes,
                    "Bytes of each GPU's memory kept free (4GiB, 4.3e9, 500MB)");
    cmd->add_option("--max-tp", f.max_tp, "Largest tensor-parallel size")->check(int_in(1, limits::kGpus));
    cmd->add_option("--min-pp", f.min_pp, "Fewest pipeline stages")->check(int_in(1, limits::kGpus));
    cmd->add_option("--max-pp", f.max_pp, "Most pipeline stages")->check(int_in(1, limits::kGpus));
    cmd->add_flag("--allow-cross-node-tp", f.allow_cross_node_tp, "Let tp exceed the scale-up (NVLink) domain");
    cmd->add_option("--activation-offload", f.activation_offload,
                    "Try activation offload on pp-1 layouts too large without recompute (true/false, default false)")
        ->check(true_or_false());
    cmd->add_option("--tp", f.tp, "Allowed tp values (e.g. 4,8)");
    cmd->add_option("--pp", f.pp, "Allowed pp values");
    cmd->add_option("--cp", f.cp, "Allowed cp values");
    cmd->add_option("--ep", f.ep, "Allowed ep values");
    cmd->add_option("--vp", f.vp, "Allowed vp values (model chunks per stage)");
    cmd->add_option("--dp", f.dp, "Allowed dp values");
    cmd->add_option("--zero", f.zero, "Allowed ZeRO stages (e.g. 1,3)");
    cmd->add_option("--micro-batch", f.micro_batch, "Allowed micro-batch sizes");
    cmd->add_option("--recompute", f.recompute, "Allowed recompute policies (none,selective,full)");
    cmd->add_option("--offload", f.offload, "Allowed offload policies (none,optimizer,optimizer+params)");
    cmd->add_option("--schedules", f.schedules, "Allowed schedules (1f1b,interleaved,zero-bubble,gpipe)");
    cmd->add_option(
        "--framework", f.framework,
        fmt::format("{}: the framework every layout runs on (not searched)", fmt::join(framework_names(), " | ")));
    cmd->add_option("--grad-precision", f.grad_precision,
                    "fp32 | fp16 | bf16: main-gradient precision of every layout (default fp32, Megatron's; not "
                    "searched)");
    cmd->add_option("--torch-compile", f.torch_compile,
                    "torch.compile on every layout: true | false (default false; --framework torchtitan, deepspeed "
                    "or llm-foundry; not searched)")
        ->check(true_or_false());
    cmd->add_option("--sp", f.sp, "Sequence parallelism: true | false (default: both when tp > 1)")
        ->check(true_or_false());
    cmd->add_option("--tp-comm-overlap", f.tp_comm_overlap,
                    "TP communication overlap: true | false (default: on where it acts, tp > 1 with SP)")
        ->check(true_or_false());
    cmd->add_option("--overlap-grad-reduce", f.overlap_grad_reduce,
                    "DP gradient-reduce overlap: true | false (default: both with pp > 1 and dp > 1, else on)")
        ->check(true_or_false());
    cmd->add_option("--overlap-param-gather", f.overlap_param_gather,
                    "Distributed-optimizer parameter all-gather overlap: true | false (default: on)")
        ->check(true_or_false());
}

namespace {

void apply_search_flags(const SearchFlags& f, std::string& base_dir, FlagOverlay& ov, Json& j) {
    base_dir = ".";
    if (!f.scenario.empty()) {
        j = read_scenario_file(f.scenario, base_dir);
        if (!j.is_object())
            throw ConfigError(
                fmt::format("{}#/: {}: expected a JSON object (a training scenario)", f.scenario, json_brief(j)));
        if (j.contains("inference"))
            throw ConfigError(
                fmt::format("{}#/inference: {}: expected a training scenario (the search lays out "
                            "training; a serving scenario is estimated with llmsim estimate)",
                            f.scenario, json_brief(j["inference"])));
    } else if (f.model.empty() || f.system.empty()) {
        throw ConfigError("--scenario: missing: expected a scenario file, or at least --model and --system");
    }
    ov.set("/model", "--model", f.model);
    ov.set("/system", "--system", f.system);
    ov.set("/gpus", "--gpus", f.gpus);
    ov.set("/training/seq_len", "--seq-len", f.seq_len);
    ov.set("/training/precision", "--precision", f.precision);
    if (f.global_batch) {
        ov.set("/training/global_batch", "--global-batch", f.global_batch);
        if (j.contains("search") && j["search"].is_object()) j["search"].erase("global_batch");
    }
    ov.set("/search/global_batch", "--global-batch-range", f.global_batch_range);
    ov.set("/search/max_gpus", "--max-gpus", f.max_gpus);
    ov.set("/search/min_gpus", "--min-gpus", f.min_gpus);
    if (f.max_gpus && !f.gpus) j.erase("gpus");
    ov.set("/search/max_tp", "--max-tp", f.max_tp);
    ov.set("/search/min_pp", "--min-pp", f.min_pp);
    ov.set("/search/max_pp", "--max-pp", f.max_pp);
    ov.set("/search/memory_headroom", "--memory-headroom", f.memory_headroom);
    if (!f.memory_headroom_bytes.empty())
        ov.set("/search/memory_headroom_bytes", "--memory-headroom-bytes",
               Json(quantity_in(f.memory_headroom_bytes, "--memory-headroom-bytes", QuantityKind::bytes, 0,
                                limits::kMaxBytes)));
    ov.set("/search/objective", "--objective", f.objective);
    ov.set("/search/price_per_gpu_hour", "--price-per-gpu-hour", f.price);
    if (f.allow_cross_node_tp) ov.set("/search/allow_cross_node_tp", "--allow-cross-node-tp", Json(true));
    ov.set("/search/activation_offload", "--activation-offload", f.activation_offload);
    const std::pair<const std::string*, const char*> par[] = {
        {&f.tp, "tp"}, {&f.pp, "pp"}, {&f.cp, "cp"}, {&f.ep, "ep"}, {&f.vp, "vp"}, {&f.dp, "dp"}, {&f.zero, "zero"}};
    for (const auto& [v, k] : par)
        if (!v->empty()) {
            const std::string flag = std::string("--") + k;
            ov.set(std::string("/parallel/") + k, flag, Json(parse_int_list(*v, flag, 0, INT32_MAX)));
        }
    if (!f.schedules.empty()) ov.set("/parallel/schedule", "--schedules", Json(split_list(f.schedules)));
    ov.set("/parallel/framework", "--framework", f.framework);
    ov.set("/training/grad_precision", "--grad-precision", f.grad_precision);
    const std::tuple<const std::string*, const char*, const char*> bools[] = {
        {&f.sp, "--sp", "sequence_parallel"},
        {&f.tp_comm_overlap, "--tp-comm-overlap", "tp_comm_overlap"},
        {&f.overlap_grad_reduce, "--overlap-grad-reduce", "overlap_grad_reduce"},
        {&f.overlap_param_gather, "--overlap-param-gather", "overlap_param_gather"},
        {&f.torch_compile, "--torch-compile", "torch_compile"}};
    for (const auto& [v, flag, key] : bools)
        if (!v->empty()) {
            if (*v != "true" && *v != "false")
                throw ConfigError(fmt::format("{}: \"{}\": expected true or false", flag, *v));
            ov.set(std::string("/parallel/") + key, flag, Json(*v == "true"));
        }
    if (!f.micro_batch.empty())
        ov.set("/training/micro_batch", "--micro-batch",
               Json(parse_int_list(f.micro_batch, "--micro-batch", 0, INT64_MAX)));
    if (!f.recompute.empty()) ov.set("/training/recompute", "--recompute", Json(split_list(f.recompute)));
    if (!f.offload.empty()) ov.set("/training/offload", "--offload", Json(split_list(f.offload)));
}

}   // namespace

search::SearchRequest resolve_search_request(const SearchFlags& f) {
    std::string base_dir;
    Json j = Json::object();
    FlagOverlay ov(j);
    apply_search_flags(f, base_dir, ov, j);
    try {
        auto req = search::parse_search_request(j, base_dir);
        if (f.threads) req.options.threads = *f.threads;
        return req;
    } catch (const ConfigError& e) {
        throw ov.rename(e, f.scenario);
    }
}

}   // namespace llmsim::cli
