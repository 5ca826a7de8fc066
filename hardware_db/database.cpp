#include "hardware_db/database.hpp"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hardware_db/embedded.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/hf_config.hpp"
#include "hardware_db/limits.hpp"
#include "hardware_db/scenario_keys.hpp"

namespace llmsim {

namespace {

std::string join(const std::vector<std::string>& v, const std::string& sep = ", ") {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : sep) + x;
    return out;
}

std::string provenance_kind(const std::string& source) {
    if (source.rfind("derived", 0) == 0) return "derived";
    if (source.find("measure") != std::string::npos || source.find("nccl-tests") != std::string::npos)
        return "measurement";
    return "published";
}

void read_sources(ObjectReader& r, std::map<std::string, Provenance>& out) {
    const Json* s = r.get("sources");
    if (!s) return;
    if (!s->is_object()) {
        r.problems().add(r.ptr("sources"), *s, "an object of key -> source text");
        return;
    }
    for (auto it = s->begin(); it != s->end(); ++it) {
        if (!it->is_string()) {
            r.problems().add(r.ptr("sources") + "/" + it.key(), *it, "a string");
            continue;
        }
        out[it.key()] = Provenance{it->get<std::string>(), provenance_kind(it->get<std::string>())};
    }
}

// An object of one number per precision name (efficiency.gemm_max, efficiency.gemm_k_half_by).
void read_per_precision(KeyReader& r, const char* key, Problems& pr, std::array<double, kPrecisionCount>& out) {
    const Json* g = r.get(key);
    if (!g) return;
    KeyReader gr(*g, r.ptr(key), pr, std::string("/system/gpu/efficiency/") + key);
    for (int i = 0; i < kPrecisionCount; ++i)
        if (auto v = gr.num_key(to_string(static_cast<Precision>(i)))) out[i] = *v;
    gr.finish();
}

void parse_efficiency(const Json& j, const std::string& pointer, Problems& pr, EfficiencyModel& e) {
    KeyReader r(j, pointer, pr, "/system/gpu/efficiency");
    read_per_precision(r, "gemm_max", pr, e.gemm_max);
    e.gemm_tile_m = static_cast<int>(r.int_key_or("gemm_tile_m", e.gemm_tile_m));
    e.gemm_tile_n = static_cast<int>(r.int_key_or("gemm_tile_n", e.gemm_tile_n));
    e.gemm_k_half = r.num_key_or("gemm_k_half", e.gemm_k_half);
    read_per_precision(r, "gemm_k_half_by", pr, e.gemm_k_half_by);
    e.hbm_efficiency = r.num_key_or("hbm_efficiency", e.hbm_efficiency);
    e.attention_fwd = r.num_key_or("attention_fwd", e.attention_fwd);
    e.attention_bwd = r.num_key_or("attention_bwd", e.attention_bwd);
    e.fa2_attention_fwd = r.num_key_or("fa2_attention_fwd", e.fa2_attention_fwd);
    e.fa2_attention_bwd = r.num_key_or("fa2_attention_bwd", e.fa2_attention_bwd);
    e.kernel_launch_us = r.num_key_or("kernel_launch_us", e.kernel_launch_us);
    e.sustained_fraction = r.num_key_or("sustained_fraction", e.sustained_fraction);
    r.finish();
}

// Every override key gets the provenance "override" (scenario) or the profile's text.
void mark_overrides(const Json& override_obj, const std::string& prefix, const std::string& origin,
                    std::map<std::string, Provenance>& prov, const std::string& kind) {
    if (!override_obj.is_object()) return;
    for (auto it = override_obj.begin(); it != override_obj.end(); ++it) {
        if (it.key() == "preset" || it.key() == "profile" || it.key() == "sources") continue;
        const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (it->is_object()) {
            mark_overrides(*it, key, origin, prov, kind);
        } else {
            prov[key] = Provenance{origin, kind};
        }
    }
}

bool file_exists(const std::string& p) {
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec);
}

}   // namespace

// --------------------------------------------------------------------------------------------
// Accelerators
// --------------------------------------------------------------------------------------------
AcceleratorSpec parse_accelerator(const Json& j, const std::string& pointer, Problems& pr) {
    AcceleratorSpec a;
    KeyReader r(j, pointer, pr, "/system/gpu");
    if (!r.ok()) return a;
    a.name = r.required_string("name");
    a.display_name = r.string_or("display_name", a.name);
    a.vendor = r.choice_key("vendor").value_or("nvidia");
    if (const Json* pk = r.get("peak_tflops")) {
        KeyReader p(*pk, r.ptr("peak_tflops"), pr, "/system/gpu/peak_tflops");
        for (int i = 0; i < kPrecisionCount; ++i) {
            if (auto v = p.num_key(to_string(static_cast<Precision>(i)))) a.peak_flops[i] = *v * 1e12;
        }
        p.finish();
    } else {
        pr.add_raw(
            fmt::format("{}: missing: expected an object of dense peak TFLOP/s per precision", r.ptr("peak_tflops")));
    }
    a.hbm_capacity_bytes = r.required_num_key("hbm_capacity_GiB") * kGiB;
    a.hbm_GBps = r.required_num_key("hbm_GBps");
    a.sm_count = static_cast<int>(r.required_int_key("sm_count"));
    a.l2_cache_bytes = r.num_key_or("l2_cache_MiB", 0.0) * kMiB;
    a.tdp_W = r.num_key_or("tdp_W", 0.0);
    if (const Json* e = r.get("efficiency")) parse_efficiency(*e, r.ptr("efficiency"), pr, a.efficiency);
    // A precision without its own GEMM efficiency borrows the closest one (documented).
    auto& gm = a.efficiency.gemm_max;
    const int bf16 = static_cast<int>(Precision::bf16);
    if (gm[bf16] == 0) gm[bf16] = 0.75;
    for (int i = 0; i < kPrecisionCount; ++i)
        if (gm[i] == 0) gm[i] = gm[bf16];
    read_sources(r, a.provenance);
    r.finish();
    return a;
}

