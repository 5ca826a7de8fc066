#include "hardware_db/hf_config.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "hardware_db/limits.hpp"

namespace llmsim {

namespace {

// Model types whose MLP is gated (three matrices: gate, up, down).
const std::set<std::string> kGatedTypes = {
    "llama",       "mistral",     "mixtral",    "qwen2",   "qwen2_moe", "qwen3",  "qwen3_moe", "gemma",
    "gemma2",      "gemma3_text", "olmo",       "olmo2",   "olmoe",     "phi3",   "internlm2", "deepseek_v2",
    "deepseek_v3", "granite",     "granitemoe", "minicpm", "exaone",    "cohere", "yi",        "baichuan"};
// Model types whose MLP has two matrices (GeLU, ReLU, squared ReLU).
const std::set<std::string> kTwoMatrixTypes = {"gpt2", "gptj",       "gpt_neo", "gpt_neox",  "gpt_bigcode",
                                               "opt",  "bloom",      "falcon",  "mpt",       "nemotron",
                                               "phi",  "starcoder2", "codegen", "openai-gpt"};
// Model types using RMSNorm even when the config names no rms_norm_eps.
const std::set<std::string> kRmsNormTypes = {
    "llama",  "mistral",     "mixtral", "qwen2", "qwen2_moe", "qwen3",     "qwen3_moe",   "gemma",
    "gemma2", "gemma3_text", "olmo2",   "olmoe", "phi3",      "internlm2", "deepseek_v2", "deepseek_v3"};
// Learned absolute position tables.
const std::set<std::string> kLearnedPositionTypes = {"gpt2", "opt", "gpt_neo", "gpt_bigcode", "openai-gpt", "biogpt"};
// transformers ties input and output embeddings by default for these model types.
const std::set<std::string> kTiedByDefaultTypes = {
    "gpt2", "opt", "bloom", "falcon", "mpt", "gemma", "gemma2", "gemma3_text", "gpt_neo", "gpt_bigcode", "openai-gpt"};
// Biases on every linear layer.
const std::set<std::string> kBiasTypes = {"gpt2",        "opt", "bloom",      "gpt_neox",
                                          "gpt_bigcode", "phi", "starcoder2", "openai-gpt"};
// Biases on Q, K, V only.
const std::set<std::string> kQkvBiasTypes = {"qwen2", "qwen2_moe"};

const std::vector<const char*> kLayerKeys = {"num_hidden_layers", "n_layer", "num_layers", "n_layers"};
const std::vector<const char*> kHiddenKeys = {"hidden_size", "n_embd", "d_model", "n_embed"};
const std::vector<const char*> kHeadKeys = {"num_attention_heads", "n_head", "n_heads"};
const std::vector<const char*> kVocabKeys = {"vocab_size"};

std::string key_list(const std::vector<const char*>& keys) {
    std::string out;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (i > 0) out += i + 1 == keys.size() ? " or " : ", ";
        out += keys[i];
    }
    return out;
}

// Typed access to the keys of one Hugging Face config object. Never reports unknown keys.
class HfKeys {
public:
    HfKeys(const Json& j, const std::string& pointer, Problems& pr)
        : j_(j), pointer_(pointer), pr_(pr), r_(j, pointer, pr) {}

    bool ok() const { return r_.ok(); }
    const std::string& pointer() const { return pointer_; }
    std::string ptr(const std::string& key) const { return pointer_ + "/" + key; }
    Problems& problems() { return pr_; }

    // The first of `keys` that is present and not null.
    const char* find(const std::vector<const char*>& keys) const {
        if (!j_.is_object()) return nullptr;
        for (const char* k : keys) {
            auto it = j_.find(k);
            if (it != j_.end() && !it->is_null()) return k;
        }
        return nullptr;
    }
    const Json* value(const char* key) const {
        if (!j_.is_object()) return nullptr;
        auto it = j_.find(key);
        return it == j_.end() || it->is_null() ? nullptr : &*it;
    }

