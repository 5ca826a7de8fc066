#include "cli/common.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "hardware_db/errors.hpp"
#include "hardware_db/scenario.hpp"

namespace llmsim::cli {

void add_scenario_flags(CLI::App* cmd, ScenarioFlags& f, bool with_json) {
    cmd->add_option("--scenario,-s", f.scenario, "Scenario JSON file (flags below override its values)");
    if (with_json) cmd->add_flag("--json", f.json, "Print JSON instead of tables");
    cmd->add_option("--model", f.model, "Model-zoo name or Hugging Face config.json path");
    cmd->add_option("--system", f.system, "System name (llmsim hw list)");
    cmd->add_option("--gpus", f.gpus, "Total accelerators")->check(CLI::Range(1, 1 << 24));
    cmd->add_option("--tp", f.tp, "Tensor-parallel size")->check(CLI::Range(1, 1 << 24));
    cmd->add_option("--pp", f.pp, "Pipeline-parallel stages")->check(CLI::Range(1, 1 << 24));
    cmd->add_option("--dp", f.dp, "Data-parallel size (default gpus/(tp·pp·cp))")->check(CLI::Range(1, 1 << 24));
    cmd->add_option("--cp", f.cp, "Context-parallel size")->check(CLI::Range(1, 1 << 24));
    cmd->add_option("--ep", f.ep, "Expert-parallel size")->check(CLI::Range(1, 1 << 24));
    cmd->add_option("--vp", f.vp, "Model chunks per pipeline stage (interleaved)")->check(CLI::Range(1, 1 << 24));
    cmd->add_option("--zero", f.zero, "ZeRO stage 0-3")->check(CLI::Range(0, 3));
    cmd->add_option("--micro-batch", f.micro_batch, "Micro-batch size (sequences)")->check(CLI::Range(1, 1 << 24));
    cmd->add_option("--global-batch", f.global_batch, "Global batch (sequences)")->check(CLI::Range(1, 1 << 24));
    cmd->add_option("--seq-len", f.seq_len, "Sequence length (tokens)")->check(CLI::Range(1, 1 << 24));
    cmd->add_option("--recompute", f.recompute, "none | selective | full");
    cmd->add_option("--sp", f.sp, "Sequence parallelism (true/false)");
    cmd->add_option("--precision", f.precision, "fp32 | fp16 | bf16 | fp8");
    cmd->add_option("--schedule", f.schedule, "gpipe | 1f1b | interleaved | zero-bubble");
    cmd->add_option("--offload", f.offload, "none | optimizer | optimizer+params");
    cmd->add_option("--token-budget", f.token_budget, "Tokens to train on (reports days and GPU-hours)")
        ->check(CLI::PositiveNumber);
}

namespace {

// JSON pointer -> flag, for messages about values that came from flags.
const std::vector<std::pair<std::string, std::string>>& flag_names() {
    static const std::vector<std::pair<std::string, std::string>> names{
        {"/model", "--model"},
        {"/system", "--system"},
        {"/gpus", "--gpus"},
        {"/parallel/tp", "--tp"},
        {"/parallel/pp", "--pp"},
        {"/parallel/dp", "--dp"},
        {"/parallel/cp", "--cp"},
        {"/parallel/ep", "--ep"},
        {"/parallel/vp", "--vp"},
        {"/parallel/zero", "--zero"},
        {"/parallel/sequence_parallel", "--sp"},
        {"/parallel/schedule", "--schedule"},
        {"/training/micro_batch", "--micro-batch"},
        {"/training/global_batch", "--global-batch"},
        {"/training/seq_len", "--seq-len"},
        {"/training/recompute", "--recompute"},
        {"/training/precision", "--precision"},
        {"/training/offload", "--offload"},
        {"/training/token_budget", "--token-budget"},
    };
    return names;
}

bool flag_given(const ScenarioFlags& f, const std::string& pointer) {
    if (pointer == "/model") return !f.model.empty();
    if (pointer == "/system") return !f.system.empty();
    if (pointer == "/gpus") return f.gpus.has_value();
    if (pointer == "/parallel/tp") return f.tp.has_value();
    if (pointer == "/parallel/pp") return f.pp.has_value();
    if (pointer == "/parallel/dp") return f.dp.has_value();
    if (pointer == "/parallel/cp") return f.cp.has_value();
    if (pointer == "/parallel/ep") return f.ep.has_value();
    if (pointer == "/parallel/vp") return f.vp.has_value();
    if (pointer == "/parallel/zero") return f.zero.has_value();
    if (pointer == "/parallel/sequence_parallel") return f.sp.has_value();
    if (pointer == "/parallel/schedule") return !f.schedule.empty();
    if (pointer == "/training/micro_batch") return f.micro_batch.has_value();
    if (pointer == "/training/global_batch") return f.global_batch.has_value();
    if (pointer == "/training/seq_len") return f.seq_len.has_value();
    if (pointer == "/training/recompute") return !f.recompute.empty();
    if (pointer == "/training/precision") return !f.precision.empty();
    if (pointer == "/training/offload") return !f.offload.empty();
    if (pointer == "/training/token_budget") return f.token_budget.has_value();
    return false;
}

}   // namespace

Json read_scenario_file(const std::string& path, std::string& base_dir) {
    Json j = parse_json_file(path);
    const auto dir = std::filesystem::path(path).parent_path().string();
    base_dir = dir.empty() ? "." : dir;
    return j;
}

Json scenario_json(const ScenarioFlags& f, std::string& base_dir) {
    Json j = Json::object();
    base_dir = ".";
    if (!f.scenario.empty()) {
        j = read_scenario_file(f.scenario, base_dir);
        if (!j.is_object()) return j;
    }
    if (!f.model.empty()) j["model"] = f.model;
    if (!f.system.empty()) j["system"] = f.system;
    if (f.gpus) j["gpus"] = *f.gpus;
    auto set_par = [&](const char* key, const auto& v) {
        if (v) j["parallel"][key] = *v;
    };
    set_par("tp", f.tp);
    set_par("pp", f.pp);
    set_par("dp", f.dp);
    set_par("cp", f.cp);
    set_par("ep", f.ep);
    set_par("vp", f.vp);
    set_par("zero", f.zero);
    set_par("sequence_parallel", f.sp);
    if (!f.schedule.empty()) j["parallel"]["schedule"] = f.schedule;
    const bool inference = j.contains("inference");
    if (!inference) {
        auto set_tr = [&](const char* key, const auto& v) {
            if (v) j["training"][key] = *v;
        };
        set_tr("micro_batch", f.micro_batch);
        set_tr("global_batch", f.global_batch);
        set_tr("seq_len", f.seq_len);
        if (!f.recompute.empty()) j["training"]["recompute"] = f.recompute;
        if (!f.precision.empty()) j["training"]["precision"] = f.precision;
        if (!f.offload.empty()) j["training"]["offload"] = f.offload;
        if (f.token_budget) j["training"]["token_budget"] = *f.token_budget;
    }
    // With flags only and no gpus, the layout defines the GPU count.
    if (f.scenario.empty() && !j.contains("gpus") && j.contains("parallel")) {
        const auto& p = j["parallel"];
        if (p.contains("dp")) {
            int n = 1;
            for (const char* k : {"tp", "pp", "cp", "dp"})
                if (p.contains(k)) n *= p[k].get<int>();
            j["gpus"] = n;
        }
    }
    if (f.scenario.empty() && !j.contains("gpus") && !j.contains("parallel")) j["gpus"] = 1;
    return j;
}

Scenario resolve_scenario(const ScenarioFlags& f) {
    if (f.scenario.empty() && (f.model.empty() || f.system.empty()))
        throw ConfigError("--scenario: missing: expected a scenario file, or at least --model and --system");
    std::string base_dir;
    const Json j = scenario_json(f, base_dir);
    try {
        return parse_scenario(j, base_dir);
    } catch (const ConfigError& e) {
        std::vector<std::string> lines;
        for (auto line : e.problems()) {
            for (const auto& [ptr, flag] : flag_names()) {
                if (line.rfind(ptr + ":", 0) == 0 && flag_given(f, ptr)) {
                    line = flag + line.substr(ptr.size());
                    break;
                }
            }
            if (!f.scenario.empty() && line.rfind("/", 0) == 0) line = f.scenario + "#" + line;
            lines.push_back(line);
        }
        throw ConfigError(lines);
    }
}

std::string gib(double bytes, int decimals) {
    return fmt::format("{:.{}f} GiB", bytes / (1024.0 * 1024.0 * 1024.0), decimals);
}

std::string human_seconds(double s) {
    if (!std::isfinite(s)) return "inf";
    if (s >= 2 * 86400.0) return fmt::format("{:.1f} days", s / 86400.0);
    if (s >= 2 * 3600.0) return fmt::format("{:.1f} h", s / 3600.0);
    if (s >= 1.0) return fmt::format("{:.3g} s", s);
    if (s >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
    return fmt::format("{:.3g} us", s * 1e6);
}

std::string human_flops(double f) {
    const char* units[] = {"", "K", "M", "G", "T", "P", "E", "Z", "Y"};
    int i = 0;
    while (f >= 1000.0 && i < 8) {
        f /= 1000.0;
        ++i;
    }
    return fmt::format("{:.3g} {}FLOP", f, units[i]);
}

std::string human_count(double n) {
    if (n >= 1e12) return fmt::format("{:.2f}T", n / 1e12);
    if (n >= 1e9) return fmt::format("{:.2f}B", n / 1e9);
    if (n >= 1e6) return fmt::format("{:.1f}M", n / 1e6);
    if (n >= 1e3) return fmt::format("{:.1f}K", n / 1e3);
    return fmt::format("{:.0f}", n);
}

std::string Table::str() const {
    std::vector<std::size_t> w(header_.size(), 0);
    auto measure = [&](const std::vector<std::string>& r) {
        for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
    };
    measure(header_);
    for (const auto& r : rows_) measure(r);
    std::string out;
    auto emit = [&](const std::vector<std::string>& r) {
        std::string line;
        for (std::size_t i = 0; i < w.size(); ++i) {
            const std::string cell = i < r.size() ? r[i] : "";
            const bool left = i == 0 || std::find(left_.begin(), left_.end(), i) != left_.end();
            if (i == 0)
                line += fmt::format("{:<{}}", cell, w[i]);
            else if (left)
                line += fmt::format("  {:<{}}", cell, w[i]);
            else
                line += fmt::format("  {:>{}}", cell, w[i]);
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    };
    emit(header_);
    std::size_t total = 0;
    for (auto x : w) total += x + 2;
    out += std::string(total > 2 ? total - 2 : 0, '-') + "\n";
    for (const auto& r : rows_) emit(r);
    return out;
}

void print_json(const Json& j) { std::cout << j.dump(2) << "\n"; }

}   // namespace llmsim::cli