// --------------------------------------------------------------------------------------------
// Models
// --------------------------------------------------------------------------------------------
ModelSpec parse_model(const Json& j, const std::string& pointer, Problems& pr) {
    ModelSpec m;
    KeyReader r(j, pointer, pr, "/model");
    if (!r.ok()) return m;
    m.name = r.string_or("name", "custom");
    m.display_name = r.string_or("display_name", m.name);
    m.source = r.string_or("source", "");
    m.layers = static_cast<int>(r.required_int_key("layers"));
    m.hidden = r.required_int_key("hidden");
    m.heads = static_cast<int>(r.required_int_key("heads"));
    m.kv_heads = static_cast<int>(r.int_key_or("kv_heads", m.heads));
    if (r.has("head_dim")) {
        m.head_dim = r.int_key_or("head_dim", 1);
    } else if (m.heads > 0 && m.hidden % m.heads != 0) {
        r.accept("head_dim");
        pr.add(r.ptr("hidden"), Json(m.hidden),
               fmt::format("a multiple of heads ({}) or an explicit head_dim", m.heads));
        m.head_dim = std::max<std::int64_t>(1, m.hidden / std::max(1, m.heads));
    } else {
        m.head_dim = m.hidden / std::max(1, m.heads);
    }
    const auto mlp = r.choice_key("mlp").value_or("gelu");
    m.mlp = mlp == "swiglu" ? MlpKind::swiglu : MlpKind::gelu;
    m.ffn_hidden = r.int_key_or("ffn_hidden", 4 * m.hidden);
    m.vocab = r.required_int_key("vocab");
    m.norm = r.choice_key("norm").value_or("layernorm") == "rmsnorm" ? NormKind::rmsnorm : NormKind::layernorm;
    const auto pos = r.choice_key("position").value_or("learned");
    m.position = pos == "rope"       ? PositionKind::rope
                 : pos == "alibi"    ? PositionKind::alibi
                 : pos == "relative" ? PositionKind::relative
                 : pos == "none"     ? PositionKind::none
                                     : PositionKind::learned;
    m.max_seq_len_stated = r.has("max_seq_len");
    m.max_seq_len = r.int_key_or("max_seq_len", 2048);
    m.tied_embeddings = r.boolean_or("tied_embeddings", false);
    // Defaults follow the architecture family a model's MLP names (docs/scenario.md): gated (SwiGLU)
    // models — LLaMA, Mistral, Qwen, PaLM, Gemma and their recipes — train without linear biases and
    // without dropout; GELU models follow GPT-2/3 and Megatron's defaults (biases, dropout 0.1).
    const bool gpt_family = m.mlp != MlpKind::swiglu;
    m.bias = r.boolean_or("bias", gpt_family);
    m.qkv_bias = r.boolean_or("qkv_bias", false);
    m.parallel_block = r.boolean_or("parallel_block", false);
    m.dropout = r.boolean_or("dropout", gpt_family);
    if (auto v = r.num_key("published_params")) m.published_params = *v;
    if (auto v = r.num_key("published_active_params")) m.published_active_params = *v;
    if (const Json* moe = r.get("moe")) {
        KeyReader mr(*moe, r.ptr("moe"), pr, "/model/moe");
        m.moe.experts = static_cast<int>(mr.required_int_key("experts"));
        m.moe.top_k = static_cast<int>(mr.required_int_key("top_k"));
        m.moe.expert_ffn_hidden = mr.int_key_or("expert_ffn_hidden", m.ffn_hidden);
        m.moe.shared_experts = static_cast<int>(mr.int_key_or("shared_experts", 0));
        m.moe.shared_expert_ffn_hidden = mr.int_key_or("shared_expert_ffn_hidden", 0);
        if (m.moe.shared_expert_ffn_hidden == 0) m.moe.shared_expert_ffn_hidden = m.moe.expert_ffn_hidden;
        m.moe.dense_layers = static_cast<int>(mr.int_key_or("dense_layers", 0));
        mr.finish();
    }
    if (const Json* mla = r.get("mla")) {
        KeyReader lr(*mla, r.ptr("mla"), pr, "/model/mla");
        m.mla.kv_lora_rank = lr.required_int_key("kv_lora_rank");
        m.mla.q_lora_rank = lr.int_key_or("q_lora_rank", 0);
        m.mla.qk_rope_head_dim = lr.required_int_key("qk_rope_head_dim");
        m.mla.v_head_dim = lr.int_key_or("v_head_dim", m.head_dim);
        lr.finish();
    }
    r.finish();
    check_model(m, pointer, pr);
    return m;
}

