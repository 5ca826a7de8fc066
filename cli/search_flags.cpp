#include "cli/search_flags.hpp"
#include "cli/common.hpp"

#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "hardware_db/errors.hpp"

namespace llmsim::cli {

void add_search_flags(CLI::App* cmd, SearchFlags& f, bool with_gpus) {
    cmd->add_option("--scenario,-s", f.scenario,
                    "Training scenario; its \"parallel\" block holds constraints, not a layout (flags override)");
    cmd->add_option("--model", f.model, "Model-zoo name or Hugging Face config.json path");
    cmd->add_option("--system", f.system, "System name (llmsim hw list)");
    if (with_gpus) {
        cmd->add_option("--gpus", f.gpus, "Total accelerators (fixed)")->check(CLI::PositiveNumber);
        cmd->add_option("--max-gpus", f.max_gpus, "Search every count 2^k and 3·2^k up to this")
            ->check(CLI::PositiveNumber);
        cmd->add_option("--min-gpus", f.min_gpus, "Smallest count searched with --max-gpus")
            ->check(CLI::PositiveNumber);
    }
    cmd->add_option("--seq-len", f.seq_len, "Sequence length (tokens)")->check(CLI::PositiveNumber);
    cmd->add_option("--global-batch", f.global_batch, "Global batch (sequences)")->check(CLI::PositiveNumber);
    cmd->add_option("--global-batch-range", f.global_batch_range, "a:b, every power of two in [a, b]");
    cmd->add_option("--precision", f.precision, "fp32 | fp16 | bf16 | fp8");
    cmd->add_option("--objective", f.objective, "time (tokens/s) | cost | per-gpu (tokens/s per GPU)");
    cmd->add_option("--threads", f.threads, "Worker threads (default: all cores)")->check(CLI::PositiveNumber);
    cmd->add_option("--price-per-gpu-hour", f.price, "Dollars per GPU-hour (cost columns)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--memory-headroom", f.memory_headroom,
                    "Memory kept free per GPU: a fraction of capacity (< 1) or bytes (>= 1)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--max-tp", f.max_tp, "Largest tensor-parallel size")->check(CLI::PositiveNumber);
    cmd->add_option("--min-pp", f.min_pp, "Fewest pipeline stages")->check(CLI::PositiveNumber);
    cmd->add_option("--max-pp", f.max_pp, "Most pipeline stages")->check(CLI::PositiveNumber);
    cmd->add_flag("--allow-cross-node-tp", f.allow_cross_node_tp, "Let tp exceed the scale-up (NVLink) domain");
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
    cmd->add_option("--sp", f.sp, "Sequence parallelism: true | false (default: both when tp > 1)");
}

namespace {

Json int_array(const std::string& text, const std::string& flag) {
    Json a = Json::array();
    std::size_t pos = 0;
    bool ok = !text.empty();
    while (ok && pos <= text.size()) {
        const auto comma = text.find(',', pos);
        const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        try {
            std::size_t used = 0;
            const long long v = std::stoll(item, &used);
            ok = used == item.size() && v >= 0;
            a.push_back(v);
        } catch (...) {
            ok = false;
        }
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    if (!ok) throw ConfigError(fmt::format("{}: \"{}\": expected a comma-separated list of integers", flag, text));
    return a;
}

Json string_array(const std::string& text) {
    Json a = Json::array();
    std::size_t pos = 0;
    for (;;) {
        const auto comma = text.find(',', pos);
        a.push_back(text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return a;
}

}   // namespace

Json search_scenario_json(const SearchFlags& f, std::string& base_dir) {
    Json j = Json::object();
    base_dir = ".";
    if (!f.scenario.empty()) {
        j = read_scenario_file(f.scenario, base_dir);
        if (!j.is_object()) throw ConfigError(f.scenario + ": expected a JSON object (a training scenario)");
        if (j.contains("inference")) throw ConfigError(f.scenario + "#/inference: the search takes training scenarios");
    } else if (f.model.empty() || f.system.empty()) {
        throw ConfigError("--scenario: missing: expected a scenario file, or at least --model and --system");
    }
    if (!f.model.empty()) j["model"] = f.model;
    if (!f.system.empty()) j["system"] = f.system;
    if (f.gpus) j["gpus"] = *f.gpus;
    if (f.seq_len) j["training"]["seq_len"] = *f.seq_len;
    if (!f.precision.empty()) j["training"]["precision"] = f.precision;
    if (f.global_batch) {
        j["training"]["global_batch"] = *f.global_batch;
        if (j.contains("search") && j["search"].is_object()) j["search"].erase("global_batch");
    }
    if (!f.global_batch_range.empty()) j["search"]["global_batch"] = f.global_batch_range;
    if (f.max_gpus) j["search"]["max_gpus"] = *f.max_gpus;
    if (f.min_gpus) j["search"]["min_gpus"] = *f.min_gpus;
    if (f.max_gpus && !f.gpus) j.erase("gpus");
    if (f.max_tp) j["search"]["max_tp"] = *f.max_tp;
    if (f.min_pp) j["search"]["min_pp"] = *f.min_pp;
    if (f.max_pp) j["search"]["max_pp"] = *f.max_pp;
    if (f.memory_headroom) j["search"]["memory_headroom"] = *f.memory_headroom;
    if (!f.objective.empty()) j["search"]["objective"] = f.objective;
    if (f.price) j["search"]["price_per_gpu_hour"] = *f.price;
    if (f.allow_cross_node_tp) j["search"]["allow_cross_node_tp"] = true;
    const std::pair<const std::string*, const char*> par[] = {
        {&f.tp, "tp"}, {&f.pp, "pp"}, {&f.cp, "cp"}, {&f.ep, "ep"}, {&f.vp, "vp"}, {&f.dp, "dp"}, {&f.zero, "zero"}};
    for (const auto& [v, k] : par)
        if (!v->empty()) j["parallel"][k] = int_array(*v, std::string("--") + k);
    if (!f.schedules.empty()) j["parallel"]["schedule"] = string_array(f.schedules);
    if (!f.sp.empty()) {
        if (f.sp != "true" && f.sp != "false")
            throw ConfigError(fmt::format("--sp: \"{}\": expected true or false", f.sp));
        j["parallel"]["sequence_parallel"] = f.sp == "true";
    }
    if (!f.micro_batch.empty()) j["training"]["micro_batch"] = int_array(f.micro_batch, "--micro-batch");
    if (!f.recompute.empty()) j["training"]["recompute"] = string_array(f.recompute);
    if (!f.offload.empty()) j["training"]["offload"] = string_array(f.offload);
    return j;
}

search::SearchRequest resolve_search_request(const SearchFlags& f) {
    std::string base_dir;
    const Json j = search_scenario_json(f, base_dir);
    try {
        auto req = search::parse_search_request(j, base_dir);
        if (f.threads) req.options.threads = *f.threads;
        return req;
    } catch (const ConfigError& e) {
        // Problems with values that came from flags name the flag.
        const std::vector<std::pair<std::string, bool>> given{{"/model", !f.model.empty()},
                                                              {"/system", !f.system.empty()},
                                                              {"/gpus", f.gpus.has_value()},
                                                              {"/training/seq_len", f.seq_len.has_value()},
                                                              {"/training/precision", !f.precision.empty()},
                                                              {"/training/global_batch", f.global_batch.has_value()},
                                                              {"/search/global_batch", !f.global_batch_range.empty()},
                                                              {"/search/max_gpus", f.max_gpus.has_value()},
                                                              {"/search/objective", !f.objective.empty()},
                                                              {"/parallel/schedule", !f.schedules.empty()},
                                                              {"/training/recompute", !f.recompute.empty()},
                                                              {"/training/offload", !f.offload.empty()},
                                                              {"/training/micro_batch", !f.micro_batch.empty()}};
        const std::map<std::string, std::string> flag_of{{"/model", "--model"},
                                                         {"/system", "--system"},
                                                         {"/gpus", "--gpus"},
                                                         {"/training/seq_len", "--seq-len"},
                                                         {"/training/precision", "--precision"},
                                                         {"/training/global_batch", "--global-batch"},
                                                         {"/search/global_batch", "--global-batch-range"},
                                                         {"/search/max_gpus", "--max-gpus"},
                                                         {"/search/objective", "--objective"},
                                                         {"/parallel/schedule", "--schedules"},
                                                         {"/training/recompute", "--recompute"},
                                                         {"/training/offload", "--offload"},
                                                         {"/training/micro_batch", "--micro-batch"}};
        std::vector<std::string> lines;
        for (auto l : e.problems()) {
            bool mapped = false;
            for (const auto& [ptr, on] : given)
                if (on && l.rfind(ptr, 0) == 0 && l.size() > ptr.size() &&
                    (l[ptr.size()] == ':' || l[ptr.size()] == '/')) {
                    l = flag_of.at(ptr) + l.substr(ptr.size());
                    mapped = true;
                    break;
                }
            if (!mapped && !f.scenario.empty() && l.rfind("/", 0) == 0) l = f.scenario + "#" + l;
            lines.push_back(l);
        }
        throw ConfigError(lines);
    }
}

}   // namespace llmsim::cli
