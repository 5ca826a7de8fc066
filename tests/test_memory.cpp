// Memory per GPU (cost_models/memory.hpp, docs/memory-model.md): Korthikanti et al. 2022 Table 2
// activations, the ZeRO paper's 7.5B example, Megatron-LM's bytes per parameter, schedule in-flight
// counts, and the invariants a capacity planner must never break.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "cost_models/layout.hpp"
#include "cost_models/memory.hpp"
#include "cost_models/model_params.hpp"
#include "hardware_db/database.hpp"
#include "hardware_db/scenario.hpp"

using namespace llmsim;

namespace {

ModelSpec zoo(const std::string& name) { return Database::builtin().model(name); }
SystemSpec sys(const std::string& name) { return Database::builtin().system(name); }

// A GPT-style layer as Korthikanti et al. assume it: GeLU MLP of 4h, MHA (kv = heads), dropout.
ModelSpec korthikanti_model(std::int64_t h, int a) {
    ModelSpec m;
    m.name = "korthikanti";
    m.layers = 1;
    m.hidden = h;
    m.heads = a;
    m.kv_heads = a;
    m.head_dim = h / a;
    m.ffn_hidden = 4 * h;
    m.vocab = 51200;
    m.mlp = MlpKind::gelu;
    m.dropout = true;
    return m;
}

ActivationQuery korthikanti_query(std::int64_t s, std::int64_t b, int t, bool sp, Recompute rc) {
    ActivationQuery q;
    q.seq_len = s;
    q.micro_batch = b;
    q.tp = t;
    q.sequence_parallel = sp;
    q.recompute = rc;
    q.flash_attention = false;   // Table 2 stores the a·s² score tensors
    q.bytes_per_element = 2.0;
    return q;
}

// Korthikanti et al. 2022, Table 2, per layer (bytes).
struct Table2 {
    double none, tp, tp_sp, tp_sel, tp_sp_sel, full;
};
Table2 table2(double s, double b, double h, double a, double t) {
    const double sbh = s * b * h;
    return {sbh * (34.0 + 5.0 * a * s / h),
            sbh * (10.0 + 24.0 / t + 5.0 * a * s / (h * t)),
            sbh / t * (34.0 + 5.0 * a * s / h),
            sbh * (10.0 + 24.0 / t),
            34.0 * sbh / t,
            2.0 * sbh};
}

Table2 computed(std::int64_t s, std::int64_t b, std::int64_t h, int a, int t) {
    const ModelSpec m = korthikanti_model(h, a);
    return {layer_activations(m, korthikanti_query(s, b, 1, false, Recompute::none)).total,
            layer_activations(m, korthikanti_query(s, b, t, false, Recompute::none)).total,
            layer_activations(m, korthikanti_query(s, b, t, true, Recompute::none)).total,
            layer_activations(m, korthikanti_query(s, b, t, false, Recompute::selective)).total,
            layer_activations(m, korthikanti_query(s, b, t, true, Recompute::selective)).total,
            layer_activations(m, korthikanti_query(s, b, t, false, Recompute::full)).total};
}

ParallelConfig layout(int tp, int pp, int dp, int zero = 0, bool sp = false) {
    ParallelConfig p;
    p.tp = tp;
    p.pp = pp;
    p.dp = dp;
    p.zero = zero;
    p.sequence_parallel = sp;
    return p;
}

TrainingConfig training(std::int64_t seq, std::int64_t mb, std::int64_t gb, Recompute rc = Recompute::none) {
    TrainingConfig t;
    t.seq_len = seq;
    t.micro_batch = mb;
    t.global_batch = gb;
    t.precision = Precision::bf16;
    t.recompute = rc;
    t.flash_attention = true;
    return t;
}

double model_states(const MemoryBreakdown& m) { return m.weights_bytes + m.gradients_bytes + m.optimizer_bytes; }

// A GPT-style model of exactly 7.5e9 parameters (ZeRO paper's example size): 24 layers of
// h 5000, f 20000, no biases, RMSNorm, tied embeddings, no position table, vocabulary 59951:
// 59951·5000 + 24·(4·5000² + 2·5000·20000 + 2·5000) + 5000 = 7.5e9.
ModelSpec model_7p5b() {
    ModelSpec m;
    m.name = "zero-7.5b";
    m.layers = 24;
    m.hidden = 5000;
    m.heads = 40;
    m.kv_heads = 40;
    m.head_dim = 125;
    m.ffn_hidden = 20000;
    m.vocab = 59951;
    m.mlp = MlpKind::gelu;
    m.norm = NormKind::rmsnorm;
    m.position = PositionKind::none;
    m.bias = false;
    m.tied_embeddings = true;
    return m;
}

}   // namespace

// ---------------------------------------------------------------------------------------------
// Korthikanti et al. 2022 (arXiv 2205.05198), Table 2 and Sec. 4
// ---------------------------------------------------------------------------------------------
TEST_CASE("Korthikanti Table 2: per-layer activations of all six variants within 0.5%", "[memory][korthikanti]") {
    struct Shape {
        std::int64_t s, b, h;
        int a, t;
    };
    // GPT-3 175B (the paper's example), the 22B/530B/1T models of Table 3, and a small odd one.
    const std::vector<Shape> shapes{{2048, 1, 12288, 96, 8},
                                    {2048, 4, 6144, 64, 8},
                                    {2048, 1, 20480, 128, 8},
                                    {2048, 1, 25600, 160, 8},
                                    {1024, 3, 4096, 32, 4}};
    for (const auto& x : shapes) {
        INFO("s " << x.s << " b " << x.b << " h " << x.h << " a " << x.a << " t " << x.t);
        const Table2 want = table2(x.s, x.b, x.h, x.a, x.t);
        const Table2 got = computed(x.s, x.b, x.h, x.a, x.t);
        CHECK(got.none == Approx(want.none).epsilon(0.005));
        CHECK(got.tp == Approx(want.tp).epsilon(0.005));
        CHECK(got.tp_sp == Approx(want.tp_sp).epsilon(0.005));
        CHECK(got.tp_sel == Approx(want.tp_sel).epsilon(0.005));
        CHECK(got.tp_sp_sel == Approx(want.tp_sp_sel).epsilon(0.005));
        CHECK(got.full == Approx(want.full).epsilon(0.005));
    }
}