void check_model(const ModelSpec& m, const std::string& pointer, Problems& pr) {
    if (m.mla.enabled()) {
        // Every head has its own K and V after the up-projection: no grouping of KV heads.
        if (m.kv_heads != m.heads && m.heads > 0)
            pr.add(pointer + "/kv_heads", Json(m.kv_heads),
                   fmt::format("heads ({}) with mla: every head has its own up-projected K and V", m.heads));
        if (m.mla.qk_rope_head_dim >= m.head_dim && m.head_dim > 0)
            pr.add(pointer + "/mla/qk_rope_head_dim", Json(m.mla.qk_rope_head_dim),
                   fmt::format("less than head_dim ({}), the query/key head dimension nope + rope", m.head_dim));
    }
    if (m.heads > 0 && m.kv_heads > 0 && m.heads % m.kv_heads != 0)
        pr.add(pointer + "/kv_heads", Json(m.kv_heads), fmt::format("a divisor of heads ({})", m.heads));
    if (m.kv_heads > m.heads && m.heads > 0)
        pr.add(pointer + "/kv_heads", Json(m.kv_heads), fmt::format("at most heads ({})", m.heads));
    if (m.moe.enabled()) {
        if (m.moe.top_k > m.moe.experts)
            pr.add(pointer + "/moe/top_k", Json(m.moe.top_k), fmt::format("at most experts ({})", m.moe.experts));
        if (m.moe.dense_layers > m.layers)
            pr.add(pointer + "/moe/dense_layers", Json(m.moe.dense_layers),
                   fmt::format("at most layers ({})", m.layers));
    }
}