    std::optional<std::int64_t> integer(const std::vector<const char*>& keys, std::int64_t min_value = 1,
                                        std::int64_t max_value = INT64_MAX, const char** used = nullptr) {
        const char* k = find(keys);
        if (used) *used = k;
        if (!k) return std::nullopt;
        return r_.integer(k, min_value, max_value);
    }
    // A required integer: a missing key is reported under the first (canonical) key name.
    std::int64_t required(const std::vector<const char*>& keys, const std::string& what, std::int64_t min_value,
                          std::int64_t max_value, const char** used = nullptr) {
        const char* k = find(keys);
        if (used) *used = k ? k : keys.front();
        if (!k) {
            if (ok())
                pr_.add_raw(
                    fmt::format("{}: missing: expected an integer {} ({})", ptr(keys.front()), what, key_list(keys)));
            return 0;
        }
        return r_.integer(k, min_value, max_value).value_or(0);
    }
    std::optional<bool> boolean(const char* key) {
        if (!value(key)) return std::nullopt;
        return r_.boolean(key);
    }
    std::optional<double> number(const char* key, double min_value, bool min_inclusive, double max_value) {
        if (!value(key)) return std::nullopt;
        return r_.number(key, min_value, min_inclusive, max_value);
    }
    std::optional<std::string> string(const std::vector<const char*>& keys) {
        const char* k = find(keys);
        if (!k) return std::nullopt;
        return r_.string(k);
    }

private:
    const Json& j_;
    std::string pointer_;
    Problems& pr_;
    ObjectReader r_;
};

bool has_any(const Json& j, const std::vector<const char*>& keys) {
    for (const char* k : keys)
        if (j.contains(k) && !j[k].is_null()) return true;
    return false;
}

ModelSpec read_hf(const Json& cfg, const std::string& pointer, Problems& pr) {
    ModelSpec m;
    HfKeys k(cfg, pointer, pr);
    if (!k.ok()) return m;

    const std::string type = k.string({"model_type"}).value_or("");
    m.name = k.string({"_name_or_path"}).value_or("");
    if (m.name.empty()) m.name = type.empty() ? "hf-config" : type;
    m.display_name = m.name;
    m.source =
        type.empty() ? "Hugging Face config.json" : fmt::format("Hugging Face config.json (model_type {})", type);

    // --- shape ------------------------------------------------------------------------------
    const char* layers_key = nullptr;
    const char* hidden_key = nullptr;
    const char* heads_key = nullptr;
    m.layers = static_cast<int>(k.required(kLayerKeys, "layer count", 1, limits::kLayers, &layers_key));
    m.hidden = k.required(kHiddenKeys, "hidden size", 1, limits::kHidden, &hidden_key);
    m.heads = static_cast<int>(k.required(kHeadKeys, "attention head count", 1, limits::kHeads, &heads_key));
    m.vocab = k.required(kVocabKeys, "vocabulary size", 1, limits::kVocab);

    // KV heads: GQA key, Falcon's num_kv_heads (new decoder architecture), multi-query flag.
    const bool falcon = type == "falcon";
    const bool falcon_new_arch = falcon && k.boolean("new_decoder_architecture").value_or(false);
    const char* kv_key = nullptr;
    std::optional<std::int64_t> kv = k.integer({"num_key_value_heads"}, 1, limits::kHeads, &kv_key);
    if (!kv_key) {
        const bool multi_query = k.boolean("multi_query").value_or(false);
        if (!falcon || falcon_new_arch) kv = k.integer({"num_kv_heads", "n_head_kv"}, 1, limits::kHeads, &kv_key);
        if (!kv_key) kv = multi_query ? 1 : m.heads;
    }
    m.kv_heads = static_cast<int>(kv.value_or(m.heads));
    if (m.kv_heads <= 0) m.kv_heads = m.heads;

    if (auto hd = k.integer({"head_dim"}, 1, limits::kHeadDim)) {
        m.head_dim = *hd;
    } else if (m.heads > 0 && m.hidden > 0) {
        if (m.hidden % m.heads != 0)
            pr.add(k.ptr(hidden_key), Json(m.hidden),
                   fmt::format("a multiple of {} ({}) or an explicit head_dim", heads_key, m.heads));
        m.head_dim = std::max<std::int64_t>(1, m.hidden / m.heads);
    }
    // Multi-head latent attention (DeepSeek-V2/V3, Kimi K2): one KV latent of kv_lora_rank per token;
    // the query/key head is qk_nope_head_dim + qk_rope_head_dim wide, the value head v_head_dim; every
    // head has its own K and V after the up-projection.
    if (const Json* kvl = k.value("kv_lora_rank"); kvl && !kvl->is_null()) {
        m.mla.kv_lora_rank = k.integer({"kv_lora_rank"}, 1, limits::kHidden).value_or(0);
        const Json* ql = k.value("q_lora_rank");
        m.mla.q_lora_rank = ql && !ql->is_null() ? k.integer({"q_lora_rank"}, 1, limits::kHidden).value_or(0) : 0;
        const auto rope = k.integer({"qk_rope_head_dim"}, 1, limits::kHeadDim);
        const auto nope = k.integer({"qk_nope_head_dim"}, 1, limits::kHeadDim);
        if (!rope || !nope)
            pr.add(k.ptr("kv_lora_rank"), *kvl,
                   "an integer with qk_rope_head_dim and qk_nope_head_dim beside it (multi-head latent attention)");
        m.mla.qk_rope_head_dim = rope.value_or(1);
        m.head_dim = nope.value_or(1) + m.mla.qk_rope_head_dim;
        m.mla.v_head_dim = k.integer({"v_head_dim"}, 1, limits::kHeadDim).value_or(m.head_dim);
        m.kv_heads = m.heads;
        kv_key = nullptr;
    }
    if (m.heads > 0 && m.kv_heads > 0 && kv_key) {
        if (m.kv_heads > m.heads)
            pr.add(k.ptr(kv_key), Json(m.kv_heads), fmt::format("at most {} ({})", heads_key, m.heads));
        else if (m.heads % m.kv_heads != 0)
            pr.add(k.ptr(kv_key), Json(m.kv_heads), fmt::format("a divisor of {} ({})", heads_key, m.heads));
    }

    // FFN width.
    if (auto f = k.integer({"intermediate_size", "ffn_dim", "n_inner", "ffn_hidden_size"}, 1, limits::kFfnHidden)) {
        m.ffn_hidden = *f;
    } else if (k.value("expansion_ratio")) {
        // The width ratio·hidden must be a width llmsim accepts: checked in double before rounding.
        m.ffn_hidden = 4 * m.hidden;
        if (auto ratio = k.number("expansion_ratio", 0.0, false, static_cast<double>(limits::kFfnHidden))) {
            const double width = std::round(*ratio * static_cast<double>(m.hidden));
            if (m.hidden > 0 && !(width >= 1.0 && width <= static_cast<double>(limits::kFfnHidden)))
                pr.add(k.ptr("expansion_ratio"), Json(*ratio),
                       fmt::format("a ratio whose MLP width ratio·{} ({}) is in [1, {}]", hidden_key, m.hidden,
                                   limits::kFfnHidden));
            else if (m.hidden > 0)
                m.ffn_hidden = static_cast<std::int64_t>(width);
        }
    } else {
        m.ffn_hidden = 4 * m.hidden;
    }

    // MLP kind.
    if (kGatedTypes.count(type)) {
        m.mlp = MlpKind::swiglu;
    } else if (kTwoMatrixTypes.count(type)) {
        m.mlp = MlpKind::gelu;
    } else {
        std::string act = k.string({"hidden_act", "activation_function", "hidden_activation", "afn"}).value_or("");
        std::transform(act.begin(), act.end(), act.begin(), [](unsigned char c) { return std::tolower(c); });
        m.mlp = act == "silu" || act == "swish" || act == "swiglu" ? MlpKind::swiglu : MlpKind::gelu;
    }

    // Norm.
    m.norm = k.value("rms_norm_eps") || kRmsNormTypes.count(type) ? NormKind::rmsnorm : NormKind::layernorm;

    // Positions.
    const auto context =
        k.integer({"max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "n_ctx"}, 1, limits::kSeqLen);
    m.max_seq_len = context.value_or(2048);
    m.max_seq_len_stated = context.has_value();
    if (kLearnedPositionTypes.count(type)) {
        m.position = PositionKind::learned;
    } else if (type == "bloom" || (falcon && k.boolean("alibi").value_or(false))) {
        m.position = PositionKind::alibi;
    } else if (type == "mpt") {
        bool alibi = true;
        if (const Json* ac = k.value("attn_config");
            ac && ac->is_object() && ac->contains("alibi") && (*ac)["alibi"].is_boolean())
            alibi = (*ac)["alibi"].get<bool>();
        m.position = alibi                                         ? PositionKind::alibi
                     : k.boolean("learned_pos_emb").value_or(true) ? PositionKind::learned
                                                                   : PositionKind::none;
    } else {
        m.position = PositionKind::rope;
    }

    // Embeddings.
    m.tied_embeddings = k.boolean("tie_word_embeddings").value_or(kTiedByDefaultTypes.count(type) > 0);

    // Biases.
    m.bias = kBiasTypes.count(type) > 0;
    m.qkv_bias = kQkvBiasTypes.count(type) > 0;
    if (falcon) m.bias = k.boolean("bias").value_or(false);
    if (type == "mpt") m.bias = !k.boolean("no_bias").value_or(true);
    if (type == "opt") m.bias = k.boolean("enable_bias").value_or(true);
    if (type == "starcoder2") m.bias = k.boolean("use_bias").value_or(true);
    {
        const auto attention_bias = k.boolean("attention_bias");
        const auto mlp_bias = k.boolean("mlp_bias");
        if (attention_bias || mlp_bias) {
            const bool a = attention_bias.value_or(m.bias || m.qkv_bias);
            const bool f = mlp_bias.value_or(m.bias);
            m.bias = a && f;
            m.qkv_bias = a && !f;
        }
    }
    if (m.bias) m.qkv_bias = false;

    // Block layout.
    m.parallel_block = type == "gptj" || type == "phi" || type == "codegen";
    if (falcon) m.parallel_block = k.boolean("parallel_attn").value_or(true);
    if (type == "gpt_neox") m.parallel_block = k.boolean("use_parallel_residual").value_or(true);

    // Dropout: trained with any non-zero dropout probability.
    m.dropout = false;
    for (const char* key :
         {"attention_dropout", "hidden_dropout", "resid_pdrop", "attn_pdrop", "embd_pdrop", "emb_pdrop", "dropout",
          "hidden_dropout_prob", "attention_probs_dropout_prob", "activation_dropout"}) {
        const Json* v = k.value(key);
        if (v && v->is_number() && v->get<double>() > 0.0) m.dropout = true;
    }

    // --- mixture of experts --------------------------------------------------------------------
    const char* experts_key = nullptr;
    const auto experts = k.integer({"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"}, 0,
                                   limits::kExperts, &experts_key);
    if (experts && *experts > 1) {
        m.moe.experts = static_cast<int>(*experts);
        const char* topk_key = nullptr;
        m.moe.top_k = static_cast<int>(k.required({"num_experts_per_tok", "moe_top_k", "num_experts_per_token"},
                                                  "experts per token", 1, limits::kExperts, &topk_key));
        if (m.moe.top_k > m.moe.experts)
            pr.add(k.ptr(topk_key), Json(m.moe.top_k), fmt::format("at most {} ({})", experts_key, m.moe.experts));
        m.moe.expert_ffn_hidden = k.integer({"moe_intermediate_size"}, 1, limits::kFfnHidden).value_or(m.ffn_hidden);
        if (auto n_shared = k.integer({"n_shared_experts", "num_shared_experts"}, 0, limits::kExperts);
            n_shared && *n_shared > 0) {
            m.moe.shared_experts = static_cast<int>(*n_shared);
            m.moe.shared_expert_ffn_hidden = m.moe.expert_ffn_hidden;
        } else if (auto shared_f = k.integer({"shared_expert_intermediate_size"}, 0, limits::kFfnHidden);
                   shared_f && *shared_f > 0) {
            m.moe.shared_experts = 1;
            m.moe.shared_expert_ffn_hidden = *shared_f;
        } else {
            m.moe.shared_expert_ffn_hidden = m.moe.expert_ffn_hidden;
        }
        // Which layers are MoE: leading dense layers (DeepSeek), every step-th layer (Qwen
        // decoder_sparse_step, DeepSeek moe_layer_freq), explicit dense layers (Qwen mlp_only_layers).
        // A configuration that leaves no MoE layer is refused rather than read as a dense model.
        const std::int64_t layer_bound = m.layers > 0 ? m.layers : limits::kLayers;
        const std::int64_t first_dense = k.integer({"first_k_dense_replace"}, 0, layer_bound).value_or(0);
        const std::int64_t step = k.integer({"decoder_sparse_step"}, 1, layer_bound).value_or(1);
        const std::int64_t freq = k.integer({"moe_layer_freq"}, 1, layer_bound).value_or(1);
        std::set<std::int64_t> mlp_only;
        if (const Json* v = k.value("mlp_only_layers")) {
            bool good = v->is_array();
            if (good)
                for (const auto& x : *v) {
                    if (!x.is_number_integer() || x.get<std::int64_t>() < 0 || x.get<std::int64_t>() >= layer_bound) {
                        good = false;
                        break;
                    }
                    mlp_only.insert(x.get<std::int64_t>());
                }
            if (!good)
                pr.add(k.ptr("mlp_only_layers"), *v,
                       fmt::format("an array of layer indices in [0, {}]", layer_bound - 1));
        }
        int moe_layers = 0;
        for (int i = 0; i < m.layers; ++i) {
            bool is_moe = i >= first_dense;
            if (step > 1 && (i + 1) % step != 0) is_moe = false;
            if (freq > 1 && i % freq != 0) is_moe = false;
            if (mlp_only.count(i)) is_moe = false;
            moe_layers += is_moe ? 1 : 0;
        }
        m.moe.dense_layers = m.layers - moe_layers;
        if (moe_layers == 0) {
            if (m.layers > 0)
                pr.add(k.ptr(experts_key), Json(m.moe.experts),
                       fmt::format("experts in at least one of the {} layers (first_k_dense_replace, "
                                   "decoder_sparse_step, moe_layer_freq and mlp_only_layers leave none)",
                                   m.layers));
            m.moe = MoeSpec{};
        }
    } else if (experts && *experts == 1) {
        // One expert is a dense MLP; more experts per token than that is a configuration error.
        const char* topk_key = nullptr;
        if (auto top_k = k.integer({"num_experts_per_tok", "moe_top_k", "num_experts_per_token"}, 1, limits::kExperts,
                                   &topk_key);
            top_k && *top_k > 1)
            pr.add(k.ptr(topk_key), Json(*top_k), fmt::format("at most {} (1)", experts_key));
    }
    return m;
}

}   // namespace

bool looks_like_hf_config(const Json& j) {
    if (!j.is_object()) return false;
    if (j.contains("layers") || j.contains("preset")) return false;
    for (const char* key : {"model_type", "architectures", "num_hidden_layers", "n_layer", "num_layers", "n_layers",
                            "text_config", "_name_or_path", "transformers_version"})
        if (j.contains(key)) return true;
    return false;
}

ModelSpec model_from_hf_config(const Json& cfg, const std::string& pointer, Problems& problems) {
    // A multimodal config keeps its language model under "text_config".
    if (cfg.is_object() && !has_any(cfg, kLayerKeys) && cfg.contains("text_config") && cfg["text_config"].is_object()) {
        Json text = cfg["text_config"];
        for (const char* key : {"tie_word_embeddings", "_name_or_path"})
            if (!text.contains(key) && cfg.contains(key)) text[key] = cfg[key];
        return read_hf(text, pointer + "/text_config", problems);
    }
    return read_hf(cfg, pointer, problems);
}

}   // namespace llmsim