TEST_CASE("Korthikanti 175B example: 2.672 / 0.539 / 0.334 / 0.305 / 0.0996 / 0.0469 GiB per layer",
          "[memory][korthikanti]") {
    // s 2048, b 1, h 12288, a 96, t 8 (Sec. 4 worked example; the paper's GB are GiB).
    const Table2 got = computed(2048, 1, 12288, 96, 8);
    CHECK(got.none / kGiB == Approx(2.672).epsilon(0.005));
    CHECK(got.tp / kGiB == Approx(0.539).epsilon(0.005));
    CHECK(got.tp_sp / kGiB == Approx(0.334).epsilon(0.005));
    CHECK(got.tp_sel / kGiB == Approx(0.305).epsilon(0.005));
    CHECK(got.tp_sp_sel / kGiB == Approx(0.0996).epsilon(0.005));
    CHECK(got.full / kGiB == Approx(0.0469).epsilon(0.005));
}

TEST_CASE("Korthikanti breakdown: attention 11sbh + 5as^2b, MLP 19sbh, norms 4sbh", "[memory][korthikanti]") {
    const ModelSpec m = korthikanti_model(12288, 96);
    const auto a = layer_activations(m, korthikanti_query(2048, 1, 1, false, Recompute::none));
    const double sbh = 2048.0 * 12288.0, as2b = 96.0 * 2048.0 * 2048.0;
    CHECK(a.attention == Approx(11.0 * sbh));
    CHECK(a.attention_scores == Approx(5.0 * as2b));
    CHECK(a.mlp == Approx(19.0 * sbh));
    CHECK(a.norms == Approx(4.0 * sbh));
    CHECK(a.full == Approx(a.total));
}

TEST_CASE("FlashAttention drops the 5as^2b score term, keeping 4 bytes of softmax statistics per row and head",
          "[memory][korthikanti]") {
    const ModelSpec m = korthikanti_model(12288, 96);
    auto q = korthikanti_query(2048, 1, 8, true, Recompute::none);
    const double unfused = layer_activations(m, q).total;
    q.flash_attention = true;
    const double flash = layer_activations(m, q).total;
    const double sbh = 2048.0 * 12288.0;
    CHECK(flash == Approx(34.0 * sbh / 8 + 4.0 * 96 * 2048 / 8));
    CHECK(unfused - flash == Approx(5.0 * 96 * 2048.0 * 2048.0 / 8 - 4.0 * 96 * 2048 / 8));
}

TEST_CASE("no dropout: the two sbh-byte dropout masks and the score dropout disappear", "[memory][korthikanti]") {
    ModelSpec m = korthikanti_model(4096, 32);
    m.dropout = false;
    const auto a = layer_activations(m, korthikanti_query(1024, 1, 1, false, Recompute::none));
    const double sbh = 1024.0 * 4096.0;
    // 34 - 2 mask bytes = 32 sbh; scores 4as^2b (softmax output and its input to A·V).
    CHECK(a.total == Approx(32.0 * sbh + 4.0 * 32 * 1024.0 * 1024.0));
}

// ---------------------------------------------------------------------------------------------
// Model states: ZeRO paper and Megatron-LM
// ---------------------------------------------------------------------------------------------
TEST_CASE("ZeRO paper 7.5B on 64 GPUs: 120 / 31.4 / 16.6 / 1.9 GB of model states for stages 0-3", "[memory][zero]") {
    // Rajbhandari et al. 2020 (arXiv 1910.02054) Fig. 1: Psi = 7.5B, N_d = 64, K = 12 (mixed-precision Adam),
    // 2 bytes fp16 weights + 2 bytes fp16 gradients + 12 bytes optimizer states.
    const ModelSpec m = model_7p5b();
    REQUIRE(count_parameters(m).total == 7.5e9);
    const double psi = 7.5e9;
    const double exact[4] = {16.0 * psi, (4.0 + 12.0 / 64) * psi, (2.0 + 14.0 / 64) * psi, 16.0 * psi / 64};
    const double published_GB[4] = {120, 31.4, 16.6, 1.9};
    const double printed_half_unit[4] = {0.5, 0.05, 0.05, 0.05};
    for (int zero = 0; zero <= 3; ++zero) {
        INFO("ZeRO stage " << zero);
        auto t = training(2048, 1, 64);
        t.grad_precision = Precision::bf16;   // the paper's fp16 gradients
        const auto mem = training_memory(m, sys("dgx-a100-80gb"), layout(1, 1, 64, zero), t);
        CHECK(model_states(mem) == Approx(exact[zero]).epsilon(1e-9));
        CHECK(std::fabs(model_states(mem) / 1e9 - published_GB[zero]) <= printed_half_unit[zero]);
    }
}

TEST_CASE("Megatron-LM: 18 bytes/param without the distributed optimizer, 6 + 12/dp with it", "[memory][megatron]") {
    // megatron/training/theoretical_memory_usage.py: bf16 weights 2 + fp32 grads 4 + fp32 master 4 + Adam 8.
    const ModelSpec m = zoo("llama-3-8b");
    const auto t = training(4096, 1, 64);   // grad_precision defaults to fp32, as Megatron
    REQUIRE(t.grad_precision == Precision::fp32);
    for (int dp : {1, 8, 64}) {
        INFO("dp " << dp);
        const auto plain = training_memory(m, sys("dgx-h100"), layout(1, 1, dp, 0), t);
        CHECK(model_states(plain) / plain.params_on_gpu == Approx(18.0).epsilon(1e-12));
        CHECK(plain.weights_bytes == Approx(2.0 * plain.params_on_gpu));
        CHECK(plain.gradients_bytes == Approx(4.0 * plain.params_on_gpu));
        CHECK(plain.master_weights_bytes == Approx(4.0 * plain.params_on_gpu));
        CHECK(plain.optimizer_states_bytes == Approx(8.0 * plain.params_on_gpu));
        const auto dist = training_memory(m, sys("dgx-h100"), layout(1, 1, dp, 1), t);
        CHECK(model_states(dist) / dist.params_on_gpu == Approx(6.0 + 12.0 / dp).epsilon(1e-12));
    }
}