// --------------------------------------------------------------------------------------------
// Systems
// --------------------------------------------------------------------------------------------
namespace {

// Reads system keys present in `r` into `s`. With `full`, the essential keys are required.
void read_system_keys(KeyReader& r, SystemSpec& s, bool full) {
    if (full) {
        // Both tiers: a system without its scale-out bandwidth priced a collective across nodes at 1e-9 B/s.
        s.gpus_per_node = static_cast<int>(r.required_int_key("gpus_per_node"));
        s.intra_node_GBps = r.required_num_key("intra_node_GBps");
        s.inter_node_GBps = r.required_num_key("inter_node_GBps");
    } else {
        s.gpus_per_node = static_cast<int>(r.int_key_or("gpus_per_node", s.gpus_per_node));
        s.intra_node_GBps = r.num_key_or("intra_node_GBps", s.intra_node_GBps);
        s.inter_node_GBps = r.num_key_or("inter_node_GBps", s.inter_node_GBps);
    }
    s.name = r.string_or("name", s.name);
    s.display_name = r.string_or("display_name", s.display_name.empty() ? s.name : s.display_name);
    s.scaleup_domain = static_cast<int>(r.int_key_or("scaleup_domain", full ? s.gpus_per_node : s.scaleup_domain));
    s.intra_node_latency_us = r.num_key_or("intra_node_latency_us", s.intra_node_latency_us);
    s.intra_node_efficiency = r.num_key_or("intra_node_efficiency", s.intra_node_efficiency);
    s.scaleup_mesh_links = static_cast<int>(r.int_key_or("scaleup_mesh_links", s.scaleup_mesh_links));
    s.nvls = r.boolean_or("nvls", s.nvls);
    s.nvls_GBps = r.num_key_or("nvls_GBps", s.nvls_GBps);
    s.inter_node_latency_us = r.num_key_or("inter_node_latency_us", s.inter_node_latency_us);
    s.inter_node_efficiency = r.num_key_or("inter_node_efficiency", s.inter_node_efficiency);
    s.nics_per_node = static_cast<int>(r.int_key_or("nics_per_node", s.nics_per_node));
    s.nic_Gbps = r.num_key_or("nic_Gbps", s.nic_Gbps);
    if (const Json* t = r.get("torus_dims")) {
        bool ok = t->is_array();
        std::vector<int> dims;
        if (ok)
            for (const auto& d : *t) {
                if (!d.is_number_integer() || d.get<std::int64_t>() < 1 || d.get<std::int64_t>() > limits::kGpus ||
                    dims.size() >= 8) {
                    ok = false;
                    break;
                }
                dims.push_back(static_cast<int>(d.get<std::int64_t>()));
            }
        if (!ok)
            r.problems().add(r.ptr("torus_dims"), *t,
                             fmt::format("an array of at most 8 integers in [1, {}]", limits::kGpus));
        else
            s.torus_dims = dims;
    }
    s.ici_link_GBps = r.num_key_or("ici_link_GBps", s.ici_link_GBps);
    s.ici_links_per_chip = static_cast<int>(r.int_key_or("ici_links_per_chip", s.ici_links_per_chip));
    s.torus_wraparound = r.boolean_or("torus_wraparound", s.torus_wraparound);
    s.dcn_GBps = r.num_key_or("dcn_GBps", s.dcn_GBps);
    s.collective_base_latency_us = r.num_key_or("collective_base_latency_us", s.collective_base_latency_us);
    s.intra_node_comm_sm_fraction = r.num_key_or("intra_node_comm_sm_fraction", s.intra_node_comm_sm_fraction);
    s.inter_node_comm_sm_fraction = r.num_key_or("inter_node_comm_sm_fraction", s.inter_node_comm_sm_fraction);
    if (auto v = r.num_key("host_memory_GiB")) s.host_memory_bytes = *v * kGiB;
    s.pcie_GBps = r.num_key_or("pcie_GBps", s.pcie_GBps);
    s.host_memory_GBps = r.num_key_or("host_memory_GBps", s.host_memory_GBps);
    read_sources(r, s.provenance);
}

// Rates that are 0 where the system uses them: a collective over a tier of 0 GB/s was free or took
// 1e18 s. A key that is 0 by the database's convention where it does not apply (ici_link_GBps on a
// switched system, nvls_GBps without NVLink SHARP, nic_Gbps without NICs) is refused only where it applies.
void check_system_rates(const SystemSpec& s, const std::string& pointer, Problems& pr) {
    auto value = [](double x) { return x == 0 ? Json(0) : Json(x); };   // "0", as a scenario writes it
    if (s.is_torus() && !(s.ici_link_GBps > 0))
        pr.add(pointer + "/ici_link_GBps", value(s.ici_link_GBps),
               fmt::format("> 0 on a TPU torus (torus_dims has {} dimensions): the collectives run over ICI links",
                           s.torus_dims.size()));
    if (s.is_torus() && s.ici_links_per_chip < 1)
        pr.add(pointer + "/ici_links_per_chip", Json(s.ici_links_per_chip), ">= 1 on a TPU torus");
    if (s.nvls && !(s.nvls_GBps > 0))
        pr.add(pointer + "/nvls_GBps", value(s.nvls_GBps),
               "> 0 with nvls: true (the all-reduce bus bandwidth with NVLink SHARP), or nvls: false");
    if (s.nics_per_node > 0 && !(s.nic_Gbps > 0))
        pr.add(pointer + "/nic_Gbps", value(s.nic_Gbps),
               fmt::format("> 0 with nics_per_node = {} (the line rate of one card), or nics_per_node: 0",
                           s.nics_per_node));
}

// A switched preset's scale-out bandwidth per GPU is derived from its NICs (docs/hardware-db.md:
// nics_per_node · nic_Gbps / 8 / gpus_per_node). Overriding one of those three without inter_node_GBps
// re-derives it; the override kept the preset's figure, so a node of one 100 Gb/s card priced its
// all-reduces at the 8 x 400 Gb/s of a DGX H100. A preset whose figure is not that derivation (a
// measured one) needs inter_node_GBps stated with them.
void rederive_scaleout(const SystemSpec& preset, const Json& overrides, const std::string& pointer, SystemSpec& s,
                       Problems& pr) {
    const char* inputs[] = {"nics_per_node", "nic_Gbps", "gpus_per_node"};
    const char* given = nullptr;
    for (const char* k : inputs)
        if (overrides.contains(k)) given = given ? given : k;
    if (!given || overrides.contains("inter_node_GBps") || s.is_torus()) return;
    auto derived = [](const SystemSpec& x) {
        return x.gpus_per_node > 0 ? x.nics_per_node * x.nic_Gbps / 8.0 / x.gpus_per_node : 0.0;
    };
    const double was = derived(preset);
    if (!(preset.nics_per_node > 0) || std::abs(was - preset.inter_node_GBps) > 0.01 * preset.inter_node_GBps) {
        pr.add(pointer + "/" + given, overrides[given],
               fmt::format("inter_node_GBps stated beside it: the preset's {:.4g} GB/s per GPU is not derived from "
                           "its NICs ({} x {:.4g} Gb/s / 8 / {} GPUs = {:.4g}), so it cannot be re-derived",
                           preset.inter_node_GBps, preset.nics_per_node, preset.nic_Gbps, preset.gpus_per_node, was));
        return;
    }
    const double now = derived(s);
    if (!(now >= 1e-6)) {
        pr.add(pointer + "/" + given, overrides[given],
               fmt::format("a network: with it the scale-out bandwidth, nics_per_node x nic_Gbps / 8 / gpus_per_node, "
                           "is {:.4g} GB/s per GPU (state inter_node_GBps for a system whose GPUs reach other nodes "
                           "another way)",
                           now));
        return;
    }
    s.inter_node_GBps = now;
    s.provenance["inter_node_GBps"] =
        Provenance{fmt::format("derived from the scenario's {} at {}: nics_per_node x nic_Gbps / 8 / gpus_per_node",
                               given, pointer.empty() ? "/" : pointer),
                   "override"};
}

}   // namespace

// --------------------------------------------------------------------------------------------
// Database
// --------------------------------------------------------------------------------------------
Database::Database(const std::map<std::string, std::string>& files) {
    Problems pr;
    for (const auto& [path, text] : files) {
        const auto slash = path.find('/');
        if (slash == std::string::npos) continue;
        const std::string dir = path.substr(0, slash);
        if (dir == "profiles") {
            auto lazy = std::make_unique<LazyProfile>();
            lazy->text = text;
            lazy->origin = "hardware_db/data/" + path;
            profiles_[std::filesystem::path(path).stem().string()] = std::move(lazy);
            continue;
        }
        Json j = parse_json_text(text, "hardware_db/data/" + path);
        std::string name = j.is_object() && j.contains("name") && j["name"].is_string()
                               ? j["name"].get<std::string>()
                               : std::filesystem::path(path).stem().string();
        if (dir == "accelerators")
            accelerators_[name] = std::move(j);
        else if (dir == "systems")
            systems_[name] = std::move(j);
        else if (dir == "models")
            models_[name] = std::move(j);
    }
}

