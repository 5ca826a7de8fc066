// FLOPs of a training step (cost_models/flops.hpp, docs/flops-model.md): Megatron-LM's
// num_floating_point_operations evaluated by hand, hardware FLOPs = model + recompute, Narayanan et
// al. 2021's 96·B·s·l·h²(1 + s/6h + V/16lh), Korthikanti's 72·B·s·l·h²(1 + s/6h + V/12hl), and 6N.
#include <catch2/catch.hpp>

#include <string>

#include "cost_models/flops.hpp"
#include "cost_models/model_params.hpp"
#include "hardware_db/database.hpp"

using namespace llmsim;

namespace {

ModelSpec zoo(const std::string& name) { return Database::builtin().model(name); }

TrainingConfig training(std::int64_t seq, std::int64_t gb, Recompute rc = Recompute::none, bool flash = true) {
    TrainingConfig t;
    t.seq_len = seq;
    t.micro_batch = 1;
    t.global_batch = gb;
    t.recompute = rc;
    t.flash_attention = flash;
    return t;
}

// Megatron-LM megatron/training/training.py::num_floating_point_operations, written out as in
// ../shared/reference/formulas.md: 6T·[h·(γ·f·N_dense + γ·f_E·k·N_moe + γ·f_sh·N_moe)
//   + N_attn·(h·(q + 2kv) + q·h) + h·V] + 6·q·Σs²·N_attn   (causal: half of the 12·q·s² score term).
double megatron_model_flops(double B, double s, double h, double q, double kv, double gamma, double f, double n_dense,
                            double f_e, double k, double f_sh, double n_shared, double n_moe, double n_attn, double V) {
    const double T = B * s;
    return 6.0 * T *
               (h * (gamma * f * n_dense + gamma * f_e * k * n_moe + gamma * f_sh * n_shared * n_moe) +
                n_attn * (h * (q + 2.0 * kv) + q * h) + h * V) +
           6.0 * q * B * s * s * n_attn;
}

}   // namespace

TEST_CASE("Megatron num_floating_point_operations by hand: GPT-3 175B, 1536 x 2048 tokens", "[flops][megatron]") {
    const ModelSpec m = zoo("gpt3-175b");
    const auto f = training_flops(m, training(2048, 1536));
    const double h = 12288, q = 12288, kv = 12288, V = 50257, B = 1536, s = 2048;
    const double want = megatron_model_flops(B, s, h, q, kv, 2, 49152, 96, 0, 0, 0, 0, 0, 96, V);
    CHECK(f.model_flops_per_step == Approx(want).epsilon(1e-12));
    // The same number in Megatron's older closed form, causal: 72·B·s·l·h²·(1 + s/12h + V/12hl).
    const double closed = 72.0 * B * s * 96 * h * h * (1.0 + s / (12.0 * h) + V / (12.0 * h * 96));
    CHECK(f.model_flops_per_step == Approx(closed).epsilon(1e-12));
    // Per token: 72·96·12288²·(1 + 2048/147456 + 50257/14155776) = 1.0619e12 (6N alone: 1.0476e12).
    CHECK(f.model_flops_per_token == Approx(1.0619e12).epsilon(0.001));
    CHECK(f.tokens_per_step == B * s);
    CHECK(f.logits_flops_per_step == Approx(6.0 * B * s * h * V));
}

TEST_CASE("Megatron num_floating_point_operations by hand: GQA + SwiGLU + MoE with shared experts and dense layers",
          "[flops][megatron]") {
    ModelSpec m;
    m.layers = 6;
    m.hidden = 1024;
    m.heads = 16;
    m.kv_heads = 4;
    m.head_dim = 96;   // q = 1536 != h
    m.ffn_hidden = 4096;
    m.vocab = 32000;
    m.mlp = MlpKind::swiglu;
    m.moe.experts = 16;
    m.moe.top_k = 2;
    m.moe.expert_ffn_hidden = 512;
    m.moe.shared_experts = 2;
    m.moe.shared_expert_ffn_hidden = 768;
    m.moe.dense_layers = 2;
    const double B = 64, s = 4096;
    const auto f = training_flops(m, training(4096, 64));
    const double want = megatron_model_flops(B, s, 1024, 16 * 96, 4 * 96, 3, 4096, 2, 512, 2, 768, 2, 4, 6, 32000);
    CHECK(f.model_flops_per_step == Approx(want).epsilon(1e-12));
    // Routers (2·h·E per token) are executed but not model FLOPs, as in Megatron.
    const auto e = layer_flops_per_token(m, 4096, true, true);
    CHECK(e.router == 2.0 * 1024 * 16);
    CHECK(e.mlp == 2.0 * 3 * 1024 * (512.0 * 2 + 768.0 * 2));
    CHECK(e.qkv == 2.0 * 1024 * (1536 + 2 * 384));
    CHECK(e.attn_core == 2.0 * 4096 * 1536);
    CHECK(layer_flops_per_token(m, 4096, true, false).attn_core == 4.0 * 4096 * 1536);
    CHECK(f.hardware_flops_per_step == Approx(f.model_flops_per_step + 3.0 * B * s * 4 * e.router).epsilon(1e-12));
}

