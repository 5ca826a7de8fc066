#include "report/search_request.hpp"

#include <optional>

#include <fmt/format.h>

#include "hardware_db/errors.hpp"
#include "hardware_db/limits.hpp"
#include "hardware_db/scenario.hpp"
#include "hardware_db/scenario_keys.hpp"

namespace llmsim::search {

namespace {

// An integer or a non-empty array of them, each within the key's bounds (hardware_db/scenario_keys.cpp).
template <class T>
std::vector<T> int_list(KeyReader& r, const std::string& key) {
    const std::int64_t lo = r.spec(key).imin, hi = r.spec(key).imax;
    const Json* v = r.get(key);
    std::vector<T> out;
    if (!v) return out;
    auto ok = [&](const Json& x) {
        return x.is_number_integer() && x.get<std::int64_t>() >= lo && x.get<std::int64_t>() <= hi;
    };
    if (ok(*v)) {
        out.push_back(static_cast<T>(v->get<std::int64_t>()));
        return out;
    }
    bool good = v->is_array() && !v->empty();
    if (good)
        for (const auto& x : *v) {
            if (!ok(x)) {
                good = false;
                break;
            }
            out.push_back(static_cast<T>(x.get<std::int64_t>()));
        }
    if (!good) {
        r.problems().add(r.ptr(key), *v,
                         fmt::format("an integer in [{}, {}] or a non-empty array of them (allowed values)", lo, hi));
        out.clear();
    }
    return out;
}

std::vector<std::string> string_list(KeyReader& r, const std::string& key, const std::vector<std::string>& choices) {
    const Json* v = r.get(key);
    std::vector<std::string> out;
    if (!v) return out;
    auto ok = [&](const Json& x) {
        return x.is_string() && std::find(choices.begin(), choices.end(), x.get<std::string>()) != choices.end();
    };
    std::string expect = "one of";
    for (const auto& c : choices) expect += " \"" + c + "\"";
    expect += ", or a non-empty array of them";
    if (ok(*v)) return {v->get<std::string>()};
    bool good = v->is_array() && !v->empty();
    if (good)
        for (const auto& x : *v) {
            if (!ok(x)) {
                good = false;
                break;
            }
            out.push_back(x.get<std::string>());
        }
    if (!good) {
        r.problems().add(r.ptr(key), *v, expect);
        out.clear();
    }
    return out;
}

Recompute recompute_of(const std::string& s) {
    return s == "full" ? Recompute::full : s == "selective" ? Recompute::selective : Recompute::none;
}
Offload offload_of(const std::string& s) {
    return s == "optimizer" ? Offload::optimizer : s == "optimizer+params" ? Offload::optimizer_params : Offload::none;
}

}   // namespace

std::vector<std::int64_t> parse_batch_range(const std::string& text, const std::string& what) {
    const auto colon = text.find(':');
    std::int64_t a = 0, b = 0;
    bool ok = colon != std::string::npos;
    if (ok) {
        try {
            std::size_t ia = 0, ib = 0;
            a = std::stoll(text.substr(0, colon), &ia);
            b = std::stoll(text.substr(colon + 1), &ib);
            ok = ia == colon && ib == text.size() - colon - 1 && a >= 1 && b >= a && b <= limits::kBatch;
        } catch (...) {
            ok = false;
        }
    }
    std::vector<std::int64_t> out;
    if (ok)
        for (std::int64_t p = 1; p <= b; p *= 2)   // b <= 2^24: p never overflows
            if (p >= a) out.push_back(p);
    if (!ok || out.empty())
        throw ConfigError(fmt::format("{}: {}: expected a:b with 1 <= a <= b <= {} spanning at least one power of two",
                                      what, json_brief(Json(text)), limits::kBatch));
    return out;
}

SearchRequest parse_search_request(const Json& j_in, const std::string& base_dir, const Database& db) {
    Problems pr;
    if (!j_in.is_object()) {
        pr.add("", j_in, "a scenario object");
        pr.raise();
    }
    Json j = j_in;
    SearchRequest req;
    auto& sp = req.space;
    auto& opt = req.options;

    if (j.contains("parallel")) {
        // The framework and torch.compile are not searched: they go to the base scenario (its reader
        // checks them).
        Json fixed = Json::object();
        for (const char* k : {"framework", "torch_compile"})
            if (j["parallel"].is_object() && j["parallel"].contains(k)) {
                fixed[k] = j["parallel"][k];
                j["parallel"].erase(k);
            }
        KeyReader r(j["parallel"], "/parallel", pr, "/parallel");
        if (r.ok()) {
            sp.tp = int_list<int>(r, "tp");
            sp.pp = int_list<int>(r, "pp");
            sp.cp = int_list<int>(r, "cp");
            sp.ep = int_list<int>(r, "ep");
            sp.vp = int_list<int>(r, "vp");
            sp.dp = int_list<int>(r, "dp");
            sp.zero = int_list<int>(r, "zero");
            sp.sequence_parallel = r.boolean("sequence_parallel");
            for (const auto& s : string_list(r, "schedule", schedule_spellings()))
                sp.schedules.push_back(find_schedule(s));
            sp.overlap_grad_reduce = r.boolean("overlap_grad_reduce");
            sp.overlap_param_gather = r.boolean("overlap_param_gather");
            sp.tp_comm_overlap = r.boolean("tp_comm_overlap");
            r.finish();
        }
        j.erase("parallel");
        if (!fixed.empty()) j["parallel"] = fixed;
    }
    if (j.contains("training") && j["training"].is_object()) {
        Json& t = j["training"];
        // recompute_num_layers is searched (the fewest layers per chunk that fit, when none and full are
        // allowed); activation offload is not: both refused as inputs rather than applied to some layouts.
        if (t.contains("recompute_num_layers"))
            pr.add("/training/recompute_num_layers", t["recompute_num_layers"],
                   "absent in a layout search (with recompute none and full allowed, the search tries the fewest "
                   "recomputed layers per chunk that fit)");
        if (t.contains("activation_offload_layers") && t["activation_offload_layers"] != Json(0))
            pr.add("/training/activation_offload_layers", t["activation_offload_layers"],
                   "absent in a layout search (it does not search activation offload; estimate the found layout "
                   "with it)");
        Json sub = Json::object();
        for (const char* k : {"micro_batch", "recompute", "offload"})
            if (t.contains(k)) {
                sub[k] = t[k];
                t.erase(k);
            }
        KeyReader r(sub, "/training", pr, "/training");
        sp.micro_batch = int_list<std::int64_t>(r, "micro_batch");
        const auto rc = string_list(r, "recompute", r.spec("recompute").choices);
        if (!rc.empty()) {
            sp.recompute.clear();
            for (const auto& s : rc) sp.recompute.push_back(recompute_of(s));
        }
        const auto off = string_list(r, "offload", r.spec("offload").choices);
        if (!off.empty()) {
            sp.offload.clear();
            for (const auto& s : off) sp.offload.push_back(offload_of(s));
        }
        r.finish();
    }
    bool batch_from_search = false;
    if (j.contains("search")) {
        KeyReader r(j["search"], "/search", pr, "/search");
        if (r.ok()) {
            if (auto v = r.int_key("max_gpus")) sp.max_gpus = static_cast<int>(*v);
            if (auto v = r.int_key("min_gpus")) sp.min_gpus = static_cast<int>(*v);
            if (auto v = r.num_key("memory_headroom")) sp.memory_headroom_fraction = *v;
            if (auto v = r.num_key("memory_headroom_bytes")) sp.memory_headroom_bytes = *v;
            if (auto v = r.int_key("max_tp")) sp.max_tp = static_cast<int>(*v);
            if (auto v = r.int_key("min_pp")) sp.min_pp = static_cast<int>(*v);
            if (auto v = r.int_key("max_pp")) sp.max_pp = static_cast<int>(*v);
            if (auto v = r.choice_key("objective")) objective_from_string(*v, opt.objective);
            if (auto v = r.int_key("top_k")) opt.top_k = static_cast<int>(*v);
            if (auto v = r.int_key("confirm")) opt.confirm = static_cast<int>(*v);
            if (auto v = r.boolean("allow_cross_node_tp")) sp.allow_cross_node_tp = *v;
            if (auto v = r.boolean("activation_offload")) sp.activation_offload = *v;
            if (auto v = r.num_key("price_per_gpu_hour")) opt.price_per_gpu_hour = *v;
            if (const Json* gb = r.get("global_batch")) {
                batch_from_search = true;
                if (gb->is_number_integer() && gb->get<std::int64_t>() >= 1 &&
                    gb->get<std::int64_t>() <= limits::kBatch) {
                    sp.global_batches = {gb->get<std::int64_t>()};
                } else if (gb->is_string()) {
                    try {
                        sp.global_batches = parse_batch_range(gb->get<std::string>(), "/search/global_batch");
                    } catch (const ConfigError& e) {
                        for (const auto& l : e.problems()) pr.add_raw(l);
                    }
                } else if (gb->is_array() && gb->size() == 2 && (*gb)[0].is_number_integer() &&
                           (*gb)[1].is_number_integer()) {
                    try {
                        sp.global_batches = parse_batch_range(
                            fmt::format("{}:{}", (*gb)[0].get<std::int64_t>(), (*gb)[1].get<std::int64_t>()),
                            "/search/global_batch");
                    } catch (const ConfigError& e) {
                        for (const auto& l : e.problems()) pr.add_raw(l);
                    }
                } else {
                    pr.add(r.ptr("global_batch"), *gb,
                           fmt::format("an integer in [1, {}], \"a:b\" or [a, b] (powers of two in a..b)",
                                       limits::kBatch));
                }
            }
            r.finish();
        }
        j.erase("search");
    }
    // GPUs: a fixed count, or every count up to search.max_gpus.
    if (j.contains("gpus")) {
        const Json& g = j["gpus"];
        if (g.is_number_integer() && g.get<std::int64_t>() >= 1 && g.get<std::int64_t>() <= limits::kGpus)
            sp.gpu_counts = {static_cast<int>(g.get<std::int64_t>())};
        else
            pr.add("/gpus", g, fmt::format("an integer in [1, {}] (total accelerators)", limits::kGpus));
    } else if (sp.max_gpus == 0) {
        pr.add_raw("/gpus: missing: expected the total number of accelerators (or search.max_gpus)");
    }
    if (!batch_from_search) {
        const bool has = j.contains("training") && j["training"].is_object() && j["training"].contains("global_batch");
        if (has && j["training"]["global_batch"].is_number_integer() &&
            j["training"]["global_batch"].get<std::int64_t>() >= 1 &&
            j["training"]["global_batch"].get<std::int64_t>() <= limits::kBatch)
            sp.global_batches = {j["training"]["global_batch"].get<std::int64_t>()};
        else if (has)
            pr.add("/training/global_batch", j["training"]["global_batch"],
                   fmt::format("an integer in [1, {}]", limits::kBatch));
        else
            pr.add_raw(
                "/training/global_batch: missing: expected the global batch (sequences), or search.global_batch");
    }
    // The rest is an ordinary scenario on one GPU (the layout is what we search); its problems are
    // reported with the search block's, each with its own pointer.
    j["gpus"] = 1;
    if (j.contains("training") && j["training"].is_object()) j["training"].erase("global_batch");
    try {
        req.base = parse_scenario(j, base_dir, db);
    } catch (const ConfigError& e) {
        for (const auto& l : e.problems()) pr.add_raw(l);
    }
    pr.raise_if_any();
    if (!sp.gpu_counts.empty()) req.base.gpus = sp.gpu_counts.front();
    return req;
}

}   // namespace llmsim::search