TEST_CASE("ZeRO-3 model states are stage-0 model states / dp (dense model)", "[memory][zero]") {
    const ModelSpec m = zoo("llama-3-70b");
    const auto t = training(4096, 1, 256);
    for (int dp : {8, 32}) {
        const auto z0 = training_memory(m, sys("dgx-h100"), layout(8, 1, dp, 0), t);
        const auto z3 = training_memory(m, sys("dgx-h100"), layout(8, 1, dp, 3), t);
        INFO("dp " << dp);
        CHECK(model_states(z3) == Approx(model_states(z0) / dp).epsilon(0.02));
    }
}

TEST_CASE("ZeRO-3 with expert parallelism shards routed experts over the expert-data-parallel group dp/ep",
          "[memory][zero][moe]") {
    const ModelSpec m = zoo("mixtral-8x7b");
    const auto pc = count_parameters(m);
    auto p = layout(1, 1, 64, 3);
    p.ep = 8;
    auto t = training(4096, 1, 64);
    const auto z3 = training_memory(m, sys("dgx-h100"), p, t);
    // Dense part: params/dp; experts: (experts/ep)/(dp/ep) = experts/dp. 18 bytes per parameter in all.
    const double dense = pc.total - m.moe_layers() * pc.expert_params_per_layer;
    const double experts = m.moe_layers() * pc.expert_params_per_layer;
    CHECK(model_states(z3) == Approx(18.0 * (dense / 64 + experts / 64)).epsilon(1e-9));
    // Without ZeRO every GPU holds its dense copy and 1/ep of the experts.
    p.zero = 0;
    const auto z0 = training_memory(m, sys("dgx-h100"), p, t);
    CHECK(z0.params_on_gpu == Approx(dense + experts / 8).epsilon(1e-12));
}

// ---------------------------------------------------------------------------------------------
// Invariants
// ---------------------------------------------------------------------------------------------
TEST_CASE("invariant: total memory never rises with a higher ZeRO stage", "[memory][invariant]") {
    struct Case {
        std::string model;
        int tp, pp, dp;
    };
    for (const auto& c : std::vector<Case>{
             {"llama-3-8b", 1, 1, 64}, {"gpt3-175b", 8, 8, 16}, {"llama-3-70b", 8, 1, 8}, {"mixtral-8x7b", 2, 1, 32}}) {
        const ModelSpec m = zoo(c.model);
        const auto t = training(2048, 1, 16 * c.dp, Recompute::selective);
        double prev = INFINITY;
        for (int zero = 0; zero <= 3; ++zero) {
            const auto mem = training_memory(m, sys("dgx-h100"), layout(c.tp, c.pp, c.dp, zero, c.tp > 1), t);
            INFO(c.model << " ZeRO " << zero << " total " << mem.total_bytes / kGiB << " GiB");
            CHECK(mem.total_bytes <= prev);
            prev = mem.total_bytes;
        }
    }
}

TEST_CASE("invariant: total memory never rises with more tensor parallelism", "[memory][invariant]") {
    for (const bool sp : {false, true}) {
        for (const std::string name : {"llama-3-70b", "gpt3-175b"}) {
            const ModelSpec m = zoo(name);
            double prev = INFINITY;
            for (int tp : {1, 2, 4, 8}) {
                const auto mem = training_memory(m, sys("dgx-h100"), layout(tp, 1, 8, 1, sp && tp > 1),
                                                 training(4096, 1, 64, Recompute::selective));
                INFO(name << " tp " << tp << " sp " << sp << " total " << mem.total_bytes / kGiB << " GiB");
                CHECK(mem.total_bytes <= prev);
                prev = mem.total_bytes;
            }
        }
    }
}

TEST_CASE("invariant: total memory never rises with more pipeline stages", "[memory][invariant]") {
    for (const auto sched : {find_schedule("1f1b"), find_schedule("gpipe")}) {
        const ModelSpec m = zoo("llama-3-70b");
        double prev = INFINITY;
        for (int pp : {1, 2, 4, 8, 16}) {
            auto p = layout(8, pp, 4, 1, true);
            p.schedule = sched;
            const auto mem = training_memory(m, sys("dgx-h100"), p, training(4096, 1, 256, Recompute::selective));
            INFO("pp " << pp << " schedule " << sched->name << " total " << mem.total_bytes / kGiB << " GiB");
            CHECK(mem.total_bytes <= prev);
            prev = mem.total_bytes;
        }
    }
}

TEST_CASE("invariant: total memory never rises with recompute none -> selective -> full", "[memory][invariant]") {
    for (const bool flash : {false, true}) {
        for (const std::string name : {"llama-3-8b", "gpt3-175b", "mixtral-8x7b"}) {
            const ModelSpec m = zoo(name);
            double prev = INFINITY;
            for (const auto rc : {Recompute::none, Recompute::selective, Recompute::full}) {
                auto t = training(4096, 2, 128, rc);
                t.flash_attention = flash;
                const auto mem = training_memory(m, sys("dgx-h100"), layout(8, 4, 4, 1, true), t);
                INFO(name << " recompute " << to_string(rc) << " flash " << flash << " total " << mem.total_bytes / kGiB
                          << " GiB");
                CHECK(mem.total_bytes <= prev);
                prev = mem.total_bytes;
            }
        }
    }
}

TEST_CASE("memory breakdown adds up and the most loaded stage is reported", "[memory][invariant]") {
    const auto mem = training_memory(zoo("gpt3-175b"), sys("dgx-a100-80gb"), layout(8, 8, 16, 1, true),
                                     training(2048, 1, 1536, Recompute::selective));
    CHECK(mem.total_bytes == Approx(mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes +
                                    mem.activations_bytes + mem.other_bytes));
    REQUIRE(mem.stages.size() == 8);
    for (const auto& s : mem.stages) CHECK(s.total_bytes <= mem.total_bytes);
    CHECK(mem.total_bytes == mem.stages[mem.stage].total_bytes);
    CHECK(mem.fits == (mem.total_bytes <= mem.capacity_bytes));
    CHECK(mem.capacity_bytes == sys("dgx-a100-80gb").gpu.hbm_capacity_bytes);
    // Runtime reserve 1 GiB and 5% fragmentation on activations (+ ZeRO-3 buffers) are the defaults.
    CHECK(mem.reserve_bytes == kGiB);
    CHECK(mem.fragmentation_bytes == Approx(0.05 * mem.activations_bytes));
}