TEST_CASE("hardware FLOPs = model FLOPs + recompute (selective: attention core; full: one more forward)",
          "[flops][recompute]") {
    const ModelSpec m = zoo("llama-3-8b");
    const double T = 512.0 * 8192;
    const auto none = training_flops(m, training(8192, 512, Recompute::none));
    const auto sel = training_flops(m, training(8192, 512, Recompute::selective));
    const auto full = training_flops(m, training(8192, 512, Recompute::full));
    // Dense model with FlashAttention (causal as executed): no recompute = model FLOPs.
    CHECK(none.recompute_flops_per_step == 0.0);
    CHECK(none.hardware_flops_per_step == Approx(none.model_flops_per_step).epsilon(1e-12));
    CHECK(sel.model_flops_per_step == none.model_flops_per_step);
    CHECK(full.model_flops_per_step == none.model_flops_per_step);
    const auto l = layer_flops_per_token(m, 8192, false, true);
    CHECK(sel.recompute_flops_per_step == Approx(T * 32 * l.attn_core));
    CHECK(sel.hardware_flops_per_step == Approx(sel.model_flops_per_step + sel.recompute_flops_per_step));
    // Full recompute re-runs every layer's forward (not the logits): HFU/MFU = 4/3 minus the logits share.
    CHECK(full.recompute_flops_per_step == Approx(T * 32 * l.total()));
    CHECK(full.hardware_flops_per_step == Approx(full.model_flops_per_step + full.recompute_flops_per_step));
    CHECK(full.hardware_flops_per_step ==
          Approx(4.0 / 3.0 * full.model_flops_per_step - full.logits_flops_per_step / 3.0).epsilon(1e-12));
}

TEST_CASE("unfused attention executes the full s^2 score matrix: hardware counts 4·s·q per token, model 2·s·q",
          "[flops][convention]") {
    const ModelSpec m = zoo("gpt3-175b");
    const auto flash = training_flops(m, training(2048, 8, Recompute::none, true));
    const auto unfused = training_flops(m, training(2048, 8, Recompute::none, false));
    CHECK(flash.model_flops_per_step == unfused.model_flops_per_step);
    CHECK(unfused.hardware_flops_per_step - flash.hardware_flops_per_step ==
          Approx(3.0 * 8 * 2048 * 96 * 2.0 * 2048 * 12288));
    CHECK(unfused.hardware_flops_per_step == Approx(unfused.model_flops_per_step_noncausal).epsilon(1e-12));
}

TEST_CASE("Narayanan et al. 2021 Eq. 3: full recompute, non-causal hardware FLOPs = 96·B·s·l·h²(1 + s/6h + V/16lh)",
          "[flops][narayanan]") {
    // Narayanan's formula counts the GEMMs of a GPT layer (24h² + 4sh per token forward) and the
    // logits (2hV forward), four passes with full recompute, three for the logits. llmsim counts
    // the same GEMMs and no biases, norms, softmax or GeLU (they are memory-bound and < 0.1% of the
    // FLOPs), so the two agree exactly; biases, norms and GeLU are the residual neither counts.
    for (const std::string name : {"gpt3-175b", "megatron-1t", "megatron-18b"}) {
        const ModelSpec m = zoo(name);
        const auto f = training_flops(m, training(2048, 512, Recompute::full, /*flash=*/false));
        INFO(name);
        CHECK(f.hardware_flops_per_step == Approx(f.narayanan_flops_per_step).epsilon(1e-9));
        const double B = 512, s = 2048, l = m.layers, h = static_cast<double>(m.hidden),
                     V = static_cast<double>(m.vocab);
        CHECK(f.narayanan_flops_per_step ==
              Approx(96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h))).epsilon(1e-12));
    }
    // Table 1's 1T model, batch 3072: 96·3072·2048·128·25600²·(1 + 2048/153600 + 51200/52428800) = 5.139e19.
    const auto f1t = training_flops(zoo("megatron-1t"), training(2048, 3072, Recompute::full, false));
    CHECK(f1t.hardware_flops_per_step == Approx(5.139e19).epsilon(0.001));
}

