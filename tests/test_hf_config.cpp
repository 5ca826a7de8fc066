// Hugging Face config.json reader: real configs (tests/data/hf, see SOURCES.md) map onto the same
// ModelSpec as the model-zoo entry of the same model; missing or mistyped shape keys are problems
// naming their JSON pointer; keys llmsim does not model are not problems.
#include <catch2/catch.hpp>

#include <string>

#include "cost_models/model_params.hpp"
#include "hardware_db/database.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/hf_config.hpp"
#include "hardware_db/json_reader.hpp"

using namespace llmsim;

namespace {

#ifndef LLMSIM_TEST_DATA_DIR
#define LLMSIM_TEST_DATA_DIR "tests/data"
#endif

Json load_hf(const std::string& file) { return parse_json_file(std::string(LLMSIM_TEST_DATA_DIR) + "/hf/" + file); }

ModelSpec read_ok(const Json& cfg) {
    Problems pr;
    ModelSpec m = model_from_hf_config(cfg, "", pr);
    INFO((pr.lines.empty() ? std::string() : pr.lines.front()));
    REQUIRE(pr.empty());
    return m;
}

bool mentions(const Problems& pr, const std::string& text) {
    for (const auto& l : pr.lines)
        if (l.find(text) != std::string::npos) return true;
    return false;
}

// Every shape field the cost models read must agree with the zoo entry.
void require_same_shape(const ModelSpec& hf, const ModelSpec& zoo) {
    CHECK(hf.layers == zoo.layers);
    CHECK(hf.hidden == zoo.hidden);
    CHECK(hf.heads == zoo.heads);
    CHECK(hf.kv_heads == zoo.kv_heads);
    CHECK(hf.head_dim == zoo.head_dim);
    CHECK(hf.ffn_hidden == zoo.ffn_hidden);
    CHECK(hf.vocab == zoo.vocab);
    CHECK(hf.mlp == zoo.mlp);
    CHECK(hf.norm == zoo.norm);
    CHECK(hf.position == zoo.position);
    CHECK(hf.max_seq_len == zoo.max_seq_len);
    CHECK(hf.tied_embeddings == zoo.tied_embeddings);
    CHECK(hf.bias == zoo.bias);
    CHECK(hf.qkv_bias == zoo.qkv_bias);
    CHECK(hf.parallel_block == zoo.parallel_block);
    CHECK(hf.dropout == zoo.dropout);
    CHECK(hf.moe.experts == zoo.moe.experts);
    CHECK(hf.moe.top_k == zoo.moe.top_k);
    CHECK(hf.moe.expert_ffn_hidden == zoo.moe.expert_ffn_hidden);
    CHECK(hf.moe.shared_experts == zoo.moe.shared_experts);
    CHECK(hf.moe.dense_layers == zoo.moe.dense_layers);
    CHECK(hf.mla.kv_lora_rank == zoo.mla.kv_lora_rank);
    CHECK(hf.mla.q_lora_rank == zoo.mla.q_lora_rank);
    CHECK(hf.mla.qk_rope_head_dim == zoo.mla.qk_rope_head_dim);
    CHECK(hf.mla.v_head_dim == zoo.mla.v_head_dim);
    const ParamCounts a = count_parameters(hf), b = count_parameters(zoo);
    CHECK(a.total == Approx(b.total).epsilon(1e-12));
    CHECK(a.active == Approx(b.active).epsilon(1e-12));
}

}   // namespace

TEST_CASE("Meta-Llama-3-8B config.json", "[hf_config]") {
    const Json cfg = load_hf("llama-3-8b.json");
    REQUIRE(looks_like_hf_config(cfg));
    const ModelSpec m = read_ok(cfg);
    CHECK(m.name == "llama");
    CHECK(m.layers == 32);
    CHECK(m.hidden == 4096);
    CHECK(m.heads == 32);
    CHECK(m.kv_heads == 8);
    CHECK(m.head_dim == 128);
    CHECK(m.ffn_hidden == 14336);
    CHECK(m.vocab == 128256);
    CHECK(m.mlp == MlpKind::swiglu);
    CHECK(m.norm == NormKind::rmsnorm);
    CHECK(m.position == PositionKind::rope);
    CHECK(m.max_seq_len == 8192);
    CHECK_FALSE(m.tied_embeddings);
    CHECK_FALSE(m.bias);
    CHECK_FALSE(m.qkv_bias);
    CHECK_FALSE(m.parallel_block);
    CHECK_FALSE(m.dropout);
    CHECK_FALSE(m.moe.enabled());
    require_same_shape(m, Database::builtin().model("llama-3-8b"));
    CHECK(count_parameters(m).total == Approx(8.03e9).epsilon(0.005));
}

