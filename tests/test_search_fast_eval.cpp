// The search's fast path (app/search/fast_eval.hpp) reproduces estimate_step() and
// training_memory() exactly (1e-9 relative) on varied layouts: MoE, uneven pipelines, interleaved,
// zero-bubble, GPipe, ZeRO-3, context parallelism, offload, FP8, overlap flags.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "app/search/fast_eval.hpp"
#include "cost_models/memory.hpp"
#include "cost_models/step_time.hpp"
#include "hardware_db/database.hpp"
#include "hardware_db/scenario.hpp"

using namespace llmsim;
using namespace llmsim::search;

namespace {

Scenario base(const std::string& model, const std::string& system, std::int64_t seq, Precision prec = Precision::bf16) {
    Scenario s;
    s.model = Database::builtin().model(model);
    s.system = Database::builtin().system(system);
    s.training.seq_len = seq;
    s.training.precision = prec;
    return s;
}

struct Case {
    const char* what;
    Scenario base;
    Candidate c;
};

Candidate cand(int gpus, int tp, int pp, int cp, int ep, int vp, int zero, bool sp, const char* sch, Recompute rc,
               Offload off, std::int64_t mb, std::int64_t gb) {
    Candidate c;
    c.gpus = gpus;
    c.tp = tp;
    c.pp = pp;
    c.cp = cp;
    c.ep = ep;
    c.vp = vp;
    c.dp = gpus / (tp * pp * cp);
    c.zero = zero;
    c.sp = sp;
    c.schedule = find_schedule(sch);
    REQUIRE(c.schedule != nullptr);
    c.recompute = rc;
    c.offload = off;
    c.micro_batch = mb;
    c.global_batch = gb;
    return c;
}

bool close(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

}   // namespace

TEST_CASE("fast evaluator equals estimate_step and training_memory (1e-9 relative)", "[search][fast]") {
    using R = Recompute;
    using O = Offload;
    // The overlap policies are part of the candidate (searched), not of the base.
    Candidate overlap = cand(256, 8, 4, 2, 1, 2, 1, true, "interleaved", R::selective, O::none, 1, 64);
    overlap.overlap = OverlapPolicy{true, false, false};
    Candidate zero3_no_overlap = cand(64, 2, 1, 2, 1, 1, 3, true, "1f1b", R::none, O::none, 1, 128);
    zero3_no_overlap.overlap = OverlapPolicy{true, false, false};
    Candidate zero2_no_grad_overlap = cand(32, 2, 1, 1, 1, 1, 2, true, "1f1b", R::none, O::none, 4, 512);
    zero2_no_grad_overlap.overlap = OverlapPolicy{true, false, true};
    // recompute_num_layers: 3 of 4 layers per chunk (pp 4 × vp 5 on 80 layers), 5 of 7-8 per stage (uneven).
    Candidate partial = cand(64, 4, 4, 1, 1, 5, 1, true, "interleaved", R::full, O::none, 1, 128);
    partial.recompute_layers = 3;
    Candidate partial_uneven = cand(512, 8, 16, 1, 1, 1, 1, true, "1f1b", R::full, O::none, 1, 256);
    partial_uneven.recompute_layers = 5;
    Candidate partial_zero3 = cand(64, 1, 1, 1, 1, 1, 3, false, "1f1b", R::full, O::none, 2, 256);
    partial_zero3.recompute_layers = 11;
    // activation_offload_layers: 40 of 80 layers (GB200, NVIDIA's 25.09 recipe) and 20 of 32 over PCIe.
    Candidate offload40 = cand(64, 1, 1, 1, 1, 1, 3, false, "1f1b", R::none, O::none, 2, 128);
    offload40.offload_layers = 40;
    Candidate offload_pcie = cand(8, 1, 1, 1, 1, 1, 1, false, "1f1b", R::none, O::none, 2, 64);
    offload_pcie.offload_layers = 20;
    Scenario noflash = base("gpt3-13b", "dgx-a100-40gb", 2048, Precision::fp16);
    noflash.training.flash_attention = false;
    Scenario qlora = base("llama-2-70b", "dgx-a100-80gb", 2048);
    qlora.training.finetune.method = FinetuneConfig::Method::qlora;
    Scenario rlhf = base("llama-2-7b", "dgx-a100-80gb", 1024);   // PPO: critic, frozen models, critic activations
    rlhf.training.rlhf.enabled = true;
    rlhf.training.rlhf.critic = Database::builtin().model("gpt3-1.3b");
    Scenario lora = base("llama-3-8b", "dgx-h100", 4096);
    lora.training.finetune.method = FinetuneConfig::Method::lora;
    const Case cases[] = {
        {"gpt3-175b 1f1b tp8 pp8 sp selective", base("gpt3-175b", "dgx-a100-80gb", 2048),
         cand(1024, 8, 8, 1, 1, 1, 1, true, "1f1b", R::selective, O::none, 1, 1536)},
        {"gpt3-175b interleaved vp3", base("gpt3-175b", "dgx-a100-80gb", 2048),
         cand(1024, 8, 8, 1, 1, 3, 1, true, "interleaved", R::selective, O::none, 1, 1536)},
        {"gpt3-175b uneven pp7 interleaved vp5", base("gpt3-175b", "dgx-a100-80gb", 2048),
         cand(112, 8, 7, 1, 1, 5, 0, false, "interleaved", R::full, O::none, 2, 224)},
        {"llama-3.1-405b 126 layers on pp16 cp2 fp8", base("llama-3.1-405b", "dgx-h100", 8192, Precision::fp8),
         cand(2048, 8, 16, 2, 1, 7, 1, true, "interleaved", R::none, O::none, 1, 512)},
        {"llama-3-70b zero-bubble", base("llama-3-70b", "dgx-h100", 4096),
         cand(128, 4, 4, 1, 1, 1, 1, true, "zero-bubble", R::selective, O::none, 1, 256)},
        {"llama-2-7b ZeRO-3 full recompute", base("llama-2-7b", "dgx-h100", 4096),
         cand(64, 1, 1, 1, 1, 1, 3, false, "1f1b", R::full, O::none, 4, 512)},
        {"llama-3-8b ZeRO-3 cp2 tp2", base("llama-3-8b", "dgx-h100", 8192),
         cand(64, 2, 1, 2, 1, 1, 3, true, "1f1b", R::none, O::none, 1, 128)},
        {"mixtral-8x7b ep4 pp4", base("mixtral-8x7b", "dgx-h100", 4096),
         cand(64, 2, 4, 1, 4, 1, 1, true, "1f1b", R::selective, O::none, 1, 256)},
        {"qwen3-30b-a3b ep8 ZeRO-3", base("qwen3-30b-a3b", "dgx-h100", 4096),
         cand(32, 1, 1, 1, 8, 1, 3, false, "1f1b", R::full, O::none, 2, 256)},
        {"gpt3-13b ZeRO-2 optimizer offload", base("gpt3-13b", "dgx-a100-80gb", 2048),
         cand(32, 2, 1, 1, 1, 1, 2, true, "1f1b", R::none, O::optimizer, 4, 512)},
        {"gpt3-13b ZeRO-3 optimizer+params offload", base("gpt3-13b", "dgx-a100-80gb", 2048),
         cand(16, 1, 1, 1, 1, 1, 3, false, "1f1b", R::selective, O::optimizer_params, 2, 64)},
        {"gpt3-6.7b gpipe pp4", base("gpt3-6.7b", "dgx-a100-80gb", 2048),
         cand(32, 1, 4, 1, 1, 1, 0, false, "gpipe", R::none, O::none, 2, 256)},
        {"megatron-1t pp64 dp6 (uneven stages of 2)", base("megatron-1t", "dgx-a100-80gb", 2048),
         cand(3072, 8, 64, 1, 1, 1, 0, false, "1f1b", R::full, O::none, 1, 3072)},
        {"llama-3-70b tp-comm overlap, no grad/param overlap", base("llama-3-70b", "dgx-h100", 8192), overlap},
        {"llama-3-8b ZeRO-3 cp2 tp2, tp-comm overlap, no grad/param overlap", base("llama-3-8b", "dgx-h100", 8192),
         zero3_no_overlap},
        {"gpt3-13b ZeRO-2, tp-comm overlap, no grad overlap", base("gpt3-13b", "dgx-a100-80gb", 2048),
         zero2_no_grad_overlap},
        {"gpt3-13b unfused attention fp16 ZeRO-1", noflash,
         cand(64, 4, 2, 1, 1, 1, 1, false, "1f1b", R::selective, O::none, 1, 256)},
        {"llama-2-70b QLoRA ZeRO-3 8 micro-batches", qlora,
         cand(16, 1, 1, 1, 1, 1, 3, false, "1f1b", R::full, O::none, 1, 128)},
        {"llama-3-8b LoRA tp2 pp2 ZeRO-1", lora,
         cand(16, 2, 2, 1, 1, 1, 1, true, "1f1b", R::selective, O::none, 2, 64)},
        {"llama-2-7b RLHF (1.3B critic) tp2 pp2 ZeRO-1", rlhf,
         cand(16, 2, 2, 1, 1, 1, 1, true, "1f1b", R::selective, O::none, 2, 64)},
        {"llama-2-7b RLHF ZeRO-3", rlhf, cand(16, 1, 1, 1, 1, 1, 3, false, "1f1b", R::full, O::none, 2, 64)},
        {"gpt3-6.7b one GPU, optimizer offload", base("gpt3-6.7b", "dgx-a100-80gb", 2048),
         cand(1, 1, 1, 1, 1, 1, 0, false, "1f1b", R::full, O::optimizer, 1, 8)},
        {"llama-3-70b interleaved, recompute_num_layers 3", base("llama-3-70b", "dgx-h100", 8192), partial},
        {"llama-3.1-405b pp16 uneven, recompute_num_layers 5", base("llama-3.1-405b", "dgx-h100", 8192),
         partial_uneven},
        {"llama-3-8b ZeRO-3, recompute_num_layers 11", base("llama-3-8b", "dgx-h100", 8192), partial_zero3},
        {"llama-3-70b FSDP on GB200, 40 layers offloaded", base("llama-3-70b", "gb200-nvl72", 8192, Precision::fp8),
         offload40},
        {"llama-3-8b ZeRO-1 over PCIe, 20 layers offloaded", base("llama-3-8b", "dgx-h100", 8192), offload_pcie},
    };
    for (const auto& k : cases) {
        INFO(k.what);
        FastEvaluator ev(k.base);
        const Scenario s = apply_candidate(k.base, k.c);
        Problems pr;
        check_layout(s.model, s.gpus, s.parallel, s.training, pr);
        REQUIRE(pr.empty());
        const StepEstimate ref = estimate_step(s.training_job());
        const MemoryBreakdown mem = training_memory(s.training_job());
        const FastTime t = ev.time(k.c);
        const FastMemory fm = ev.memory(k.c);
        INFO("step fast " << t.step_time_s << " ref " << ref.step_time_s << " pipe " << t.pipeline_s << " / "
                          << ref.pipeline_time_s << " mem " << fm.total_bytes << " / " << mem.total_bytes);
        CHECK(close(t.step_time_s, ref.step_time_s));
        CHECK(close(t.pipeline_s, ref.pipeline_time_s));
        CHECK(close(t.mfu, ref.mfu));
        // (A bubble is a difference of sums: compare it relative to the step.)
        CHECK(std::fabs(t.bubble_s - ref.breakdown.bubble) <= 1e-9 * ref.step_time_s);
        CHECK(t.critical_stage == ref.critical_stage);
        CHECK(close(fm.total_bytes, mem.total_bytes));
        CHECK(fm.stage == mem.stage);
        CHECK(std::string(memory_part_name(fm.dominant)) == mem.dominant);
        CHECK(fm.host_fits == mem.host_fits);
        CHECK(close(fm.parts[kActivations], mem.activations_bytes));
        if (k.base.training.rlhf.enabled) CHECK(mem.rollout_kv_cache_bytes > 0);
        // A second evaluation hits the caches and gives the same numbers.
        CHECK(ev.time(k.c).step_time_s == t.step_time_s);
    }
}

TEST_CASE("the layer cache is keyed by the overlap policies layer_cost() reads (no stale entry)", "[search][fast]") {
    const Scenario b = base("gpt3-175b", "dgx-a100-80gb", 2048);
    FastEvaluator ev(b);
    OverlapPolicy off{false, true, true}, on{true, true, true};
    const auto& a = ev.layer(8, 1, 1, 1, true, Recompute::selective, 1, 16, off);
    const auto& c = ev.layer(8, 1, 1, 1, true, Recompute::selective, 1, 16, on);
    // Two entries: TP overlap hides the sequence-parallel collectives behind the GEMMs.
    CHECK(ev.layer_entries() == 2);
    CHECK(&a != &c);
    CHECK(c.dense.fwd < a.dense.fwd);
    CHECK(c.dense.bwd < a.dense.bwd);
    CHECK(c.dense.tp < a.dense.tp);
    // Each equals layer_cost() of a job with that flag.
    for (bool flag : {false, true}) {
        Candidate k = cand(128, 8, 1, 1, 1, 1, 1, true, "1f1b", Recompute::selective, Offload::none, 1, 16);
        k.overlap.tp_comm = flag;
        const LayerCost L = layer_cost(apply_candidate(b, k).training_job(), false);
        const auto& e = flag ? c : a;
        CHECK(close(e.dense.fwd, L.fwd_s()));
        CHECK(close(e.dense.bwd, L.bwd_s()));
        CHECK(close(e.dense.tp, L.tp_exposed_fwd_s + L.tp_exposed_bwd_s));
    }
    // Where the flag cannot act (no SP, or tp 1) the layouts share one entry.
    const auto& n1 = ev.layer(8, 1, 1, 1, false, Recompute::selective, 1, 16, off);
    const auto& n2 = ev.layer(8, 1, 1, 1, false, Recompute::selective, 1, 16, on);
    CHECK(&n1 == &n2);
    CHECK(ev.layer_entries() == 3);
    // ZeRO-3 layers carry their gathers and reduce-scatters: keyed by the grad/param overlap too.
    const auto& z1 = ev.layer(1, 1, 1, 1, false, Recompute::none, 3, 64, OverlapPolicy{false, true, true});
    const auto& z2 = ev.layer(1, 1, 1, 1, false, Recompute::none, 3, 64, OverlapPolicy{false, false, true});
    const auto& z3 = ev.layer(1, 1, 1, 1, false, Recompute::none, 3, 64, OverlapPolicy{false, true, false});
    CHECK(ev.layer_entries() == 6);
    CHECK(z1.dense.zero3 < z2.dense.zero3);
    CHECK(z1.dense.zero3 < z3.dense.zero3);
    // With ZeRO-1 the layer does not read them: one entry.
    ev.layer(1, 1, 1, 1, false, Recompute::none, 1, 64, OverlapPolicy{false, false, false});
    ev.layer(1, 1, 1, 1, false, Recompute::none, 1, 64, OverlapPolicy{false, true, true});
    CHECK(ev.layer_entries() == 7);
}
