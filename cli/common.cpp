#include "cli/common.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/flag_checks.hpp"
#include "cost_models/memory.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/limits.hpp"
#include "hardware_db/scenario.hpp"
#include "hardware_db/units.hpp"

namespace llmsim::cli {

void add_scenario_flags(CLI::App* cmd, ScenarioFlags& f, bool with_json) {
    using limits::kBatch;
    using limits::kGpus;
    cmd->add_option("scenario,--scenario,-s", f.scenario,
                    "Scenario JSON file, positional or -s (flags below override its values)");
    if (with_json) cmd->add_flag("--json", f.json, "Print JSON instead of tables");
    cmd->add_option("--model", f.model, "Model-zoo name or Hugging Face config.json path");
    cmd->add_option("--system", f.system, "System name (llmsim hw list)");
    cmd->add_option("--gpus", f.gpus, "Total accelerators")->check(int_in(1, kGpus));
    cmd->add_option("--tp,--tensor-model-parallel-size,--tensor-parallel-size", f.tp, "Tensor-parallel size")
        ->check(int_in(1, kGpus));
    cmd->add_option("--pp,--pipeline-model-parallel-size,--pipeline-parallel-size", f.pp, "Pipeline-parallel stages")
        ->check(int_in(1, kGpus));
    cmd->add_option("--dp", f.dp, "Data-parallel size (default gpus/(tp·pp·cp))")->check(int_in(1, kGpus));
    cmd->add_option("--cp", f.cp, "Context-parallel size")->check(int_in(1, kGpus));
    cmd->add_option("--ep", f.ep, "Expert-parallel size")->check(int_in(1, kGpus));
    cmd->add_option("--vp", f.vp, "Model chunks per pipeline stage (interleaved)")->check(int_in(1, kGpus));
    cmd->add_option("--zero", f.zero, "ZeRO stage 0-3")->check(int_in(0, 3));
    cmd->add_option("--micro-batch,--micro-batch-size", f.micro_batch, "Micro-batch size (sequences)")
        ->check(int_in(1, kBatch));
    cmd->add_option("--global-batch,--global-batch-size", f.global_batch, "Global batch (sequences)")
        ->check(int_in(1, kBatch));
    cmd->add_option("--seq-len,--seq-length", f.seq_len, "Sequence length (tokens)")->check(int_in(1, limits::kSeqLen));
    cmd->add_option("--recompute", f.recompute, "none | selective | full");
    cmd->add_option("--recompute-num-layers", f.recompute_num_layers,
                    "With --recompute full: recompute only the first N layers of every model chunk")
        ->check(int_in(1, limits::kLayers));
    cmd->add_option("--activation-offload-layers", f.activation_offload_layers,
                    "Offload the first N layers' activations to host memory (pp 1, no recompute)")
        ->check(int_in(0, limits::kLayers));
    cmd->add_option("--sp", f.sp, "Sequence parallelism (true/false)")->check(true_or_false());
    cmd->add_option("--tp-comm-overlap", f.tp_comm_overlap,
                    "TP communication overlap: true | false (default false; search's 'overlap tp')")
        ->check(true_or_false());
    cmd->add_option("--overlap-grad-reduce", f.overlap_grad_reduce,
                    "DP gradient-reduce overlap: true | false (default true; search's 'overlap grad')")
        ->check(true_or_false());
    cmd->add_option("--overlap-param-gather", f.overlap_param_gather,
                    "Parameter all-gather overlap: true | false (default true; search's 'overlap param')")
        ->check(true_or_false());
    cmd->add_option("--precision", f.precision, "fp32 | fp16 | bf16 | fp8");
    cmd->add_option("--schedule", f.schedule, "gpipe | 1f1b | interleaved | zero-bubble");
    cmd->add_option("--offload", f.offload, "none | optimizer | optimizer+params");
    cmd->add_option("--framework", f.framework,
                    fmt::format("{} (training; docs/scenario-reference.md)", fmt::join(framework_names(), " | ")));
    cmd->add_option("--torch-compile", f.torch_compile,
                    "torch.compile on (true) or eager PyTorch (false, the default) under --framework torchtitan, "
                    "deepspeed or llm-foundry")
        ->check(true_or_false());
    cmd->add_option("--grad-precision", f.grad_precision,
                    "fp32 | fp16 | bf16: precision of the main gradients (training; default fp32, Megatron's)");
    cmd->add_option("--token-budget", f.token_budget, "Tokens to train on (reports days and GPU-hours)")
        ->check(number_in(0, limits::kMaxTokens, false));
    add_serving_flags(cmd, f, "Serving");
}

void add_serving_flags(CLI::App* cmd, ScenarioFlags& f, const std::string& g) {
    cmd->add_option("--batch", f.batch, "Static batch (sequences)")->group(g);
    cmd->add_option("--input-len", f.input_len,
                    "Prompt tokens per request: TOKENS, or drawn per request (continuous batching) as "
                    "DIST:MEAN[,STDEV[,MIN,MAX]] (DIST normal, lognormal, exponential, uniform; e.g. "
                    "lognormal:1000,400,1,4096) or uniform:MIN,MAX")
        ->group(g);
    cmd->add_option("--output-len", f.output_len, "Generated tokens per request: as --input-len")->group(g);
    cmd->add_option("--batching", f.batching, "static | continuous (default continuous with --qps/--requests/...)")
        ->group(g);
    cmd->add_option("--qps", f.qps_text,
                    "Poisson arrival rate for the deployment (0: offline; continuous batching), or max: the largest "
                    "rate meeting the SLO (--slo-ttft-p99/--slo-tpot-p99)")
        ->group(g);
    cmd->add_option("--requests", f.requests, "Requests simulated (continuous batching)")->group(g);
    cmd->add_option("--arrivals", f.arrivals,
                    "A trace to replay (CSV: arrival_s,input_tokens,output_tokens or Azure's "
                    "TIMESTAMP,ContextTokens,GeneratedTokens); --qps rescales its times (docs/serving.md, Traces)")
        ->group(g);
    cmd->add_option("--arrival-cv", f.arrival_cv,
                    "Burstiness: coefficient of variation of the gaps between arrivals (1 Poisson, the default; "
                    "above 1 bursty Gamma gaps; 0 evenly spaced; docs/serving.md, Bursts)")
        ->group(g);
    cmd->add_option("--router", f.router,
                    "How requests spread over the replicas: round-robin (default), least-requests, least-tokens, "
                    "power-of-two, cache-aware (docs/serving.md, Routing)")
        ->group(g);
    cmd->add_option("--shared-prefix", f.shared_prefix,
                    "GROUPS:TOKENS[:ZIPF]: prompts begin with one of GROUPS shared prefixes of TOKENS tokens (Zipf "
                    "popularity, 0 uniform), kept by each replica's prefix cache (docs/serving.md, Shared prefixes)")
        ->group(g);
    cmd->add_option("--rate-profile", f.rate_profile,
                    "PERIOD_S:L1,L2,...: the arrival rate over a repeating period, relative levels of equal slices "
                    "(--qps is their mean); the output adds each slice's latencies (docs/serving.md, A rate that "
                    "varies)")
        ->group(g);
    cmd->add_option("--autoscale", f.autoscale,
                    "TARGET:STORAGE_GBPS[:ENGINE_START_S[:MIN:MAX]]: replicas added and removed with the load, "
                    "aiming at TARGET requests in the system each; a new one serves after its weights are read at "
                    "STORAGE_GBPS and the engine starts (docs/serving.md, Autoscaling)")
        ->group(g);
    cmd->add_option("--window-s", f.window_s,
                    "Report the stream in windows of this many seconds from its start: each one's rate, TTFT and "
                    "TPOT p99 and share within the SLO (docs/serving.md, A rate that varies)")
        ->group(g);
    cmd->add_option("--seed", f.seed,
                    "Random stream of arrivals and lengths (continuous batching; seeds are independent replications)")
        ->check(int_in(0, INT64_MAX))
        ->group(g);
    cmd->add_option("--engine", f.engine,
                    "NAME[@VERSION]: the serving engine whose kernels, scheduler and defaults the deployment runs "
                    "(tensorrt-llm, vllm, sglang; e.g. vllm@0.6.3; docs/serving.md, Engines)")
        ->group(g);
    cmd->add_option("--scheduler", f.scheduler,
                    "inflight | prefill-first: how a replica composes an iteration (default: the engine's)")
        ->group(g);
    cmd->add_option("--cuda-graphs", f.cuda_graphs,
                    "Kernels replayed from CUDA graphs (true) or launched one by one (false); default: the engine's")
        ->check(true_or_false())
        ->group(g);
    cmd->add_option("--prefix-cache-hit", f.prefix_cache_hit,
                    "Share of prompt tokens found in the prefix cache, not recomputed (0 to 0.999)")
        ->group(g);
    cmd->add_option("--weight-precision", f.weight_precision, "bf16 | fp16 | fp8 | int8 | int4 | fp4 | nf4")->group(g);
    cmd->add_option("--kv-precision", f.kv_precision, "bf16 | fp16 | fp8 | int8 | int4 | fp4")->group(g);
    cmd->add_option("--max-batch,--max-num-seqs", f.max_batch, "Most sequences in flight per replica (continuous)")
        ->group(g);
    cmd->add_option("--kv-admission", f.kv_admission,
                    "on_demand | reserve: KV blocks for the prompt at admission, preempting when a decode finds "
                    "none (vLLM, TensorRT-LLM MAX_UTILIZATION), or for the prompt and its output limit, never "
                    "preempting (TensorRT-LLM GUARANTEED_NO_EVICT); default: the engine's")
        ->group(g);
    cmd->add_option("--chunk,--max-num-batched-tokens", f.chunk,
                    "Token budget per iteration: chunked prefill (max_batch_tokens)")
        ->group(g);
    cmd->add_option("--spec-draft", f.spec_draft, "Speculative decoding: draft model (model-zoo name)")->group(g);
    cmd->add_option("--spec-tokens", f.spec_tokens, "Speculative decoding: tokens proposed per step")->group(g);
    cmd->add_option("--acceptance", f.acceptance, "Speculative decoding: per-token acceptance probability")->group(g);
    cmd->add_option("--slo-ttft-p99", f.slo_ttft_p99, "SLO: p99 time to first token (s)")->group(g);
    cmd->add_option("--slo-tpot-p99", f.slo_tpot_p99, "SLO: p99 time per output token (s)")->group(g);
    cmd->add_option("--slo-ttft-p90", f.slo_ttft_p90, "SLO: p90 time to first token (s; DistServe's)")->group(g);
    cmd->add_option("--slo-tpot-p90", f.slo_tpot_p90, "SLO: p90 time per output token (s)")->group(g);
    cmd->add_option("--host-per-sequence-us", f.host_per_sequence_us,
                    "Engine host time per running sequence per iteration (us; default 5, fitted; 0: host work "
                    "overlapped)")
        ->group(g);
}

namespace {
// The parts of a flag's value between colons ("a:b:" has three, the last empty).
std::vector<std::string> colon_parts(const std::string& text) {
    std::vector<std::string> parts;
    std::size_t from = 0;
    for (std::size_t at; (at = text.find(':', from)) != std::string::npos; from = at + 1)
        parts.push_back(text.substr(from, at - from));
    parts.push_back(text.substr(from));
    return parts;
}
// An unsigned decimal number (parse_decimal: digits, a point, an exponent; no hex or inf) or `bad()` is thrown.
template <class Bad>
double decimal_number(const std::string& t, const Bad& bad) {
    const auto v = t.empty() || t[0] == '-' || t[0] == '+' ? std::nullopt : parse_decimal(t);
    if (!v) throw bad();
    return *v;
}
// A plain decimal integer without a leading zero (010 is not 8 here) or `bad()` is thrown.
template <class Bad>
long long decimal_integer(const std::string& t, const Bad& bad) {
    if (t.empty() || t.size() > 12 || t.find_first_not_of("0123456789") != std::string::npos ||
        (t.size() > 1 && t[0] == '0'))
        throw bad();
    return std::stoll(t);
}

// --shared-prefix GROUPS:TOKENS[:ZIPF], decimal numbers (the reader bounds each); anything else names the flag.
Json shared_prefix_flag_value(const std::string& text) {
    const auto bad = [&] {
        return ConfigError(
            fmt::format("--shared-prefix: '{}': expected GROUPS:TOKENS or GROUPS:TOKENS:ZIPF "
                        "(decimal numbers, e.g. 512:4096 or 64:1024:1.0)",
                        text));
    };
    const auto parts = colon_parts(text);
    if (parts.size() < 2 || parts.size() > 3) throw bad();
    Json o = {{"groups", decimal_integer(parts[0], bad)}, {"tokens", decimal_integer(parts[1], bad)}};
    if (parts.size() == 3) o["zipf"] = decimal_number(parts[2], bad);
    return o;
}

// --autoscale TARGET:STORAGE_GBPS[:ENGINE_START_S[:MIN:MAX]], decimal numbers (the reader bounds each, and its
// errors name the flag); anything else names the flag.
Json autoscale_flag_value(const std::string& text) {
    const auto bad = [&] {
        return ConfigError(fmt::format(
            "--autoscale: '{}': expected TARGET:STORAGE_GBPS[:ENGINE_START_S[:MIN:MAX]] (decimal numbers: requests "
            "in the system per replica, GB/s of weights read at a cold start, seconds of engine start, the fewest "
            "and most replicas; e.g. 8:2:30 or 8:2:30:1:6)",
            text));
    };
    const auto parts = colon_parts(text);
    if (parts.size() < 2 || parts.size() == 4 || parts.size() > 5) throw bad();
    Json o = {{"target_outstanding", decimal_number(parts[0], bad)}, {"storage_GBps", decimal_number(parts[1], bad)}};
    if (parts.size() >= 3) o["engine_start_s"] = decimal_number(parts[2], bad);
    if (parts.size() == 5) {
        o["min_replicas"] = decimal_integer(parts[3], bad);
        o["max_replicas"] = decimal_integer(parts[4], bad);
    }
    return o;
}

// --rate-profile PERIOD_S:L1,L2,..., plain decimal numbers (the reader bounds each); anything else names the flag.
Json rate_profile_flag_value(const std::string& text) {
    const auto bad = [&] {
        return ConfigError(fmt::format(
            "--rate-profile: '{}': expected PERIOD_S:L1,L2,... (decimal numbers, e.g. 86400:1,1,2,4,4,2)", text));
    };
    const std::size_t colon = text.find(':');
    if (colon == std::string::npos) throw bad();
    Json levels = Json::array();
    const std::string list = text.substr(colon + 1);
    std::size_t from = 0;
    for (std::size_t at;; from = at + 1) {
        at = list.find(',', from);
        levels.push_back(
            decimal_number(list.substr(from, at == std::string::npos ? std::string::npos : at - from), bad));
        if (at == std::string::npos) break;
        if (levels.size() > RateProfile::kMaxSlices) throw bad();   // the reader's bound; no larger array is built
    }
    return Json{{"period_s", decimal_number(text.substr(0, colon), bad)}, {"levels", std::move(levels)}};
}

// --input-len / --output-len: TOKENS (every request the same), DIST:MEAN[,STDEV[,MIN,MAX]], or uniform:MIN,MAX
// (the contract's uniform given by its bounds); decimal numbers, which the reader bounds (its errors name the
// flag); anything else names the flag here.
Json length_flag_value(const char* flag, const std::string& text) {
    const auto bad = [&] {
        return ConfigError(
            fmt::format("{}: {}: expected TOKENS (a decimal integer), DIST:MEAN[,STDEV[,MIN,MAX]] with "
                        "DIST normal, lognormal, exponential or uniform (e.g. lognormal:1000,400,1,4096), "
                        "or uniform:MIN,MAX",
                        flag, json_brief(Json(text))));
    };
    const std::size_t colon = text.find(':');
    if (colon == std::string::npos) {
        const auto n = parse_int(text);
        if (!n) throw bad();
        return Json(*n);
    }
    const std::string dist = text.substr(0, colon);   // the reader checks the name against its families
    if (dist.empty()) throw bad();
    const auto items = split_list(text.substr(colon + 1));
    std::vector<double> v;
    for (const auto& item : items) {
        const auto x = parse_decimal(item);
        if (!x || items.size() > 4) throw bad();
        v.push_back(*x);
    }
    Json o = {{"dist", dist}};
    if (dist == "uniform" && v.size() == 2) {
        o["min"] = v[0];
        o["max"] = v[1];
        return o;
    }
    if (v.empty() || v.size() == 3) throw bad();
    o["mean"] = v[0];
    if (v.size() >= 2) o["stdev"] = v[1];
    if (v.size() == 4) {
        o["min"] = v[2];
        o["max"] = v[3];
    }
    return o;
}

// --engine NAME[@VERSION]: the object of inference.engine (the reader checks the name and the version).
Json engine_flag_value(const std::string& text) {
    const std::size_t at = text.find('@');
    if (text.empty() || at == 0 || (at != std::string::npos && at + 1 == text.size()))
        throw ConfigError(fmt::format("--engine: {}: expected NAME or NAME@VERSION (e.g. vllm or tensorrt-llm@0.17.0)",
                                      json_brief(Json(text))));
    Json o = {{"name", text.substr(0, at)}};
    if (at != std::string::npos) o["version"] = text.substr(at + 1);
    return o;
}

// --qps: "max", or a decimal rate (the reader bounds it); anything else names the flag.
Json qps_flag_value(const std::string& text) {
    if (text == "max") return Json("max");
    const auto v = parse_decimal(text);
    if (!v)
        throw ConfigError(fmt::format("--qps: '{}': expected a rate in requests/s (a decimal number) or max", text));
    return Json(*v);
}
}   // namespace

const char* first_serving_flag(const ScenarioFlags& f) {
    const std::vector<std::pair<bool, const char*>> serving_flags = {
        {f.batch.has_value(), "--batch"},
        {f.input_len.has_value(), "--input-len"},
        {f.output_len.has_value(), "--output-len"},
        {!f.batching.empty(), "--batching"},
        {f.qps.has_value() || f.qps_text.has_value(), f.qps_flag},
        {f.requests.has_value(), "--requests"},
        {f.arrivals.has_value(), "--arrivals"},
        {f.router.has_value(), "--router"},
        {f.shared_prefix.has_value(), "--shared-prefix"},
        {f.rate_profile.has_value(), "--rate-profile"},
        {f.autoscale.has_value(), "--autoscale"},
        {f.arrival_cv.has_value(), "--arrival-cv"},
        {f.window_s.has_value(), "--window-s"},
        {f.price_per_gpu_hour.has_value(), "--price-per-gpu-hour"},
        {f.seed.has_value(), "--seed"},
        {f.engine.has_value(), "--engine"},
        {f.scheduler.has_value(), "--scheduler"},
        {f.cuda_graphs.has_value(), "--cuda-graphs"},
        {f.prefix_cache_hit.has_value(), "--prefix-cache-hit"},
        {!f.weight_precision.empty(), "--weight-precision"},
        {!f.kv_precision.empty(), "--kv-precision"},
        {f.max_batch.has_value(), "--max-batch"},
        {f.kv_admission.has_value(), "--kv-admission"},
        {f.chunk.has_value(), "--chunk"},
        {!f.spec_draft.empty(), "--spec-draft"},
        {f.spec_tokens.has_value(), "--spec-tokens"},
        {f.acceptance.has_value(), "--acceptance"},
        {f.slo_ttft_p99.has_value(), "--slo-ttft-p99"},
        {f.slo_tpot_p99.has_value(), "--slo-tpot-p99"},
        {f.slo_ttft_p90.has_value(), "--slo-ttft-p90"},
        {f.slo_tpot_p90.has_value(), "--slo-tpot-p90"},
        {f.host_per_sequence_us.has_value(), "--host-per-sequence-us"}};
    for (const auto& [given, flag] : serving_flags)
        if (given) return flag;
    return nullptr;
}

void FlagOverlay::know(const std::string& pointer, const std::string& flag) {
    for (const auto& [p, f] : known_)
        if (p == pointer) return;
    known_.emplace_back(pointer, flag);
}

void FlagOverlay::set(const std::string& pointer, const std::string& flag, Json value) {
    know(pointer, flag);
    doc_[Json::json_pointer(pointer)] = std::move(value);
    for (auto& [p, f] : flags_)
        if (p == pointer) {
            f = flag;
            return;
        }
    flags_.emplace_back(pointer, flag);
}

bool FlagOverlay::given(const std::string& pointer) const {
    for (const auto& [p, f] : flags_)
        if (p == pointer) return true;
    return false;
}

ConfigError FlagOverlay::rename(const ConfigError& e, const std::string& scenario_file) const {
    std::vector<std::string> lines;
    for (auto line : e.problems()) {
        bool mapped = false;
        for (const auto& [ptr, flag] : flags_)
            if (line.rfind(ptr, 0) == 0 && line.size() > ptr.size() &&
                (line[ptr.size()] == ':' || line[ptr.size()] == '/')) {
                line = flag + line.substr(ptr.size());
                mapped = true;
                break;
            }
        if (!mapped && !scenario_file.empty() && line.rfind('/', 0) == 0) line = scenario_file + "#" + line;
        // A problem about a flag names the other settings it refers to as flags too: a pointer a flag sets
        // becomes that flag, and an object whose keys flags set becomes its flags ("with /inference/slo
        // (ttft_p99_s, ...)" from --qps max becomes "with --slo-ttft-p99, ... (ttft_p99_s, ...)").
        if (mapped) {
            const std::size_t head = line.find(':');
            std::string rest = head == std::string::npos ? std::string() : line.substr(head);
            for (std::size_t at = rest.find('/'); at != std::string::npos; at = rest.find('/', at + 1)) {
                if (at > 0 && rest[at - 1] != ' ' && rest[at - 1] != '(') continue;
                std::size_t end = at;
                while (end < rest.size() &&
                       (std::islower(static_cast<unsigned char>(rest[end])) ||
                        std::isdigit(static_cast<unsigned char>(rest[end])) || rest[end] == '_' || rest[end] == '/'))
                    ++end;
                const std::string ptr = rest.substr(at, end - at);
                std::vector<std::string> named;
                bool object = true;   // the pointer names an object whose keys flags set, not one flag's key
                for (const auto& [p, f] : known_)
                    if (p == ptr || p.rfind(ptr + "/", 0) == 0) {
                        named.push_back(f);
                        object = object && p != ptr;
                    }
                if (named.empty()) continue;
                std::string flags;
                for (std::size_t i = 0; i < named.size(); ++i)
                    flags += (i == 0 ? "" : i + 1 == named.size() ? " or " : ", ") + named[i];
                // The keys a parenthesis after an object lists are its flags' now: left out.
                if (object && rest.compare(end, 2, " (") == 0) {
                    const std::size_t close = rest.find(')', end);
                    const std::string inside =
                        close == std::string::npos ? std::string() : rest.substr(end + 2, close - end - 2);
                    if (!inside.empty() &&
                        inside.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_,/ ") == std::string::npos)
                        end = close + 1;
                }
                rest.replace(at, end - at, flags);
                at += flags.size() - 1;
            }
            line = line.substr(0, head == std::string::npos ? line.size() : head) + rest;
        }
        lines.push_back(line);
    }
    return ConfigError(lines);
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    if (text.empty()) return out;
    std::size_t pos = 0;
    for (;;) {
        const auto comma = text.find(',', pos);
        out.push_back(text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return out;
}

std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& flag, std::int64_t lo,
                                         std::int64_t hi) {
    std::vector<std::int64_t> out;
    bool ok = !text.empty();
    for (const auto& item : split_list(text)) {
        const auto v = parse_int(item);
        ok = ok && v && *v >= lo && *v <= hi && out.size() < 1024;
        if (v) out.push_back(*v);
        if (!ok) break;
    }
    if (!ok)
        throw ConfigError(fmt::format("{}: {}: expected a comma-separated list of at most 1024 integers in {}..{}",
                                      flag, json_brief(Json(text)), lo, hi));
    return out;
}

Json read_scenario_file(const std::string& path, std::string& base_dir) {
    Json j = parse_json_file(path);
    base_dir = directory_of(path);
    return j;
}

namespace {

// The flags written over the scenario document `j` (all of them when `training` is true; the
// training ones only on a training scenario, refused on an inference one).
void overlay_flags(const ScenarioFlags& f, FlagOverlay& ov, const Json& j) {
    ov.set("/model", "--model", f.model);
    ov.set("/system", "--system", f.system);
    ov.set("/gpus", "--gpus", f.gpus);
    ov.set("/parallel/tp", "--tp", f.tp);
    ov.set("/parallel/pp", "--pp", f.pp);
    ov.set("/parallel/dp", "--dp", f.dp);
    ov.set("/parallel/cp", "--cp", f.cp);
    ov.set("/parallel/ep", "--ep", f.ep);
    ov.set("/parallel/vp", "--vp", f.vp);
    ov.set("/parallel/zero", "--zero", f.zero);
    ov.set("/parallel/sequence_parallel", "--sp", f.sp);
    ov.set("/parallel/tp_comm_overlap", "--tp-comm-overlap", f.tp_comm_overlap);
    ov.set("/parallel/overlap_grad_reduce", "--overlap-grad-reduce", f.overlap_grad_reduce);
    ov.set("/parallel/overlap_param_gather", "--overlap-param-gather", f.overlap_param_gather);
    ov.set("/parallel/schedule", "--schedule", f.schedule);
    const char* a_serving = first_serving_flag(f);
    const bool file_inference = j.is_object() && j.contains("inference");
    const bool file_training = j.is_object() && j.contains("training");
    if (file_inference || (a_serving && !file_training)) {
        // Training flags do not apply to a serving scenario: refused, never silently ignored.
        std::vector<std::string> lines;
        const std::string what = file_inference
                                     ? fmt::format("{}, an inference scenario (it has /inference)", f.scenario)
                                     : fmt::format("{}, a serving flag (a serving scenario)", a_serving);
        for (const auto& [given, flag] :
             {std::pair{f.micro_batch.has_value(), "--micro-batch"},
              std::pair{f.global_batch.has_value(), "--global-batch"}, std::pair{f.seq_len.has_value(), "--seq-len"},
              std::pair{!f.recompute.empty(), "--recompute"},
              std::pair{f.recompute_num_layers.has_value(), "--recompute-num-layers"},
              std::pair{f.activation_offload_layers.has_value(), "--activation-offload-layers"},
              std::pair{!f.precision.empty(), "--precision"}, std::pair{!f.offload.empty(), "--offload"},
              std::pair{f.token_budget.has_value(), "--token-budget"}, std::pair{!f.framework.empty(), "--framework"},
              std::pair{!f.grad_precision.empty(), "--grad-precision"},
              std::pair{f.torch_compile.has_value(), "--torch-compile"},
              std::pair{f.tp_comm_overlap.has_value(), "--tp-comm-overlap"},
              std::pair{f.overlap_grad_reduce.has_value(), "--overlap-grad-reduce"},
              std::pair{f.overlap_param_gather.has_value(), "--overlap-param-gather"}})
            if (given)
                lines.push_back(
                    fmt::format("{}: given with {}: expected {} only with training scenarios (serving: --batch, "
                                "--input-len, --qps, ...; llmsim estimate --help)",
                                flag, what, flag));
        if (!lines.empty()) throw ConfigError(lines);
        ov.set("/inference/batch", "--batch", f.batch);
        if (f.input_len) ov.set("/inference/input_len", "--input-len", length_flag_value("--input-len", *f.input_len));
        if (f.output_len)
            ov.set("/inference/output_len", "--output-len", length_flag_value("--output-len", *f.output_len));
        if (f.engine) ov.set("/inference/engine", "--engine", engine_flag_value(*f.engine));
        ov.set("/inference/scheduler", "--scheduler", f.scheduler);
        ov.set("/inference/cuda_graphs", "--cuda-graphs", f.cuda_graphs);
        ov.set("/inference/prefix_cache_hit", "--prefix-cache-hit", f.prefix_cache_hit);
        ov.set("/inference/requests", "--requests", f.requests);
        ov.set("/inference/arrivals", "--arrivals", f.arrivals);
        ov.set("/inference/router", "--router", f.router);
        if (f.shared_prefix)
            ov.set("/inference/shared_prefix", "--shared-prefix", shared_prefix_flag_value(*f.shared_prefix));
        if (f.rate_profile)
            ov.set("/inference/rate_profile", "--rate-profile", rate_profile_flag_value(*f.rate_profile));
        if (f.autoscale) ov.set("/inference/autoscale", "--autoscale", autoscale_flag_value(*f.autoscale));
        ov.set("/inference/arrival_cv", "--arrival-cv", f.arrival_cv);
        ov.set("/inference/window_s", "--window-s", f.window_s);
        ov.set("/inference/price_per_gpu_hour", "--price-per-gpu-hour", f.price_per_gpu_hour);
        ov.set("/inference/seed", "--seed", f.seed);
        ov.set("/inference/qps", f.qps_flag, f.qps);
        if (!f.qps && f.qps_text) ov.set("/inference/qps", f.qps_flag, qps_flag_value(*f.qps_text));
        ov.set("/inference/weight_precision", "--weight-precision", f.weight_precision);
        ov.set("/inference/kv_precision", "--kv-precision", f.kv_precision);
        ov.set("/inference/max_batch", "--max-batch", f.max_batch);
        ov.set("/inference/kv_admission", "--kv-admission", f.kv_admission);
        ov.set("/inference/max_batch_tokens", "--chunk", f.chunk);
        ov.set("/inference/speculative/draft_model", "--spec-draft", f.spec_draft);
        ov.set("/inference/speculative/tokens", "--spec-tokens", f.spec_tokens);
        ov.set("/inference/speculative/acceptance", "--acceptance", f.acceptance);
        ov.set("/inference/slo/ttft_p99_s", "--slo-ttft-p99", f.slo_ttft_p99);
        ov.set("/inference/slo/tpot_p99_s", "--slo-tpot-p99", f.slo_tpot_p99);
        ov.set("/inference/slo/ttft_p90_s", "--slo-ttft-p90", f.slo_ttft_p90);
        ov.set("/inference/slo/tpot_p90_s", "--slo-tpot-p90", f.slo_tpot_p90);
        ov.set("/inference/batching", "--batching", f.batching);
        ov.set("/inference/host_per_sequence_us", "--host-per-sequence-us", f.host_per_sequence_us);
        // A stream flag asks for continuous batching unless the scenario or --batching says otherwise; so does
        // a length drawn per request (a distribution).
        const auto drawn = [](const std::optional<std::string>& len) {
            return len && len->find(':') != std::string::npos;
        };
        const char* stream = f.qps || f.qps_text   ? f.qps_flag
                             : f.requests          ? "--requests"
                             : f.arrivals          ? "--arrivals"
                             : f.router            ? "--router"
                             : f.shared_prefix     ? "--shared-prefix"
                             : f.rate_profile      ? "--rate-profile"
                             : f.autoscale         ? "--autoscale"
                             : f.arrival_cv        ? "--arrival-cv"
                             : f.window_s          ? "--window-s"
                             : f.seed              ? "--seed"
                             : f.scheduler         ? "--scheduler"
                             : drawn(f.input_len)  ? "--input-len"
                             : drawn(f.output_len) ? "--output-len"
                             : f.max_batch         ? "--max-batch"
                             : f.kv_admission      ? "--kv-admission"
                             : f.chunk             ? "--chunk"
                             : f.slo_ttft_p99      ? "--slo-ttft-p99"
                             : f.slo_tpot_p99      ? "--slo-tpot-p99"
                             : f.slo_ttft_p90      ? "--slo-ttft-p90"
                             : f.slo_tpot_p90      ? "--slo-tpot-p90"
                                                   : nullptr;
        const bool file_batching = file_inference && j["inference"].is_object() && j["inference"].contains("batching");
        if (stream && f.batching.empty() && !file_batching)
            ov.set("/inference/batching", stream, std::string("continuous"));
        return;
    }
    if (a_serving)
        throw ConfigError(
            fmt::format("{}: given with a training scenario: expected {} only with serving scenarios "
                        "(training: --micro-batch, --seq-len, ...)",
                        a_serving, a_serving));
    ov.set("/training/micro_batch", "--micro-batch", f.micro_batch);
    ov.set("/training/global_batch", "--global-batch", f.global_batch);
    ov.set("/training/seq_len", "--seq-len", f.seq_len);
    ov.set("/training/recompute", "--recompute", f.recompute);
    ov.set("/training/recompute_num_layers", "--recompute-num-layers", f.recompute_num_layers);
    ov.set("/training/activation_offload_layers", "--activation-offload-layers", f.activation_offload_layers);
    ov.set("/training/precision", "--precision", f.precision);
    ov.set("/training/offload", "--offload", f.offload);
    ov.set("/training/grad_precision", "--grad-precision", f.grad_precision);
    ov.set("/parallel/framework", "--framework", f.framework);
    ov.set("/parallel/torch_compile", "--torch-compile", f.torch_compile);
    ov.set("/training/token_budget", "--token-budget", f.token_budget);
}

// `j`: the scenario document from --scenario with the flags written over it.
void apply_scenario_flags(const ScenarioFlags& f, std::string& base_dir, FlagOverlay& ov, Json& j) {
    base_dir = ".";
    if (!f.scenario.empty()) {
        j = read_scenario_file(f.scenario, base_dir);
        if (!j.is_object()) return;
    }
    overlay_flags(f, ov, j);
    // With flags only, the layout defines the GPU count: parse_scenario forms tp·pp·cp·dp (checked) when
    // dp is given or tp·pp·cp > 1; with no parallel flag, one GPU.
    if (f.scenario.empty() && !j.contains("gpus") && !j.contains("parallel")) j["gpus"] = 1;
}

}   // namespace

Scenario resolve_scenario(const ScenarioFlags& f) {
    if (f.scenario.empty() && (f.model.empty() || f.system.empty()))
        throw ConfigError("--scenario: missing: expected a scenario file, or at least --model and --system");
    std::string base_dir;
    Json j = Json::object();
    FlagOverlay ov(j);
    apply_scenario_flags(f, base_dir, ov, j);
    Scenario s;
    try {
        s = parse_scenario(j, base_dir);
    } catch (const ConfigError& e) {
        throw ov.rename(e, f.scenario);
    }
    resolve_memory_levers(s);
    return s;
}

ConfigError locate_problems(const ScenarioFlags& f, const ConfigError& e) {
    Json scratch = Json::object();
    FlagOverlay ov(scratch);
    overlay_flags(f, ov, scratch);
    return ov.rename(e, f.scenario);
}

std::string gib(double bytes, int decimals) { return fmt::format("{:.{}f} GiB", bytes / kGiB, decimals); }

std::string human_seconds(double s) {
    if (!std::isfinite(s)) return "inf";
    if (s >= 2 * 86400.0) return fmt::format("{:.1f} days", s / 86400.0);
    if (s >= 2 * 3600.0) return fmt::format("{:.1f} h", s / 3600.0);
    if (s >= 120.0) return fmt::format("{:.1f} min", s / 60.0);
    if (s >= 1.0) return fmt::format("{:.3g} s", s);
    // Below a nanosecond is rounding noise of sums and differences (a step is microseconds at least).
    if (std::fabs(s) < 1e-9) return "0";
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

namespace {

// `digits` (an integer part, optionally followed by ".fraction") with a comma every three integer digits.
std::string group_thousands(const std::string& digits, bool negative) {
    const std::size_t dot = std::min(digits.find('.'), digits.size());
    std::string out;
    out.reserve(digits.size() + dot / 3 + 1);
    if (negative) out.push_back('-');
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && i < dot && (dot - i) % 3 == 0) out.push_back(',');
        out.push_back(digits[i]);
    }
    return out;
}

}   // namespace

std::string with_commas(std::int64_t n) {
    const std::uint64_t mag = n < 0 ? 0 - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n);
    return group_thousands(std::to_string(mag), n < 0);
}

std::string fixed_commas(double x, int decimals) {
    if (!std::isfinite(x)) return "inf";
    const std::string digits = fmt::format("{:.{}f}", std::fabs(x), decimals);
    return group_thousands(digits, x < 0 && digits.find_first_not_of("0.") != std::string::npos);
}

namespace {
std::size_t g_table_width = 80;   // set_table_width

// Terminal columns of UTF-8 text: its code points (a continuation byte starts none).
std::size_t columns(std::string_view w) {
    std::size_t n = 0;
    for (const char c : w) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}
}   // namespace

std::string wrap_text(const std::string& text, std::size_t width) {
    if (width == 0) width = g_table_width;   // 80, or no wrapping under --wide
    if (width == 0) return text.ends_with('\n') ? text : text + "\n";
    const std::string indent = "  ";
    std::string out, line;
    std::size_t line_cols = 0;
    std::size_t pos = 0;
    const std::string_view t = text.ends_with('\n') ? std::string_view(text).substr(0, text.size() - 1) : text;
    while (pos <= t.size()) {
        const std::size_t end = std::min(t.find(' ', pos), t.size());
        const std::string_view word = t.substr(pos, end - pos);
        const std::size_t wc = columns(word);
        if (!line.empty() && line_cols + 1 + wc > width) {
            out += line + "\n";
            line = indent;
            line_cols = indent.size();
        } else if (!line.empty() && line != indent) {
            line += ' ';
            ++line_cols;
        }
        line += word;
        line_cols += wc;
        pos = end + 1;
    }
    return out + line + "\n";
}

std::string fit_text(const std::string& text, std::size_t width) {
    if (width == 0) width = g_table_width;   // 80, or as it is under --wide
    if (width == 0) return text;
    std::string out;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t nl = text.find('\n', at);
        const std::size_t end = nl == std::string::npos ? text.size() : nl;
        const std::string line = text.substr(at, end - at);
        at = end + 1;
        const bool newline = nl != std::string::npos;
        if (columns(line) <= width) {
            out += line + (newline ? "\n" : "");
            continue;
        }
        // The hanging indent: the line's own, and a short leading "label: " past it.
        std::size_t hang = line.find_first_not_of(' ');
        if (hang == std::string::npos) hang = 0;
        const std::size_t colon = line.find(": ", hang);
        if (colon != std::string::npos && colon - hang <= 12 && line.find(' ', hang) > colon) hang = colon + 2;
        if (hang == 0 || hang + 20 > width) hang = 2;   // no indent of its own: continued as wrap_text does
        const auto parts = wrap_lines(line.substr(hang), width - hang);
        for (std::size_t i = 0; i < parts.size(); ++i)
            out += (i == 0 ? line.substr(0, hang) : std::string(hang, ' ')) + parts[i] + "\n";
        if (!newline && !out.empty()) out.pop_back();
    }
    return out;
}

