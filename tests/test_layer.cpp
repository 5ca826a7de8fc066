// The layer description (cost_models/layer): the block-kind tables, and every zoo model's operations
// against the statistics that loop over them — parameters, FLOPs and the KV cache are the list's sums.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "cost_models/flops.hpp"
#include "cost_models/layer/layer.hpp"
#include "cost_models/model_params.hpp"
#include "hardware_db/database.hpp"

using namespace llmsim;

namespace {
ModelSpec zoo(const std::string& name) { return Database::builtin().model(name); }
}   // namespace

TEST_CASE("the block-kind tables name each kind once, and the last entry applies to every model", "[layer]") {
    std::set<std::string> names;
    for (const auto& k : attention_kinds()) REQUIRE(names.insert(k.name).second);
    for (const auto& k : mlp_kinds()) REQUIRE(names.insert(k.name).second);
    ModelSpec plain;
    plain.hidden = 64;
    plain.heads = plain.kv_heads = 4;
    plain.head_dim = 16;
    REQUIRE(attention_kinds().back().applies(plain));
    REQUIRE(mlp_kinds().back().applies(plain, true));
    CHECK(std::string(attention_kind(zoo("deepseek-v3")).name) == "mla");
    CHECK(std::string(attention_kind(zoo("llama-3-70b")).name) == "mha");
    CHECK(std::string(mlp_kind(zoo("mixtral-8x7b"), true).name) == "moe");
    CHECK(std::string(mlp_kind(zoo("mixtral-8x7b"), false).name) == "dense");
    CHECK(std::string(mlp_kind(zoo("llama-3-70b"), true).name) == "dense");   // a dense model's MoE layer is dense
}

TEST_CASE("every zoo model's layer: one attention core, the norms and residuals around two blocks", "[layer][zoo]") {
    const auto& db = Database::builtin();
    for (const auto& name : db.model_names()) {
        const ModelSpec m = db.model(name);
        INFO("model " << name);
        // The one question the rest of the code asks about layer kinds: the model has MoE layers.
        CHECK(has_moe_layers(m) == (m.moe_layers() > 0));
        CHECK(describe_layer(m, LayerShape{.moe = true}).routed() == has_moe_layers(m));
        for (const bool moe : {false, true}) {
            const Layer l = describe_layer(m, LayerShape{.moe = moe});
            int cores = 0;
            for (const auto& op : l) cores += op.kind == LayerOpKind::attention ? 1 : 0;
            CHECK(cores == 1);
            CHECK(std::string(l.begin()->name) == "norm1");
            CHECK(std::string((l.end() - 1)->name) == "dropout_add2");
            // Parameters are the list's sums.
            const auto pc = count_parameters(m);
            const auto sums = layer_param_sums(l);
            CHECK(sums.attention == pc.attention_per_layer);
            CHECK(sums.norms == pc.norms_per_layer);
            if (!l.routed()) CHECK(sums.mlp == pc.dense_mlp_per_layer);
            if (l.routed()) CHECK(sums.mlp == pc.moe_mlp_per_layer);
            // FLOPs: 2 per multiply-add of every GEMM a token runs.
            double gemm = 0;
            for (const auto& op : l)
                if (op.kind == LayerOpKind::gemm) gemm += op.flops_per_token();
            const auto f = layer_flops_per_token(m, 1024, moe, true);
            CHECK(gemm == Approx(f.qkv + f.attn_out + f.mlp + f.router).epsilon(1e-12));
        }
    }
}

TEST_CASE("fused GEMMs run as one: Megatron's QKV and fc1, torchtitan's calls one by one", "[layer]") {
    const ModelSpec m = zoo("llama-3-70b");
    const Layer l = describe_layer(m, LayerShape{.tp = 8});
    const Layer f = fuse_gemms(l);
    auto find = [](const Layer& x, const std::string& name) -> const LayerOp* {
        for (const auto& op : x)
            if (name == op.name) return &op;
        return nullptr;
    };
    REQUIRE(find(l, "q") != nullptr);
    REQUIRE(find(f, "qkv") != nullptr);
    CHECK(find(f, "q") == nullptr);
    // 64 query heads and 8 KV heads of 128 over 8 ranks: 8 + 1 + 1 heads.
    CHECK(find(f, "qkv")->n == 10 * 128);
    CHECK(find(f, "mlp_fc1")->n == 2 * 28672 / 8);
    CHECK(find(l, "mlp_gate")->n == 28672 / 8);
    CHECK(l.attention().cache_elements == kv_cache_elements_per_token_layer(m, 8));
}

