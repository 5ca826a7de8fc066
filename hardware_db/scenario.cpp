#include "hardware_db/scenario.hpp"

#include "hardware_db/arrivals.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "hardware_db/engines.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/layout_rules.hpp"
#include "hardware_db/limits.hpp"
#include "hardware_db/scenario_keys.hpp"
#include "schedules/schedule.hpp"

namespace llmsim {

namespace {

Precision read_precision(KeyReader& r, const std::string& key, Precision dflt) {
    auto v = r.choice_key(key);
    if (!v) return dflt;
    return *precision_from_string(*v);
}

void read_parallel(KeyReader& r, Scenario& s, bool& dp_given) {
    auto& p = s.parallel;
    p.tp = static_cast<int>(r.int_key_or("tp", 1));
    p.pp = static_cast<int>(r.int_key_or("pp", 1));
    p.cp = static_cast<int>(r.int_key_or("cp", 1));
    p.ep = static_cast<int>(r.int_key_or("ep", 1));
    p.vp = static_cast<int>(r.int_key_or("vp", 1));
    dp_given = r.has("dp");
    p.dp = static_cast<int>(r.int_key_or("dp", 1));
    p.sequence_parallel = r.boolean_or("sequence_parallel", false);
    p.zero = static_cast<int>(r.int_key_or("zero", 0));
    p.overlap_grad_reduce = r.boolean_or("overlap_grad_reduce", true);
    p.overlap_param_gather = r.boolean_or("overlap_param_gather", true);
    p.tp_comm_overlap = r.boolean_or("tp_comm_overlap", false);
    const auto fw = r.choice_key("framework");
    p.framework = fw ? framework_from_string(*fw).value_or(Framework::unspecified) : Framework::unspecified;
    p.torch_compile = r.boolean_or("torch_compile", false);
    if (const Json* tc = r.get("torch_compile"); tc && tc->is_boolean() && !pytorch_module_framework(p.framework))
        r.problems().add(
            r.ptr("torch_compile"), *tc,
            fmt::format("only with parallel.framework torchtitan, deepspeed or llm-foundry (here {}; "
                        "Megatron-LM and NeMo run Transformer Engine's fused kernels)",
                        p.framework == Framework::unspecified ? std::string("none is named")
                                                              : fmt::format("\"{}\"", to_string(p.framework))));
    const Json* sv = r.get("schedule");
    p.schedule = &default_schedule(p.vp);
    if (sv) {
        const ScheduleDef* found = sv->is_string() ? find_schedule(sv->get<std::string>()) : nullptr;
        if (!found) {
            r.problems().add(r.ptr("schedule"), *sv, "one of " + schedule_names(true));
        } else {
            p.schedule = found;
            if (p.vp > 1 && !found->uses_chunks)
                r.problems().add(r.ptr("schedule"), *sv,
                                 fmt::format("a schedule with model chunks (\"{}\") when vp > 1 (vp = {})",
                                             default_schedule(2).name, p.vp));
            if (p.vp == 1 && found->uses_chunks)
                r.problems().add(r.ptr("vp"), Json(p.vp),
                                 fmt::format("vp > 1 (model chunks per stage) for the {} schedule", found->name));
        }
    }
}

std::optional<ModelSpec> read_optional_model(KeyReader& r, const std::string& key, const Database& db,
                                             const std::string& base_dir) {
    const Json* v = r.get(key);
    if (!v) return std::nullopt;
    return db.resolve_model(*v, r.ptr(key), r.problems(), base_dir);
}

// The 16-bit precision a scenario computes and stores in when it states none: the system's chip's
// (bf16, or fp16 on chips without bf16 tensor cores such as the V100); bf16 while the system is unresolved.
Precision default_precision(const Scenario& s) {
    const auto& g = s.system.gpu;
    return g.peak(Precision::bf16) > 0 || g.peak(Precision::fp16) > 0 ? g.half_precision() : Precision::bf16;
}

void read_training(KeyReader& r, Scenario& s, const Database& db, const std::string& base_dir) {
    auto& t = s.training;
    t.seq_len = r.int_key_or("seq_len", 2048);
    t.micro_batch = r.int_key_or("micro_batch", 1);
    t.global_batch = r.int_key_or("global_batch", -1);
    t.precision = read_precision(r, "precision", default_precision(s));
    t.grad_precision = read_precision(r, "grad_precision", Precision::fp32);
    t.grad_precision_unstated = !r.has("grad_precision");
    const auto rc = r.choice_key("recompute").value_or("none");
    t.recompute = rc == "full" ? Recompute::full : rc == "selective" ? Recompute::selective : Recompute::none;
    t.recompute_num_layers = static_cast<int>(r.int_key_or("recompute_num_layers", 0));
    t.activation_offload_layers = static_cast<int>(r.int_key_or("activation_offload_layers", 0));
    t.fp8_params = r.boolean_or("fp8_params", false);
    t.flash_attention = r.boolean_or("flash_attention", true);
    const auto opt = r.choice_key("optimizer").value_or("adam");
    t.optimizer = opt == "sgd" ? Optimizer::sgd : opt == "adafactor" ? Optimizer::adafactor : Optimizer::adam;
    t.optimizer_state_precision = read_precision(r, "optimizer_state_precision", Precision::fp32);
    t.master_weights_unstated = !r.has("master_weights");
    const auto mw = r.choice_key("master_weights").value_or("fp32");
    t.master_weights = mw == "remainder" ? MasterWeights::remainder
                       : mw == "none"    ? MasterWeights::none
                                         : MasterWeights::fp32;
    const auto off = r.choice_key("offload").value_or("none");
    t.offload = off == "optimizer"          ? Offload::optimizer
                : off == "optimizer+params" ? Offload::optimizer_params
                                            : Offload::none;
    t.runtime_reserve_bytes = r.num_key_or("runtime_reserve_bytes", t.runtime_reserve_bytes);
    t.fragmentation_fraction = r.num_key_or("fragmentation_fraction", t.fragmentation_fraction);
    if (auto tok = r.num_key("token_budget")) t.token_budget = *tok;
    if (const Json* ft = r.get("finetune")) {
        KeyReader fr(*ft, r.ptr("finetune"), r.problems(), "/training/finetune");
        const auto method = fr.choice_key("method").value_or("none");
        t.finetune.method = method == "lora"    ? FinetuneConfig::Method::lora
                            : method == "qlora" ? FinetuneConfig::Method::qlora
                                                : FinetuneConfig::Method::none;
        t.finetune.rank = static_cast<int>(fr.int_key_or("rank", 16));
        if (const Json* tg = fr.get("targets")) {
            const std::vector<std::string>& known = fr.spec("targets").choices;
            std::vector<std::string> targets;
            bool ok = tg->is_array() && !tg->empty();
            if (ok)
                for (const auto& x : *tg) {
                    if (!x.is_string() || std::find(known.begin(), known.end(), x.get<std::string>()) == known.end()) {
                        ok = false;
                        break;
                    }
                    targets.push_back(x.get<std::string>());
                }
            if (!ok) {
                fr.problems().add(fr.ptr("targets"), *tg, "a non-empty array of q, k, v, o, gate, up, down");
            } else {
                // Each target once (a repeated one was counted again), and one the model has.
                for (std::size_t i = 0; i < targets.size(); ++i) {
                    const std::string at = fmt::format("{}/{}", fr.ptr("targets"), i);
                    const auto first = std::find(targets.begin(), targets.end(), targets[i]) - targets.begin();
                    if (static_cast<std::size_t>(first) != i)
                        fr.problems().add(at, Json(targets[i]),
                                          fmt::format("each target once (\"{}\" is already at {}/{})", targets[i],
                                                      fr.ptr("targets"), first));
                    if (targets[i] == "gate" && s.model.layers > 0 && s.model.mlp != MlpKind::swiglu)
                        fr.problems().add(at, Json(targets[i]),
                                          "a projection the model has: its GeLU MLP has no gate (up, down)");
                }
                t.finetune.targets = targets;
            }
        }
        // A rank or targets without an adapter method train nothing.
        if (t.finetune.method == FinetuneConfig::Method::none)
            for (const char* key : {"rank", "targets"})
                if (fr.has(key))
                    fr.problems().add(fr.ptr(key), *fr.get(key),
                                      "no such key with method \"none\" (full fine-tuning trains every weight; "
                                      "method \"lora\" or \"qlora\" trains adapters of this rank and targets)");
        fr.finish();
    }
    if (const Json* rl = r.get("rlhf")) {
        KeyReader rr(*rl, r.ptr("rlhf"), r.problems(), "/training/rlhf");
        t.rlhf.enabled = rr.boolean_or("enabled", true);
        t.rlhf.critic = read_optional_model(rr, "critic", db, base_dir);
        t.rlhf.reference = read_optional_model(rr, "reference", db, base_dir);
        t.rlhf.reward = read_optional_model(rr, "reward", db, base_dir);
        if (rr.get("prompt_len"))
            t.rlhf.prompt_len = rr.integer_or("prompt_len", 0, 1, std::max<std::int64_t>(1, t.seq_len - 1));
        if (t.seq_len < 2 && t.rlhf.enabled)
            r.problems().add(r.ptr("seq_len"), Json(t.seq_len), "at least 2 with rlhf (a prompt and a response)");
        t.rlhf.ppo_epochs = static_cast<int>(rr.int_key_or("ppo_epochs", 1));
        // A disabled PPO iteration reads none of its other keys: refuse them rather than ignore them.
        if (!t.rlhf.enabled)
            if (const Json* obj = r.get("rlhf"); obj && obj->is_object())
                for (const auto& [key, value] : obj->items())
                    if (key != "enabled")
                        rr.problems().add(rr.ptr(key), value,
                                          "no such key with \"enabled\": false (the PPO iteration is not run; "
                                          "remove the key or enable rlhf)");
        rr.finish();
    }
}

// `input_len` / `output_len`: an integer or {mean, dist, stdev, min, max}.
LengthDist read_length(KeyReader& r, const std::string& key, double dflt) {
    LengthDist d;
    d.mean = dflt;
    const Json* v = r.get(key);
    if (!v) return d;
    const std::string at = r.ptr(key);
    const auto& spec = r.spec(key);
    if (v->is_number_integer()) {
        const auto n = v->get<std::int64_t>();
        if (n < spec.imin || n > spec.imax)
            r.problems().add(
                at, *v, fmt::format("an integer in [{}, {}] (tokens) or a distribution object", spec.imin, spec.imax));
        else
            d.mean = static_cast<double>(n);
        return d;
    }
    if (!v->is_object()) {
        r.problems().add(at, *v, "an integer (tokens) or {\"mean\", \"dist\", \"stdev\", \"min\", \"max\"}");
        return d;
    }
    KeyReader o(*v, at, r.problems(), "/inference/" + key);
    const std::size_t before_dist = r.problems().lines.size();
    const auto kind = o.choice_key("dist").value_or("fixed");
    const bool dist_refused = r.problems().lines.size() > before_dist;   // then the family is unknown
    d.kind = kind == "normal"        ? LengthDist::Kind::normal
             : kind == "uniform"     ? LengthDist::Kind::uniform
             : kind == "exponential" ? LengthDist::Kind::exponential
             : kind == "lognormal"   ? LengthDist::Kind::lognormal
                                     : LengthDist::Kind::fixed;
    d.min = o.num_key_or("min", 1.0);
    d.max = o.num_key_or("max", o.spec("max").max);
    // A uniform length given by its bounds alone: uniform on [min, max], its mean their midpoint and its
    // stdev (max − min)/√12 (the contract: "needs only min and max ... stdev optional"); with a stdev, the
    // uniform of that spread about the mean (the midpoint unless given), restricted to [min, max] like every
    // family.
    const bool bounded_uniform = d.kind == LengthDist::Kind::uniform && o.has("min") && o.has("max");
    const bool by_bounds = bounded_uniform && !o.has("stdev");
    const std::size_t problems_before = r.problems().lines.size();
    if (bounded_uniform && !o.has("mean")) {
        d.mean = 0.5 * (d.min + d.max);
    } else {
        d.mean = o.required_num_key("mean");
        if (by_bounds && d.max >= d.min && std::fabs(d.mean - 0.5 * (d.min + d.max)) > 1e-9 * d.max)
            r.problems().add(at + "/mean", Json(d.mean),
                             fmt::format("the midpoint of [min, max] = {} for a uniform length given by its bounds "
                                         "(or a stdev)",
                                         0.5 * (d.min + d.max)));
    }
    const bool mean_read = r.problems().lines.size() == problems_before;   // (a missing or bad mean is said once)
    const std::size_t before_stdev = r.problems().lines.size();
    d.stdev = by_bounds ? (d.max - d.min) / std::sqrt(12.0) : o.num_key_or("stdev", 0.0);
    const bool stdev_refused = r.problems().lines.size() > before_stdev;   // out of range or not a number
    o.finish();
    const bool spread = d.kind != LengthDist::Kind::fixed && d.kind != LengthDist::Kind::exponential;
    if (d.max < d.min) {
        r.problems().add(at + "/max", Json(d.max), fmt::format(">= min ({})", d.min));
    } else if (by_bounds && d.max == d.min) {
        r.problems().add(at + "/max", Json(d.max), fmt::format("> min ({}) for a uniform length", d.min));
    } else if (mean_read && (d.mean < d.min || d.mean > d.max)) {
        // The lengths are drawn within [min, max] with this mean (sim/length_dist.hpp).
        r.problems().add(at + "/mean", Json(d.mean), fmt::format("within [min, max] = [{}, {}]", d.min, d.max));
    }
    // (Not again for a stdev the reader refused above, nor for one the bounds gave: their problem is said.)
    // A stdev the family cannot take would be dropped without a word: refused.
    if (!spread && o.has("stdev") && !stdev_refused && !dist_refused && mean_read) {
        if (d.kind == LengthDist::Kind::fixed && d.stdev > 0)
            r.problems().add(at + "/stdev", Json(d.stdev),
                             fmt::format("0 or no stdev for a fixed length (every request {} tokens): a spread needs "
                                         "\"dist\" normal, uniform or lognormal",
                                         d.mean));
        else if (d.kind == LengthDist::Kind::exponential && d.stdev > 0 &&
                 std::fabs(d.stdev - d.mean) > 1e-9 * std::max(1.0, d.mean))
            r.problems().add(
                at + "/stdev", Json(d.stdev),
                fmt::format("the mean ({}), 0 or no stdev: an exponential length's stdev is its mean", d.mean));
    }
    if (spread && d.stdev <= 0 && o.has("dist") && !by_bounds && !stdev_refused)
        r.problems().add(at + "/stdev", Json(d.stdev), fmt::format("> 0 for a {} distribution", kind));
    return d;
}

// inference.arrivals: the trace replaces the stream's lengths (input_len and output_len then describe
// it: its mean, spread and bounds, which the closed form and the bounds read) and, unless stated, its
// request count (its rows; a longer stream repeats it).
void read_arrivals(KeyReader& r, InferenceConfig& in, const std::string& base_dir) {
    const auto path = r.string("arrivals");
    if (!path) return;
    try {
        in.arrivals = read_arrival_trace(resolve_path(*path, base_dir), *path);
    } catch (const ConfigError& e) {
        for (const auto& l : e.problems()) r.problems().add_raw(r.ptr("arrivals") + ": " + l);
        return;
    }
    for (const char* k : {"input_len", "output_len", "seed"})
        if (r.has(k))
            r.problems().add(r.ptr(k), *r.get(k),
                             fmt::format("no {} with /inference/arrivals (the trace gives every request's lengths "
                                         "and times)",
                                         k));
    auto stats = [&](auto len) {
        LengthDist d;
        double sum = 0, sq = 0;
        d.min = 1e300;
        d.max = 0;
        for (const auto& q : in.arrivals->rows) {
            const double x = len(q);
            sum += x;
            sq += x * x;
            d.min = std::min(d.min, x);
            d.max = std::max(d.max, x);
        }
        const double n = static_cast<double>(in.arrivals->rows.size());
        d.mean = sum / n;
        d.stdev = std::sqrt(std::max(0.0, sq / n - d.mean * d.mean));
        d.kind = d.stdev > 0 ? LengthDist::Kind::lognormal : LengthDist::Kind::fixed;
        return d;
    };
    in.input_dist = stats([](const TraceRequest& q) { return static_cast<double>(q.input); });
    in.output_dist = stats([](const TraceRequest& q) { return static_cast<double>(q.output); });
    in.input_len = std::max<std::int64_t>(1, std::llround(in.input_dist.mean));
    in.output_len = std::max<std::int64_t>(1, std::llround(in.output_dist.mean));
    if (!r.has("requests")) in.requests = static_cast<std::int64_t>(in.arrivals->rows.size());
}

// An SLO object (/inference/slo, a class's slo): its keys are /inference/slo's wherever it is.
ServingSlo read_slo(const Json& v, const std::string& at, Problems& problems) {
    KeyReader o(v, at, problems, "/inference/slo");
    ServingSlo slo;
    slo.ttft_p99_s = o.num_key("ttft_p99_s");
    slo.tpot_p99_s = o.num_key("tpot_p99_s");
    slo.ttft_p90_s = o.num_key("ttft_p90_s");
    slo.tpot_p90_s = o.num_key("tpot_p90_s");
    o.finish();
    return slo;
}

// A class name: 1 to 32 letters, digits, '-', '_' or '.', so that it reads the same in a JSON pointer, a
// table and a file name.
bool valid_class_name(const std::string& name) {
    return !name.empty() && name.size() <= 32 && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
               c == '.';
    });
}