std::string join_fields(const std::vector<std::string>& fields, const std::string& separator, std::size_t width) {
    if (width == 0) width = g_table_width;   // 80, or one line under --wide
    if (width == 0) width = std::numeric_limits<std::size_t>::max();
    std::string out, line;
    std::size_t cols = 0;
    for (const auto& f : fields) {
        if (f.empty()) continue;
        const std::size_t fc = columns(f);
        if (line.empty()) {
            line = f;
            cols = fc;
        } else if (cols + columns(separator) + fc > width) {
            out += line + "\n";
            line = "  " + f;
            cols = 2 + fc;
        } else {
            line += separator + f;
            cols += columns(separator) + fc;
        }
    }
    return out + line + "\n";
}

namespace {

// A cell's text as lines of at most `width` columns, broken at spaces (a longer word stays whole).
std::vector<std::string> wrap_cell(const std::string& text, std::size_t width) {
    std::vector<std::string> lines;
    std::string line;
    std::size_t cols = 0, pos = 0;
    while (pos <= text.size()) {
        const std::size_t end = std::min(text.find(' ', pos), text.size());
        std::string word = text.substr(pos, end - pos);
        // A word wider than the column (a path, a URL) is cut into pieces of the column's width.
        while (columns(word) > width && width > 0) {
            if (!line.empty()) {
                lines.push_back(line);
                line.clear();
                cols = 0;
            }
            std::size_t cut = 0, seen = 0, soft = 0;
            while (cut < word.size() && seen < width) {
                ++cut;
                while (cut < word.size() && (static_cast<unsigned char>(word[cut]) & 0xC0) == 0x80) ++cut;
                ++seen;
                if (std::string_view("_/-,.").find(word[cut - 1]) != std::string_view::npos) soft = cut;
            }
            if (soft > 0 && cut < word.size()) cut = soft;   // after a separator, where one is near
            lines.push_back(word.substr(0, cut));
            word.erase(0, cut);
        }
        const std::size_t wc = columns(word);
        if (!line.empty() && cols + 1 + wc > width) {
            lines.push_back(line);
            line.clear();
            cols = 0;
        }
        if (!word.empty()) {
            if (!line.empty()) {
                line += ' ';
                ++cols;
            }
            line += word;
            cols += wc;
        }
        pos = end + 1;
    }
    if (!line.empty() || lines.empty()) lines.push_back(line);
    return lines;
}

// The narrowest a text column may wrap to: its longest word, but a word over kLongWord columns (a
// path, a URL) is cut rather than widen the table.
constexpr std::size_t kLongWord = 24;
constexpr std::size_t kMinText = 8;
std::size_t longest_word(const std::string& text) {
    std::size_t best = 0, pos = 0;
    while (pos <= text.size()) {
        const std::size_t end = std::min(text.find(' ', pos), text.size());
        best = std::max(best, std::min(kLongWord, columns(std::string_view(text).substr(pos, end - pos))));
        pos = end + 1;
    }
    return best;
}
}   // namespace

