#include "hardware_db/scenario_keys.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "hardware_db/engines.hpp"
#include "hardware_db/limits.hpp"
#include "hardware_db/specs.hpp"
#include "schedules/schedule.hpp"

namespace llmsim {

namespace {

// Work limits of the serving simulation (requests simulated) and of a few small counts; every other
// bound is in hardware_db/limits.hpp.
constexpr std::int64_t kMaxRequests = 10'000'000;
constexpr std::int64_t kMaxSpeculativeTokens = 64;
constexpr std::int64_t kMaxPpoEpochs = 1000;
constexpr std::int64_t kMaxIciLinks = 64;
using limits::kMaxQps;
using limits::kMinQps;
// Arrival gaps' coefficient of variation: 0 (evenly spaced) to 10 (Gamma shape 0.01: nearly every request in
// a burst). BurstGPT (Wang et al. 2024, arXiv 2401.17644) models production LLM arrivals' gaps as Gamma.
constexpr double kMinArrivalCv = 0.0;
constexpr double kMaxArrivalCv = 10.0;
// The busiest GPU of an expert-parallel group carries at most every routed token: a ratio to the mean of at
// most ep, and no deployment is wider than 1024 ranks of experts; 64 is far past any measured skew (EPLB's
// balancedness figures stay above 0.5, a ratio below 2).
constexpr double kMaxExpertImbalance = 64.0;
// Redundant copies of routed experts: at most 2^16 (DeepSeek's EPLB adds 32 to 256 experts).
constexpr std::int64_t kMaxRedundantExperts = 65536;
constexpr std::int64_t kMaxPrefixGroups = std::int64_t{1} << 20;   // shared prefixes of one stream
constexpr double kMaxZipf = 4.0;
// A rate profile: its period from one second to a year, at most RateProfile::kMaxSlices slices, each
// level a relative rate up to 10^6 times another's.
constexpr double kMaxProfilePeriod_s = 365.0 * 86400.0;
constexpr double kMaxProfileLevel = 1e6;
// A request class's share: relative, like a profile's levels (one class up to 10^6 times another's share).
constexpr double kMaxClassShare = 1e6;
constexpr double kMinWindow_s = 1e-3;   // a report window: at least a millisecond
constexpr double kMaxPower_W = 1e9;
constexpr double kMaxKHalf = 1e9;
constexpr double kMaxSustained = 1.5;   // a fitted busy share may exceed 1 (docs/calibration.md)
constexpr double kMaxHitFraction = 0.999;
constexpr double kMaxHeadroomFraction = 0.95;
constexpr double kMaxSeconds = 1e9;
constexpr double kMaxPrice = 1e300;
// A serving price per GPU-hour: at most $10^9 (the search flag's bound), so a cost per token stays finite
// whatever the throughput.
constexpr double kMaxGpuHourPrice = 1e9;

constexpr unsigned T = kTrainingKind, I = kInferenceKind, S = kServingKind, Q = kSearchKind;
constexpr unsigned G = I | S;   // generation: inference or serving

// A fluent builder for one table row.
struct K {
    ScenarioKey k;
    K(std::string object, std::string key, KeyType type, unsigned kinds, std::string meaning) {
        k.object = std::move(object);
        k.key = std::move(key);
        k.type = type;
        k.kinds = kinds;
        k.meaning = std::move(meaning);
    }
    K& range(std::int64_t lo, std::int64_t hi) {
        k.imin = lo;
        k.imax = hi;
        return *this;
    }
    K& real(double lo, bool lo_inclusive, double hi) {
        k.min = lo;
        k.min_inclusive = lo_inclusive;
        k.max = hi;
        return *this;
    }
    // 0 (off), or a number in [lo, max]: a rate too small to be physical is refused, not simulated.
    K& zero_or_at_least(double lo) {
        k.zero_or_min = lo;
        return *this;
    }
    K& one_of(std::vector<std::string> c) {
        k.choices = std::move(c);
        return *this;
    }
    K& unit(std::string u) {
        k.unit = std::move(u);
        return *this;
    }
    K& dflt(std::string json) {
        k.default_json = std::move(json);
        return *this;
    }
    K& computed(std::string text) {
        k.default_text = std::move(text);
        return *this;
    }
    K& required() {
        k.required = true;
        return *this;
    }
    K& ext() {
        k.contract = false;
        return *this;
    }
    K& example(std::string json) {
        k.example = std::move(json);
        return *this;
    }
};

std::vector<std::string> precision_names(std::initializer_list<Precision> ps) {
    std::vector<std::string> out;
    for (auto p : ps) out.emplace_back(to_string(p));
    return out;
}
std::vector<std::string> all_precisions() {
    std::vector<std::string> out;
    out.reserve(static_cast<std::size_t>(kPrecisionCount));
    for (int i = 0; i < kPrecisionCount; ++i) out.emplace_back(to_string(static_cast<Precision>(i)));
    return out;
}
std::vector<std::string> schedule_name_list() {
    std::vector<std::string> out;
    for (const auto& s : schedules()) out.emplace_back(s.name);
    return out;
}

using P = Precision;
using KT = KeyType;

void add_length(std::vector<K>& t, const std::string& obj) {
    const std::string o = "/inference/" + obj;
    t.push_back(K(o, "mean", KT::number, S, "mean tokens per request")
                    .real(1.0, true, static_cast<double>(limits::kSeqLen))
                    .unit("tokens")
                    .computed("required, but for a uniform length given by min and max (their midpoint)")
                    .example("467"));
    t.push_back(K(o, "dist", KT::choice, S, "shape of the distribution around the mean")
                    .one_of({"fixed", "normal", "uniform", "exponential", "lognormal"})
                    .dflt("\"fixed\""));
    t.push_back(K(o, "stdev", KT::number, S,
                  "standard deviation of the lengths drawn (> 0 for normal, uniform and lognormal; where the family "
                  "cannot spread so far within [min, max], as far as it can; 0 or absent for fixed, the mean for "
                  "exponential)")
                    .real(0.0, true, static_cast<double>(limits::kSeqLen))
                    .unit("tokens")
                    .computed("0; (max − min)/√12 for a uniform length given by min and max")
                    .example("40"));
    t.push_back(
        K(o, "min", KT::number, S,
          "the shortest length drawn: the distribution is restricted to [min, max] with the stated mean and stdev kept")
            .real(1.0, true, static_cast<double>(limits::kSeqLen))
            .unit("tokens")
            .dflt("1"));
    t.push_back(K(o, "max", KT::number, S, "the longest length drawn (>= mean >= min)")
                    .real(1.0, true, static_cast<double>(limits::kSeqLen))
                    .unit("tokens")
                    .computed(fmt::format("{}", limits::kSeqLen))
                    .example("1024"));
}

std::vector<ScenarioKey> build() {
    std::vector<K> t;
    // ---- top level ----
    t.push_back(K("", "name", KT::string, kAllKinds, "label echoed in outputs").dflt("\"\"").example("\"my run\""));
    t.push_back(K("", "model", KT::model, kAllKinds,
                  "a model-zoo name (`llmsim model list`), a model JSON or Hugging Face config.json path (relative "
                  "to the scenario's folder), or a model object (below)")
                    .required()
                    .example("\"llama-3-8b\""));
    t.push_back(K("", "system", KT::system, kAllKinds, "a system name (`llmsim hw list`) or a system object (below)")
                    .required()
                    .example("\"dgx-h100\""));
    t.push_back(K("", "gpus", KT::integer, kAllKinds,
                  "total accelerators; required unless the layout fixes it (dp given, or tp·pp·cp > 1: then "
                  "tp·pp·cp·dp); `search` without it tries every count up to search.max_gpus")
                    .range(1, limits::kGpus)
                    .computed("tp·pp·cp·dp when the layout fixes it, else required")
                    .example("8"));
    t.push_back(K("", "parallel", KT::object, kAllKinds, "how the model is split (below); in `search`, constraints")
                    .computed("all 1")
                    .example("{}"));
    t.push_back(K("", "training", KT::object, T | Q,
                  "a training step (below); a scenario with neither training nor inference trains with defaults")
                    .computed("all defaults")
                    .example("{}"));
    t.push_back(K("", "inference", KT::object, G, "generation or serving (below); exclusive with training")
                    .computed("absent: a training scenario")
                    .example("{}"));
    t.push_back(
        K("", "search", KT::object, Q, "constraints of `llmsim search` (docs/search.md); the other commands ignore it")
            .ext()
            .computed("absent")
            .example("{}"));

    // ---- model object ----
    const std::string m = "/model";
    t.push_back(K(m, "preset", KT::string, kAllKinds, "start from this model-zoo model and override the keys given")
                    .ext()
                    .computed("none")
                    .example("\"llama-3-8b\""));
    t.push_back(K(m, "name", KT::string, kAllKinds, "label").ext().dflt("\"custom\"").example("\"my-model\""));
    t.push_back(
        K(m, "display_name", KT::string, kAllKinds, "label for tables").ext().computed("name").example("\"My model\""));
    t.push_back(K(m, "source", KT::string, kAllKinds, "where the shape comes from (zoo metadata)")
                    .ext()
                    .computed("none")
                    .example("\"paper, table 1\""));
    t.push_back(K(m, "layers", KT::integer, kAllKinds, "transformer layers L")
                    .range(1, limits::kLayers)
                    .required()
                    .example("4"));
    t.push_back(
        K(m, "hidden", KT::integer, kAllKinds, "model width h").range(1, limits::kHidden).required().example("256"));
    t.push_back(
        K(m, "heads", KT::integer, kAllKinds, "attention heads a").range(1, limits::kHeads).required().example("4"));
    t.push_back(K(m, "kv_heads", KT::integer, kAllKinds, "KV heads (GQA/MQA); a divisor of heads")
                    .range(1, limits::kHeads)
                    .computed("heads")
                    .example("2"));
    t.push_back(
        K(m, "head_dim", KT::integer, kAllKinds, "width of one head; required when heads does not divide hidden")
            .range(1, limits::kHeadDim)
            .computed("hidden / heads")
            .example("64"));
    t.push_back(K(m, "ffn_hidden", KT::integer, kAllKinds, "MLP width f")
                    .range(1, limits::kFfnHidden)
                    .computed("4·hidden")
                    .example("1024"));
    t.push_back(
        K(m, "vocab", KT::integer, kAllKinds, "vocabulary V").range(1, limits::kVocab).required().example("1000"));
    t.push_back(K(m, "mlp", KT::choice, kAllKinds,
                  "two matrices (GeLU, ReLU, squared ReLU) or three (any gated GLU such as SwiGLU)")
                    .one_of({"gelu", "swiglu"})
                    .dflt("\"gelu\"")
                    .example("\"swiglu\""));
    t.push_back(K(m, "tied_embeddings", KT::boolean, kAllKinds, "the LM head shares the embedding matrix")
                    .dflt("false")
                    .example("true"));
    t.push_back(K(m, "norm", KT::choice, kAllKinds, "2h (LayerNorm) or h (RMSNorm) parameters per norm")
                    .ext()
                    .one_of({"layernorm", "rmsnorm"})
                    .dflt("\"layernorm\"")
                    .example("\"rmsnorm\""));
    t.push_back(K(m, "position", KT::choice, kAllKinds,
                  "position encoding: learned adds max_seq_len·h parameters, relative (Transformer-XL) h·a per layer")
                    .ext()
                    .one_of({"learned", "rope", "alibi", "relative", "none"})
                    .dflt("\"learned\"")
                    .example("\"rope\""));
    t.push_back(K(m, "max_seq_len", KT::integer, kAllKinds, "learned position table size / context length")
                    .ext()
                    .range(1, limits::kSeqLen)
                    .unit("tokens")
                    .dflt("2048"));
    t.push_back(K(m, "bias", KT::boolean, kAllKinds,
                  "biases in every linear layer (GPT-2/3 style; gated LLaMA-family models have none)")
                    .ext()
                    .computed("false with mlp \"swiglu\", else true")
                    .example("false"));
    t.push_back(K(m, "qkv_bias", KT::boolean, kAllKinds, "biases on Q, K and V only (Qwen2 style)")
                    .ext()
                    .dflt("false")
                    .example("true"));
    t.push_back(K(m, "parallel_block", KT::boolean, kAllKinds, "attention and MLP share one norm (GPT-J, PaLM)")
                    .ext()
                    .dflt("false")
                    .example("true"));
    t.push_back(K(m, "dropout", KT::boolean, kAllKinds,
                  "dropout masks are stored as activations (GPT-3 and Megatron default 0.1; gated families none)")
                    .ext()
                    .computed("false with mlp \"swiglu\", else true")
                    .example("false"));
    t.push_back(K(m, "published_params", KT::number, kAllKinds, "published parameter count (zoo metadata, compared)")
                    .ext()
                    .real(0.0, false, limits::kMaxParams)
                    .unit("parameters")
                    .computed("none")
                    .example("8.03e9"));
    t.push_back(K(m, "published_active_params", KT::number, kAllKinds, "published active parameters of a MoE model")
                    .ext()
                    .real(0.0, false, limits::kMaxParams)
                    .unit("parameters")
                    .computed("none")
                    .example("1.3e10"));
    t.push_back(K(m, "moe", KT::object, kAllKinds, "mixture of experts (below); absent: a dense model")
                    .computed("absent")
                    .example("{\"experts\": 8, \"top_k\": 2}"));
    const std::string moe = "/model/moe";
    t.push_back(K(moe, "experts", KT::integer, kAllKinds, "routed experts per MoE layer")
                    .range(1, limits::kExperts)
                    .required()
                    .example("8"));
    t.push_back(K(moe, "top_k", KT::integer, kAllKinds, "experts each token is routed to (at most experts)")
                    .range(1, limits::kExperts)
                    .required()
                    .example("2"));
    t.push_back(K(moe, "expert_ffn_hidden", KT::integer, kAllKinds, "MLP width of one expert")
                    .range(1, limits::kFfnHidden)
                    .computed("ffn_hidden")
                    .example("512"));
    t.push_back(K(moe, "shared_experts", KT::integer, kAllKinds, "experts every token goes through")
                    .range(0, limits::kExperts)
                    .dflt("0")
                    .example("1"));
    t.push_back(K(moe, "shared_expert_ffn_hidden", KT::integer, kAllKinds, "MLP width of one shared expert")
                    .ext()
                    .range(0, limits::kFfnHidden)
                    .computed("expert_ffn_hidden")
                    .example("512"));
    t.push_back(
        K(moe, "dense_layers", KT::integer, kAllKinds, "leading layers with a dense MLP of ffn_hidden (at most layers)")
            .range(0, limits::kLayers)
            .dflt("0")
            .example("1"));

    t.push_back(K(m, "mla", KT::object, kAllKinds,
                  "multi-head latent attention (DeepSeek-V2/V3; below): K/V cached as one latent per token; head_dim "
                  "is then the query/key head dimension (nope + rope) and kv_heads = heads")
                    .ext()
                    .computed("absent")
                    .example("{\"kv_lora_rank\": 512, \"qk_rope_head_dim\": 16}"));
    const std::string mla = "/model/mla";
    t.push_back(K(mla, "kv_lora_rank", KT::integer, kAllKinds, "latent width cached per token and layer")
                    .ext()
                    .range(1, limits::kHidden)
                    .required()
                    .example("512"));
    t.push_back(K(mla, "qk_rope_head_dim", KT::integer, kAllKinds,
                  "decoupled RoPE key width, shared by the heads and cached beside the latent (less than head_dim)")
                    .ext()
                    .range(1, limits::kHeadDim)
                    .required()
                    .example("16"));
    t.push_back(
        K(mla, "q_lora_rank", KT::integer, kAllKinds, "query latent width (0: Q projected from the hidden state)")
            .ext()
            .range(0, limits::kHidden)
            .dflt("0")
            .example("1536"));
    t.push_back(K(mla, "v_head_dim", KT::integer, kAllKinds, "value head dimension")
                    .ext()
                    .range(1, limits::kHeadDim)
                    .computed("head_dim")
                    .example("32"));

    // ---- system object ----
    const std::string s = "/system";
    t.push_back(
        K(s, "preset", KT::string, kAllKinds, "start from this system (`llmsim hw list`) and override the keys given")
            .computed("none: the object is a full description")
            .example("\"dgx-h100\""));
    t.push_back(K(s, "gpu", KT::accelerator, kAllKinds,
                  "the accelerator: a name, overrides of the preset's accelerator, or an object (below)")
                    .computed("the preset's; required without preset")
                    .example("\"h100-sxm\""));
    t.push_back(K(s, "profile", KT::string, kAllKinds,
                  "a calibration profile written by `llmsim calibrate fit`, applied on top (docs/calibration.md)")
                    .ext()
                    .computed("none")
                    .example("\"profile.json\""));
    t.push_back(K(s, "name", KT::string, kAllKinds, "label")
                    .ext()
                    .computed("the preset's, else \"custom\"")
                    .example("\"my-cluster\""));
    t.push_back(K(s, "display_name", KT::string, kAllKinds, "label for tables")
                    .ext()
                    .computed("name")
                    .example("\"My cluster\""));
    t.push_back(K(s, "gpus_per_node", KT::integer, kAllKinds, "devices per node (TPU: chips per host)")
                    .range(1, limits::kGpusPerNode)
                    .computed("the preset's; required without preset")
                    .example("8"));
    t.push_back(K(s, "scaleup_domain", KT::integer, kAllKinds, "devices in one scale-up (NVLink or ICI) domain")
                    .ext()
                    .range(1, limits::kGpusPerNode)
                    .computed("gpus_per_node")
                    .example("8"));
    t.push_back(K(s, "intra_node_GBps", KT::number, kAllKinds, "scale-up bandwidth per device, per direction")
                    .real(limits::kMinRate, true, limits::kMaxRate)
                    .unit("GB/s")
                    .computed("the preset's; required without preset")
                    .example("450"));
    t.push_back(K(s, "intra_node_latency_us", KT::number, kAllKinds, "scale-up latency per hop")
                    .real(0.0, true, limits::kMaxLatencyUs)
                    .unit("us")
                    .computed("the preset's")
                    .example("3"));
    t.push_back(K(s, "intra_node_efficiency", KT::number, kAllKinds, "achievable share of intra_node_GBps")
                    .real(limits::kMinFraction, true, 1.0)
                    .computed("the preset's (0.8 in a full description)")
                    .example("0.8"));
    t.push_back(K(s, "scaleup_mesh_links", KT::integer, kAllKinds,
                  "links per device of a switchless scale-up mesh (AMD xGMI: 7), one per peer: a collective among "
                  "k devices of the domain drives min(k - 1, links) of intra_node_GBps's links; 0: switched")
                    .range(0, limits::kGpus)
                    .computed("the preset's (0 in a full description)")
                    .example("7"));
    t.push_back(K(s, "nvls", KT::boolean, kAllKinds, "NVLink SHARP in-switch reductions")
                    .computed("the preset's")
                    .example("true"));
    t.push_back(K(s, "nvls_GBps", KT::number, kAllKinds,
                  "achievable all-reduce bus bandwidth with NVLink SHARP (> 0 with nvls: true)")
                    .real(0.0, true, limits::kMaxRate)
                    .unit("GB/s")
                    .computed("the preset's")
                    .example("480"));
    t.push_back(K(s, "inter_node_GBps", KT::number, kAllKinds, "scale-out bandwidth per device, per direction")
                    .real(limits::kMinRate, true, limits::kMaxRate)
                    .unit("GB/s")
                    .computed("the preset's; required without preset")
                    .example("25"));
    t.push_back(K(s, "inter_node_latency_us", KT::number, kAllKinds, "scale-out latency")
                    .real(0.0, true, limits::kMaxLatencyUs)
                    .unit("us")
                    .computed("the preset's")
                    .example("5"));
    t.push_back(K(s, "inter_node_efficiency", KT::number, kAllKinds, "achievable share of inter_node_GBps")
                    .real(limits::kMinFraction, true, 1.0)
                    .computed("the preset's (0.9 in a full description)")
                    .example("0.9"));
    t.push_back(K(s, "nics_per_node", KT::integer, kAllKinds, "network cards per node")
                    .range(0, limits::kNicsPerNode)
                    .computed("the preset's")
                    .example("8"));
    t.push_back(K(s, "nic_Gbps", KT::number, kAllKinds, "line rate of one network card (> 0 with nics_per_node > 0)")
                    .real(0.0, true, limits::kMaxRate)
                    .unit("Gbit/s")
                    .computed("the preset's")
                    .example("400"));
    t.push_back(K(s, "torus_dims", KT::integer_list, kAllKinds, "TPU torus shape (at most 8 dimensions; [] on GPUs)")
                    .ext()
                    .range(1, limits::kGpus)
                    .computed("the preset's")
                    .example("[4, 4, 4]"));
    t.push_back(K(s, "ici_link_GBps", KT::number, kAllKinds, "one ICI link, one direction (TPU; > 0 on a torus)")
                    .ext()
                    .real(0.0, true, limits::kMaxRate)
                    .unit("GB/s")
                    .computed("the preset's")
                    .example("45"));
    t.push_back(K(s, "ici_links_per_chip", KT::integer, kAllKinds, "ICI links per chip (TPU)")
                    .ext()
                    .range(0, kMaxIciLinks)
                    .computed("the preset's")
                    .example("6"));
    t.push_back(K(s, "torus_wraparound", KT::boolean, kAllKinds, "the torus has wrap-around links (TPU)")
                    .ext()
                    .computed("the preset's")
                    .example("true"));
    t.push_back(K(s, "dcn_GBps", KT::number, kAllKinds, "data-centre network egress per chip (TPU)")
                    .ext()
                    .real(0.0, true, limits::kMaxRate)
                    .unit("GB/s")
                    .computed("the preset's")
                    .example("25"));
    t.push_back(K(s, "collective_base_latency_us", KT::number, kAllKinds, "fixed latency of one collective call")
                    .ext()
                    .real(0.0, true, limits::kMaxLatencyUs)
                    .unit("us")
                    .computed("the preset's (8.4)")
                    .example("8.4"));
    t.push_back(K(s, "intra_node_comm_sm_fraction", KT::number, kAllKinds,
                  "share of compute an overlapped scale-up collective takes (Calculon's processor_usage)")
                    .ext()
                    .real(0.0, true, 1.0)
                    .computed("the preset's (0.15)")
                    .example("0.15"));
    t.push_back(K(s, "inter_node_comm_sm_fraction", KT::number, kAllKinds,
                  "share of compute an overlapped scale-out collective takes")
                    .ext()
                    .real(0.0, true, 1.0)
                    .computed("the preset's (0.02)")
                    .example("0.02"));
    t.push_back(K(s, "host_memory_GiB", KT::number, kAllKinds, "host memory per node (offload capacity)")
                    .ext()
                    .real(0.0, true, limits::kMaxCapacityGiB)
                    .unit("GiB")
                    .computed("the preset's")
                    .example("2048"));
    t.push_back(K(s, "pcie_GBps", KT::number, kAllKinds, "host link bandwidth per device (offload)")
                    .ext()
                    .real(limits::kMinRate, true, limits::kMaxRate)
                    .unit("GB/s")
                    .computed("the preset's")
                    .example("64"));
    t.push_back(K(s, "host_memory_GBps", KT::number, kAllKinds, "host DRAM bandwidth per node (offloaded optimizer)")
                    .ext()
                    .real(limits::kMinRate, true, limits::kMaxRate)
                    .unit("GB/s")
                    .computed("the preset's")
                    .example("500"));
    t.push_back(K(s, "sources", KT::text_map, kAllKinds, "provenance text per key (database metadata)")
                    .ext()
                    .computed("none")
                    .example("{\"inter_node_GBps\": \"measured\"}"));

    // ---- accelerator object ----
    const std::string g = "/system/gpu";
    t.push_back(K(g, "preset", KT::string, kAllKinds,
                  "start from this accelerator (`llmsim hw list`) and override the keys given")
                    .ext()
                    .computed("the system's accelerator when the system has one, else none")
                    .example("\"h100-sxm\""));
    t.push_back(K(g, "name", KT::string, kAllKinds, "accelerator name")
                    .ext()
                    .computed("the preset's; required without preset")
                    .example("\"h100-custom\""));
    t.push_back(K(g, "display_name", KT::string, kAllKinds, "label for tables")
                    .ext()
                    .computed("name")
                    .example("\"H100 (custom)\""));
    t.push_back(K(g, "vendor", KT::choice, kAllKinds, "vendor")
                    .ext()
                    .one_of({"nvidia", "google", "amd"})
                    .computed("the preset's, else \"nvidia\"")
                    .example("\"nvidia\""));
    t.push_back(K(g, "peak_tflops", KT::object, kAllKinds, "dense peak per precision (below)")
                    .ext()
                    .computed("the preset's; required without preset")
                    .example("{\"bf16\": 989}"));
    for (const auto& p : all_precisions())
        t.push_back(K(g + "/peak_tflops", p, KT::number, kAllKinds, "dense peak at " + p + " (absent: unsupported)")
                        .ext()
                        .real(limits::kMinRate, true, limits::kMaxRate)
                        .unit("TFLOP/s")
                        .computed("the preset's")
                        .example("100"));
    t.push_back(K(g, "hbm_capacity_GiB", KT::number, kAllKinds, "device memory")
                    .ext()
                    .real(0.0, false, limits::kMaxCapacityGiB)
                    .unit("GiB")
                    .computed("the preset's; required without preset")
                    .example("80"));
    t.push_back(K(g, "hbm_GBps", KT::number, kAllKinds, "device memory bandwidth")
                    .ext()
                    .real(limits::kMinRate, true, limits::kMaxRate)
                    .unit("GB/s")
                    .computed("the preset's; required without preset")
                    .example("3350"));
    t.push_back(K(g, "sm_count", KT::integer, kAllKinds, "SMs (TensorCores on TPUs): GEMM wave quantisation")
                    .ext()
                    .range(1, limits::kSmCount)
                    .computed("the preset's; required without preset")
                    .example("132"));
    t.push_back(K(g, "l2_cache_MiB", KT::number, kAllKinds, "last-level cache")
                    .ext()
                    .real(0.0, true, limits::kMaxCapacityGiB)
                    .unit("MiB")
                    .computed("the preset's, else 0")
                    .example("50"));
    t.push_back(K(g, "tdp_W", KT::number, kAllKinds, "board power")
                    .ext()
                    .real(0.0, true, kMaxPower_W)
                    .unit("W")
                    .computed("the preset's, else 0")
                    .example("700"));
    t.push_back(K(g, "efficiency", KT::object, kAllKinds, "achievable shares of the peaks (below; docs/hardware-db.md)")
                    .ext()
                    .computed("the preset's")
                    .example("{\"hbm_efficiency\": 0.9}"));
    t.push_back(K(g, "sources", KT::text_map, kAllKinds, "provenance text per key (database metadata)")
                    .ext()
                    .computed("none")
                    .example("{\"hbm_GBps\": \"datasheet\"}"));
    const std::string e = g + "/efficiency";
    t.push_back(K(e, "gemm_max", KT::object, kAllKinds, "largest-GEMM share of the dense peak per precision (below)")
                    .ext()
                    .computed("the preset's; a precision without one borrows bf16's (0.75 when none)")
                    .example("{\"bf16\": 0.8}"));
    for (const auto& p : all_precisions())
        t.push_back(K(e + "/gemm_max", p, KT::number, kAllKinds, "share of the " + p + " peak a large GEMM reaches")
                        .ext()
                        .real(limits::kMinFraction, true, 1.0)
                        .computed("the preset's")
                        .example("0.8"));
    t.push_back(K(e, "gemm_tile_m", KT::integer, kAllKinds, "output tile rows of the library's large-GEMM kernels")
                    .ext()
                    .range(1, limits::kGemmTile)
                    .computed("the preset's")
                    .example("128"));
    t.push_back(K(e, "gemm_tile_n", KT::integer, kAllKinds, "output tile columns")
                    .ext()
                    .range(1, limits::kGemmTile)
                    .computed("the preset's")
                    .example("128"));
    t.push_back(K(e, "gemm_k_half", KT::number, kAllKinds,
                  "reduction depth at which a tile reaches half its peak, at the 16-bit peak (FP8 twice it)")
                    .ext()
                    .real(0.0, true, kMaxKHalf)
                    .computed("the preset's")
                    .example("48"));
    t.push_back(K(e, "gemm_k_half_by", KT::object, kAllKinds,
                  "a precision's own measured depth, replacing the scaled 16-bit one (below)")
                    .ext()
                    .computed("none: gemm_k_half scaled by the precision's peak")
                    .example("{\"fp8\": 275}"));
    for (const auto& p : all_precisions())
        t.push_back(K(e + "/gemm_k_half_by", p, KT::number, kAllKinds, "measured " + p + " depth (calibrate fit)")
                        .ext()
                        .real(0.0, true, kMaxKHalf)
                        .computed("none")
                        .example("275"));
    t.push_back(K(e, "hbm_efficiency", KT::number, kAllKinds, "achievable share of hbm_GBps")
                    .ext()
                    .real(limits::kMinFraction, true, 1.0)
                    .computed("the preset's")
                    .example("0.9"));
    t.push_back(K(e, "attention_fwd", KT::number, kAllKinds, "fused attention forward share of the dense peak")
                    .ext()
                    .real(limits::kMinFraction, true, 1.0)
                    .computed("the preset's")
                    .example("0.6"));
    t.push_back(K(e, "attention_bwd", KT::number, kAllKinds, "fused attention backward share of the dense peak")
                    .ext()
                    .real(limits::kMinFraction, true, 1.0)
                    .computed("the preset's")
                    .example("0.5"));
    t.push_back(K(e, "fa2_attention_fwd", KT::number, kAllKinds,
                  "FlashAttention-2 forward share of the dense peak (the kernels of framework torchtitan, "
                  "deepspeed and llm-foundry: PyTorch SDPA, flash-attn 2, Triton); 0: as attention_fwd")
                    .ext()
                    .real(0.0, true, 1.0)
                    .computed("the preset's")
                    .example("0.33"));
    t.push_back(K(e, "fa2_attention_bwd", KT::number, kAllKinds,
                  "FlashAttention-2 backward share of the dense peak; 0: as attention_bwd")
                    .ext()
                    .real(0.0, true, 1.0)
                    .computed("the preset's")
                    .example("0.285"));
    t.push_back(K(e, "kernel_launch_us", KT::number, kAllKinds, "launch overhead per kernel")
                    .ext()
                    .real(0.0, true, limits::kMaxLatencyUs)
                    .unit("us")
                    .computed("the preset's")
                    .example("4"));
    t.push_back(K(e, "sustained_fraction", KT::number, kAllKinds,
                  "busy share of a step, fitted per accelerator by `llmsim validate` (docs/calibration.md)")
                    .ext()
                    .real(limits::kMinFraction, true, kMaxSustained)
                    .computed("the preset's")
                    .example("0.9"));

    // ---- parallel ----
    const std::string p = "/parallel";
    const unsigned L = kAllKinds;   // a layout key: a value, or in `search` a list of allowed values
    t.push_back(K(p, "tp", KT::integer, L, "tensor parallel").range(1, limits::kGpus).dflt("1").example("2"));
    t.push_back(K(p, "pp", KT::integer, L, "pipeline stages").range(1, limits::kGpus).dflt("1").example("2"));
    t.push_back(
        K(p, "dp", KT::integer, L, "data parallel").range(1, limits::kGpus).computed("gpus / (tp·pp·cp)").example("8"));
    t.push_back(K(p, "cp", KT::integer, L, "context parallel").range(1, limits::kGpus).dflt("1").example("2"));
    t.push_back(K(p, "ep", KT::integer, L, "expert parallel: shards experts inside the dp·cp group (as Megatron)")
                    .range(1, limits::kGpus)
                    .dflt("1")
                    .example("2"));
    t.push_back(K(p, "vp", KT::integer, L, "model chunks per pipeline rank (interleaved 1F1B when > 1)")
                    .range(1, limits::kGpus)
                    .dflt("1")
                    .example("2"));
    t.push_back(K(p, "sequence_parallel", KT::boolean, L,
                  "Megatron sequence parallelism (effective when tp > 1; always on for TPU systems, whose XLA "
                  "partitioner keeps activations sharded over the model axis)")
                    .dflt("false")
                    .example("true"));
    t.push_back(K(p, "zero", KT::integer, L,
                  "0 none, 1 optimizer states (Megatron's distributed optimizer), 2 + gradients, 3 + parameters "
                  "(FSDP full shard)")
                    .range(0, 3)
                    .dflt("0")
                    .example("1"));
    t.push_back(
        K(p, "schedule", KT::choice, L, "pipeline schedule (aliases accepted: docs/simulator.md)")
            .one_of(schedule_name_list())
            .computed(fmt::format("\"{}\", or \"{}\" when vp > 1", default_schedule(1).name, default_schedule(2).name))
            .example("\"1f1b\""));
    t.push_back(K(p, "overlap_grad_reduce", KT::boolean, T | Q,
                  "Megatron flag of the same name (search: fixes it; absent, it is searched: docs/search.md)")
                    .ext()
                    .dflt("true")
                    .example("false"));
    t.push_back(K(p, "overlap_param_gather", KT::boolean, T | Q,
                  "Megatron flag of the same name (search: fixes it; absent, it is searched: docs/search.md)")
                    .ext()
                    .dflt("true")
                    .example("false"));
    t.push_back(K(p, "tp_comm_overlap", KT::boolean, T | Q,
                  "Megatron flag of the same name (search: fixes it; absent, it is searched: docs/search.md)")
                    .ext()
                    .dflt("false")
                    .example("true"));
    t.push_back(K(p, "framework", KT::choice, T | Q,
                  "the training framework: zero >= 2 with pp > 1 is refused unless \"torchtitan\" (FSDP2 with "
                  "pipeline stages, run as ZeRO-1: parameters and gradients unsharded through the step); "
                  "\"llm-foundry\" (Composer with PyTorch FSDP) has no pipeline stages; torchtitan, deepspeed and "
                  "llm-foundry attend with FlashAttention-2-class kernels; under torchtitan, recompute "
                  "\"selective\" is its op-level policy (every other GEMM saved); in `search`, the framework every "
                  "layout runs on; echoed when set")
                    .ext()
                    .one_of(framework_names())
                    .computed("unset")
                    .example("\"megatron\""));
    t.push_back(K(p, "torch_compile", KT::boolean, T | Q,
                  "torch.compile on (fused norms, RoPE and activation, as Transformer Engine runs them) or off "
                  "(eager PyTorch: one kernel per op with fp32 intermediates: docs/step-time-model.md); only with "
                  "framework torchtitan, deepspeed or llm-foundry, whose default it is; echoed for them")
                    .ext()
                    .dflt("false")
                    .example("true"));

    // ---- training ----
    const std::string tr = "/training";
    t.push_back(K(tr, "seq_len", KT::integer, T | Q, "tokens per sequence")
                    .range(1, limits::kSeqLen)
                    .unit("tokens")
                    .dflt("2048")
                    .example("4096"));
    t.push_back(K(tr, "micro_batch", KT::integer, T | Q,
                  "sequences per micro-batch (in `search`, also a list of allowed values)")
                    .range(1, limits::kBatch)
                    .unit("sequences")
                    .dflt("1")
                    .example("2"));
    t.push_back(K(tr, "global_batch", KT::integer, T | Q, "sequences per step; a multiple of micro_batch·dp")
                    .range(1, limits::kBatch)
                    .unit("sequences")
                    .computed("micro_batch·dp")
                    .example("64"));
    t.push_back(K(tr, "precision", KT::choice, T | Q, "training precision; MFU is against its dense peak")
                    .one_of(precision_names({P::fp32, P::fp16, P::bf16, P::fp8}))
                    .dflt("\"bf16\"")
                    .example("\"fp8\""));
    t.push_back(K(tr, "grad_precision", KT::choice, T | Q,
                  "main-gradient precision (Megatron: fp32; unstated and the layout does not fit even with master "
                  "remainders: bf16, as NVIDIA's performance recipes, reported as assumed)")
                    .ext()
                    .one_of(precision_names({P::fp32, P::fp16, P::bf16}))
                    .dflt("\"fp32\"")
                    .example("\"bf16\""));
    t.push_back(
        K(tr, "recompute", KT::choice, T | Q, "activation recomputation (in `search`, also a list of allowed values)")
            .one_of({"none", "selective", "full"})
            .dflt("\"none\"")
            .example("\"selective\""));
    t.push_back(K(tr, "recompute_num_layers", KT::integer, T,
                  "with recompute \"full\": only the first N layers of every model chunk are recomputed, the others "
                  "keep their activations (Megatron's --recompute-method block --recompute-num-layers)")
                    .ext()
                    .range(1, limits::kLayers)
                    .unit("layers")
                    .computed("every layer")
                    .example("5"));
    t.push_back(K(tr, "activation_offload_layers", KT::integer, T,
                  "the first N layers' activations go to host memory in forward and come back for backward "
                  "(Megatron-Core cpu_offloading_num_layers; pp 1, no recompute)")
                    .ext()
                    .range(0, limits::kLayers)
                    .unit("layers")
                    .dflt("0")
                    .example("20"));
    t.push_back(K(tr, "fp8_params", KT::boolean, T | Q,
                  "with precision fp8: the layers' Linear weights kept in FP8 as the parameters (Megatron "
                  "--fp8-param-gather): 1 byte per weight, FP8 parameter all-gathers")
                    .ext()
                    .dflt("false")
                    .example("true"));
    t.push_back(
        K(tr, "flash_attention", KT::boolean, T | Q, "fused attention (no s² tensors; causal FLOPs as executed)")
            .dflt("true")
            .example("false"));
    t.push_back(K(tr, "optimizer", KT::choice, T | Q, "adamw = adam for memory and time")
                    .one_of({"adam", "adamw", "sgd", "adafactor"})
                    .dflt("\"adam\"")
                    .example("\"sgd\""));
    t.push_back(K(tr, "optimizer_state_precision", KT::choice, T | Q,
                  "precision of Adam's m and v (SGD's momentum): Megatron-Core's precision-aware optimizer "
                  "(--exp-avg-dtype, --exp-avg-sq-dtype), DeepSeek-V3's BF16 moments")
                    .ext()
                    .one_of(precision_names({P::fp32, P::bf16, P::fp16, P::fp8}))
                    .dflt("\"fp32\"")
                    .example("\"bf16\""));
    t.push_back(K(tr, "master_weights", KT::choice, T | Q,
                  "the optimizer's copy of 16-bit weights: fp32 (4 B), remainder (the low 16 bits that complete "
                  "bf16 weights to fp32, 2 B: Apex DistributedFusedAdam in NeMo 1.x, Transformer Engine "
                  "FusedAdam store_param_remainders) or none (the 16-bit weights are updated in place); unstated and "
                  "the layout does not fit with fp32: remainder, reported as assumed")
                    .ext()
                    .one_of({"fp32", "remainder", "none"})
                    .dflt("\"fp32\"")
                    .example("\"remainder\""));
    t.push_back(K(tr, "offload", KT::choice, T | Q,
                  "host offload; optimizer+params needs zero 3 (in `search`, also a list of allowed values)")
                    .one_of({"none", "optimizer", "optimizer+params"})
                    .dflt("\"none\"")
                    .example("\"optimizer\""));
    t.push_back(K(tr, "runtime_reserve_bytes", KT::number, T | Q, "CUDA context and library workspaces per GPU")
                    .ext()
                    .real(0.0, true, limits::kMaxBytes)
                    .unit("bytes")
                    .dflt("1073741824")
                    .example("2e9"));
    t.push_back(K(tr, "fragmentation_fraction", KT::number, T | Q, "allocator slack on dynamic memory")
                    .ext()
                    .real(0.0, true, 1.0)
                    .dflt("0.05")
                    .example("0.1"));
    t.push_back(
        K(tr, "token_budget", KT::number, T | Q, "tokens to train on: `estimate` reports training days and GPU-hours")
            .ext()
            .real(0.0, false, limits::kMaxTokens)
            .unit("tokens")
            .computed("none")
            .example("1.5e13"));
    t.push_back(K(tr, "finetune", KT::object, T | Q, "parameter-efficient fine-tuning (below)")
                    .ext()
                    .computed("absent: full training")
                    .example("{\"method\": \"lora\"}"));
    t.push_back(K(tr, "rlhf", KT::object, T | Q,
                  "a PPO iteration: rollout, scoring and actor/critic training (below; docs/step-time-model.md §4a)")
                    .ext()
                    .computed("absent")
                    .example("{}"));
    const std::string ft = "/training/finetune";
    t.push_back(K(ft, "method", KT::choice, T | Q, "none, LoRA, or QLoRA (4-bit frozen base)")
                    .ext()
                    .one_of({"none", "lora", "qlora"})
                    .dflt("\"none\"")
                    .example("\"lora\""));
    t.push_back(
        K(ft, "rank", KT::integer, T | Q, "LoRA rank r").ext().range(1, limits::kLoraRank).dflt("16").example("8"));
    t.push_back(K(ft, "targets", KT::choice_list, T | Q, "matrices that get adapters")
                    .ext()
                    .one_of({"q", "k", "v", "o", "gate", "up", "down"})
                    .computed("[\"q\", \"k\", \"v\", \"o\"]")
                    .example("[\"q\", \"v\"]"));
    const std::string rl = "/training/rlhf";
    t.push_back(K(rl, "enabled", KT::boolean, T | Q, "run the PPO iteration").ext().dflt("true").example("true"));
    t.push_back(K(rl, "critic", KT::model, T | Q, "the critic (a model like /model)")
                    .ext()
                    .computed("the actor")
                    .example("\"llama-3.2-1b\""));
    t.push_back(K(rl, "reference", KT::model, T | Q, "the frozen reference policy (a model like /model)")
                    .ext()
                    .computed("the actor")
                    .example("\"llama-3.2-1b\""));
    t.push_back(K(rl, "reward", KT::model, T | Q, "the reward model (a model like /model)")
                    .ext()
                    .computed("the critic")
                    .example("\"llama-3.2-1b\""));
    t.push_back(K(rl, "prompt_len", KT::integer, T | Q,
                  "prompt tokens of each PPO sequence; the other seq_len − prompt_len are generated (< seq_len)")
                    .ext()
                    .range(1, limits::kSeqLen - 1)
                    .unit("tokens")
                    .computed("seq_len / 2")
                    .example("512"));
    t.push_back(K(rl, "ppo_epochs", KT::integer, T | Q, "actor and critic training passes per rollout batch")
                    .ext()
                    .range(1, kMaxPpoEpochs)
                    .dflt("1")
                    .example("2"));

    // ---- inference ----
    const std::string in = "/inference";
    t.push_back(K(in, "batch", KT::integer, I, "concurrent sequences (static batching)")
                    .range(1, limits::kBatch)
                    .unit("sequences")
                    .dflt("1")
                    .example("8"));
    t.push_back(
        K(in, "input_len", KT::length, G, "prompt tokens: an integer, or in serving a distribution object (below)")
            .range(1, limits::kSeqLen)
            .unit("tokens")
            .dflt("128")
            .example("512"));
    t.push_back(
        K(in, "output_len", KT::length, G, "generated tokens: an integer, or in serving a distribution object (below)")
            .range(1, limits::kSeqLen)
            .unit("tokens")
            .dflt("128")
            .example("256"));
    t.push_back(K(in, "weight_precision", KT::choice, G,
                  "weight storage (int/fp4 formats with one fp16 scale per quant_group_size weights)")
                    .one_of(precision_names({P::fp32, P::bf16, P::fp16, P::fp8, P::int8, P::int4, P::fp4, P::nf4}))
                    .dflt("\"bf16\"")
                    .example("\"fp8\""));
    t.push_back(K(in, "kv_precision", KT::choice, G, "KV-cache storage")
                    .one_of(precision_names({P::fp32, P::bf16, P::fp16, P::fp8, P::int8, P::int4, P::fp4}))
                    .dflt("\"bf16\"")
                    .example("\"fp8\""));
    t.push_back(K(in, "compute_precision", KT::choice, G, "tensor-core precision of the GEMMs; the GPU must support it")
                    .ext()
                    .one_of(precision_names({P::bf16, P::fp16, P::fp8, P::int8, P::fp4}))
                    .dflt("\"bf16\"")
                    .example("\"fp8\""));
    t.push_back(K(in, "quant_group_size", KT::integer, G, "weights per quantisation scale")
                    .ext()
                    .range(1, limits::kQuantGroup)
                    .dflt("128")
                    .example("64"));
    t.push_back(K(in, "batching", KT::choice, G,
                  "static: one batch of `batch` sequences; continuous: iteration-level scheduling of a request stream")
                    .one_of({"static", "continuous"})
                    .dflt("\"static\"")
                    .example("\"continuous\""));
    t.push_back(
        K(in, "requests", KT::integer, S, "requests simulated").range(1, kMaxRequests).dflt("1000").example("2000"));
    t.push_back(K(in, "qps", KT::rate, S,
                  "mean Poisson arrival rate for the whole deployment; 0: offline (every request queued at 0); else at "
                  "least 1e-6 (one request in 11.6 days); \"max\": the largest rate meeting /inference/slo in steady "
                  "state (slo_capacity_qps; docs/serving.md \"Capacity\")")
                    .real(0.0, true, kMaxQps)
                    .zero_or_at_least(kMinQps)
                    .unit("requests/s")
                    .dflt("0")
                    .example("16"));
    t.push_back(K(in, "cuda_graphs", KT::boolean, G,
                  "kernels replayed from captured CUDA graphs (vLLM, SGLang, TensorRT-LLM's PyTorch backend) instead "
                  "of launched one by one (TensorRT-LLM engines without cuda_graph_mode)")
                    .ext()
                    .computed("the engine's: false for TensorRT-LLM engines, true for vLLM and SGLang")
                    .example("true"));
    t.push_back(K(in, "host_per_sequence_us", KT::number, G,
                  "host time per running sequence per iteration (scheduling, sampling set-up, the response); "
                  "fitted on the published TensorRT-LLM and MLPerf runs (docs/serving.md); 0 for an engine whose "
                  "host work overlaps the GPU's")
                    .ext()
                    .real(0.0, true, 1000.0)
                    .unit("us")
                    .dflt("5")
                    .example("0"));
    t.push_back(K(in, "scheduler", KT::choice, S,
                  "how a replica composes an iteration: inflight (decodes first, then prompt chunks or whole prompts "
                  "within one token budget: TensorRT-LLM, vLLM V1, Sarathi-Serve) or prefill-first (an iteration of "
                  "prompts whenever one can be admitted, decodes only otherwise: vLLM V0, SGLang)")
                    .ext()
                    .one_of(scheduler_policy_names())
                    .computed("the engine's (docs/serving.md \"Engines\")")
                    .example("\"prefill-first\""));
    t.push_back(K(in, "router", KT::choice, S,
                  "how requests are spread over the replicas: round-robin (in turn), least-requests (to the "
                  "replica with the fewest unfinished requests), least-tokens (the fewest unfinished prompt and "
                  "generated tokens), power-of-two (the fewer unfinished requests of two replicas drawn at random), "
                  "cache-aware (to the replica its shared prefix was sent to, unless the load is uneven: SGLang's "
                  "router); docs/serving.md \"Routing\"")
                    .ext()
                    .one_of(router_policy_names())
                    .dflt("\"round-robin\"")
                    .example("\"least-requests\""));
    t.push_back(K(in, "kv_admission", KT::choice, S,
                  "on_demand: a request is admitted when its prompt's KV blocks are free and the youngest sequence is "
                  "preempted when a decode finds none (vLLM, SGLang, TensorRT-LLM MAX_UTILIZATION as MLPerf's "
                  "harness sets it); reserve: blocks for the prompt and its output limit (output_len max, else its "
                  "length) are taken at admission, nothing is preempted (TensorRT-LLM GUARANTEED_NO_EVICT)")
                    .ext()
                    .one_of({"on_demand", "reserve"})
                    .computed("the engine's: reserve for TensorRT-LLM (its default), on_demand for vLLM and SGLang")
                    .example("\"reserve\""));
    t.push_back(K(in, "max_batch", KT::integer, S, "most sequences in flight per replica")
                    .range(1, kMaxRequests)
                    .unit("sequences")
                    .computed("the engine's: TensorRT-LLM 256 (0.11-0.13) or 2048 (0.14+), vLLM 256 (V0) or "
                              "1024/256 (V1), else as many as the KV cache holds")
                    .example("256"));
    t.push_back(K(in, "max_batch_tokens", KT::integer, S,
                  "token budget of one iteration; when set, long prompts are prefilled in chunks (Sarathi-Serve)")
                    .range(1, limits::kSeqLen)
                    .unit("tokens")
                    .computed("the engine's: TensorRT-LLM none (whole prompts within its max_num_tokens, 8192); vLLM "
                              "V1 8192 or 2048 by GPU memory; SGLang 2048-16384 by GPU memory")
                    .example("2048"));
    t.push_back(K(in, "arrivals", KT::string, S,
                  "a trace to replay (CSV: arrival_s,input_tokens,output_tokens, or the Azure LLM inference traces' "
                  "TIMESTAMP,ContextTokens,GeneratedTokens; a path relative to the scenario's folder): every "
                  "request's arrival and lengths, instead of input_len, output_len and seed; qps rescales its times "
                  "to that mean rate, \"max\" finds the largest such rate meeting the SLO; requests past its end "
                  "repeat it (docs/serving.md \"Traces\")")
                    .ext()
                    .computed("absent: a Poisson stream at qps (offline without one)")
                    .example("\"scenarios/traces/chat-day.csv\""));
    t.push_back(K(in, "arrival_cv", KT::number, S,
                  "coefficient of variation of the gaps between arrivals at qps: 1 Poisson, above 1 bursty (Gamma "
                  "gaps of shape 1/cv^2, as BurstGPT models production traffic and Vidur generates it), below 1 more "
                  "regular, 0 evenly spaced; docs/serving.md \"Bursts\"")
                    .ext()
                    .real(kMinArrivalCv, true, kMaxArrivalCv)
                    .dflt("1")
                    .example("3"));
    t.push_back(K(in, "rate_profile", KT::object, S,
                  "the arrival rate over a repeating period (a day, an hour), piecewise constant: qps is its mean; "
                  "the output adds each slice's latencies and share of requests within the SLO; docs/serving.md "
                  "\"A rate that varies\"")
                    .ext()
                    .computed("absent: the rate is qps throughout")
                    .example("{\"period_s\": 86400, \"levels\": [2, 1, 1, 1, 2, 4, 6, 8, 8, 7, 6, 4]}"));
    t.push_back(K(in, "autoscale", KT::object, S,
                  "replicas added and removed with the load: every interval_s, ceil(requests in the system averaged "
                  "over window_s / target_outstanding) replicas within [min_replicas, max_replicas]; a new one "
                  "serves after its cold start; the output adds GPU-hours and replicas over time; docs/serving.md "
                  "\"Autoscaling\" (below)")
                    .ext()
                    .computed("absent: every replica serves throughout")
                    .example("{\"target_outstanding\": 64, \"storage_GBps\": 2, \"min_replicas\": 1}"));
    t.push_back(K(in, "window_s", KT::number, S,
                  "report the stream in windows of this length from its start (their rate, TTFT and TPOT p99 and "
                  "share within the SLO: hour by hour for a day's trace); docs/serving.md \"A rate that varies\"")
                    .ext()
                    .real(kMinWindow_s, true, kMaxSeconds)
                    .unit("s")
                    .computed("absent: the rate profile's slices, else none")
                    .example("3600"));
    t.push_back(K(in, "price_per_gpu_hour", KT::number, G,
                  "dollars per GPU-hour: the output adds the deployment's cost per hour and per million tokens "
                  "(docs/serving.md \"Cost and energy\")")
                    .ext()
                    .real(0.0, true, kMaxGpuHourPrice)
                    .unit("USD/GPU-hour")
                    .computed("absent: no cost")
                    .example("2.5"));
    t.push_back(K(in, "prefix_cache_hit", KT::number, S, "share of prompt tokens found in the prefix cache")
                    .real(0.0, true, kMaxHitFraction)
                    .dflt("0")
                    .example("0.5"));
    t.push_back(K(in, "speculative", KT::object, G, "speculative decoding (below)")
                    .computed("absent: none")
                    .example("{\"method\": \"mtp\", \"acceptance_length\": 2.5}"));
    t.push_back(K(in, "disaggregation", KT::object, S,
                  "prefill on a pool of GPUs of its own, the KV cache shipped to the decode pool (/parallel lays out "
                  "the decode pool over the GPUs left); docs/serving.md \"Disaggregated prefill and decode\" (below)")
                    .ext()
                    .computed("absent: colocated (every replica prefills and decodes)")
                    .example("{\"prefill_gpus\": 2, \"prefill_tp\": 1}"));
    t.push_back(K(in, "expert_parallel", KT::object, G,
                  "how the experts of an expert-parallel deployment (parallel.ep > 1) balance and overlap; "
                  "docs/serving.md \"Expert parallelism\" (below)")
                    .ext()
                    .computed("absent: uniform routing's own spread, no overlap")
                    .example("{\"load_imbalance\": 1.2, \"two_batch_overlap\": true}"));
    t.push_back(K(in, "shared_prefix", KT::object, G,
                  "prompts that begin with one of a number of shared prefixes (system prompts, templates), kept and "
                  "reused by each replica's prefix cache; docs/serving.md \"Shared prefixes\" (below)")
                    .ext()
                    .computed("absent: every prompt its own")
                    .example("{\"groups\": 16, \"tokens\": 1024}"));
    t.push_back(
        K(in, "classes", KT::object_map, S,
          fmt::format("kinds of request in one stream, by name (letters, digits, - _ .; at most {}): each "
                      "its share of the arrivals, lengths and SLO; docs/serving.md \"Request classes\" "
                      "(below)",
                      RequestClass::kMaxClasses))
            .ext()
            .computed("absent: one kind of request (input_len, output_len, slo)")
            .example(R"({"chat": {"share": 3, "output_len": 200}, "summary": {"share": 1, "input_len": 4000}})"));
    t.push_back(K(in, "slo", KT::object, S, "latency targets; the output says whether they are met (below)")
                    .computed("absent")
                    .example("{\"ttft_p99_s\": 2.0}"));
    t.push_back(
        K(in, "engine", KT::object, G,
          "the serving engine whose kernels, scheduler and defaults the deployment runs (below; docs/serving.md "
          "\"Engines\")")
            .computed("absent: a current TensorRT-LLM-class engine")
            .example(R"({"name": "vllm", "version": "0.6.3"})"));
    t.push_back(K(in, "seed", KT::integer, S, "random stream of arrivals and lengths (same seed, same output)")
                    .range(0, INT64_MAX)
                    .dflt("1")
                    .example("7"));
    add_length(t, "input_len");
    add_length(t, "output_len");
    const std::string sp = "/inference/speculative";
    t.push_back(K(sp, "method", KT::choice, G,
                  "draft: a draft model proposes tokens; mtp, eagle, ngram: give acceptance_length")
                    .one_of({"draft", "mtp", "eagle", "ngram"})
                    .dflt("\"draft\"")
                    .example("\"draft\""));
    t.push_back(K(sp, "draft_model", KT::model, G, "the draft model (a model like /model); method draft only")
                    .computed("required with method draft")
                    .example("\"llama-3.2-1b\""));
    t.push_back(K(sp, "tokens", KT::integer, G, "tokens proposed per step")
                    .range(1, kMaxSpeculativeTokens)
                    .unit("tokens")
                    .dflt("4")
                    .example("3"));
    t.push_back(K(sp, "acceptance", KT::number, G, "probability each proposed token is accepted; method draft only")
                    .real(0.0, true, kMaxHitFraction)
                    .dflt("0.7")
                    .example("0.8"));
    t.push_back(K(sp, "acceptance_length", KT::number, G,
                  "mean tokens accepted per target step (at most tokens + 1); methods mtp, eagle, ngram only")
                    .real(1.0, true, static_cast<double>(kMaxSpeculativeTokens + 1))
                    .unit("tokens")
                    .computed("required with mtp, eagle, ngram")
                    .example("2.5"));
    const std::string en = "/inference/engine";
    t.push_back(K(en, "name", KT::choice, G, "the engine").one_of(engine_names()).required().example("\"vllm\""));
    t.push_back(K(en, "version", KT::string, G,
                  "its release, MAJOR[.MINOR[.PATCH]] (\"0.6.1\"), at least its first public one (TensorRT-LLM 0.5.0, "
                  "vLLM 0.1.0, SGLang 0.1.0): behaviours that changed between releases follow it")
                    .computed("a current release")
                    .example("\"0.6.1\""));
    const std::string dg = "/inference/disaggregation";
    t.push_back(K(dg, "prefill_gpus", KT::integer, S, "GPUs of the prefill pool, out of /gpus")
                    .ext()
                    .range(1, limits::kGpus)
                    .required()
                    .example("2"));
    t.push_back(K(dg, "prefill_tp", KT::integer, S, "tensor parallelism of a prefill replica (its pp is 1)")
                    .ext()
                    .range(1, limits::kGpus)
                    .computed("/parallel/tp (the decode pool's)")
                    .example("1"));
    t.push_back(K(dg, "prefill_ep", KT::integer, S,
                  "expert parallelism over the prefill replicas: groups of prefill_ep share the routed experts, as "
                  "/parallel/ep over the decode replicas (docs/serving.md \"Expert parallelism\")")
                    .ext()
                    .range(1, limits::kGpus)
                    .dflt("1")
                    .example("1"));
    t.push_back(
        K(dg, "link_GBps", KT::number, S, "achievable KV-transfer bandwidth per GPU, per direction, between the pools")
            .ext()
            .real(limits::kMinRate, true, limits::kMaxRate)
            .unit("GB/s")
            .computed("the system's scale-up fabric (intra_node_GBps x efficiency) when all the GPUs share "
                      "one scale-up domain, else its network (inter_node_GBps x efficiency)")
            .example("25"));
    const std::string ep = "/inference/expert_parallel";
    t.push_back(K(ep, "load_imbalance", KT::number, G,
                  "routed tokens of the busiest GPU of an expert-parallel group over the mean (1: balanced, as "
                  "EPLB's redundant experts aim)")
                    .ext()
                    .real(1.0, true, kMaxExpertImbalance)
                    .computed("the spread of uniform routing at each iteration's tokens")
                    .example("1.3"));
    t.push_back(K(ep, "redundant_experts", KT::integer, G,
                  "extra copies of the busiest routed experts (EPLB's redundant experts: DeepSeek's 32 over 256): "
                  "experts + redundant_experts slots, a multiple of parallel.ep, each GPU holding its share")
                    .ext()
                    .range(0, kMaxRedundantExperts)
                    .unit("experts")
                    .dflt("0")
                    .example("32"));
    t.push_back(K(ep, "two_batch_overlap", KT::boolean, G,
                  "two micro-batches, each one's dispatch and combine hidden under the other's computation "
                  "(DeepSeek's and SGLang's two-batch overlap)")
                    .ext()
                    .dflt("false")
                    .example("true"));
    const std::string shp = "/inference/shared_prefix";
    t.push_back(K(shp, "groups", KT::integer, G, "how many distinct shared prefixes the requests begin with")
                    .ext()
                    .range(1, kMaxPrefixGroups)
                    .unit("prefixes")
                    .computed("required")
                    .example("16"));
    t.push_back(
        K(shp, "tokens", KT::integer, G, "tokens of each shared prefix (a prompt shorter than it is all prefix)")
            .ext()
            .range(1, limits::kSeqLen)
            .unit("tokens")
            .computed("required")
            .example("1024"));
    t.push_back(K(shp, "zipf", KT::number, G,
                  "skew of the prefixes' popularity: the prefix of rank r drawn with probability proportional to "
                  "1 / r^zipf (0: uniform)")
                    .ext()
                    .real(0.0, true, kMaxZipf)
                    .dflt("0")
                    .example("1.0"));
    const std::string rc = "/inference/classes/NAME";   // NAME: each class's name
    t.push_back(
        K(rc, "share", KT::number, S, "the class's share of the arrivals (any unit: the shares are scaled to sum 1)")
            .ext()
            .real(0.0, false, kMaxClassShare)
            .computed("required")
            .example("0.25"));
    t.push_back(K(rc, "input_len", KT::length, S, "the class's prompt tokens: an integer or a distribution object")
                    .ext()
                    .range(1, limits::kSeqLen)
                    .unit("tokens")
                    .computed("/inference/input_len")
                    .example("4000"));
    t.push_back(K(rc, "output_len", KT::length, S, "the class's generated tokens: an integer or a distribution object")
                    .ext()
                    .range(1, limits::kSeqLen)
                    .unit("tokens")
                    .computed("/inference/output_len")
                    .example("200"));
    t.push_back(K(rc, "slo", KT::object, S,
                  "the class's latency targets, keys as /inference/slo's (which must be stated: it is the default)")
                    .ext()
                    .computed("/inference/slo")
                    .example("{\"ttft_p99_s\": 10}"));
    const std::string rp = "/inference/rate_profile";
    t.push_back(K(rp, "period_s", KT::number, S, "the period the levels repeat over")
                    .ext()
                    .real(1.0, true, kMaxProfilePeriod_s)
                    .unit("s")
                    .dflt("86400")
                    .example("3600"));
    t.push_back(K(rp, "levels", KT::number_list, S,
                  fmt::format("relative arrival rates of equal slices of the period, in order (any unit: they are "
                              "scaled to mean qps); at least one above 0, at most {}",
                              RateProfile::kMaxSlices))
                    .ext()
                    .real(0.0, true, kMaxProfileLevel)
                    .computed("required")
                    .example("[1, 3, 2]"));
    const std::string as = "/inference/autoscale";
    t.push_back(K(as, "target_outstanding", KT::number, S,
                  "requests in the system (queued and running) per replica the policy aims at (Knative's "
                  "concurrency target)")
                    .ext()
                    .real(0.0, false, static_cast<double>(kMaxRequests))
                    .computed("required")
                    .example("64"));
    t.push_back(K(as, "min_replicas", KT::integer, S, "fewest replicas serving (the first ones, warm at t = 0)")
                    .ext()
                    .range(1, limits::kGpus)
                    .dflt("1")
                    .example("1"));
    t.push_back(K(as, "max_replicas", KT::integer, S, "most replicas serving or starting")
                    .ext()
                    .range(1, limits::kGpus)
                    .computed("the deployment's replicas (/parallel/dp)")
                    .example("8"));
    t.push_back(K(as, "storage_GBps", KT::number, S,
                  "read bandwidth of a starting replica's weights (all its GPUs' shards) from storage")
                    .ext()
                    .real(limits::kMinRate, true, limits::kMaxRate)
                    .unit("GB/s")
                    .computed("required")
                    .example("2"));
    t.push_back(K(as, "engine_start_s", KT::number, S,
                  "engine start after the weights are read (process start, CUDA graph capture, warm-up)")
                    .ext()
                    .real(0.0, true, kMaxSeconds)
                    .unit("s")
                    .dflt("0")
                    .example("30"));
    t.push_back(K(as, "interval_s", KT::number, S, "time between two decisions (Knative's tick, 2 s)")
                    .ext()
                    .real(kMinWindow_s, true, kMaxSeconds)
                    .unit("s")
                    .dflt("2")
                    .example("2"));
    t.push_back(K(as, "scale_down_delay_s", KT::number, S,
                  "fewer replicas only when every decision of this past time asked for no more (Kubernetes HPA's "
                  "scale-down stabilization window, 300 s)")
                    .ext()
                    .real(0.0, true, kMaxSeconds)
                    .unit("s")
                    .dflt("300")
                    .example("300"));
    t.push_back(K(as, "window_s", KT::number, S,
                  "the requests in the system are averaged over this past time (Knative's stable window, 60 s)")
                    .ext()
                    .real(kMinWindow_s, true, kMaxSeconds)
                    .unit("s")
                    .dflt("60")
                    .example("60"));
    const std::string slo = "/inference/slo";
    t.push_back(K(slo, "ttft_p99_s", KT::number, S, "99th-percentile time to first token")
                    .real(0.0, false, kMaxSeconds)
                    .unit("s")
                    .computed("none")
                    .example("2.0"));
    t.push_back(K(slo, "tpot_p99_s", KT::number, S, "99th-percentile time per output token")
                    .real(0.0, false, kMaxSeconds)
                    .unit("s")
                    .computed("none")
                    .example("0.2"));
    t.push_back(K(slo, "ttft_p90_s", KT::number, S, "90th-percentile time to first token (DistServe's, Splitwise's)")
                    .ext()
                    .real(0.0, false, kMaxSeconds)
                    .unit("s")
                    .computed("none")
                    .example("0.4"));
    t.push_back(K(slo, "tpot_p90_s", KT::number, S, "90th-percentile time per output token")
                    .ext()
                    .real(0.0, false, kMaxSeconds)
                    .unit("s")
                    .computed("none")
                    .example("0.04"));

    // ---- search ----
    const std::string se = "/search";
    t.push_back(K(se, "max_gpus", KT::integer, Q, "try every GPU count up to this (when gpus is absent)")
                    .ext()
                    .range(1, limits::kGpus)
                    .computed("gpus")
                    .example("64"));
    t.push_back(K(se, "min_gpus", KT::integer, Q, "smallest GPU count tried")
                    .ext()
                    .range(1, limits::kGpus)
                    .dflt("1")
                    .example("8"));
    t.push_back(K(se, "memory_headroom", KT::number, Q, "share of each GPU's memory kept free")
                    .ext()
                    .real(0.0, true, kMaxHeadroomFraction)
                    .computed("0")
                    .example("0.1"));
    t.push_back(K(se, "memory_headroom_bytes", KT::number, Q, "bytes of each GPU's memory kept free")
                    .ext()
                    .real(0.0, true, limits::kMaxBytes)
                    .unit("bytes")
                    .computed("0")
                    .example("2e9"));
    t.push_back(K(se, "max_tp", KT::integer, Q, "largest tp tried")
                    .ext()
                    .range(1, limits::kGpus)
                    .computed("the scale-up domain")
                    .example("8"));
    t.push_back(
        K(se, "min_pp", KT::integer, Q, "smallest pp tried").ext().range(1, limits::kGpus).computed("1").example("2"));
    t.push_back(K(se, "max_pp", KT::integer, Q, "largest pp tried")
                    .ext()
                    .range(1, limits::kGpus)
                    .computed("layers")
                    .example("16"));
    t.push_back(K(se, "objective", KT::choice, Q,
                  "rank by step time, by cost (needs price_per_gpu_hour) or by tokens/s per GPU")
                    .ext()
                    .one_of({"time", "cost", "per-gpu"})
                    .dflt("\"time\"")
                    .example("\"per-gpu\""));
    t.push_back(K(se, "top_k", KT::integer, Q, "layouts reported")
                    .ext()
                    .range(1, limits::kSearchTopK)
                    .computed("10")
                    .example("5"));
    t.push_back(K(se, "confirm", KT::integer, Q, "best layouts re-ranked on the discrete-event simulator")
                    .ext()
                    .range(0, limits::kSearchTopK)
                    .computed("5")
                    .example("3"));
    t.push_back(K(se, "allow_cross_node_tp", KT::boolean, Q, "let tp span nodes").ext().dflt("false").example("true"));
    t.push_back(K(se, "activation_offload", KT::boolean, Q,
                  "try activation offload (the fewest layers that fit) on pp-1 layouts too large without recompute")
                    .ext()
                    .dflt("false")
                    .example("true"));
    t.push_back(K(se, "price_per_gpu_hour", KT::number, Q, "price of one GPU-hour for the cost objective")
                    .ext()
                    .real(0.0, true, kMaxPrice)
                    .unit("$/GPU-hour")
                    .computed("none")
                    .example("2.5"));
    t.push_back(K(se, "global_batch", KT::batch_range, Q,
                  "global batches tried: one, or \"a:b\" / [a, b] for the powers of two in a..b")
                    .ext()
                    .range(1, limits::kBatch)
                    .unit("sequences")
                    .computed("training.global_batch")
                    .example("\"256:1024\""));

    std::vector<ScenarioKey> out;
    out.reserve(t.size());
    for (auto& x : t) {
        if (x.k.example.empty()) x.k.example = x.k.default_json;
        out.push_back(std::move(x.k));
    }
    return out;
}

std::string bound_text(double x) {
    return x == std::floor(x) && std::fabs(x) < 1e15 ? fmt::format("{:.0f}", x) : fmt::format("{:g}", x);
}

std::string md_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '|')
            out += "\\|";
        else
            out += c;
    }
    return out;
}

}   // namespace