// ---------------------------------------------------------------------------------------------
// Pipeline layout and schedules
// ---------------------------------------------------------------------------------------------
TEST_CASE("layers_per_stage: Llama 3 405B's 126 layers on 16 stages are 7, 8 x 14, 7", "[memory][layout]") {
    std::vector<int> want{7};
    for (int i = 0; i < 14; ++i) want.push_back(8);
    want.push_back(7);
    CHECK(layers_per_stage(126, 16) == want);
    CHECK(layers_per_stage(96, 8) == std::vector<int>(8, 12));
    // The remainder goes to the middle stages first, then the last, then the first.
    CHECK(layers_per_stage(10, 4) == std::vector<int>{2, 3, 3, 2});
    CHECK(layers_per_stage(11, 4) == std::vector<int>{2, 3, 3, 3});
    CHECK(layers_per_stage(7, 2) == std::vector<int>{3, 4});
    CHECK(layers_per_stage(5, 1) == std::vector<int>{5});
}

TEST_CASE("in-flight micro-batches: GPipe m, 1F1B p - s, interleaved 1 + (p-1)/(p v)", "[memory][schedule]") {
    ParallelConfig p;
    p.pp = 8;
    const std::int64_t m = 64;
    p.schedule = find_schedule("gpipe");
    for (int s = 0; s < 8; ++s) CHECK(microbatches_in_flight(p, m, s) == 64.0);
    p.schedule = find_schedule("1f1b");
    for (int s = 0; s < 8; ++s) CHECK(microbatches_in_flight(p, m, s) == 8.0 - s);
    CHECK(microbatches_in_flight(p, 3, 0) == 3.0);   // fewer micro-batches than stages
    // Interleaved (Megatron): the first stage holds L·(1 + (p−1)/(p·v)) layers' worth, i.e.
    // p·(1 + (p−1)/(p·v)) micro-batches through its L/p layers.
    p.schedule = find_schedule("interleaved");
    for (int v : {2, 3, 4}) {
        p.vp = v;
        INFO("vp " << v);
        CHECK(microbatches_in_flight(p, m, 0) == Approx(8.0 * (1.0 + 7.0 / (8.0 * v))));
    }
}

TEST_CASE("interleaving multiplies the first stage's activations by 1 + (p-1)/(p v)", "[memory][schedule]") {
    const ModelSpec m = zoo("llama-3-70b");   // 80 layers, 4 stages of 20
    auto p = layout(8, 4, 2, 1, true);
    const auto t = training(4096, 1, 64, Recompute::selective);
    const auto plain = training_memory(m, sys("dgx-h100"), p, t);
    p.vp = 5;
    p.schedule = find_schedule("interleaved");
    const auto inter = training_memory(m, sys("dgx-h100"), p, t);
    CHECK(inter.stages[0].microbatches_in_flight / plain.stages[0].microbatches_in_flight ==
          Approx(1.0 + 3.0 / (4.0 * 5)));
}

// ---------------------------------------------------------------------------------------------
// Offload, fine-tuning, RLHF
// ---------------------------------------------------------------------------------------------
TEST_CASE("optimizer offload moves the optimizer bytes to host memory, which is checked per node",
          "[memory][offload]") {
    const ModelSpec m = zoo("llama-3-70b");
    auto t = training(4096, 1, 64, Recompute::full);
    const SystemSpec s = sys("dgx-h100");
    const auto p = layout(8, 1, 8, 3);
    const auto gpu = training_memory(m, s, p, t);
    t.offload = Offload::optimizer;
    const auto off = training_memory(m, s, p, t);
    CHECK(off.optimizer_bytes == 0.0);
    CHECK(off.offloaded_bytes_per_gpu == Approx(gpu.optimizer_bytes));
    CHECK(off.host_bytes_per_node == Approx(8.0 * gpu.optimizer_bytes));
    CHECK(off.weights_bytes == Approx(gpu.weights_bytes));
    CHECK(off.total_bytes == Approx(gpu.total_bytes - gpu.optimizer_bytes));
    CHECK(off.host_capacity_bytes == 2048.0 * kGiB);
    CHECK(off.host_fits);
    // Parameters too (ZeRO-3 + offload of optimizer and parameters).
    t.offload = Offload::optimizer_params;
    const auto both = training_memory(m, s, p, t);
    CHECK(both.weights_bytes == 0.0);
    CHECK(both.offloaded_bytes_per_gpu == Approx(gpu.optimizer_bytes + gpu.weights_bytes));
    // A host too small for the offloaded states: the scenario does not fit.
    SystemSpec small = s;
    small.host_memory_bytes = 0.5 * off.host_bytes_per_node;
    t.offload = Offload::optimizer;
    const auto tight = training_memory(m, small, p, t);
    CHECK_FALSE(tight.host_fits);
    CHECK_FALSE(tight.fits);
    CHECK(tight.total_bytes < tight.capacity_bytes);   // the GPU side alone would fit
}

TEST_CASE("NF4 with double quantisation is 4.127 bits per parameter (QLoRA)", "[memory][qlora]") {
    // Dettmers et al. 2023: 4 bits + 8-bit scale per 64 + fp32 second-level scale per 256 blocks.
    CHECK(weight_bytes_per_param(Precision::nf4, 64) * 8.0 == Approx(4.127).epsilon(1e-4));
    CHECK(weight_bytes_per_param(Precision::int4, 128) == Approx(0.5 + 2.0 / 128));
    CHECK(weight_bytes_per_param(Precision::int8, 128) == Approx(1.0 + 2.0 / 128));
    CHECK(weight_bytes_per_param(Precision::bf16, 128) == 2.0);
    CHECK(weight_bytes_per_param(Precision::fp8, 128) == 1.0);
}