// The moments of a mixture of lengths (the classes' by share): its mean, its spread by the law of total
// variance, its bounds the classes' widest; a fixed length when every class draws the same one.
LengthDist mixture(const std::vector<RequestClass>& classes, LengthDist RequestClass::*len) {
    LengthDist d;
    double mean = 0, second = 0;
    d.min = 1e300;
    d.max = 0;
    for (const auto& c : classes) {
        const LengthDist& x = c.*len;
        mean += c.share * x.mean;
        second += c.share * (x.stdev * x.stdev + x.mean * x.mean);
        d.min = std::min(d.min, x.is_fixed() ? x.mean : x.min);
        d.max = std::max(d.max, x.is_fixed() ? x.mean : x.max);
    }
    d.mean = mean;
    d.stdev = std::sqrt(std::max(0.0, second - mean * mean));
    d.kind = d.stdev > 1e-9 * std::max(1.0, mean) ? LengthDist::Kind::lognormal : LengthDist::Kind::fixed;
    if (d.kind == LengthDist::Kind::fixed) {
        d.stdev = 0;
        d.min = 1;
        d.max = 1e9;
    }
    return d;
}

// inference.classes: each class's share (normalised to sum 1), its lengths (the scenario's unless stated)
// and its SLO (the scenario's unless stated; a class may state one only beside the scenario's, which is the
// question's switch). The scenario's input_dist and output_dist become the mixture's.
void read_classes(KeyReader& r, InferenceConfig& in) {
    const Json* v = r.get("classes");
    if (!v) return;
    const std::string at = r.ptr("classes");
    if (!v->is_object() || v->empty() || v->size() > RequestClass::kMaxClasses) {
        r.problems().add(at, *v,
                         fmt::format("an object of 1 to {} classes by name, each {{\"share\", \"input_len\", "
                                     "\"output_len\", \"slo\"}}",
                                     RequestClass::kMaxClasses));
        return;
    }
    if (in.arrivals) {
        r.problems().add(at, *v, "no classes with /inference/arrivals (the trace gives every request's lengths)");
        return;
    }
    double total = 0;
    for (const auto& [name, c] : v->items()) {
        const std::string ptr = at + "/" + name;
        if (!valid_class_name(name)) {
            r.problems().add_raw(fmt::format("{}: a class named {}: expected 1 to 32 letters, digits, '-', '_' or '.'",
                                             at, Json(name).dump()));
            continue;
        }
        if (!c.is_object()) {
            r.problems().add(ptr, c, "an object {\"share\", \"input_len\", \"output_len\", \"slo\"}");
            continue;
        }
        KeyReader o(c, ptr, r.problems(), "/inference/classes/NAME");
        RequestClass rc;
        rc.name = name;
        rc.share = o.required_num_key("share");
        rc.input_stated = o.has("input_len");
        rc.input_dist = rc.input_stated ? read_length(o, "input_len", 128) : in.input_dist;
        rc.output_dist = o.has("output_len") ? read_length(o, "output_len", 128) : in.output_dist;
        rc.slo = in.slo;
        if (const Json* sl = o.get("slo")) {
            if (!in.slo.any())
                r.problems().add(o.ptr("slo"), *sl,
                                 "no class SLO without /inference/slo (the default of the classes that state none, "
                                 "and what makes the question one of latency)");
            else
                rc.slo = read_slo(*sl, o.ptr("slo"), r.problems());
        }
        o.finish();
        if (rc.share > 0) total += rc.share;
        in.classes.push_back(std::move(rc));
    }
    if (!(total > 0) || in.classes.empty()) return;
    for (auto& c : in.classes) c.share /= total;
    in.input_dist = mixture(in.classes, &RequestClass::input_dist);
    in.output_dist = mixture(in.classes, &RequestClass::output_dist);
    in.input_len = std::max<std::int64_t>(1, std::llround(in.input_dist.mean));
    in.output_len = std::max<std::int64_t>(1, std::llround(in.output_dist.mean));
}