const std::vector<ScenarioKey>& scenario_keys() {
    static const std::vector<ScenarioKey> table = build();
    return table;
}

const ScenarioKey& scenario_key(std::string_view object, std::string_view key) {
    static const auto index = [] {
        std::map<std::string, const ScenarioKey*, std::less<>> m;
        for (const auto& k : scenario_keys()) m[k.pointer()] = &k;
        return m;
    }();
    const std::string ptr = std::string(object) + "/" + std::string(key);
    auto it = index.find(ptr);
    if (it == index.end())
        throw std::logic_error(
            fmt::format("{} is read but not in the scenario key table (hardware_db/scenario_keys.cpp)", ptr));
    return *it->second;
}

std::vector<std::string> scenario_object_keys(std::string_view object) {
    std::vector<std::string> out;
    for (const auto& k : scenario_keys())
        if (k.object == object) out.push_back(k.key);
    return out;
}

std::vector<std::string> scenario_objects() {
    std::vector<std::string> out;
    for (const auto& k : scenario_keys())
        if (std::find(out.begin(), out.end(), k.object) == out.end()) out.push_back(k.object);
    return out;
}

std::string key_type_text(const ScenarioKey& k) {
    switch (k.type) {
        case KeyType::integer: return "integer";
        case KeyType::number: return "number";
        case KeyType::boolean: return "boolean";
        case KeyType::string: return "string";
        case KeyType::choice: return "string (enum)";
        case KeyType::choice_list: return "array of strings (enum)";
        case KeyType::integer_list: return "array of integers";
        case KeyType::number_list: return "array of numbers";
        case KeyType::object: return "object";
        case KeyType::text_map: return "object of strings";
        case KeyType::object_map: return "object of name -> object";
        case KeyType::model: return "model name, path or object";
        case KeyType::system: return "system name or object";
        case KeyType::accelerator: return "accelerator name or object";
        case KeyType::length: return "integer or distribution object";
        case KeyType::batch_range: return "integer, \"a:b\" or [a, b]";
        case KeyType::rate: return "number or \"max\"";
    }
    return "?";
}