TEST_CASE("LoRA and QLoRA on Llama-3-8B: hand-checked adapter and NF4 bytes, less memory than full fine-tuning",
          "[memory][lora]") {
    const ModelSpec m = zoo("llama-3-8b");
    const auto pc = count_parameters(m);
    const SystemSpec s = sys("dgx-h100");
    const auto p = layout(1, 1, 1);
    auto t = training(2048, 1, 1, Recompute::full);
    const auto full_ft = training_memory(m, s, p, t);

    t.finetune.method = FinetuneConfig::Method::lora;
    t.finetune.rank = 16;
    t.finetune.targets = {"q", "k", "v", "o"};
    const auto lora = training_memory(m, s, p, t);
    // Per layer r·(in + out): q 4096+4096, k 4096+1024, v 4096+1024, o 4096+4096 = 26624·16 = 425,984;
    // 32 layers = 13,631,488 adapter parameters at 16 bytes (fp32 weight, grad, Adam m, v).
    CHECK(lora.adapter_bytes == 13631488.0 * 16.0);
    CHECK(lora.weights_bytes == Approx(2.0 * pc.total));   // frozen 16-bit base
    // The adapters' fp32 gradients in the gradients row (it read 0), their fp32 weights and Adam m, v with
    // the optimizer states.
    CHECK(lora.gradients_bytes == 13631488.0 * 4.0);
    CHECK(lora.optimizer_bytes == 13631488.0 * 12.0);
    CHECK(lora.total_bytes < full_ft.total_bytes);

    t.finetune.method = FinetuneConfig::Method::qlora;
    const auto qlora = training_memory(m, s, p, t);
    // Linear layers in NF4 (4.127 bits); embedding and untied LM head stay 16-bit.
    const double embed = pc.embedding + pc.output;
    const double nf4 = (4.0 + 8.0 / 64 + 32.0 / (64.0 * 256)) / 8.0;
    CHECK(qlora.weights_bytes == Approx((pc.total - embed) * nf4 + 2.0 * embed).epsilon(1e-9));
    CHECK(qlora.adapter_bytes == lora.adapter_bytes);
    CHECK(qlora.total_bytes < lora.total_bytes);
    // 5.70 GB of weights for the 8B model: 6.98B linear params at 0.516 B + 1.05B embedding params at 2 B.
    CHECK(qlora.weights_bytes / 1e9 == Approx(5.70).epsilon(0.01));
}

TEST_CASE("RLHF (PPO) adds a trained critic and frozen reference and reward models", "[memory][rlhf]") {
    const ModelSpec m = zoo("llama-3-8b");
    const SystemSpec s = sys("dgx-h100");
    const auto p = layout(1, 1, 8, 3);
    auto t = training(2048, 1, 8, Recompute::full);
    const auto actor = training_memory(m, s, p, t);
    t.rlhf.enabled = true;   // critic, reference and reward default to the actor's shape
    const auto rl = training_memory(m, s, p, t);
    CHECK(rl.gradients_bytes == Approx(2.0 * actor.gradients_bytes));
    CHECK(rl.optimizer_bytes == Approx(2.0 * actor.optimizer_bytes));
    CHECK(rl.frozen_models_bytes == Approx(2.0 * actor.weights_bytes));
    CHECK(rl.weights_bytes == Approx(4.0 * actor.weights_bytes));
    CHECK(rl.total_bytes > actor.total_bytes);
    // A smaller critic (and so reward model) costs less than the actor-sized default.
    t.rlhf.critic = zoo("gpt3-1.3b");
    const auto small = training_memory(m, s, p, t);
    CHECK(small.total_bytes < rl.total_bytes);
    CHECK(small.total_bytes > actor.total_bytes);
}

// ---------------------------------------------------------------------------------------------
// Inference
// ---------------------------------------------------------------------------------------------
TEST_CASE("KV cache: 2 * layers * kv_heads * head_dim * bytes per token per TP shard, replicated when kv < tp",
          "[memory][inference]") {
    const ModelSpec m = zoo("llama-3-8b");   // 32 layers, 8 KV heads of 128
    const SystemSpec s = sys("dgx-h100");
    InferenceConfig in;
    in.batch = 4;
    in.input_len = 1000;
    in.output_len = 24;
    ParallelConfig p;
    auto r = inference_memory(m, s, p, in);
    CHECK(r.kv_bytes_per_token == 2.0 * 32 * 8 * 128 * 2);   // 128 KiB per token
    CHECK(r.kv_cache_bytes == 4.0 * 1024 * 131072);
    p.tp = 8;
    CHECK(inference_memory(m, s, p, in).kv_bytes_per_token == 2.0 * 32 * 1 * 128 * 2);
    in.kv_precision = Precision::fp8;
    CHECK(inference_memory(m, s, p, in).kv_bytes_per_token == 2.0 * 32 * 1 * 128 * 1);
    // Llama-2-70B (8 KV heads) on 16-way TP: a KV head cannot be split, each GPU keeps one.
    const ModelSpec big = zoo("llama-2-70b");
    in.kv_precision = Precision::bf16;
    p.tp = 8;
    const double tp8 = inference_memory(big, s, p, in).kv_bytes_per_token;
    p.tp = 16;
    CHECK(inference_memory(big, s, p, in).kv_bytes_per_token == tp8);
    CHECK(tp8 == 2.0 * 80 * 1 * 128 * 2);
    // Pipeline stages split the layers.
    p.tp = 8;
    p.pp = 2;
    CHECK(inference_memory(big, s, p, in).kv_bytes_per_token == 2.0 * 40 * 1 * 128 * 2);
}

TEST_CASE("inference weights: int4 with fp16 group scales, embeddings 16-bit", "[memory][inference]") {
    const ModelSpec m = zoo("llama-3-8b");
    const auto pc = count_parameters(m);
    InferenceConfig in;
    in.weight_precision = Precision::int4;
    in.quant_group_size = 128;
    const auto r = inference_memory(m, sys("dgx-h100"), ParallelConfig{}, in);
    CHECK(r.weights_bytes == Approx(32 * pc.dense_layer * (0.5 + 2.0 / 128) + 2.0 * (pc.embedding + pc.output)));
}