void read_inference(KeyReader& r, Scenario& s, const Database& db, const std::string& base_dir) {
    auto& in = s.inference;
    in.batch = r.int_key_or("batch", 1);
    in.input_dist = read_length(r, "input_len", 128);
    in.output_dist = read_length(r, "output_len", 128);
    in.input_len = std::max<std::int64_t>(1, std::llround(in.input_dist.mean));
    in.output_len = std::max<std::int64_t>(1, std::llround(in.output_dist.mean));
    const Precision half = default_precision(s);
    in.weight_precision = read_precision(r, "weight_precision", half);
    in.kv_precision = read_precision(r, "kv_precision", half);
    // Compute runs at the weight precision where the chip has tensor cores for it, else at its 16-bit one.
    in.compute_precision = read_precision(r, "compute_precision", half);
    in.quant_group_size = static_cast<int>(r.int_key_or("quant_group_size", 128));
    in.batching =
        r.choice_key("batching").value_or("static") == "continuous" ? Batching::continuous : Batching::static_batches;
    in.cuda_graphs = r.boolean_or("cuda_graphs", false);
    in.host_per_sequence_us = r.num_key_or("host_per_sequence_us", InferenceConfig{}.host_per_sequence_us);
    in.kv_reserve = r.choice_key("kv_admission").value_or("on_demand") == "reserve";
    in.requests = r.int_key_or("requests", 1000);
    in.price_per_gpu_hour = r.num_key_or("price_per_gpu_hour", 0.0);
    read_arrivals(r, in, base_dir);
    if (const Json* q = r.get("qps"); q && q->is_string()) {
        if (*q == "max")
            in.qps_max = true;
        else
            r.problems().add(r.ptr("qps"), *q, "a rate in requests/s, or \"max\"");
    } else {
        in.qps = r.num_key_or("qps", 0.0);
    }
    in.max_batch = r.int_key_or("max_batch", 0);
    in.max_batch_tokens = r.int_key_or("max_batch_tokens", 0);
    in.prefix_cache_hit = r.num_key_or("prefix_cache_hit", 0.0);
    in.seed = static_cast<std::uint64_t>(r.int_key_or("seed", 1));
    if (r.has("arrival_cv")) {
        in.arrival_cv = r.num_key_or("arrival_cv", 1.0);
        const char* why = in.arrivals ? "no arrival_cv with /inference/arrivals (the trace gives every "
                                        "arrival)"
                          : !in.qps_max && !(in.qps > 0)
                              ? "/inference/qps with it (offline, every request arrives at once)"
                              : nullptr;
        if (why) r.problems().add(r.ptr("arrival_cv"), *r.get("arrival_cv"), why);
    }
    if (const Json* pj = r.get("rate_profile")) {
        KeyReader o(*pj, r.ptr("rate_profile"), r.problems(), "/inference/rate_profile");
        auto& p = in.rate_profile;
        p.period_s = o.num_key_or("period_s", 86400.0);
        const ScenarioKey& lk = o.spec("levels");
        const Json* lj = o.get("levels");
        if (!lj && o.ok())
            r.problems().add_raw(fmt::format("{}: missing: expected an array of numbers", o.ptr("levels")));
        if (lj) {
            constexpr std::size_t kMaxLevels = RateProfile::kMaxSlices;
            bool ok = lj->is_array() && !lj->empty() && lj->size() <= kMaxLevels;
            double sum = 0;
            for (std::size_t i = 0; ok && i < lj->size(); ++i) {
                const Json& v = (*lj)[i];
                ok = v.is_number() && v.get<double>() >= lk.min && v.get<double>() <= lk.max;
                if (ok) {
                    p.levels.push_back(v.get<double>());
                    sum += p.levels.back();
                }
            }
            if (ok && !(sum > 0)) ok = false;
            if (!ok) {
                p.levels.clear();
                r.problems().add(
                    o.ptr("levels"), *lj,
                    fmt::format("an array of 1 to {} numbers in [0, {}], at least one above 0", kMaxLevels, lk.max));
            } else {
                const double mean = sum / static_cast<double>(p.levels.size());
                for (auto& v : p.levels) v /= mean;   // qps is the mean rate
            }
        }
        o.finish();
        const char* why = in.arrivals ? "no rate_profile with /inference/arrivals (the trace gives every arrival)"
                          : !in.qps_max && !(in.qps > 0)
                              ? "/inference/qps with it (offline, every request arrives at once)"
                              : nullptr;
        if (why) r.problems().add(r.ptr("rate_profile"), *pj, why);
        if (why || p.levels.empty()) p = RateProfile{};
    }
    if (const Json* sp = r.get("speculative")) {
        KeyReader o(*sp, r.ptr("speculative"), r.problems(), "/inference/speculative");
        auto& spec = in.speculative;
        spec.enabled = o.ok();
        spec.method = o.choice_key("method").value_or("draft");
        spec.tokens = static_cast<int>(o.int_key_or("tokens", 4));
        if (spec.method == "draft") {
            if (const Json* dm = o.get("draft_model")) {
                const std::size_t before = r.problems().lines.size();
                spec.draft_model = db.resolve_model(*dm, o.ptr("draft_model"), r.problems(), base_dir);
                // A draft proposes the target's own tokens: the same vocabulary (a draft with another was priced).
                if (r.problems().lines.size() == before && spec.draft_model && s.model.vocab > 0 &&
                    spec.draft_model->vocab != s.model.vocab)
                    r.problems().add(o.ptr("draft_model"), *dm,
                                     fmt::format("a draft with the target's vocabulary ({} tokens; {} has {}): it "
                                                 "proposes the target's tokens",
                                                 s.model.vocab, spec.draft_model->name, spec.draft_model->vocab));
            } else if (o.ok()) {
                r.problems().add_raw(o.ptr("draft_model") +
                                     ": missing: expected the draft model (a model-zoo name or object) or a "
                                     "\"method\" with \"acceptance_length\"");
            }
            spec.acceptance = o.num_key_or("acceptance", 0.7);
        } else {
            if (auto l = o.num_key("acceptance_length"))
                spec.acceptance_length = *l;
            else if (o.ok() && !o.has("acceptance_length"))
                r.problems().add_raw(o.ptr("acceptance_length") +
                                     ": missing: expected the mean tokens accepted per target step (>= 1)");
            if (spec.acceptance_length && *spec.acceptance_length > spec.tokens + 1)
                r.problems().add(o.ptr("acceptance_length"), Json(*spec.acceptance_length),
                                 fmt::format("at most tokens + 1 = {}", spec.tokens + 1));
        }
        o.finish();
    }
    if (const Json* e = r.get("engine")) {
        KeyReader o(*e, r.ptr("engine"), r.problems(), "/inference/engine");
        if (o.ok()) {
            const std::string name = o.choice_key("name").value_or("");
            if (const auto kind = engine_from_string(name)) {
                in.engine.kind = *kind;
                in.engine.stated = true;
            } else if (!o.has("name")) {
                r.problems().add_raw(o.ptr("name") + ": missing: expected one of " + key_accepted_text(o.spec("name")));
            }
            if (const auto v = o.string("version")) {
                const auto parsed = parse_engine_version(*v);
                const EngineVersion first = first_release(in.engine.kind);
                if (parsed && *parsed < first)
                    r.problems().add(o.ptr("version"), Json(*v),
                                     fmt::format("a release of {} ({} or later: its first public release)",
                                                 to_string(in.engine.kind), to_string(first)));
                else if (parsed)
                    in.engine.version = parsed;
                else
                    r.problems().add(o.ptr("version"), Json(*v),
                                     "a release number MAJOR[.MINOR[.PATCH]] of decimal integers in [0, 9999]");
            }
        }
        o.finish();
    }
    if (const Json* sl = r.get("slo")) in.slo = read_slo(*sl, r.ptr("slo"), r.problems());
    read_classes(r, in);
    if (const Json* dj = r.get("disaggregation")) {
        KeyReader o(*dj, r.ptr("disaggregation"), r.problems(), "/inference/disaggregation");
        auto& d = in.disaggregation;
        d.prefill_gpus = static_cast<int>(o.required_int_key("prefill_gpus"));
        d.prefill_tp = static_cast<int>(o.int_key_or("prefill_tp", s.parallel.tp));
        d.prefill_ep = static_cast<int>(o.int_key_or("prefill_ep", 1));
        const auto link = o.num_key("link_GBps");
        d.link_stated = link.has_value();
        d.link_GBps = link.value_or(0.0);
        o.finish();
        if (d.prefill_gpus > 0 && d.prefill_tp > 0 && d.prefill_gpus % d.prefill_tp != 0)
            r.problems().add(o.ptr("prefill_gpus"), Json(d.prefill_gpus),
                             fmt::format("a multiple of prefill_tp ({}): whole prefill replicas", d.prefill_tp));
    }
    if (const Json* aj = r.get("autoscale")) {
        KeyReader o(*aj, r.ptr("autoscale"), r.problems(), "/inference/autoscale");
        auto& a = in.autoscale;
        a.target_outstanding = o.required_num_key("target_outstanding");
        a.min_replicas = static_cast<int>(o.int_key_or("min_replicas", 1));
        a.max_replicas = static_cast<int>(o.int_key_or("max_replicas", 0));
        a.storage_GBps = o.required_num_key("storage_GBps");
        a.engine_start_s = o.num_key_or("engine_start_s", 0.0);
        a.interval_s = o.num_key_or("interval_s", 2.0);
        a.window_s = o.num_key_or("window_s", 60.0);
        a.scale_down_delay_s = o.num_key_or("scale_down_delay_s", 300.0);
        o.finish();
        const char* why = in.qps_max ? "no autoscale with qps \"max\" (a capacity is a fixed deployment's)"
                          : !(in.qps > 0) && !in.arrivals
                              ? "/inference/qps or /inference/arrivals with it (offline, every request arrives at once)"
                          : in.disaggregation.enabled() ? "no autoscale with disaggregation (one pool of replicas)"
                                                        : nullptr;
        if (why) r.problems().add(r.ptr("autoscale"), *aj, why);
        if (a.max_replicas > 0 && a.min_replicas > a.max_replicas)
            r.problems().add(o.ptr("min_replicas"), Json(a.min_replicas),
                             fmt::format("at most max_replicas ({})", a.max_replicas));
        if (why || !o.ok()) a = Autoscale{};
    }
    if (const Json* ej = r.get("expert_parallel")) {
        KeyReader o(*ej, r.ptr("expert_parallel"), r.problems(), "/inference/expert_parallel");
        auto& e = in.expert_parallel;
        e.load_imbalance = o.num_key_or("load_imbalance", 0.0);
        e.two_batch_overlap = o.boolean_or("two_batch_overlap", false);
        e.redundant_experts = static_cast<int>(o.int_key_or("redundant_experts", 0));
        o.finish();
        if (s.parallel.ep <= 1 && in.disaggregation.prefill_ep <= 1)
            r.problems().add(r.ptr("expert_parallel"), *ej,
                             fmt::format("only with parallel.ep > 1 (here {}) or disaggregation.prefill_ep > 1: the "
                                         "routed experts spread over ep replicas",
                                         s.parallel.ep));
    }
    if (const Json* pj = r.get("shared_prefix")) {
        KeyReader o(*pj, r.ptr("shared_prefix"), r.problems(), "/inference/shared_prefix");
        auto& p = in.shared_prefix;
        p.groups = o.int_key_or("groups", 0);
        p.tokens = o.int_key_or("tokens", 0);
        p.zipf = o.num_key_or("zipf", 0.0);
        for (const char* k : {"groups", "tokens"})
            if (!o.has(k))
                r.problems().add_raw(
                    fmt::format("{}/{}: missing: expected a positive integer", r.ptr("shared_prefix"), k));
        o.finish();
        // One account of the prefix cache: the stated hit share, or the prefixes the stream shares.
        const char* why = in.prefix_cache_hit > 0 ? "no shared_prefix with prefix_cache_hit (a stated hit share; the "
                                                    "shared prefixes give their own hits)"
                          : !in.continuous()      ? "shared_prefix with batching \"continuous\" (a static batch "
                                                    "prefills its prompts together)"
                          : in.disaggregation.enabled()
                              ? "no shared_prefix with disaggregation (the prefill pool's prefix cache is not "
                                "modelled)"
                              : nullptr;
        if (why) r.problems().add(r.ptr("shared_prefix"), *pj, why);
    }
    EngineStated stated;
    stated.max_batch = r.has("max_batch");
    stated.max_batch_tokens = r.has("max_batch_tokens");
    stated.cuda_graphs = r.has("cuda_graphs");
    stated.kv_admission = r.has("kv_admission");
    if (const auto p = r.choice_key("scheduler")) {
        stated.scheduler = true;
        in.scheduler = scheduler_policy_from_string(*p).value_or(SchedulerPolicy::inflight);
    }
    if (const auto p = r.choice_key("router"))
        in.router = router_policy_from_string(*p).value_or(RouterPolicy::round_robin);
    apply_engine_defaults(in, s.system.gpu, s.model, stated);
    // A trace replays at its own rate unless `qps` rescales it.
    if (in.arrivals && !r.has("qps")) {
        in.qps = in.arrivals->rate_qps(static_cast<std::size_t>(in.requests));
        // Its own rate bounded as a stated qps is (two rows 1e-300 s apart replayed at 1e300 req/s).
        const std::size_t n = std::min(in.arrivals->rows.size(), static_cast<std::size_t>(in.requests));
        if (in.qps > 0 && !(in.qps >= limits::kMinQps && in.qps <= limits::kMaxQps) && n > 1)
            r.problems().add(
                r.ptr("arrivals"), Json(in.arrivals->path),
                fmt::format("a trace arriving at a rate in [{:g}, {:g}] req/s, as /inference/qps (its "
                            "first {} rows span {:.3g} s: {:.3g} req/s), or a qps rescaling it",
                            limits::kMinQps, limits::kMaxQps, n, in.arrivals->rows[n - 1].arrival_s, in.qps));
    }
    // A trace whose rows used all arrive at one instant has no rate to scale: a qps would be said and not run.
    if (in.arrivals && r.has("qps") && (in.qps > 0 || in.qps_max) &&
        !(in.arrivals->rate_qps(static_cast<std::size_t>(in.requests)) > 0))
        r.problems().add(r.ptr("qps"), *r.get("qps"),
                         "no qps with a trace whose rows all arrive at one instant (their times cannot be scaled to "
                         "a rate): spread its arrival_s, or leave qps out (every request at once, offline)");
    if (r.has("window_s")) {
        in.window_s = r.num_key_or("window_s", 0.0);
        if (!in.qps_max && !(in.qps > 0)) {
            r.problems().add(r.ptr("window_s"), *r.get("window_s"),
                             "/inference/qps or /inference/arrivals with it (offline, every request arrives at once)");
            in.window_s = 0;
        }
    }
    if (in.qps_max && !in.slo.any())
        r.problems().add(r.ptr("qps"), Json("max"),
                         "a number, or \"max\" with /inference/slo (ttft_p99_s, tpot_p99_s, ttft_p90_s and/or "
                         "tpot_p90_s): the largest rate "
                         "meeting it");
}