std::string key_accepted_text(const ScenarioKey& k) {
    switch (k.type) {
        case KeyType::integer:
        case KeyType::integer_list:
        case KeyType::length:
        case KeyType::batch_range: return fmt::format("[{}, {}]", k.imin, k.imax);
        case KeyType::number_list:
        case KeyType::number:
            if (k.zero_or_min > 0) return fmt::format("0 or [{}, {}]", bound_text(k.zero_or_min), bound_text(k.max));
            return fmt::format("{}{}, {}]", k.min_inclusive ? "[" : "(", bound_text(k.min), bound_text(k.max));
        case KeyType::rate:
            if (k.zero_or_min > 0)
                return fmt::format("0 or [{}, {}] | \"max\"", bound_text(k.zero_or_min), bound_text(k.max));
            return fmt::format("{}{}, {}] | \"max\"", k.min_inclusive ? "[" : "(", bound_text(k.min),
                               bound_text(k.max));
        case KeyType::choice:
        case KeyType::choice_list: {
            std::string out;
            for (const auto& c : k.choices) out += (out.empty() ? "" : " | ") + ("\"" + c + "\"");
            return out;
        }
        default: return "";
    }
}

std::string key_default_text(const ScenarioKey& k) {
    if (k.required) return "required";
    if (!k.default_json.empty()) return k.default_json;
    return k.default_text;
}