TEST_CASE("max_batch is the largest batch that fits and never falls with more capacity", "[memory][inference]") {
    const ModelSpec m = zoo("llama-3-8b");
    SystemSpec s = sys("dgx-h100");
    InferenceConfig in;
    in.input_len = 2048;
    in.output_len = 512;
    ParallelConfig p;
    const auto r = inference_memory(m, s, p, in);
    REQUIRE(r.max_batch > 1);
    in.batch = r.max_batch;
    CHECK(inference_memory(m, s, p, in).fits);
    in.batch = r.max_batch + 1;
    CHECK_FALSE(inference_memory(m, s, p, in).fits);
    in.batch = 1;
    std::int64_t prev = -1;
    for (double gib : {16.0, 20.0, 40.0, 80.0, 141.0, 180.0}) {
        s.gpu.hbm_capacity_bytes = gib * kGiB;
        const auto x = inference_memory(m, s, p, in);
        INFO(gib << " GiB -> max batch " << x.max_batch);
        CHECK(x.max_batch >= prev);
        prev = x.max_batch;
    }
    CHECK(prev > 0);
    // 16 GiB cannot hold 16 GB of bf16 weights plus the reserve.
    s.gpu.hbm_capacity_bytes = 16.0 * kGiB;
    CHECK(inference_memory(m, s, p, in).max_batch == 0);
}

TEST_CASE("KV activations at tp > kv_heads: each rank keeps one whole K and V head", "[memory][kv]") {
    // Llama-3-70B, s 4096, b 1, tp 16 (8 KV heads), no SP, no dropout: per token the QKV input 2·8192
    // outside the TP region, and inside it Q 2·8192, K and V 2·2·128 (one head per rank), the
    // output-projection input 2·8192 over 16 ranks: 16384 + (16384 + 512·16 + 16384)/16 = 18944 bytes.
    ActivationQuery q;
    q.seq_len = 4096;
    q.micro_batch = 1;
    q.tp = 16;
    const auto a = layer_activations(zoo("llama-3-70b"), q);
    CHECK(a.attention == Approx(4096.0 * 18944.0));
}

TEST_CASE("FP8 weight cache covers the transformer layers' weights, not the embedding or LM head", "[memory][fp8]") {
    // Transformer Engine caches FP8 copies of its Linear modules; Megatron-Core's embedding and
    // output layer are not TE modules. Llama-3-8B, tp 1, pp 1: 32 layers of 218,112,000 parameters
    // (2·4096² + 2·4096·1024 + 3·4096·14336 + 2·4096) at 1 byte; the embedding and LM head,
    // 2 · 128256 · 4096, and the final norm excluded.
    const ModelSpec m = zoo("llama-3-8b");
    const auto pc = count_parameters(m);
    auto t = training(8192, 1, 64);
    t.precision = Precision::fp8;
    const auto r = training_memory(m, sys("dgx-h100"), layout(1, 1, 8, 1), t);
    CHECK(pc.dense_layer == 218112000.0);
    CHECK(r.fp8_weight_cache_bytes == Approx(32.0 * 218112000.0));
    CHECK(r.fp8_weight_cache_bytes == Approx(r.params_on_gpu - 2.0 * 128256.0 * 4096.0 - 4096.0));
}

TEST_CASE("ZeRO-3 buffers: current and prefetched layer and its unreduced gradient, 3 x 16-bit per layer parameter",
          "[memory][zero]") {
    const ModelSpec m = zoo("llama-3-70b");
    const auto pc = count_parameters(m);
    const auto r = training_memory(m, sys("dgx-h100"), layout(8, 1, 32, 3), training(4096, 1, 256));
    CHECK(r.zero3_gather_bytes == Approx(3.0 * 2.0 * pc.dense_layer / 8.0));
}

TEST_CASE("attention output: FlashAttention keeps it for backward, FP8 adds the projection's FP8 copy",
          "[memory][fp8]") {
    // Llama-3-8B, s 4096, b 1, tp 1, no dropout. Per token, 16-bit: QKV input 2·4096, Q 2·4096, K and V
    // 2·2·1024, output 2·4096 (one tensor: the attention kernel's saved output is the projection's
    // input) = 28672 bytes. FP8: the QKV input as its FP8 copy (1·4096), the output in 16-bit (kept
    // by FlashAttention) plus the projection's FP8 copy (1·4096): 4096 + 8192 + 4096 + 12288 = 28672.
    const ModelSpec m = zoo("llama-3-8b");
    ActivationQuery q;
    q.seq_len = 4096;
    q.micro_batch = 1;
    q.flash_attention = true;
    CHECK(layer_activations(m, q).attention == Approx(4096.0 * 28672.0));
    q.gemm_input_bytes = 1.0;
    CHECK(layer_activations(m, q).attention == Approx(4096.0 * (4096.0 + 8192.0 + 4096.0 + 12288.0)));
    // Unfused attention saves the scores and V, not its output: only the projection's copy remains.
    q.flash_attention = false;
    CHECK(layer_activations(m, q).attention == Approx(4096.0 * (4096.0 + 8192.0 + 4096.0 + 4096.0)));
}