TEST_CASE("Mixtral-8x7B-v0.1 config.json", "[hf_config]") {
    const Json cfg = load_hf("mixtral-8x7b.json");
    REQUIRE(looks_like_hf_config(cfg));
    const ModelSpec m = read_ok(cfg);
    CHECK(m.layers == 32);
    CHECK(m.kv_heads == 8);
    CHECK(m.mlp == MlpKind::swiglu);
    CHECK(m.max_seq_len == 32768);
    REQUIRE(m.moe.enabled());
    CHECK(m.moe.experts == 8);
    CHECK(m.moe.top_k == 2);
    CHECK(m.moe.expert_ffn_hidden == 14336);
    CHECK(m.moe.shared_experts == 0);
    CHECK(m.moe.dense_layers == 0);
    require_same_shape(m, Database::builtin().model("mixtral-8x7b"));
    const ParamCounts c = count_parameters(m);
    CHECK(c.total == Approx(46.7e9).epsilon(0.005));
    CHECK(c.active == Approx(12.9e9).epsilon(0.005));
}

TEST_CASE("Qwen3-30B-A3B config.json", "[hf_config]") {
    const Json cfg = load_hf("qwen3-30b-a3b.json");
    REQUIRE(looks_like_hf_config(cfg));
    const ModelSpec m = read_ok(cfg);
    CHECK(m.layers == 48);
    CHECK(m.hidden == 2048);
    CHECK(m.heads == 32);
    CHECK(m.kv_heads == 4);
    CHECK(m.head_dim == 128);   // explicit: heads x head_dim = 4096 != hidden
    CHECK(m.ffn_hidden == 6144);
    CHECK(m.norm == NormKind::rmsnorm);
    CHECK_FALSE(m.qkv_bias);   // Qwen3 has attention_bias false (unlike Qwen2)
    REQUIRE(m.moe.enabled());
    CHECK(m.moe.experts == 128);
    CHECK(m.moe.top_k == 8);
    CHECK(m.moe.expert_ffn_hidden == 768);
    CHECK(m.moe.dense_layers == 0);
    require_same_shape(m, Database::builtin().model("qwen3-30b-a3b"));
    CHECK(count_parameters(m).total == Approx(30.5e9).epsilon(0.005));
}

TEST_CASE("DeepSeek-V3 config.json: multi-head latent attention and fine-grained MoE", "[hf_config][mla]") {
    const Json cfg = load_hf("deepseek-v3.json");
    REQUIRE(looks_like_hf_config(cfg));
    const ModelSpec m = read_ok(cfg);
    REQUIRE(m.mla.enabled());
    CHECK(m.mla.kv_lora_rank == 512);
    CHECK(m.mla.q_lora_rank == 1536);
    CHECK(m.mla.qk_rope_head_dim == 64);
    CHECK(m.mla.v_head_dim == 128);
    CHECK(m.head_dim == 192);   // qk_nope_head_dim + qk_rope_head_dim
    CHECK(m.kv_heads == 128);
    CHECK(m.moe.experts == 256);
    CHECK(m.moe.top_k == 8);
    CHECK(m.moe.shared_experts == 1);
    CHECK(m.moe.dense_layers == 3);
    require_same_shape(m, Database::builtin().model("deepseek-v3"));
    CHECK(count_parameters(m).total == Approx(671e9).epsilon(0.001));
    // q_lora_rank null (DeepSeek-V2-Lite): Q is projected from the hidden state.
    Json lite = cfg;
    lite["q_lora_rank"] = nullptr;
    CHECK(read_ok(lite).mla.q_lora_rank == 0);
    // A latent without its head dimensions is refused, naming the key.
    Json bad = cfg;
    bad.erase("qk_nope_head_dim");
    Problems pr;
    (void)model_from_hf_config(bad, "config.json", pr);
    REQUIRE_FALSE(pr.empty());
    CHECK(pr.lines.front().find("kv_lora_rank") != std::string::npos);
}

TEST_CASE("GPT-2 config.json", "[hf_config]") {
    const Json cfg = load_hf("gpt2.json");
    REQUIRE(looks_like_hf_config(cfg));
    const ModelSpec m = read_ok(cfg);
    CHECK(m.name == "gpt2");
    CHECK(m.layers == 12);
    CHECK(m.hidden == 768);
    CHECK(m.heads == 12);
    CHECK(m.kv_heads == 12);
    CHECK(m.head_dim == 64);
    CHECK(m.ffn_hidden == 3072);   // n_inner absent: 4 h
    CHECK(m.vocab == 50257);
    CHECK(m.mlp == MlpKind::gelu);
    CHECK(m.norm == NormKind::layernorm);
    CHECK(m.position == PositionKind::learned);
    CHECK(m.max_seq_len == 1024);
    CHECK(m.tied_embeddings);
    CHECK(m.bias);
    CHECK_FALSE(m.parallel_block);
    CHECK(m.dropout);
    // GPT-2 small: 124,439,808 parameters.
    CHECK(count_parameters(m).total == Approx(124439808.0).epsilon(1e-9));
}