// tp·pp·cp (and dp when given) at most limits::kGpus, checked one factor at a time before any other
// arithmetic uses the product; the first factor that takes it beyond is reported.
bool layout_products_ok(const ParallelConfig& p, bool dp_given, Problems& pr) {
    const std::pair<const char*, int> factors[] = {{"tp", p.tp}, {"pp", p.pp}, {"cp", p.cp}, {"dp", p.dp}};
    std::int64_t product = 1;
    std::string names, values;
    for (int i = 0; i < (dp_given ? 4 : 3); ++i) {
        const auto& [key, v] = factors[i];
        names = i ? fmt::format("{}·{}", names, key) : std::string(key);
        values = i ? fmt::format("{}·{}", values, v) : std::to_string(v);
        product = limits::checked_mul(product, v).value_or(INT64_MAX);
        if (product > limits::kGpus) {
            pr.add(std::string("/parallel/") + key, Json(v),
                   fmt::format("{} at most {} GPUs (here {} = {})", names, limits::kGpus, values, product));
            return false;
        }
    }
    return true;
}

std::string product_text(const ParallelConfig& p) {
    return fmt::format("tp·pp·cp = {}·{}·{} = {}", p.tp, p.pp, p.cp, p.tp * p.pp * p.cp);
}

// Sequences beyond the context length the model's source states (ModelSpec::max_seq_len_stated): a
// learned position table has no entry past it (training or inference); a serving engine refuses a
// request longer than its max_model_len (vLLM, TensorRT-LLM's max_seq_len). Training a RoPE, ALiBi or
// relative-position model past its stated context is long-context extension, a real practice: allowed.
void check_context_length(const Scenario& s, Problems& pr) {
    const ModelSpec& m = s.model;
    if (!m.max_seq_len_stated || m.layers <= 0) return;
    const std::string context =
        fmt::format("the model's context length ({} tokens{})", m.max_seq_len,
                    m.position == PositionKind::learned ? ", its learned position table" : ", as its source states");
    if (!s.is_inference) {
        if (m.position == PositionKind::learned && s.training.seq_len > m.max_seq_len)
            pr.add("/training/seq_len", Json(s.training.seq_len), "at most " + context);
        return;
    }
    const auto& in = s.inference;
    // Request classes: each class's request (its means) must fit; the scenario's lengths are their mixture.
    for (const auto& c : in.classes)
        if (c.input_dist.mean + c.output_dist.mean > static_cast<double>(m.max_seq_len))
            pr.add(
                c.input_stated ? "/inference/classes/" + c.name + "/input_len" : std::string("/inference/input_len"),
                Json(c.input_dist.mean),
                fmt::format("a prompt that, with class {}'s {:g} output tokens{}, fits {}", c.name, c.output_dist.mean,
                            c.input_dist.is_fixed() && c.output_dist.is_fixed() ? "" : " (means)", context));
    if (!in.classes.empty()) return;
    const double tokens = in.input_dist.mean + in.output_dist.mean;
    if (tokens > static_cast<double>(m.max_seq_len)) {
        const bool mean = !in.input_dist.is_fixed() || !in.output_dist.is_fixed();
        pr.add("/inference/input_len", Json(in.input_len),
               fmt::format("a prompt that, with the {} output tokens{}, fits {}", in.output_len, mean ? " (means)" : "",
                           context));
    }
}