TEST_CASE("Megatron selective recompute with FlashAttention keeps q, k, v and the projection's saved input only",
          "[memory][recompute]") {
    // Llama-3-8B, tp 1, 4096 tokens, FP8 with FlashAttention. Megatron-Core checkpoints the core attention
    // (tensor_parallel.checkpoint over q, k, v): FlashAttention runs under no_grad, so its saved output
    // (bf16) and log-sum-exp are not kept; the output survives as linear_proj's FP8 input copy. Per token:
    // attention QKV input 1·h + q 2·4096 + k, v 2·1024 each + projection input 1·4096; two norm inputs
    // 2·2·h; MLP fc1 input 1·h + gate and up 2·2·14336 + fc2 input 1·14336.
    const ModelSpec m = zoo("llama-3-8b");
    ParallelConfig p;
    TrainingConfig t;
    t.seq_len = 4096;
    t.micro_batch = 1;
    t.global_batch = 1;
    t.precision = Precision::fp8;
    t.recompute = Recompute::selective;
    const double per_token = (4096 + 2 * 4096 + 2 * 2 * 1024 + 4096) + 2 * 2 * 4096 + (4096 + 2 * 2 * 14336 + 14336);
    CHECK(per_token == 112640.0);
    CHECK(layer_activations(m, activation_query(m, p, t)).total == Approx(4096.0 * per_token));
    // Without recompute FlashAttention also keeps its bf16 output (2·4096) and fp32 log-sum-exp (4·32).
    t.recompute = Recompute::none;
    CHECK(layer_activations(m, activation_query(m, p, t)).total == Approx(4096.0 * (per_token + 8192 + 128)));
    // In 16-bit training the projection's saved input is the attention output itself: selective keeps it
    // once (2·4096 in place of 1·4096, and every GEMM input at 2 bytes), without the log-sum-exp.
    t.precision = Precision::bf16;
    t.recompute = Recompute::selective;
    const double bf16_token =
        (2 * 4096 + 2 * 4096 + 2 * 2 * 1024 + 2 * 4096) + 2 * 2 * 4096 + (2 * 4096 + 2 * 2 * 14336 + 2 * 14336);
    CHECK(layer_activations(m, activation_query(m, p, t)).total == Approx(4096.0 * bf16_token));
    t.recompute = Recompute::none;
    CHECK(layer_activations(m, activation_query(m, p, t)).total == Approx(4096.0 * (bf16_token + 128)));
}

TEST_CASE("torchtitan's selective op AC keeps the block input, every other GEMM output and SDPA's output",
          "[memory][recompute][torchtitan]") {
    // Llama-3-8B, tp 1, 8192 tokens, bf16 with FlashAttention. Saved per token: the block input (h), wq's
    // output (q = 4096), wv's (kv = 1024), w1's (f = 14336), w2's (h), SDPA's output (q) at 2 bytes, and
    // the fp32 log-sum-exp per head (4·32): 2·(4096 + 4096 + 1024 + 14336 + 4096 + 4096) + 128 bytes.
    const ModelSpec m = zoo("llama-3-8b");
    ParallelConfig p;
    p.framework = Framework::torchtitan;
    TrainingConfig t;
    t.seq_len = 8192;
    t.micro_batch = 1;
    t.global_batch = 1;
    t.recompute = Recompute::selective;
    t.precision = Precision::bf16;
    const auto q = activation_query(m, p, t);
    CHECK(q.op_sac);
    const auto a = layer_activations(m, q);
    CHECK(a.total == Approx(8192.0 * (2.0 * (4096 + 4096 + 1024 + 14336 + 4096 + 4096) + 4.0 * 32)));
    // Backward rebuilds one whole layer while it recomputes it.
    CHECK(a.recompute_working == a.full);
    // Megatron's selective recompute (attention core only) keeps far more with FlashAttention, and
    // torchtitan's policy keeps more than full recompute.
    p.framework = Framework::megatron;
    const auto megatron = layer_activations(m, activation_query(m, p, t));
    CHECK(megatron.recompute_working == 0.0);
    CHECK(a.total < 0.5 * megatron.total);
    t.recompute = Recompute::full;
    CHECK(layer_activations(m, activation_query(m, p, t)).total < a.total);
}

TEST_CASE("the loss's logits: one fp32 copy under Megatron, 12 bytes per logit under F.cross_entropy(x.float())",
          "[memory][loss][torchtitan]") {
    // Llama-3.1-8B on 8 GPUs (FSDP), 2 x 8192 tokens per micro-batch, vocabulary 128,256. Megatron-Core's
    // vocab-parallel cross-entropy keeps one fp32 copy (exp and gradient in place): 4 bytes per logit.
    // torchtitan's loss, F.cross_entropy(pred.float()), holds at its backward peak the fp32 log-softmax,
    // the nll gradient and the input gradient: 12 bytes per logit. Both keep the LM head's input (4·h).
    const ModelSpec m = zoo("llama-3.1-8b");
    const SystemSpec s = sys("dgx-h100");
    ParallelConfig p;
    p.dp = 8;
    p.zero = 3;
    TrainingConfig t;
    t.seq_len = 8192;
    t.micro_batch = 2;
    t.global_batch = 16;
    t.precision = Precision::bf16;
    const double tokens = 2.0 * 8192, V = 128256, h = 4096;
    p.framework = Framework::megatron;
    const auto megatron = training_memory(m, s, p, t);
    CHECK(megatron.logits_bytes == Approx(tokens * (4.0 * h + 4.0 * V)));
    p.framework = Framework::torchtitan;
    const auto tt = training_memory(m, s, p, t);
    CHECK(tt.logits_bytes == Approx(tokens * (4.0 * h + 12.0 * V)));
    CHECK(tt.total_bytes - megatron.total_bytes ==
          Approx(8.0 * tokens * V).epsilon(0.06));   // + the allocator's fragmentation share of it
    p.framework = Framework::deepspeed;
    CHECK(training_memory(m, s, p, t).logits_bytes == Approx(tt.logits_bytes));
    // llm-foundry's default loss is flash-attn's fused cross-entropy (gradient in place).
    p.framework = Framework::llm_foundry;
    CHECK(training_memory(m, s, p, t).logits_bytes == Approx(megatron.logits_bytes));
    // With tensor parallelism the vocabulary is sharded (torchtitan's loss_parallel).
    p.framework = Framework::torchtitan;
    p.tp = 2;
    p.dp = 4;
    CHECK(training_memory(m, s, p, t).logits_bytes == Approx(tokens * (4.0 * h + 12.0 * V / 2)));
}

namespace {

// NeMo 24.07's Llama-3-8B FP8 run on 8 H100 (validation NEMO2407-11): CP 2, ZeRO-1, no recompute, the
// optimizer's precisions left unstated.
Scenario nemo_llama3_8b(const std::string& extra_training = "") {
    return parse_scenario(Json::parse(R"({"model": "llama-3.1-8b", "system": "dgx-h100", "gpus": 8,
        "parallel": {"tp": 1, "pp": 1, "cp": 2, "zero": 1},
        "training": {"seq_len": 8192, "micro_batch": 1, "global_batch": 128, "precision": "fp8")" +
                                      extra_training + "}}"));
}

double total_with(const Scenario& s, MasterWeights mw, Precision grads) {
    TrainingConfig t = s.training;
    t.master_weights = mw;
    t.grad_precision = grads;
    return training_memory(TrainingJob{s.model, s.system, s.parallel, t}).total_bytes;
}

Scenario resolved_at(Scenario s, double capacity_bytes) {
    s.system.gpu.hbm_capacity_bytes = capacity_bytes;
    resolve_memory_levers(s);
    return s;
}

}   // namespace