void set_table_width(std::size_t cols) { g_table_width = cols; }
std::size_t table_width() { return g_table_width; }

std::vector<std::string> wrap_lines(const std::string& text, std::size_t width) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at <= text.size()) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        for (auto& line : wrap_cell(text.substr(at, end - at), width)) out.push_back(std::move(line));
        at = end + 1;
    }
    return out;
}

namespace {
// Column widths of a table fitted to `limit` columns (0: natural widths): number columns' headings
// wrap first (a header line, not the rows' text), then text columns, the widest first, down to their
// longest word. `ok` is false when that cannot reach the limit or leaves a text column narrower than
// kReadable (and than its natural width).
struct Fit {
    std::vector<std::size_t> w;
    bool ok = true;
    std::size_t total() const {
        std::size_t t = 0;
        for (auto x : w) t += x + 2;
        return t > 2 ? t - 2 : 0;
    }
};
constexpr std::size_t kReadable = 16;

Fit fit_columns(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                const std::vector<bool>& text, std::size_t limit) {
    const std::size_t n = header.size();
    Fit f;
    f.w.assign(n, 0);
    std::vector<std::size_t> floor(n, 0);
    auto measure = [&](const std::vector<std::string>& r, bool head) {
        for (std::size_t i = 0; i < r.size() && i < n; ++i) {
            f.w[i] = std::max(f.w[i], columns(r[i]));
            floor[i] = std::max(floor[i], head || text[i] ? longest_word(r[i]) : columns(r[i]));
        }
    };
    measure(header, true);
    for (const auto& r : rows) measure(r, false);
    const auto natural = f.w;
    while (limit > 0 && f.total() > limit) {
        std::size_t pick = n;
        for (int pass = 0; pass < 2 && pick == n; ++pass)
            for (std::size_t i = 0; i < n; ++i)
                if (text[i] == (pass == 1) && f.w[i] > floor[i] && (pick == n || f.w[i] > f.w[pick])) pick = i;
        if (pick == n) break;   // only numbers and single words left: as narrow as it gets
        // A number column's heading wraps at once; a text column narrows down to the next widest text
        // column at most, so that two long text columns share the wrapping.
        std::size_t next = 0;
        if (text[pick])
            for (std::size_t i = 0; i < n; ++i)
                if (i != pick && text[i] && f.w[i] > floor[i]) next = std::max(next, f.w[i]);
        const std::size_t step = std::min({f.w[pick] - floor[pick], f.total() - limit,
                                           std::max<std::size_t>(1, f.w[pick] > next ? f.w[pick] - next : 1)});
        f.w[pick] -= step;
    }
    f.ok = limit == 0 || f.total() <= limit;
    for (std::size_t i = 0; i < n; ++i)
        if (text[i] && f.w[i] < std::min(natural[i], kReadable)) f.ok = false;
    // Still too wide: text columns cut their words too (after a separator where one is near), the widest
    // first, to kMinText columns; the first column (the row's name) last.
    while (limit > 0 && f.total() > limit) {
        std::size_t pick = n;
        for (int pass = 0; pass < 2 && pick == n; ++pass)
            for (std::size_t i = pass == 0 ? 1 : 0; i < (pass == 0 ? n : 1); ++i)
                if (text[i] && f.w[i] > kMinText && (pick == n || f.w[i] > f.w[pick])) pick = i;
        if (pick == n) break;
        --f.w[pick];
    }
    // A narrowed column is as wide as its widest wrapped line (a heading wrapped to "tp x pp x" /
    // "replicas" takes 9 columns, not the 17 it was allowed).
    if (limit > 0)
        for (std::size_t i = 0; i < n; ++i) {
            if (f.w[i] >= natural[i]) continue;
            std::size_t used = 0;
            auto take = [&](const std::string& cell, bool wraps) {
                if (!wraps) {
                    used = std::max(used, columns(cell));
                    return;
                }
                for (const auto& line : wrap_cell(cell, f.w[i])) used = std::max(used, columns(line));
            };
            take(header[i], true);
            for (const auto& r : rows) take(r[i], text[i]);
            f.w[i] = std::min(f.w[i], used);
        }
    return f;
}
}   // namespace