// The prefill pool's layout (its tp follows the rules /parallel/tp does) and the link between the pools,
// resolved from the system unless stated.
void check_disaggregation(Scenario& s, Problems& pr) {
    auto& d = s.inference.disaggregation;
    const std::string at = "/inference/disaggregation";
    ParallelConfig q;
    q.tp = d.prefill_tp;
    q.dp = std::max(1, d.prefill_gpus / std::max(1, d.prefill_tp));
    const LayoutRules rules = tp_rules(s.model, d.prefill_tp);
    for (int i = 0; i < static_cast<int>(LayoutRule::count); ++i)
        if (rules & bit(static_cast<LayoutRule>(i)))
            pr.add(at + "/prefill_tp", Json(d.prefill_tp),
                   describe(static_cast<LayoutRule>(i), s.model, q, s.training).expected);
    // Expert parallelism over the prefill replicas follows the rules /parallel/ep does over the decode ones.
    const int redundant = s.inference.expert_parallel.redundant_experts;
    const LayoutRules er = ep_rules(s.model, d.prefill_ep, q.dp, s.model.moe.experts + redundant);
    for (int i = 0; i < static_cast<int>(LayoutRule::count); ++i)
        if (er & bit(static_cast<LayoutRule>(i))) {
            const auto v = describe_ep(static_cast<LayoutRule>(i), s.model, at + "/prefill_ep", d.prefill_ep, redundant,
                                       fmt::format("the prefill replicas (prefill_gpus / prefill_tp = {})", q.dp));
            pr.add(v.pointer, Json(v.value), v.expected);
        }
    const bool one_domain = resolve_disaggregation_link(s);
    if (!(d.link_GBps > 0))
        pr.add_raw(
            fmt::format("{}/link_GBps: missing: expected the KV-transfer bandwidth per GPU (system {} states no "
                        "{} bandwidth)",
                        at, s.system.name, one_domain ? "scale-up" : "scale-out"));
}

}   // namespace