TEST_CASE("Korthikanti 2022 model FLOPs: 72·B·s·l·h²(1 + s/6h + V/12hl) is llmsim's non-causal model count",
          "[flops][korthikanti]") {
    const ModelSpec m = zoo("gpt3-175b");
    const auto f = training_flops(m, training(2048, 64));
    const double B = 64, s = 2048, l = 96, h = 12288, V = 50257;
    CHECK(f.model_flops_per_step_noncausal ==
          Approx(72.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * h * l))).epsilon(1e-12));
    // Causal halving takes s/6h to s/12h: 2048/(12·12288) = 1.4% less.
    CHECK(f.model_flops_per_step / f.model_flops_per_step_noncausal ==
          Approx((1.0 + s / (12 * h) + V / (12 * h * l)) / (1.0 + s / (6 * h) + V / (12 * h * l))));
}

TEST_CASE("6N approximates model FLOPs per token for short sequences", "[flops][6n]") {
    // GPT-3 175B at s = 128: the attention term 6·s·q·l is 0.09% of 6N; biases, norms and the position
    // table are parameters without GEMM FLOPs (0.02%). Tied embeddings: the embedding counted by 6N
    // plays the role of the logits GEMM.
    const ModelSpec m = zoo("gpt3-175b");
    const auto f = training_flops(m, training(128, 1024));
    CHECK(f.six_n_flops_per_token == Approx(6.0 * count_parameters(m).total));
    CHECK(f.model_flops_per_token == Approx(f.six_n_flops_per_token).epsilon(0.003));
    // Llama-3-8B (untied): 6N also counts the input embedding (no FLOPs), so 6N is ~7% high at s = 128.
    const auto l8 = training_flops(zoo("llama-3-8b"), training(128, 1024));
    const auto pc = count_parameters(zoo("llama-3-8b"));
    CHECK(l8.model_flops_per_token == Approx(6.0 * (pc.total - pc.embedding)).epsilon(0.005));
    // MoE: 6 x active parameters.
    const ModelSpec mix = zoo("mixtral-8x7b");
    const auto fm = training_flops(mix, training(128, 1024));
    CHECK(fm.six_n_flops_per_token == Approx(6.0 * count_parameters(mix).active));
    // At long context the s-term dominates the difference: Llama-3-8B at 128k is far above 6N.
    const auto long_ctx = training_flops(zoo("llama-3-8b"), training(131072, 8));
    CHECK(long_ctx.model_flops_per_token > 2.0 * long_ctx.six_n_flops_per_token);
}