std::vector<std::string> Database::profile_names() const {
    std::vector<std::string> out;
    out.reserve(profiles_.size());
    for (const auto& kv : profiles_) out.push_back(kv.first);
    return out;
}

const Json* Database::builtin_profile(const std::string& name) const {
    const auto it = profiles_.find(name);
    if (it == profiles_.end()) return nullptr;
    LazyProfile& p = *it->second;
    std::call_once(p.parsed, [&p] { p.json = parse_json_text(p.text, p.origin); });
    return &p.json;
}

const Database& Database::builtin() {
    static const Database db = [] {
        std::map<std::string, std::string> files;
        for (const auto& f : embedded_files()) files.emplace(std::string(f.path), std::string(f.content));
        return Database(files);
    }();
    return db;
}

namespace {
std::vector<std::string> keys_of(const std::map<std::string, Json>& m) {
    std::vector<std::string> out;
    out.reserve(m.size());
    for (const auto& [k, v] : m) out.push_back(k);
    return out;
}

const Json& lookup(const std::map<std::string, Json>& m, const std::string& name, const std::string& what,
                   const std::string& pointer) {
    auto it = m.find(name);
    if (it != m.end()) return it->second;
    const auto near = closest_names(name, keys_of(m));
    std::string expected = "a known " + what + " name (`llmsim " + (what == "model" ? "model" : "hw") + " list`)";
    if (!near.empty()) expected += "; closest: " + join(near);
    throw ConfigError(
        fmt::format("{}: {}: expected {}", pointer.empty() ? what : pointer, json_brief(Json(name)), expected));
}
}   // namespace

std::vector<std::string> Database::accelerator_names() const { return keys_of(accelerators_); }
std::vector<std::string> Database::system_names() const { return keys_of(systems_); }
std::vector<std::string> Database::model_names() const { return keys_of(models_); }

const Json& Database::accelerator_json(const std::string& name) const {
    return lookup(accelerators_, name, "accelerator", "");
}
const Json& Database::system_json(const std::string& name) const { return lookup(systems_, name, "system", ""); }
const Json& Database::model_json(const std::string& name) const { return lookup(models_, name, "model", ""); }

AcceleratorSpec Database::accelerator(const std::string& name) const {
    Problems pr;
    auto a = parse_accelerator(accelerator_json(name), "accelerators/" + name, pr);
    pr.raise_if_any();
    return a;
}

SystemSpec Database::system(const std::string& name) const {
    Problems pr;
    auto s = resolve_system(Json(name), "", pr);
    pr.raise_if_any();
    return s;
}

ModelSpec Database::model(const std::string& name) const {
    Problems pr;
    auto m = parse_model(model_json(name), "models/" + name, pr);
    pr.raise_if_any();
    return m;
}

AcceleratorSpec Database::resolve_accelerator(const Json& value, const std::string& pointer, Problems& pr) const {
    if (value.is_string()) {
        try {
            Problems inner;
            auto a = parse_accelerator(lookup(accelerators_, value.get<std::string>(), "accelerator", pointer),
                                       "accelerators/" + value.get<std::string>(), inner);
            for (auto& l : inner.lines) pr.add_raw(l);
            return a;
        } catch (const ConfigError& e) {
            for (const auto& l : e.problems()) pr.add_raw(l);
            return {};
        }
    }
    if (!value.is_object()) {
        pr.add(pointer, value, "an accelerator name or object");
        return {};
    }
    if (value.contains("preset")) {
        const Json& p = value["preset"];
        if (!p.is_string()) {
            pr.add(pointer + "/preset", p, "an accelerator name");
            return {};
        }
        Json merged;
        try {
            merged = lookup(accelerators_, p.get<std::string>(), "accelerator", pointer + "/preset");
        } catch (const ConfigError& e) {
            for (const auto& l : e.problems()) pr.add_raw(l);
            return {};
        }
        Json patch = value;
        patch.erase("preset");
        merged.merge_patch(patch);
        auto a = parse_accelerator(merged, pointer, pr);
        mark_overrides(patch, "", "scenario override at " + pointer, a.provenance, "override");
        return a;
    }
    return parse_accelerator(value, pointer, pr);
}