void check_layout(const ModelSpec& m, int gpus, const ParallelConfig& p, const TrainingConfig& t, Problems& pr,
                  bool is_inference, int redundant_experts) {
    if (m.layers <= 0 || m.heads <= 0) return;   // the model itself was bad; already reported
    auto report = [&](LayoutRules rules) {
        for (int i = 0; i < static_cast<int>(LayoutRule::count); ++i)
            if (rules & bit(static_cast<LayoutRule>(i))) {
                const auto v = describe(static_cast<LayoutRule>(i), m, p, t);
                pr.add(v.pointer, Json(v.value), v.expected);
            }
    };
    report(tp_rules(m, p.tp) | pp_rules(m, p.pp, p.vp));
    if (p.world() != gpus) {
        pr.add("/parallel/dp", Json(p.dp),
               fmt::format("gpus / ({}) = {} / {}: tp·pp·cp·dp must equal gpus", product_text(p), gpus,
                           p.tp * p.pp * p.cp));
    }
    const LayoutRules ep = ep_rules(m, p.ep, p.dp * p.cp, m.moe.experts + redundant_experts);
    for (int i = 0; i < static_cast<int>(LayoutRule::count); ++i)
        if (ep & bit(static_cast<LayoutRule>(i))) {
            const auto v = describe_ep(static_cast<LayoutRule>(i), m, "/parallel/ep", p.ep, redundant_experts,
                                       ep_data_parallel_group(p));
            pr.add(v.pointer, Json(v.value), v.expected);
        }
    if (is_inference) return;
    report(cp_rules(t.seq_len, p.cp) | batch_rules(t.global_batch, t.micro_batch, p.dp) |
           framework_rules(p.zero, p.pp, p.framework));
    // Megatron-LM asserts m % p == 0 for the interleaved schedule (the search skips such layouts; the
    // simulator's generator cannot play them).
    if (p.schedule && p.schedule->m_multiple_of_p && t.micro_batch > 0 && p.dp > 0 && p.pp > 1 &&
        t.global_batch % (t.micro_batch * p.dp) == 0 && (t.global_batch / (t.micro_batch * p.dp)) % p.pp != 0)
        pr.add("/training/global_batch", Json(t.global_batch),
               fmt::format("micro-batches per step (global_batch / (micro_batch·dp) = {}) a multiple of pp ({}) for "
                           "the {} schedule",
                           t.global_batch / (t.micro_batch * p.dp), p.pp, p.schedule->name));
    if (t.offload == Offload::optimizer_params && p.zero != 3)
        pr.add("/training/offload", Json("optimizer+params"),
               "/parallel/zero = 3 (parameter offload shards parameters)");
    // Megatron-Core's TransformerConfig: a recompute method needs full granularity; CPU offloading needs
    // fewer offloaded layers than the model has, no pipeline parallelism and no recomputation.
    if (t.fp8_params && t.precision != Precision::fp8)
        pr.add("/training/fp8_params", Json(true),
               fmt::format("false with /training/precision = \"{}\" (FP8 weights need FP8 training)",
                           to_string(t.precision)));
    if (t.fp8_params && t.finetune.method == FinetuneConfig::Method::qlora)
        pr.add("/training/fp8_params", Json(true), "false with QLoRA (its base weights are NF4)");
    for (const auto& v : optimizer_precision_violations(t)) pr.add(v.pointer, Json(v.value), v.expected);
    if (t.recompute_num_layers > 0 && t.recompute != Recompute::full)
        pr.add("/training/recompute_num_layers", Json(t.recompute_num_layers),
               fmt::format("only with /training/recompute = \"full\" (here \"{}\")", to_string(t.recompute)));
    if (t.activation_offload_layers > 0) {
        const std::string where = "/training/activation_offload_layers";
        if (t.activation_offload_layers >= m.layers)
            pr.add(
                where, Json(t.activation_offload_layers),
                fmt::format("fewer than the model's {} layers (Megatron-Core offloads layers < num_layers)", m.layers));
        if (p.pp > 1)
            pr.add(where, Json(t.activation_offload_layers),
                   fmt::format("0 with pipeline parallelism (pp = {}): Megatron-Core offloads activations only "
                               "with pp 1",
                               p.pp));
        if (t.recompute != Recompute::none)
            pr.add(where, Json(t.activation_offload_layers),
                   fmt::format("0 with /training/recompute = \"{}\": Megatron-Core offloads activations only "
                               "without recomputation",
                               to_string(t.recompute)));
    }
}