std::string Table::str() const {
    const std::size_t n = header_.size();
    auto has = [](const std::vector<std::size_t>& v, std::size_t i) {
        return std::find(v.begin(), v.end(), i) != v.end();
    };
    const std::size_t limit = g_table_width;
    // The columns shown, by their index in the table as built; the header, text flags and rows of those.
    std::vector<std::size_t> shown(n);
    for (std::size_t i = 0; i < n; ++i) shown[i] = i;
    std::vector<std::string> header;
    std::vector<bool> text;
    std::vector<std::vector<std::string>> rows;
    auto project = [&] {
        header.clear();
        text.clear();
        rows.assign(rows_.size(), {});
        for (std::size_t c : shown) {
            header.push_back(header_[c]);
            text.push_back(c == 0 || has(left_, c));
            for (std::size_t k = 0; k < rows_.size(); ++k) rows[k].push_back(c < rows_[k].size() ? rows_[k][c] : "");
        }
        return fit_columns(header, rows, text, limit);
    };
    Fit f = project();
    // Optional columns leave, in their order, while the table is wider than the limit at natural widths.
    std::vector<std::string> dropped;
    for (std::size_t c : optional_) {
        if (limit == 0 || fit_columns(header, rows, text, 0).total() <= limit) break;
        if (!has(shown, c)) continue;
        shown.erase(std::find(shown.begin(), shown.end(), c));
        dropped.push_back(header_[c]);
        f = project();
    }
    // A table that cannot fit readably: its detail columns (by default the last, when it is text: a
    // trade-off, a source) leave it and are printed under each row, indented, across the whole width.
    std::vector<std::size_t> moved;
    for (std::size_t c : detail_)
        if (has(shown, c)) moved.push_back(c);
    if (moved.empty() && shown.size() > 2 && (shown.back() == 0 || has(left_, shown.back())))
        moved.push_back(shown.back());
    std::vector<std::string> detail(rows_.size());
    const bool detailed = !f.ok && !moved.empty();
    if (detailed) {
        for (std::size_t c : shown)
            if (has(moved, c))
                for (std::size_t k = 0; k < rows_.size(); ++k)
                    if (c < rows_[k].size() && !rows_[k][c].empty())
                        detail[k] += (detail[k].empty() ? "" : "; ") + header_[c] + ": " + rows_[k][c];
        std::erase_if(shown, [&](std::size_t c) { return has(moved, c); });
        f = project();
    }
    const std::size_t m = shown.size();
    std::string out;
    auto emit = [&](const std::vector<std::string>& r, bool head) {
        std::vector<std::vector<std::string>> cells(m);
        std::size_t height = 1;
        for (std::size_t i = 0; i < m; ++i) {
            cells[i] = head || text[i] ? wrap_cell(r[i], f.w[i]) : std::vector<std::string>{r[i]};
            if (!head && has(clip_, shown[i]) && cells[i].size() > 1 && f.w[i] > 3)
                cells[i] = {wrap_cell(r[i], f.w[i] - 3).front() + "..."};
            height = std::max(height, cells[i].size());
        }
        for (std::size_t k = 0; k < height; ++k) {
            std::string line;
            for (std::size_t i = 0; i < m; ++i) {
                const std::string& cell = k < cells[i].size() ? cells[i][k] : std::string();
                const std::string pad(f.w[i] - std::min(f.w[i], columns(cell)), ' ');
                if (i > 0) line += "  ";
                line += text[i] ? cell + pad : pad + cell;
            }
            while (!line.empty() && line.back() == ' ') line.pop_back();
            out += line + "\n";
        }
    };
    emit(header, true);
    out += std::string(detailed ? std::max(f.total(), limit) : f.total(), '-') + "\n";   // detailed: limit > 0
    for (std::size_t k = 0; k < rows.size(); ++k) {
        emit(rows[k], false);
        if (!detail[k].empty())
            for (const auto& line : wrap_cell(detail[k], limit - 4)) out += "    " + line + "\n";
    }
    if (!dropped.empty())
        out += wrap_text(fmt::format("({} left out to fit {} columns; --wide shows {})", fmt::join(dropped, ", "),
                                     limit, dropped.size() == 1 ? "it" : "them"));
    return out;
}

// Text from logs (host and GPU names) may hold invalid UTF-8: replaced, never an exception.
void print_json(const Json& j) { std::cout << j.dump(2, ' ', false, Json::error_handler_t::replace) << "\n"; }

void check_written(std::ostream& out, const std::string& path, const std::string& flag) {
    out.flush();
    if (out) return;
    const int err = errno;
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) std::filesystem::remove(path, ec);
    throw WriteError(fmt::format("{}{}: cannot be written{}", flag.empty() ? "" : flag + ": ", path,
                                 err != 0 ? fmt::format(" ({})", std::strerror(err)) : std::string()));
}

}   // namespace llmsim::cli