std::string key_kinds_text(unsigned kinds) {
    std::string out;
    const std::pair<unsigned, const char*> names[] = {
        {kTrainingKind, "training"}, {kInferenceKind, "inference"}, {kServingKind, "serving"}, {kSearchKind, "search"}};
    for (const auto& [bit, name] : names)
        if (kinds & bit) out += (out.empty() ? "" : ", ") + std::string(name);
    return out;
}

std::string scenario_reference_markdown() {
    std::string md;
    md += "# Scenario reference\n\n";
    md +=
        "<!-- Generated by `llmsim scenario-reference` from hardware_db/scenario_keys.cpp, the table the scenario "
        "readers use; do not edit (ctest doc_generated fails when this file differs; "
        "`scripts/doc-commands.sh update` rewrites it). -->\n\n";
    md +=
        "Every key a scenario may hold, as the strict readers accept it: a key not listed here is an error "
        "naming its JSON pointer, and every bound and choice shown is the one enforced. The narrative guide "
        "(examples, defaults that depend on other keys, cross-field checks, errors) is "
        "[scenario.md](scenario.md), which also says what llmsim adds to the project's scenario contract.\n\n";
    md +=
        "- **default**: `required`, a literal value (echoed as such in `--json` outputs), or how it is "
        "derived.\n";
    md += "- **accepted**: `[a, b]` inclusive, `(a, b]` excluding a; `\"x\" | \"y\"` the choices.\n";
    md +=
        "- **kinds**: training (a `training` object, or neither), inference (`inference` with static "
        "batching), serving (`inference` with `\"batching\": \"continuous\"`), search (read by `llmsim "
        "search`; there every `/parallel` key and `/training/micro_batch`, `recompute`, `offload` may also be "
        "a non-empty array of allowed values). A `/parallel` key given in an inference or serving scenario "
        "whose kinds do not include it is an error, not ignored.\n";
    md += "- *(llmsim)*: an addition to the contract.\n";
    md +=
        "- Sizes are integers; `8.0` is accepted as 8. A model object may also be a Hugging Face config "
        "(recognised by `model_type`, `architectures`, `num_hidden_layers`, ...; hardware_db/hf_config.hpp "
        "lists the keys read).\n";
    for (const auto& obj : scenario_objects()) {
        std::string anchor = obj.empty() ? "top" : obj.substr(1);
        std::replace(anchor.begin(), anchor.end(), '/', '-');
        md += fmt::format("\n<a id=\"{}\"></a>\n\n## `{}`\n\n", anchor, obj.empty() ? "/" : obj);
        md += "| key | type | unit | default | accepted | kinds | meaning |\n";
        md += "|---|---|---|---|---|---|---|\n";
        for (const auto& k : scenario_keys()) {
            if (k.object != obj) continue;
            const std::string def = k.required               ? std::string("**required**")
                                    : k.default_json.empty() ? md_escape(key_default_text(k))
                                                             : fmt::format("`{}`", md_escape(key_default_text(k)));
            const std::string acc = key_accepted_text(k);
            md += fmt::format("| `{}`{} | {} | {} | {} | {} | {} | {} |\n", k.key, k.contract ? "" : " *(llmsim)*",
                              md_escape(key_type_text(k)), k.unit, def,
                              acc.empty() ? std::string() : fmt::format("`{}`", md_escape(acc)),
                              key_kinds_text(k.kinds), md_escape(k.meaning));
        }
    }
    return md;
}