Scenario parse_scenario(const Json& j, const std::string& base_dir, const Database& db) {
    Problems pr;
    Scenario s;
    // Without a "training" object the training defaults still apply: global_batch defaults to
    // micro_batch·dp once dp is known (below), not to the struct's placeholder.
    s.training.global_batch = -1;
    KeyReader r(j, "", pr, "");
    if (!r.ok()) pr.raise();
    s.name = r.string_or("name", "");
    if (const Json* m = r.get("model")) {
        s.model = db.resolve_model(*m, "/model", pr, base_dir);
    } else {
        pr.add_raw("/model: missing: expected a model-zoo name, a config.json path or a model object");
    }
    if (const Json* sys = r.get("system")) {
        s.system = db.resolve_system(*sys, "/system", pr, base_dir);
    } else {
        pr.add_raw("/system: missing: expected a system name (`llmsim hw list`) or object");
    }
    bool dp_given = false;
    if (const Json* par = r.get("parallel")) {
        KeyReader pr_reader(*par, "/parallel", pr, "/parallel");
        read_parallel(pr_reader, s, dp_given);
        pr_reader.finish();
    }
    const auto gpus = r.int_key("gpus");
    const bool has_training = r.has("training");
    const bool has_inference = r.has("inference");
    if (has_training && has_inference) {
        r.accept("training");
        r.accept("inference");
        pr.add_raw("/inference: present with /training: expected one of them");
    } else if (has_inference) {
        s.is_inference = true;
        KeyReader ir(*r.get("inference"), "/inference", pr, "/inference");
        read_inference(ir, s, db, base_dir);
        ir.finish();
    } else if (has_training) {
        KeyReader tr(*r.get("training"), "/training", pr, "/training");
        read_training(tr, s, db, base_dir);
        tr.finish();
    }
    // Constraints for `llmsim search` on a training scenario, read there; a serving scenario's search takes
    // only its GPU budget (--max-gpus), so a search block there would do nothing: refused.
    if (const Json* sb = r.get("search"); sb && s.is_inference)
        pr.add("/search", *sb,
               "no search block in an inference scenario (its keys constrain training layouts; a serving search "
               "takes --max-gpus)");
    r.accept("search");
    r.finish();
    // /parallel is shared by every kind; a key of it that this kind does not read (a training framework or
    // overlap flag in a serving scenario) is refused rather than ignored.
    if (const Json* par = j.is_object() ? r.get("parallel") : nullptr; par && par->is_object() && s.is_inference) {
        const unsigned kind = s.inference.continuous() ? kServingKind : kInferenceKind;
        const auto names = scenario_object_keys("/parallel");
        for (const auto& [key, value] : par->items()) {
            if (std::find(names.begin(), names.end(), key) == names.end()) continue;   // reported as unknown
            const ScenarioKey& k = scenario_key("/parallel", key);
            if (!(k.kinds & kind))
                pr.add("/parallel/" + key, value,
                       fmt::format("no such key in a {} scenario (it applies to {} scenarios)",
                                   kind == kServingKind ? "serving" : "static-batching inference",
                                   key_kinds_text(k.kinds)));
        }
    }

    // Likewise /inference: a serving key (qps, requests, slo, ...) on a static-batching scenario did nothing.
    if (const Json* inf = s.is_inference ? r.get("inference") : nullptr; inf && inf->is_object()) {
        const bool serving = s.inference.continuous();
        const unsigned kind = serving ? kServingKind : kInferenceKind;
        const auto names = scenario_object_keys("/inference");
        for (const auto& [key, value] : inf->items()) {
            if (std::find(names.begin(), names.end(), key) == names.end()) continue;   // reported as unknown
            const ScenarioKey& k = scenario_key("/inference", key);
            if (!(k.kinds & kind))
                pr.add("/inference/" + key, value,
                       fmt::format("no such key in a {} scenario (it applies to {} scenarios{})",
                                   serving ? "serving" : "static-batching inference", key_kinds_text(k.kinds),
                                   serving ? "" : "; /inference/batching \"continuous\" simulates a request stream"));
        }
    }

    auto& p = s.parallel;
    if (!layout_products_ok(p, dp_given, pr)) pr.raise();
    const int mp = p.model_parallel();
    // A disaggregated deployment's prefill pool takes its GPUs out of /gpus; /parallel lays out the rest.
    const int prefill_gpus = s.is_inference ? s.inference.disaggregation.prefill_gpus : 0;
    const int redundant = s.is_inference ? s.inference.expert_parallel.redundant_experts : 0;
    if (gpus) {
        s.gpus = static_cast<int>(*gpus);
        if (prefill_gpus > 0 && prefill_gpus >= s.gpus)
            pr.add("/inference/disaggregation/prefill_gpus", Json(prefill_gpus),
                   fmt::format("fewer than /gpus ({}): the decode pool takes the rest", s.gpus));
        else if (!dp_given) {
            if ((s.gpus - prefill_gpus) % mp != 0)
                pr.add("/gpus", Json(s.gpus),
                       prefill_gpus > 0
                           ? fmt::format("prefill_gpus ({}) + a multiple of {}", prefill_gpus, product_text(p))
                           : fmt::format("a multiple of {}", product_text(p)));
            else
                p.dp = (s.gpus - prefill_gpus) / mp;
        }
    } else if (dp_given || mp > 1) {
        s.gpus = p.world() + prefill_gpus;
    } else if (!j.is_null() && !r.has("gpus")) {   // a present but bad value was reported already
        pr.add_raw("/gpus: missing: expected the total number of accelerators");
    }
    if (s.training.global_batch < 0) {
        // The default global batch micro_batch·dp is bounded like a given one.
        const std::int64_t gb = s.training.micro_batch * p.dp;   // <= 2^24 · 2^20: no overflow
        if (gb > limits::kBatch && !s.is_inference)
            pr.add("/training/micro_batch", Json(s.training.micro_batch),
                   fmt::format("micro_batch·dp (the default global batch) at most {} sequences (here {}·{} = {})",
                               limits::kBatch, s.training.micro_batch, p.dp, gb));
        s.training.global_batch = std::min(gb, limits::kBatch);
    }

    if (!pr.empty() && s.model.layers > 0 && s.gpus > 0 && (s.gpus - prefill_gpus) % mp != 0) {
        // The GPU count does not divide: still say what else is wrong with the layout.
        ParallelConfig q = p;
        q.dp = std::max(1, (s.gpus - prefill_gpus) / mp);
        Problems more;
        check_layout(s.model, q.world(), q, s.training, more, s.is_inference, redundant);
        for (auto& l : more.lines)
            if (l.rfind("/training/global_batch", 0) != 0) pr.add_raw(l);
    }
    if (pr.empty() && s.is_inference && s.inference.autoscale.enabled()) {
        // The deployment's replicas bound the fleet the policy may run.
        auto& a = s.inference.autoscale;
        if (a.max_replicas > p.dp)
            pr.add("/inference/autoscale/max_replicas", Json(a.max_replicas),
                   fmt::format("at most the deployment's replicas (/parallel/dp = {})", p.dp));
        else if (a.min_replicas > p.dp)
            pr.add("/inference/autoscale/min_replicas", Json(a.min_replicas),
                   fmt::format("at most the deployment's replicas (/parallel/dp = {})", p.dp));
        if (a.max_replicas == 0) a.max_replicas = p.dp;
    }
    if (pr.empty()) {
        check_layout(s.model, s.gpus - prefill_gpus, p, s.training, pr, s.is_inference, redundant);
        if (prefill_gpus > 0) check_disaggregation(s, pr);
        check_context_length(s, pr);
        if (!s.is_inference && s.training.activation_offload_layers > 0 && !(s.system.pcie_GBps > 0))
            pr.add("/system/pcie_GBps", Json(s.system.pcie_GBps),
                   "a host link bandwidth > 0 for training.activation_offload_layers");
        if (!s.is_inference && s.training.offload != Offload::none && !(s.system.pcie_GBps > 0))
            pr.add(
                "/system/pcie_GBps", Json(s.system.pcie_GBps),
                fmt::format("a host link bandwidth > 0 for /training/offload = \"{}\"", to_string(s.training.offload)));
        // The host runs the offloaded optimizer at its DRAM bandwidth (was 100 GB/s when 0).
        if (!s.is_inference && s.training.offload != Offload::none && !(s.system.host_memory_GBps > 0))
            pr.add_raw(
                fmt::format("/system/host_memory_GBps: missing: expected a host DRAM bandwidth > 0 for "
                            "/training/offload = \"{}\"",
                            to_string(s.training.offload)));
        const Precision prec = s.is_inference ? s.inference.compute_precision : s.training.precision;
        if (s.system.gpu.peak(prec) <= 0) {
            const std::string where = s.is_inference ? "/inference/compute_precision" : "/training/precision";
            pr.add(where, Json(to_string(prec)),
                   fmt::format("a precision {} supports (it has no {} tensor throughput)", s.system.gpu.name,
                               to_string(prec)));
        }
    }
    pr.raise_if_any();
    if (!s.is_inference && s.system.shards_activations_over_tp() && p.tp > 1) p.sequence_parallel = true;
    return s;
}

Scenario load_scenario_file(const std::string& path, const Database& db) {
    const Json j = parse_json_file(path);
    return parse_scenario(j, directory_of(path), db);
}