TEST_CASE("OPT-13B config.json", "[hf_config]") {
    const ModelSpec m = read_ok(load_hf("opt-13b.json"));
    CHECK(m.name == "facebook/opt-13b");
    CHECK(m.layers == 40);
    CHECK(m.hidden == 5120);
    CHECK(m.heads == 40);
    CHECK(m.ffn_hidden == 20480);   // ffn_dim
    CHECK(m.vocab == 50272);
    CHECK(m.mlp == MlpKind::gelu);   // ReLU: two matrices
    CHECK(m.norm == NormKind::layernorm);
    CHECK(m.position == PositionKind::learned);
    CHECK(m.max_seq_len == 2048);
    CHECK(m.tied_embeddings);
    CHECK(m.bias);
    CHECK(m.dropout);
    // Same family as the zoo's opt-175b: only the size differs.
    const ModelSpec big = Database::builtin().model("opt-175b");
    CHECK(m.mlp == big.mlp);
    CHECK(m.position == big.position);
    CHECK(m.tied_embeddings == big.tied_embeddings);
    CHECK(m.bias == big.bias);
    CHECK(m.dropout == big.dropout);
    CHECK(count_parameters(m).total == Approx(12.85e9).epsilon(0.005));
}

TEST_CASE("Falcon-180B config.json", "[hf_config]") {
    const ModelSpec m = read_ok(load_hf("falcon-180b.json"));
    CHECK(m.name == "tiiuae/falcon-180B");
    CHECK(m.heads == 232);
    CHECK(m.kv_heads == 8);   // num_kv_heads wins over multi_query with the new decoder architecture
    CHECK(m.head_dim == 64);
    CHECK(m.ffn_hidden == 4 * 14848);
    CHECK(m.parallel_block);
    CHECK_FALSE(m.bias);
    CHECK(m.tied_embeddings);   // FalconConfig default
    CHECK(m.position == PositionKind::rope);
    require_same_shape(m, Database::builtin().model("falcon-180b"));
}

TEST_CASE("Falcon multi-query, MPT and Qwen2 conventions", "[hf_config]") {
    // Falcon-7B style: old decoder architecture, multi-query attention.
    const ModelSpec falcon7 = read_ok(Json::parse(R"({
        "model_type": "falcon", "hidden_size": 4544, "num_hidden_layers": 32, "num_attention_heads": 71,
        "multi_query": true, "new_decoder_architecture": false, "parallel_attn": true, "bias": false,
        "alibi": false, "vocab_size": 65024})"));
    CHECK(falcon7.kv_heads == 1);
    CHECK(falcon7.head_dim == 64);
    CHECK(falcon7.max_seq_len == 2048);

    // MPT style keys (synthetic object with mosaicml/mpt-7b's shape).
    const ModelSpec mpt = read_ok(Json::parse(R"({
        "model_type": "mpt", "d_model": 4096, "n_heads": 32, "n_layers": 32, "expansion_ratio": 4,
        "max_seq_len": 2048, "vocab_size": 50432, "no_bias": true, "learned_pos_emb": true,
        "attn_config": {"alibi": true, "attn_pdrop": 0}, "resid_pdrop": 0, "emb_pdrop": 0})"));
    require_same_shape(mpt, Database::builtin().model("mpt-7b"));

    // Qwen2: QKV biases only, implied by the model type.
    const ModelSpec qwen2 = read_ok(Json::parse(R"({
        "model_type": "qwen2", "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28,
        "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064, "rms_norm_eps": 1e-06,
        "tie_word_embeddings": false})"));
    CHECK(qwen2.qkv_bias);
    CHECK_FALSE(qwen2.bias);
    CHECK(qwen2.mlp == MlpKind::swiglu);
}