SystemSpec Database::resolve_system(const Json& value, const std::string& pointer, Problems& pr,
                                    const std::string& base_dir) const {
    SystemSpec s;
    const Json* preset = nullptr;
    Json override_obj = Json::object();
    if (value.is_string()) {
        try {
            preset = &lookup(systems_, value.get<std::string>(), "system", pointer);
        } catch (const ConfigError& e) {
            for (const auto& l : e.problems()) pr.add_raw(l);
            return s;
        }
    } else if (value.is_object()) {
        if (value.contains("preset")) {
            if (!value["preset"].is_string()) {
                pr.add(pointer + "/preset", value["preset"], "a system name");
                return s;
            }
            try {
                preset = &lookup(systems_, value["preset"].get<std::string>(), "system", pointer + "/preset");
            } catch (const ConfigError& e) {
                for (const auto& l : e.problems()) pr.add_raw(l);
                return s;
            }
        }
        override_obj = value;
    } else {
        pr.add(pointer, value, "a system name or object");
        return s;
    }

    // 1. The preset (data file), read strictly.
    Json gpu_value;
    if (preset) {
        Problems inner;
        KeyReader r(*preset, "systems/" + (*preset).value("name", std::string("?")), inner, "/system");
        read_system_keys(r, s, true);
        if (const Json* g = r.get("gpu")) gpu_value = *g;
        r.finish();
        for (auto& l : inner.lines) pr.add_raw(l);
    }
    // 2. Scenario keys: a full description or overrides of the preset.
    const SystemSpec preset_spec = s;
    std::string profile_path;
    if (override_obj.is_object() && !override_obj.empty()) {
        KeyReader r(override_obj, pointer, pr, "/system");
        r.accept("preset");
        if (auto p = r.string("profile")) {
            profile_path = *p;
            if (p->empty())   // was ignored: the scenario named no profile and ran without one
                pr.add(pointer + "/profile", Json(""),
                       "a calibration profile file or a built-in profile name (`llmsim calibrate fit` writes one)");
        }
        if (const Json* g = r.get("gpu")) {
            if (g->is_object() && !g->contains("preset") && gpu_value.is_string()) {
                Json merged = *g;
                merged["preset"] = gpu_value;
                gpu_value = merged;
            } else {
                gpu_value = *g;
            }
        }
        read_system_keys(r, s, preset == nullptr);
        r.finish();
        if (preset) rederive_scaleout(preset_spec, override_obj, pointer, s, pr);
        mark_overrides(override_obj, "", "scenario override at " + (pointer.empty() ? "/" : pointer), s.provenance,
                       "override");
        if (!preset && s.name.empty()) s.name = "custom";
    }
    if (gpu_value.is_null()) {
        pr.add_raw(fmt::format("{}/gpu: missing: expected an accelerator name (`llmsim hw list`)", pointer));
    } else {
        s.gpu = resolve_accelerator(gpu_value, pointer + "/gpu", pr);
    }
    // 3. A calibration profile: a system override measured by `llmsim calibrate fit`.
    if (!profile_path.empty()) {
        // Problems inside the profile file are reported under the pointer that named it:
        // "/system/profile: prof.json#/system/nvls_GBps: -1: expected ...".
        Problems inner;
        read_profile(s, profile_path, base_dir, inner, override_obj, pointer);
        for (const auto& l : inner.lines) pr.add_raw(fmt::format("{}/profile: {}", pointer, l));
    }
    check_system_rates(s, pointer, pr);
    return s;
}

void Database::read_profile(SystemSpec& s, const std::string& profile_path, const std::string& base_dir, Problems& pr,
                            const Json& scenario, const std::string& pointer) const {
    const Json* scenario_gpu = scenario.is_object() && scenario.contains("gpu") ? &scenario["gpu"] : nullptr;
    const bool gpu_patch = scenario_gpu && scenario_gpu->is_object() && !scenario_gpu->contains("preset");
    // Whether the scenario sets a dotted key itself (then its provenance stays "override").
    auto scenario_sets = [&](const std::string& dotted) {
        const Json* j = &scenario;
        std::size_t from = 0;
        while (true) {
            const std::size_t dot = dotted.find('.', from);
            const std::string part = dotted.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
            if (!j->is_object() || !j->contains(part)) return false;
            j = &(*j)[part];
            if (dot == std::string::npos) return true;
            from = dot + 1;
        }
    };
    {
        Json prof;
        std::string path = resolve_path(profile_path, base_dir);
        // A file wins; a bare name that is no file is a built-in profile.
        const Json* builtin = nullptr;
        if (profile_path.find('/') == std::string::npos && !file_exists(path)) builtin = builtin_profile(profile_path);
        if (builtin) {
            prof = *builtin;
            path = "builtin:" + profile_path;
        } else {
            try {
                prof = parse_json_file(path);
            } catch (const ConfigError& e) {
                for (const auto& l : e.problems()) pr.add_raw(l);   // the file, its line or its pointer
                if (profile_path.find('/') == std::string::npos && !profiles_.empty())
                    pr.add_raw(fmt::format("(built-in profiles: {})", fmt::join(profile_names(), ", ")));
                return;
            }
        }
        const std::string ppre = path + "#";
        ObjectReader r(prof, ppre, pr);
        r.integer("llmsim_profile", 1, 1);
        r.accept("measured_on");
        r.accept("fits");
        r.accept("provenance");
        const Json* sys = r.get("system");
        if (!sys || !sys->is_object() || sys->empty()) {
            // A profile that sets nothing applies nothing: it is not what the scenario asked for.
            pr.add_raw(
                fmt::format("{}/system: {}: expected the measured system keys to apply (an object such as "
                            "{{\"inter_node_GBps\": 46.2}}, as `llmsim calibrate fit` writes)",
                            ppre, sys ? json_brief(*sys) : std::string("missing")));
            sys = nullptr;
        }
        if (sys) {
            KeyReader sr(*sys, ppre + "/system", pr, "/system");
            const Json* g = sr.get("gpu");
            if (g && g->is_string()) {
                // The accelerator the profile was measured on: it must be the system's.
                if (g->get<std::string>() != s.gpu.name)
                    pr.add(ppre + "/system/gpu", *g,
                           fmt::format("the system's accelerator \"{}\" (the profile was measured on another)",
                                       s.gpu.name));
                g = nullptr;
            } else if (g && !g->is_object()) {
                pr.add(ppre + "/system/gpu", *g, "an object of measured accelerator keys, or the accelerator's name");
                g = nullptr;
            }
            if (g) {
                Json merged = *g;
                if (gpu_patch) merged.merge_patch(*scenario_gpu);   // the scenario's GPU keys win
                merged["preset"] = s.gpu.name;
                auto prov = s.gpu.provenance;
                s.gpu = resolve_accelerator(merged, ppre + "/system/gpu", pr);
                for (auto& [k, v] : prov)
                    if (!s.gpu.provenance.count(k) || s.gpu.provenance[k].kind != "override") s.gpu.provenance[k] = v;
            }
            read_system_keys(sr, s, false);
            sr.finish();
            const std::string measured = prof.contains("measured_on") ? prof["measured_on"].dump() : std::string("{}");
            mark_overrides(*sys, "", "calibration profile " + profile_path + " " + measured, s.provenance,
                           "calibration");
            // The scenario's system keys again, on top (their problems were reported when first read).
            if (scenario.is_object() && !scenario.empty()) {
                Problems again;
                KeyReader r2(scenario, pointer, again, "/system");
                r2.accept("preset");
                r2.accept("profile");
                r2.accept("gpu");
                read_system_keys(r2, s, false);
                mark_overrides(scenario, "", "scenario override at " + (pointer.empty() ? "/" : pointer), s.provenance,
                               "override");
            }
            // Per-key provenance text from the profile, where it gives one.
            if (prof.contains("provenance") && prof["provenance"].is_object()) {
                for (auto it = prof["provenance"].begin(); it != prof["provenance"].end(); ++it) {
                    if (!it->is_string()) continue;
                    const std::string& k = it.key();
                    Provenance pv{it->get<std::string>(), "calibration"};
                    if (scenario_sets(k)) continue;   // the scenario's value is the one used
                    if (k.rfind("gpu.", 0) == 0)
                        s.gpu.provenance[k.substr(4)] = pv;
                    else
                        s.provenance[k] = pv;
                }
            }
        }
        r.finish();
        s.profile = profile_path;
    }
}