TEST_CASE("MLA: down-projections whole on every rank, the latent cached, decode absorbs the up-projections",
          "[layer]") {
    const ModelSpec m = zoo("deepseek-v3");
    const Layer train = describe_layer(m, LayerShape{.tp = 8, .moe = true});
    const Layer serve = describe_layer(m, LayerShape{.tp = 8, .moe = true, .serving = true});
    const auto sums = layer_param_sums(train);
    CHECK(sums.whole == mla_down_projection_params(m));
    CHECK(sums.kv_heads == 0);
    CHECK(train.attention().cache_elements == 512 + 64);
    int absorbed = 0;
    for (const auto& op : serve) absorbed += op.serving == ServingRows::decode_tokens ? 1 : 0;
    CHECK(absorbed == 2);
    for (const auto& op : train) CHECK(op.serving == ServingRows::tokens);
}

TEST_CASE("a layer's routing and FFN width come from its operations, as the model states them", "[layer]") {
    // DeepSeek-V3: 256 routed experts, 8 per token, expert FFN 2048, dense layers' FFN 18432.
    const ModelSpec ds = zoo("deepseek-v3");
    const Layer moe = describe_layer(ds, LayerShape{.moe = true});
    CHECK(moe.routing().experts == 256.0);
    CHECK(moe.routing().top_k == 8.0);
    CHECK(ffn_width(moe) == 2048.0);
    CHECK(ffn_width(describe_layer(ds, LayerShape{.tp = 8, .moe = true})) == 256.0);   // fc2's input on one rank
    CHECK(ffn_width(describe_layer(ds, LayerShape{})) == 18432.0);
    CHECK(describe_layer(ds, LayerShape{}).routing().experts == 0.0);
    // Mixtral 8x7B: 8 experts, top-2, FFN 14336; a dense model's "MoE" layer has no routing.
    const Layer mx = describe_layer(zoo("mixtral-8x7b"), LayerShape{.moe = true});
    CHECK(mx.routing().experts == 8.0);
    CHECK(mx.routing().top_k == 2.0);
    CHECK(ffn_width(mx) == 14336.0);
    const Layer llama = describe_layer(zoo("llama-3-70b"), LayerShape{.moe = true});
    CHECK(llama.routing().experts == 0.0);
    CHECK(llama.routing().top_k == 0.0);
    CHECK(ffn_width(llama) == 28672.0);
}

TEST_CASE("each attention kind states its KV cache and parameter formulas in its own keys", "[layer]") {
    const NumberText plain{[](double v) { return std::to_string(static_cast<long long>(v)); },
                           [](double v) { return std::to_string(static_cast<long long>(v)); }};
    // MLA (DeepSeek-V3): the latent and the RoPE key per token and layer; its parameter steps sum to the
    // attention parameters the description counts.
    const ModelSpec ds = zoo("deepseek-v3");
    const AttentionText mla = attention_kind(ds).text(ds, 1.0, plain);
    CHECK(mla.cache.substituted == "61 · (512 + 64) · 1");
    CHECK(mla.cache_given == "L = 61, MLA latent = 512, shared RoPE key = 64, 1 B per element");
    CHECK(mla.summary.find("latent 512 + RoPE key 64") == 0);
    REQUIRE(mla.params.size() == 1);
    CHECK(mla.params[0].value == count_parameters(ds).attention_per_layer);
    // GQA (Llama-3-70B): 2 · L · kv_heads · d; QKV h·(q + 2·kv) = 8192·(8192 + 2·1024), then the block.
    const ModelSpec ll = zoo("llama-3-70b");
    const AttentionText gqa = attention_kind(ll).text(ll, 2.0, plain);
    CHECK(gqa.cache.substituted == "2 · 80 · 8 · 128 · 2");
    CHECK(gqa.summary.empty());
    REQUIRE(gqa.params.size() == 2);
    CHECK(gqa.params[0].value == 8192.0 * (8192.0 + 2.0 * 1024.0));
    CHECK(gqa.params[1].value == count_parameters(ll).attention_per_layer);
    CHECK(gqa.cache.note.find("GQA") == 0);
    // The MLP kinds: MoE names its experts, dense has nothing beyond the model's shape.
    CHECK(mlp_kind(ds, true).summary(ds) == "256 experts, top-8, expert ffn 2048, 1 shared, 3 dense layers");
    CHECK(mlp_kind(ll, true).summary == nullptr);
}