TEST_CASE("unstated memory levers: remainders, then bf16 gradients, only as far as the layout needs",
          "[memory][levers]") {
    const Scenario base = nemo_llama3_8b();
    REQUIRE(base.training.master_weights_unstated);
    REQUIRE(base.training.grad_precision_unstated);
    const double t0 = total_with(base, MasterWeights::fp32, Precision::fp32);
    const double t1 = total_with(base, MasterWeights::remainder, Precision::fp32);
    const double t2 = total_with(base, MasterWeights::remainder, Precision::bf16);
    // Remainders save 2 bytes per parameter of the optimizer's shard (dp·cp = 8), bf16 gradients 2 bytes
    // per parameter held (ZeRO-1 keeps them whole).
    const double params = training_memory(base.training_job()).params_on_gpu;
    CHECK(t0 - t1 == Approx(2.0 * params / 8).epsilon(1e-9));
    CHECK(t1 - t2 == Approx(2.0 * params).epsilon(1e-9));

    SECTION("fits with the defaults: nothing changes") {
        const Scenario s = resolved_at(base, t0 * 1.01);
        CHECK(s.training.master_weights == MasterWeights::fp32);
        CHECK(s.training.grad_precision == Precision::fp32);
        CHECK(assumed_memory_levers(s.training).empty());
    }
    SECTION("remainders are enough: the gradients stay fp32") {
        const Scenario s = resolved_at(base, 0.5 * (t0 + t1));
        CHECK(s.training.master_weights == MasterWeights::remainder);
        CHECK(s.training.grad_precision == Precision::fp32);
        const auto m = training_memory(s.training_job());
        CHECK(m.fits);
        CHECK(m.total_bytes == Approx(t1).epsilon(1e-12));
        CHECK(m.assumed_levers == std::vector<std::string>{"training.master_weights: remainder"});
    }
    SECTION("both levers") {
        const Scenario s = resolved_at(base, 0.5 * (t1 + t2));
        CHECK(s.training.master_weights == MasterWeights::remainder);
        CHECK(s.training.grad_precision == Precision::bf16);
        CHECK(training_memory(s.training_job()).total_bytes == Approx(t2).epsilon(1e-12));
        CHECK(assumed_memory_levers(s.training).size() == 2);
    }
    SECTION("resolving again after a change decides afresh") {
        Scenario s = resolved_at(base, 0.5 * (t1 + t2));
        REQUIRE(s.training.assumed_bf16_grads);
        s.system.gpu.hbm_capacity_bytes = t0 * 1.01;   // now the defaults fit
        resolve_memory_levers(s);
        CHECK(s.training.master_weights == MasterWeights::fp32);
        CHECK(s.training.grad_precision == Precision::fp32);
        CHECK(assumed_memory_levers(s.training).empty());
    }
    SECTION("nothing fits: the defaults stay and it is reported as not fitting") {
        const Scenario s = resolved_at(base, 0.9 * t2);
        CHECK(s.training.master_weights == MasterWeights::fp32);
        CHECK(s.training.grad_precision == Precision::fp32);
        CHECK_FALSE(training_memory(s.training_job()).fits);
        CHECK(assumed_memory_levers(s.training).empty());
    }
    SECTION("a stated value is never changed") {
        const Scenario stated = nemo_llama3_8b(R"(, "master_weights": "fp32")");
        CHECK_FALSE(stated.training.master_weights_unstated);
        // Remainders would fit; they are stated away, so only the gradients may change.
        const double tg = total_with(stated, MasterWeights::fp32, Precision::bf16);
        const Scenario s = resolved_at(stated, 0.5 * (t0 + t1));
        CHECK(s.training.master_weights == MasterWeights::fp32);
        CHECK(s.training.grad_precision == Precision::bf16);
        CHECK(training_memory(s.training_job()).total_bytes == Approx(tg).epsilon(1e-12));
        const Scenario both =
            resolved_at(nemo_llama3_8b(R"(, "master_weights": "fp32", "grad_precision": "fp32")"), 0.5 * (t1 + t2));
        CHECK(both.training.master_weights == MasterWeights::fp32);
        CHECK(both.training.grad_precision == Precision::fp32);
    }
    SECTION("fp32 training has no 16-bit weights to complete: no lever") {
        Scenario fp32 = base;
        fp32.training.precision = Precision::fp32;
        const double cap = 0.99 * training_memory(fp32.training_job()).total_bytes;
        const Scenario s = resolved_at(fp32, cap);
        CHECK(assumed_memory_levers(s.training).empty());
    }
}

TEST_CASE("TPU: XLA shards activations over the model axis, so sequence parallelism is always on there",
          "[memory][tpu]") {
    const std::string body = R"({"model": "llama-2-70b", "system": "tpu-v4", "gpus": 64,
        "parallel": {"tp": 8, "sequence_parallel": false},
        "training": {"seq_len": 2048, "micro_batch": 1, "global_batch": 64, "recompute": "selective"}})";
    const Scenario tpu = parse_scenario(Json::parse(body));
    CHECK(tpu.parallel.sequence_parallel);
    // The same layout on GPUs keeps what it states, and holds more activations per GPU.
    std::string gpu_body = body;
    gpu_body.replace(gpu_body.find("tpu-v4"), 6, "dgx-a100-80gb");
    const Scenario gpu = parse_scenario(Json::parse(gpu_body));
    CHECK_FALSE(gpu.parallel.sequence_parallel);
    const auto mt = training_memory(tpu.training_job());
    const auto mg = training_memory(gpu.training_job());
    // Korthikanti's selective-recompute activations: sbh(10 + 24/t) without SP, 34sbh/t with it.
    CHECK(mt.activations_per_layer_bytes < mg.activations_per_layer_bytes / 2);
}