ModelSpec Database::resolve_model(const Json& value, const std::string& pointer, Problems& pr,
                                  const std::string& base_dir) const {
    if (value.is_string()) {
        const std::string v = value.get<std::string>();
        if (models_.count(v)) return parse_model(models_.at(v), "models/" + v, pr);
        const std::string path = resolve_path(v, base_dir);
        const bool looks_like_path =
            v.find('/') != std::string::npos || (v.size() > 5 && v.substr(v.size() - 5) == ".json");
        if (looks_like_path || file_exists(path)) {
            if (!file_exists(path)) {
                pr.add(pointer, value, "a model-zoo name or a readable model / config.json file");
                return {};
            }
            // Problems inside the file are reported under the pointer that named it.
            Problems inner;
            ModelSpec m;
            try {
                m = resolve_model(parse_json_file(path), path + "#", inner, base_dir);
            } catch (const ConfigError& e) {
                inner.lines = e.problems();
            }
            for (const auto& l : inner.lines) pr.add_raw(fmt::format("{}: {}", pointer, l));
            return m;
        }
        try {
            lookup(models_, v, "model", pointer);
        } catch (const ConfigError& e) {
            for (const auto& l : e.problems()) pr.add_raw(l);
        }
        return {};
    }
    if (!value.is_object()) {
        pr.add(pointer, value, "a model-zoo name, a config.json path or a model object");
        return {};
    }
    if (looks_like_hf_config(value)) return model_from_hf_config(value, pointer, pr);
    if (value.contains("preset")) {
        if (!value["preset"].is_string()) {
            pr.add(pointer + "/preset", value["preset"], "a model-zoo name");
            return {};
        }
        Json merged;
        try {
            merged = lookup(models_, value["preset"].get<std::string>(), "model", pointer + "/preset");
        } catch (const ConfigError& e) {
            for (const auto& l : e.problems()) pr.add_raw(l);
            return {};
        }
        Json patch = value;
        patch.erase("preset");
        merged.merge_patch(patch);
        merged.erase("published_params");
        merged.erase("published_active_params");
        return parse_model(merged, pointer, pr);
    }
    return parse_model(value, pointer, pr);
}