TEST_CASE("MoE layer placement keys", "[hf_config]") {
    // DeepSeek style: leading dense layers and shared experts.
    const ModelSpec ds = read_ok(Json::parse(R"({
        "model_type": "deepseek_v2", "hidden_size": 2048, "num_hidden_layers": 27, "num_attention_heads": 16,
        "intermediate_size": 10944, "moe_intermediate_size": 1408, "n_routed_experts": 64, "n_shared_experts": 2,
        "num_experts_per_tok": 6, "first_k_dense_replace": 1, "moe_layer_freq": 1, "vocab_size": 102400})"));
    CHECK(ds.moe.experts == 64);
    CHECK(ds.moe.top_k == 6);
    CHECK(ds.moe.expert_ffn_hidden == 1408);
    CHECK(ds.moe.shared_experts == 2);
    CHECK(ds.moe.shared_expert_ffn_hidden == 1408);
    CHECK(ds.moe.dense_layers == 1);

    // Qwen2-MoE style: one shared expert of its own width; every second layer sparse.
    const ModelSpec q = read_ok(Json::parse(R"({
        "model_type": "qwen2_moe", "hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads": 16,
        "intermediate_size": 5632, "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
        "num_experts": 60, "num_experts_per_tok": 4, "decoder_sparse_step": 2, "mlp_only_layers": [],
        "vocab_size": 151936})"));
    CHECK(q.moe.shared_experts == 1);
    CHECK(q.moe.shared_expert_ffn_hidden == 5632);
    CHECK(q.moe_layers() == 12);   // same number of MoE layers; placed last

    // A single "expert" is a dense model.
    const ModelSpec one = read_ok(Json::parse(R"({
        "model_type": "mixtral", "hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8,
        "num_local_experts": 1, "num_experts_per_tok": 1, "vocab_size": 1000})"));
    CHECK_FALSE(one.moe.enabled());
}

TEST_CASE("Missing and mistyped shape keys name their pointer", "[hf_config]") {
    Problems pr;
    model_from_hf_config(Json::parse(R"({"model_type": "llama", "hidden_size": 4096})"), "/model", pr);
    CHECK(mentions(pr, "/model/num_hidden_layers: missing"));
    CHECK(mentions(pr, "/model/num_attention_heads: missing"));
    CHECK(mentions(pr, "/model/vocab_size: missing"));
    CHECK_FALSE(mentions(pr, "hidden_size"));

    Problems typed;
    model_from_hf_config(Json::parse(R"({"model_type": "llama", "num_hidden_layers": "32", "hidden_size": 4096,
        "num_attention_heads": 32, "num_key_value_heads": 5, "vocab_size": -1})"),
                         "", typed);
    CHECK(mentions(typed, "/num_hidden_layers: \"32\": expected an integer"));
    CHECK(mentions(typed, "/vocab_size: -1"));
    CHECK(mentions(typed, "/num_key_value_heads: 5: expected a divisor of num_attention_heads (32)"));

    Problems moe;
    model_from_hf_config(Json::parse(R"({"model_type": "mixtral", "num_hidden_layers": 2, "hidden_size": 64,
        "num_attention_heads": 4, "vocab_size": 100, "num_local_experts": 8})"),
                         "/m", moe);
    CHECK(mentions(moe, "/m/num_experts_per_tok: missing"));

    Problems heads;
    model_from_hf_config(Json::parse(R"({"model_type": "gpt2", "n_layer": 2, "n_embd": 100, "n_head": 3,
        "vocab_size": 10})"),
                         "", heads);
    CHECK(mentions(heads, "/n_embd: 100: expected a multiple of n_head (3) or an explicit head_dim"));
}

TEST_CASE("Keys llmsim does not model are not problems", "[hf_config]") {
    Json cfg = load_hf("llama-3-8b.json");
    cfg["some_future_key"] = {{"nested", true}};
    cfg["quantization_config"] = {{"bits", 4}};
    Problems pr;
    model_from_hf_config(cfg, "", pr);
    CHECK(pr.empty());
}

TEST_CASE("looks_like_hf_config tells HF configs from llmsim models", "[hf_config]") {
    CHECK(looks_like_hf_config(Json::parse(R"({"model_type": "llama"})")));
    CHECK(looks_like_hf_config(Json::parse(R"({"n_layer": 12, "n_embd": 768})")));
    CHECK_FALSE(looks_like_hf_config(Json::parse(R"({"layers": 32, "hidden": 4096, "heads": 32, "vocab": 32000})")));
    CHECK_FALSE(looks_like_hf_config(Json::parse(R"({"preset": "llama-3-8b", "layers": 16})")));
    CHECK_FALSE(looks_like_hf_config(Json("llama-3-8b")));
    CHECK_FALSE(looks_like_hf_config(Json::parse("[1, 2]")));
}

TEST_CASE("A language model under text_config is read from there", "[hf_config]") {
    Json outer = {{"model_type", "llava"}, {"tie_word_embeddings", false}, {"text_config", load_hf("llama-3-8b.json")}};
    outer["text_config"].erase("tie_word_embeddings");
    REQUIRE(looks_like_hf_config(outer));
    const ModelSpec m = read_ok(outer);
    require_same_shape(m, Database::builtin().model("llama-3-8b"));

    Problems pr;
    Json bad = {{"model_type", "llava"}, {"text_config", {{"model_type", "llama"}}}};
    model_from_hf_config(bad, "", pr);
    CHECK(mentions(pr, "/text_config/num_hidden_layers: missing"));
}
