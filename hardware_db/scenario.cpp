#include "hardware_db/scenario.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "hardware_db/errors.hpp"
#include "hardware_db/layout_rules.hpp"
#include "hardware_db/limits.hpp"
#include "schedules/schedule.hpp"

namespace llmsim {

namespace {

Precision read_precision(ObjectReader& r, const std::string& key, Precision dflt,
                         const std::vector<std::string>& allowed) {
    auto v = r.choice(key, allowed);
    if (!v) return dflt;
    return *precision_from_string(*v);
}

void read_parallel(ObjectReader& r, Scenario& s, bool& dp_given) {
    auto& p = s.parallel;
    p.tp = static_cast<int>(r.integer_or("tp", 1, 1, limits::kGpus));
    p.pp = static_cast<int>(r.integer_or("pp", 1, 1, limits::kGpus));
    p.cp = static_cast<int>(r.integer_or("cp", 1, 1, limits::kGpus));
    p.ep = static_cast<int>(r.integer_or("ep", 1, 1, limits::kGpus));
    p.vp = static_cast<int>(r.integer_or("vp", 1, 1, limits::kGpus));
    dp_given = r.has("dp");
    p.dp = static_cast<int>(r.integer_or("dp", 1, 1, limits::kGpus));
    p.sequence_parallel = r.boolean_or("sequence_parallel", false);
    p.zero = static_cast<int>(r.integer_or("zero", 0, 0, 3));
    p.overlap_grad_reduce = r.boolean_or("overlap_grad_reduce", true);
    p.overlap_param_gather = r.boolean_or("overlap_param_gather", true);
    p.tp_comm_overlap = r.boolean_or("tp_comm_overlap", false);
    const auto fw = r.choice("framework", {"megatron", "deepspeed", "torchtitan"});
    p.framework = !fw                  ? Framework::unspecified
                  : *fw == "megatron"  ? Framework::megatron
                  : *fw == "deepspeed" ? Framework::deepspeed
                                       : Framework::torchtitan;
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

std::optional<ModelSpec> read_optional_model(ObjectReader& r, const std::string& key, const Database& db,
                                             const std::string& base_dir) {
    const Json* v = r.get(key);
    if (!v) return std::nullopt;
    return db.resolve_model(*v, r.ptr(key), r.problems(), base_dir);
}

void read_training(ObjectReader& r, Scenario& s, const Database& db, const std::string& base_dir) {
    auto& t = s.training;
    t.seq_len = r.integer_or("seq_len", 2048, 1, limits::kSeqLen);
    t.micro_batch = r.integer_or("micro_batch", 1, 1, limits::kBatch);
    t.global_batch = r.integer_or("global_batch", -1, 1, limits::kBatch);
    t.precision = read_precision(r, "precision", Precision::bf16, {"fp32", "fp16", "bf16", "fp8"});
    t.grad_precision = read_precision(r, "grad_precision", Precision::fp32, {"fp32", "fp16", "bf16"});
    const auto rc = r.choice("recompute", {"none", "selective", "full"}).value_or("none");
    t.recompute = rc == "full" ? Recompute::full : rc == "selective" ? Recompute::selective : Recompute::none;
    t.flash_attention = r.boolean_or("flash_attention", true);
    const auto opt = r.choice("optimizer", {"adam", "adamw", "sgd", "adafactor"}).value_or("adam");
    t.optimizer = opt == "sgd" ? Optimizer::sgd : opt == "adafactor" ? Optimizer::adafactor : Optimizer::adam;
    const auto off = r.choice("offload", {"none", "optimizer", "optimizer+params"}).value_or("none");
    t.offload = off == "optimizer"          ? Offload::optimizer
                : off == "optimizer+params" ? Offload::optimizer_params
                                            : Offload::none;
    t.runtime_reserve_bytes =
        r.number_or("runtime_reserve_bytes", t.runtime_reserve_bytes, 0.0, true, limits::kMaxBytes);
    t.fragmentation_fraction = r.number_or("fragmentation_fraction", t.fragmentation_fraction, 0.0, true, 1.0);
    if (auto tok = r.number("token_budget", 0.0, false, limits::kMaxTokens)) t.token_budget = *tok;
    if (const Json* ft = r.get("finetune")) {
        ObjectReader fr(*ft, r.ptr("finetune"), r.problems());
        const auto method = fr.choice("method", {"none", "lora", "qlora"}).value_or("none");
        t.finetune.method = method == "lora"    ? FinetuneConfig::Method::lora
                            : method == "qlora" ? FinetuneConfig::Method::qlora
                                                : FinetuneConfig::Method::none;
        t.finetune.rank = static_cast<int>(fr.integer_or("rank", 16, 1, limits::kLoraRank));
        if (const Json* tg = fr.get("targets")) {
            static const std::vector<std::string> known{"q", "k", "v", "o", "gate", "up", "down"};
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
            if (!ok)
                fr.problems().add(fr.ptr("targets"), *tg, "a non-empty array of q, k, v, o, gate, up, down");
            else
                t.finetune.targets = targets;
        }
        fr.finish();
    }
    if (const Json* rl = r.get("rlhf")) {
        ObjectReader rr(*rl, r.ptr("rlhf"), r.problems());
        t.rlhf.enabled = rr.boolean_or("enabled", true);
        t.rlhf.critic = read_optional_model(rr, "critic", db, base_dir);
        t.rlhf.reference = read_optional_model(rr, "reference", db, base_dir);
        t.rlhf.reward = read_optional_model(rr, "reward", db, base_dir);
        rr.finish();
    }
}

void read_inference(ObjectReader& r, Scenario& s) {
    auto& in = s.inference;
    const std::vector<std::string> wp{"fp32", "bf16", "fp16", "fp8", "int8", "int4", "fp4", "nf4"};
    in.batch = r.integer_or("batch", 1, 1, limits::kBatch);
    in.input_len = r.integer_or("input_len", 128, 1, limits::kSeqLen);
    in.output_len = r.integer_or("output_len", 128, 1, limits::kSeqLen);
    in.weight_precision = read_precision(r, "weight_precision", Precision::bf16, wp);
    in.kv_precision =
        read_precision(r, "kv_precision", Precision::bf16, {"fp32", "bf16", "fp16", "fp8", "int8", "int4"});
    // Compute runs at the weight precision where the chip has tensor cores for it, else bf16.
    in.compute_precision =
        read_precision(r, "compute_precision", Precision::bf16, {"bf16", "fp16", "fp8", "int8", "fp4"});
    in.quant_group_size = static_cast<int>(r.integer_or("quant_group_size", 128, 1, limits::kQuantGroup));
    in.batching = r.choice("batching", {"static", "continuous"}).value_or("static");
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

}   // namespace

void check_layout(const ModelSpec& m, int gpus, const ParallelConfig& p, const TrainingConfig& t, Problems& pr,
                  bool is_inference) {
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
    report(ep_rules(m, p.ep, p.dp * p.cp));
    if (is_inference) return;
    report(cp_rules(t.seq_len, p.cp) | batch_rules(t.global_batch, t.micro_batch, p.dp) |
           zero_rules(p.zero, p.pp, p.framework));
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
               "parallel.zero = 3 (parameter offload shards parameters)");
}

Scenario parse_scenario(const Json& j, const std::string& base_dir, const Database& db) {
    Problems pr;
    Scenario s;
    // Without a "training" object the training defaults still apply: global_batch defaults to
    // micro_batch·dp once dp is known (below), not to the struct's placeholder.
    s.training.global_batch = -1;
    ObjectReader r(j, "", pr);
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
        ObjectReader pr_reader(*par, "/parallel", pr);
        read_parallel(pr_reader, s, dp_given);
        pr_reader.finish();
    }
    const auto gpus = r.integer("gpus", 1, limits::kGpus);
    const bool has_training = r.has("training");
    const bool has_inference = r.has("inference");
    if (has_training && has_inference) {
        r.accept("training");
        r.accept("inference");
        pr.add_raw("/inference: present with /training: expected one of them");
    } else if (has_inference) {
        s.is_inference = true;
        ObjectReader ir(*r.get("inference"), "/inference", pr);
        read_inference(ir, s);
        ir.finish();
    } else if (has_training) {
        ObjectReader tr(*r.get("training"), "/training", pr);
        read_training(tr, s, db, base_dir);
        tr.finish();
    }
    r.accept("search");   // constraints for `llmsim search`, read there
    r.finish();