Json scenario_reference_json() {
    Json keys = Json::array();
    for (const auto& k : scenario_keys()) {
        Json j = {{"pointer", k.pointer()},
                  {"type", key_type_text(k)},
                  {"unit", k.unit},
                  {"required", k.required},
                  {"kinds", Json::array()},
                  {"contract", k.contract},
                  {"example", Json::parse(k.example)},
                  {"meaning", k.meaning}};
        if (!k.default_json.empty())
            j["default"] = Json::parse(k.default_json);
        else if (!k.required)
            j["default_text"] = k.default_text;
        switch (k.type) {
            case KeyType::integer:
            case KeyType::integer_list:
            case KeyType::length:
            case KeyType::batch_range: j["range"] = {k.imin, k.imax}; break;
            case KeyType::number:
            case KeyType::number_list:
            case KeyType::rate:
                j["range"] = {k.min, k.max};
                j["min_inclusive"] = k.min_inclusive;
                if (k.zero_or_min > 0) j["zero_or_min"] = k.zero_or_min;
                break;
            case KeyType::choice:
            case KeyType::choice_list: j["choices"] = k.choices; break;
            default: break;
        }
        for (unsigned bit : {kTrainingKind, kInferenceKind, kServingKind, kSearchKind})
            if (k.kinds & bit) j["kinds"].push_back(key_kinds_text(bit));
        keys.push_back(std::move(j));
    }
    return {{"keys", keys}};
}