TEST_CASE("inference FLOPs per token by hand: Llama-3-8B GEMMs = 2·(N_active − embedding − norms), attention 4·L·q·c",
          "[flops][serving]") {
    const auto m = zoo("llama-3-8b");
    const auto pc = count_parameters(m);
    CHECK(pc.active == 8030261248.0);   // the zoo's Llama-3-8B: 8.03e9
    // Per layer: QKV 2·4096·(4096 + 2·1024), output 2·4096·4096, SwiGLU MLP 2·3·4096·14336; LM head 2·4096·128256.
    const double per_layer = 2.0 * 4096 * (4096 + 2 * 1024) + 2.0 * 4096 * 4096 + 2.0 * 3 * 4096 * 14336;
    const double head = 2.0 * 4096 * 128256;
    const auto gen0 = inference_token_flops(m, 0, false);
    CHECK(gen0.gemm == 32 * per_layer + head);
    CHECK(gen0.lm_head == head);
    CHECK(gen0.attention == 0);
    CHECK(gen0.router == 0);
    // 2·N_active less the input embedding (a table lookup) and the norm weights: 1.5009e10 vs 1.6061e10.
    CHECK(gen0.gemm ==
          Approx(2.0 * (pc.active - pc.embedding - pc.final_norm - 32 * pc.norms_per_layer)).epsilon(1e-12));
    CHECK(gen0.gemm == Approx(2.0 * 8.03e9).epsilon(0.07));
    // A generated token at context c: 4·layers·heads·head_dim·c (QKᵀ and A·V, 2 FLOPs per multiply-add).
    const auto gen = inference_token_flops(m, 1125, false);
    CHECK(gen.attention == 4.0 * 32 * 32 * 128 * 1125);
    CHECK(gen.gemm == gen0.gemm);
    CHECK(gen.model() == gen.gemm + gen.attention);
    // A prompt token of a 1000-token prompt attends to 500 on average (causal; training's convention).
    const auto pre = inference_token_flops(m, 1000, true);
    CHECK(pre.attention == 4.0 * 32 * 32 * 128 * 500);
    // The same attention term as the training FLOPs: forward per token of a training step = GEMMs + causal
    // attention at seq_len (the training model FLOPs are 3x forward).
    TrainingConfig t = training(1000, 8);
    CHECK(training_flops(m, t).model_flops_per_token == Approx(3.0 * pre.model()).epsilon(1e-12));
}

TEST_CASE("inference FLOPs per token, MoE: top-k routed + shared experts in the GEMMs, routers apart",
          "[flops][serving]") {
    const auto m = zoo("mixtral-8x7b");   // 32 layers, h 4096, 8 experts top-2, expert ffn 14336
    const auto f = inference_token_flops(m, 0, false);
    const double per_layer = 2.0 * 4096 * (4096 + 2 * 1024) + 2.0 * 4096 * 4096 + 2 * (2.0 * 3 * 4096 * 14336);
    CHECK(f.gemm == Approx(32 * per_layer + 2.0 * 4096 * 32000).epsilon(1e-12));
    CHECK(f.router == 32 * 2.0 * 4096 * 8);
    CHECK(f.hardware() == f.model() + f.router);
}

TEST_CASE("MLA FLOPs per token by hand: DeepSeek-V3 projections, QKᵀ over 192 and PV over 128", "[flops][mla]") {
    const ModelSpec m = zoo("deepseek-v3");
    const auto f = layer_flops_per_token(m, 4096, false, false);
    // q_down 7168·1536, q_up 1536·128·192, kv_down 7168·(512 + 64), kv_up 512·128·(128 + 128).
    CHECK(f.qkv == 2.0 * (7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512.0 * 128 * 256));
    CHECK(f.attn_core == 2.0 * 4096 * 128 * (192 + 128));   // non-causal: 2·s·H·(d_qk + d_v)
    CHECK(f.attn_out == 2.0 * 128 * 128 * 7168);
}

TEST_CASE("torchtitan's selective op AC recomputes every other GEMM of a block (by hand, Llama-3-8B)",
          "[flops][recompute][torchtitan]") {
    // torchtitan _get_custom_policy: per block, the 1st, 3rd, 5th and 7th aten.mm outputs are saved
    // (wq, wv, w1, w2); wk, wo and w3 are recomputed, SDPA is saved. Per token and layer:
    // 2·h·(kv + h + f) = 2·4096·(1024 + 4096 + 14336) FLOPs.
    const ModelSpec m = zoo("llama-3-8b");
    const double T = 16.0 * 8192;
    const auto tt = training_flops(m, training(8192, 16, Recompute::selective), Framework::torchtitan);
    const auto megatron = training_flops(m, training(8192, 16, Recompute::selective), Framework::megatron);
    CHECK(tt.recompute_flops_per_step == Approx(T * 32 * 2.0 * 4096 * (1024 + 4096 + 14336)).epsilon(1e-12));
    CHECK(tt.model_flops_per_step == megatron.model_flops_per_step);
    CHECK(tt.hardware_flops_per_step == Approx(tt.model_flops_per_step + tt.recompute_flops_per_step));
    // Megatron's selective recompute re-runs only the attention core.
    CHECK(megatron.recompute_flops_per_step == Approx(T * 32 * layer_flops_per_token(m, 8192, false, true).attn_core));
}