// --------------------------------------------------------------------------------------------
// Echo
// --------------------------------------------------------------------------------------------
Json to_json(const ModelSpec& m) {
    Json j = {{"name", m.name},
              {"layers", m.layers},
              {"hidden", m.hidden},
              {"heads", m.heads},
              {"kv_heads", m.kv_heads},
              {"head_dim", m.head_dim},
              {"ffn_hidden", m.ffn_hidden},
              {"vocab", m.vocab},
              {"mlp", to_string(m.mlp)},
              {"norm", m.norm == NormKind::rmsnorm ? "rmsnorm" : "layernorm"},
              {"position", m.position == PositionKind::rope       ? "rope"
                           : m.position == PositionKind::alibi    ? "alibi"
                           : m.position == PositionKind::relative ? "relative"
                           : m.position == PositionKind::none     ? "none"
                                                                  : "learned"},
              {"max_seq_len", m.max_seq_len},
              {"tied_embeddings", m.tied_embeddings},
              {"bias", m.bias},
              {"qkv_bias", m.qkv_bias},
              {"parallel_block", m.parallel_block},
              {"dropout", m.dropout}};
    if (m.moe.enabled())
        j["moe"] = {{"experts", m.moe.experts},
                    {"top_k", m.moe.top_k},
                    {"expert_ffn_hidden", m.moe.expert_ffn_hidden},
                    {"shared_experts", m.moe.shared_experts},
                    {"shared_expert_ffn_hidden", m.moe.shared_expert_ffn_hidden},
                    {"dense_layers", m.moe.dense_layers}};
    if (m.mla.enabled())
        j["mla"] = {{"q_lora_rank", m.mla.q_lora_rank},
                    {"kv_lora_rank", m.mla.kv_lora_rank},
                    {"qk_rope_head_dim", m.mla.qk_rope_head_dim},
                    {"v_head_dim", m.mla.v_head_dim}};
    return j;
}

namespace {
Json provenance_json(const std::map<std::string, Provenance>& p) {
    Json j = Json::object();
    for (const auto& [k, v] : p) j[k] = {{"source", v.source}, {"kind", v.kind}};
    return j;
}
}   // namespace

Json to_json(const AcceleratorSpec& a, bool with_provenance) {
    Json peaks = Json::object();
    Json gm = Json::object();
    Json kh = Json::object();
    for (int i = 0; i < kPrecisionCount; ++i) {
        if (a.peak_flops[i] > 0) peaks[to_string(static_cast<Precision>(i))] = a.peak_flops[i] / 1e12;
        if (a.peak_flops[i] > 0) gm[to_string(static_cast<Precision>(i))] = a.efficiency.gemm_max[i];
        if (a.efficiency.gemm_k_half_by[i] > 0)
            kh[to_string(static_cast<Precision>(i))] = a.efficiency.gemm_k_half_by[i];
    }
    Json j = {{"name", a.name},
              {"display_name", a.display_name},
              {"vendor", a.vendor},
              {"peak_tflops", peaks},
              {"hbm_capacity_GiB", a.hbm_capacity_bytes / kGiB},
              {"hbm_GBps", a.hbm_GBps},
              {"sm_count", a.sm_count},
              {"l2_cache_MiB", a.l2_cache_bytes / kMiB},
              {"tdp_W", a.tdp_W},
              {"efficiency",
               {{"gemm_max", gm},
                {"gemm_tile_m", a.efficiency.gemm_tile_m},
                {"gemm_tile_n", a.efficiency.gemm_tile_n},
                {"gemm_k_half", a.efficiency.gemm_k_half},
                {"gemm_k_half_by", kh},
                {"hbm_efficiency", a.efficiency.hbm_efficiency},
                {"attention_fwd", a.efficiency.attention_fwd},
                {"attention_bwd", a.efficiency.attention_bwd},
                {"fa2_attention_fwd", a.efficiency.fa2_attention_fwd},
                {"fa2_attention_bwd", a.efficiency.fa2_attention_bwd},
                {"kernel_launch_us", a.efficiency.kernel_launch_us},
                {"sustained_fraction", a.efficiency.sustained_fraction}}}};
    if (with_provenance) j["provenance"] = provenance_json(a.provenance);
    return j;
}

Json to_json(const SystemSpec& s, bool with_provenance) {
    Json j = {{"name", s.name},
              {"display_name", s.display_name},
              {"gpu", to_json(s.gpu, with_provenance)},
              {"gpus_per_node", s.gpus_per_node},
              {"scaleup_domain", s.scaleup_domain},
              {"intra_node_GBps", s.intra_node_GBps},
              {"intra_node_latency_us", s.intra_node_latency_us},
              {"intra_node_efficiency", s.intra_node_efficiency},
              {"scaleup_mesh_links", s.scaleup_mesh_links},
              {"nvls", s.nvls},
              {"nvls_GBps", s.nvls_GBps},
              {"inter_node_GBps", s.inter_node_GBps},
              {"inter_node_latency_us", s.inter_node_latency_us},
              {"inter_node_efficiency", s.inter_node_efficiency},
              {"nics_per_node", s.nics_per_node},
              {"nic_Gbps", s.nic_Gbps},
              {"torus_dims", s.torus_dims},
              {"ici_link_GBps", s.ici_link_GBps},
              {"ici_links_per_chip", s.ici_links_per_chip},
              {"torus_wraparound", s.torus_wraparound},
              {"dcn_GBps", s.dcn_GBps},
              {"collective_base_latency_us", s.collective_base_latency_us},
              {"intra_node_comm_sm_fraction", s.intra_node_comm_sm_fraction},
              {"inter_node_comm_sm_fraction", s.inter_node_comm_sm_fraction},
              {"host_memory_GiB", s.host_memory_bytes / kGiB},
              {"pcie_GBps", s.pcie_GBps},
              {"host_memory_GBps", s.host_memory_GBps}};
    if (!s.profile.empty()) j["profile"] = s.profile;
    if (with_provenance) j["provenance"] = provenance_json(s.provenance);
    return j;
}

}   // namespace llmsim