KeyReader::KeyReader(const Json& obj, std::string pointer, Problems& problems, std::string schema)
    : ObjectReader(obj, std::move(pointer), problems), schema_(std::move(schema)) {
    restrict_to(scenario_object_keys(schema_), schema_.empty() ? "/" : schema_);
}

std::optional<std::int64_t> KeyReader::int_key(const std::string& key) {
    const auto& k = spec(key);
    return integer(key, k.imin, k.imax);
}

std::int64_t KeyReader::required_int_key(const std::string& key) {
    const auto& k = spec(key);
    return required_integer(key, k.imin, k.imax);
}

std::optional<double> KeyReader::num_key(const std::string& key) {
    const auto& k = spec(key);
    const auto v = number(key, k.min, k.min_inclusive, k.max);
    if (v && k.zero_or_min > 0 && *v != 0 && *v < k.zero_or_min) {
        problems().add(ptr(key), *get(key), "0 (off) or a number in " + key_accepted_text(k).substr(5));
        return std::nullopt;
    }
    return v;
}

double KeyReader::required_num_key(const std::string& key) {
    const auto& k = spec(key);
    const double v = required_number(key, k.min, k.min_inclusive, k.max);
    if (k.zero_or_min > 0 && v != 0 && v < k.zero_or_min && has(key)) {
        problems().add(ptr(key), *get(key), "0 (off) or a number in " + key_accepted_text(k).substr(5));
        return 0.0;
    }
    return v;
}

std::optional<std::string> KeyReader::choice_key(const std::string& key) { return choice(key, spec(key).choices); }

}   // namespace llmsim