    auto& p = s.parallel;
    if (!layout_products_ok(p, dp_given, pr)) pr.raise();
    const int mp = p.model_parallel();
    if (gpus) {
        s.gpus = static_cast<int>(*gpus);
        if (!dp_given) {
            if (s.gpus % mp != 0)
                pr.add("/gpus", Json(s.gpus), fmt::format("a multiple of {}", product_text(p)));
            else
                p.dp = s.gpus / mp;
        }
    } else if (dp_given || mp > 1) {
        s.gpus = p.world();
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

    if (!pr.empty() && s.model.layers > 0 && s.gpus > 0 && s.gpus % mp != 0) {
        // The GPU count does not divide: still say what else is wrong with the layout.
        ParallelConfig q = p;
        q.dp = std::max(1, s.gpus / mp);
        Problems more;
        check_layout(s.model, q.world(), q, s.training, more, s.is_inference);
        for (auto& l : more.lines)
            if (l.rfind("/training/global_batch", 0) != 0) pr.add_raw(l);
    }
    if (pr.empty()) {
        check_layout(s.model, s.gpus, p, s.training, pr, s.is_inference);
        if (!s.is_inference && s.training.offload != Offload::none && !(s.system.pcie_GBps > 0))
            pr.add(
                "/system/pcie_GBps", Json(s.system.pcie_GBps),
                fmt::format("a host link bandwidth > 0 for training.offload = \"{}\"", to_string(s.training.offload)));
        const Precision prec = s.is_inference ? s.inference.compute_precision : s.training.precision;
        if (s.system.gpu.peak(prec) <= 0) {
            const std::string where = s.is_inference ? "/inference/compute_precision" : "/training/precision";
            pr.add(where, Json(to_string(prec)),
                   fmt::format("a precision {} supports (it has no {} tensor throughput)", s.system.gpu.name,
                               to_string(prec)));
        }
    }
    pr.raise_if_any();
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
              {"offload", to_string(t.offload)},
              {"runtime_reserve_bytes", t.runtime_reserve_bytes},
              {"fragmentation_fraction", t.fragmentation_fraction}};
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
        j["rlhf"] = r;
    }
    return j;
}

Json to_json(const InferenceConfig& in) {
    return {{"batch", in.batch},
            {"input_len", in.input_len},
            {"output_len", in.output_len},
            {"weight_precision", to_string(in.weight_precision)},
            {"kv_precision", to_string(in.kv_precision)},
            {"compute_precision", to_string(in.compute_precision)},
            {"quant_group_size", in.quant_group_size},
            {"batching", in.batching}};
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