Json to_json(const ParallelConfig& p) {
    Json j = {{"tp", p.tp},
              {"pp", p.pp},
              {"dp", p.dp},
              {"cp", p.cp},
              {"ep", p.ep},
              {"vp", p.vp},
              {"sequence_parallel", p.sequence_parallel},
              {"zero", p.zero},
              {"schedule", std::string(p.schedule->name)},
              {"overlap_grad_reduce", p.overlap_grad_reduce},
              {"overlap_param_gather", p.overlap_param_gather},
              {"tp_comm_overlap", p.tp_comm_overlap}};
    if (p.framework != Framework::unspecified) j["framework"] = to_string(p.framework);
    if (pytorch_module_framework(p.framework)) j["torch_compile"] = p.torch_compile;
    return j;
}

Json to_json(const TrainingConfig& t) {
    Json j = {{"seq_len", t.seq_len},
              {"micro_batch", t.micro_batch},
              {"global_batch", t.global_batch},
              {"precision", to_string(t.precision)},
              {"grad_precision", to_string(t.grad_precision)},
              {"recompute", to_string(t.recompute)},
              {"flash_attention", t.flash_attention},
              {"optimizer", to_string(t.optimizer)},
              {"optimizer_state_precision", to_string(t.optimizer_state_precision)},
              {"master_weights", to_string(t.master_weights)},
              {"offload", to_string(t.offload)},
              {"runtime_reserve_bytes", t.runtime_reserve_bytes},
              {"fragmentation_fraction", t.fragmentation_fraction}};
    if (t.recompute_num_layers > 0) j["recompute_num_layers"] = t.recompute_num_layers;
    j["activation_offload_layers"] = t.activation_offload_layers;
    j["fp8_params"] = t.fp8_params;
    if (t.token_budget) j["token_budget"] = *t.token_budget;
    if (t.finetune.method != FinetuneConfig::Method::none)
        j["finetune"] = {{"method", t.finetune.method == FinetuneConfig::Method::lora ? "lora" : "qlora"},
                         {"rank", t.finetune.rank},
                         {"targets", t.finetune.targets}};
    if (t.rlhf.enabled) {
        Json r = {{"enabled", true}};
        if (t.rlhf.critic) r["critic"] = to_json(*t.rlhf.critic);
        if (t.rlhf.reference) r["reference"] = to_json(*t.rlhf.reference);
        if (t.rlhf.reward) r["reward"] = to_json(*t.rlhf.reward);
        if (t.rlhf.prompt_len > 0) r["prompt_len"] = t.rlhf.prompt_len;
        r["ppo_epochs"] = t.rlhf.ppo_epochs;
        j["rlhf"] = r;
    }
    return j;
}

static Json to_json(const LengthDist& d) {
    if (d.kind == LengthDist::Kind::fixed) return Json(std::llround(d.mean));
    static const char* names[] = {"fixed", "normal", "uniform", "exponential", "lognormal"};
    return {{"mean", d.mean},
            {"dist", names[static_cast<int>(d.kind)]},
            {"stdev", d.stdev},
            {"min", d.min},
            {"max", d.max}};
}

static Json to_json(const ServingSlo& slo) {
    Json o = Json::object();
    if (slo.ttft_p99_s) o["ttft_p99_s"] = *slo.ttft_p99_s;
    if (slo.tpot_p99_s) o["tpot_p99_s"] = *slo.tpot_p99_s;
    if (slo.ttft_p90_s) o["ttft_p90_s"] = *slo.ttft_p90_s;
    if (slo.tpot_p90_s) o["tpot_p90_s"] = *slo.tpot_p90_s;
    return o;
}

Json to_json(const InferenceConfig& in) {
    Json j = {{"batch", in.batch},
              {"input_len", to_json(in.input_dist)},
              {"output_len", to_json(in.output_dist)},
              {"weight_precision", to_string(in.weight_precision)},
              {"kv_precision", to_string(in.kv_precision)},
              {"compute_precision", to_string(in.compute_precision)},
              {"quant_group_size", in.quant_group_size},
              {"batching", to_string(in.batching)},
              {"cuda_graphs", in.cuda_graphs},
              {"host_per_sequence_us", in.host_per_sequence_us}};
    if (in.price_per_gpu_hour > 0) j["price_per_gpu_hour"] = in.price_per_gpu_hour;
    if (in.continuous()) {
        j["requests"] = in.requests;
        j["qps"] = in.qps_max ? Json("max") : Json(in.qps);
        if (in.max_batch > 0) j["max_batch"] = in.max_batch;
        if (in.max_batch_tokens > 0) j["max_batch_tokens"] = in.max_batch_tokens;
        j["kv_admission"] = in.kv_reserve ? "reserve" : "on_demand";
        j["scheduler"] = to_string(in.scheduler);
        j["router"] = to_string(in.router);
        if (!in.arrivals) j["arrival_cv"] = in.arrival_cv;
        j["prefix_cache_hit"] = in.prefix_cache_hit;
        j["seed"] = in.seed;
        if (in.arrivals) {   // the trace gives the lengths and times: the keys it replaces are not echoed
            j["arrivals"] = in.arrivals->path;
            for (const char* k : {"input_len", "output_len", "seed"}) j.erase(k);
        }
    }
    if (const auto& d = in.disaggregation; d.enabled())
        j["disaggregation"] = {{"prefill_gpus", d.prefill_gpus},
                               {"prefill_tp", d.prefill_tp},
                               {"prefill_ep", d.prefill_ep},
                               {"link_GBps", d.link_GBps}};
    if (const auto& p = in.shared_prefix; p.enabled())
        j["shared_prefix"] = {{"groups", p.groups}, {"tokens", p.tokens}, {"zipf", p.zipf}};
    if (in.window_s > 0) j["window_s"] = in.window_s;
    if (const auto& a = in.autoscale; a.enabled())
        j["autoscale"] = {{"target_outstanding", a.target_outstanding},
                          {"min_replicas", a.min_replicas},
                          {"max_replicas", a.max_replicas},
                          {"storage_GBps", a.storage_GBps},
                          {"engine_start_s", a.engine_start_s},
                          {"interval_s", a.interval_s},
                          {"window_s", a.window_s},
                          {"scale_down_delay_s", a.scale_down_delay_s}};
    if (const auto& p = in.rate_profile; p.enabled())
        j["rate_profile"] = {{"period_s", p.period_s}, {"levels", p.levels}};
    if (const auto& e = in.expert_parallel; e.load_imbalance > 0 || e.two_batch_overlap || e.redundant_experts > 0) {
        Json o = {{"two_batch_overlap", e.two_batch_overlap}, {"redundant_experts", e.redundant_experts}};
        if (e.load_imbalance > 0) o["load_imbalance"] = e.load_imbalance;
        j["expert_parallel"] = o;
    }
    const auto& sp = in.speculative;
    if (sp.enabled) {
        Json o = {{"method", sp.method}, {"tokens", sp.tokens}};
        if (sp.draft_model) o["draft_model"] = sp.draft_model->name;
        if (sp.method == "draft") o["acceptance"] = sp.acceptance;
        if (sp.acceptance_length) o["acceptance_length"] = *sp.acceptance_length;
        j["speculative"] = o;
    }
    {
        Json e = {{"name", to_string(in.engine.kind)}};
        if (in.engine.version) e["version"] = to_string(*in.engine.version);
        j["engine"] = e;
    }
    if (in.slo.any()) j["slo"] = to_json(in.slo);
    if (!in.classes.empty()) {
        Json o = Json::object();
        for (const auto& c : in.classes) {
            Json x = {{"share", c.share}, {"input_len", to_json(c.input_dist)}, {"output_len", to_json(c.output_dist)}};
            if (c.slo.any()) x["slo"] = to_json(c.slo);
            o[c.name] = x;
        }
        j["classes"] = o;
    }
    return j;
}

Json to_json(const Scenario& s) {
    Json j = {{"name", s.name},
              {"model", to_json(s.model)},
              {"system", to_json(s.system, true)},
              {"gpus", s.gpus},
              {"parallel", to_json(s.parallel)}};
    if (s.is_inference)
        j["inference"] = to_json(s.inference);
    else
        j["training"] = to_json(s.training);
    return j;
}

}   // namespace llmsim
