// Drills, calcs and explain (app/drills, app/explain): worked calculations equal hand-derived values,
// every topic makes gradable questions for 1,000 seeds, answers in every accepted form score and wrong
// ones do not, explain's recommended lever improves the binding quantity (training and serving).
#include <cmath>
#include <set>

#include <catch2/catch.hpp>

#include "app/drills/calc.hpp"
#include "app/drills/drill.hpp"
#include "app/estimate.hpp"
#include "app/explain.hpp"
#include "app/serving.hpp"
#include "cost_models/collectives.hpp"
#include "cost_models/memory.hpp"
#include "cost_models/model_params.hpp"
#include "hardware_db/database.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/layout_rules.hpp"
#include "hardware_db/scenario.hpp"

using namespace llmsim;
using namespace llmsim::drills;

namespace {

Bank bank() {
    const auto& db = Database::builtin();
    Bank b;
    for (const auto& n : db.model_names()) b.models.push_back(db.model(n));
    for (const auto& n : db.accelerator_names()) {
        auto a = db.accelerator(n);
        if (a.peak(Precision::bf16) > 0 && a.hbm_GBps > 0 && a.hbm_capacity_bytes > 0) b.gpus.push_back(a);
    }
    return b;
}

Question numeric_q(double answer, const std::string& unit, double tol = 0.05) {
    Question q;
    q.answer = answer;
    q.unit = unit;
    q.tolerance = tol;
    return q;
}

}   // namespace

TEST_CASE("all-reduce calc: the seed's 175B fp16 gradients on 1,024 GPUs at 100 GB/s", "[calc]") {
    // Seed 001: "a 175B parameter model across 1024 GPUs with 100 GB/s interconnect".
    CollectiveQuery q;
    q.bytes = 175e9 * 2;   // 350 GB
    q.ranks = 1024;
    q.GBps = 100;
    const Calc c = all_reduce_calc(q);
    // Ring: 2·(p−1)/p·M/B = 2·1023/1024·3.5 s.
    CHECK(c.steps[0].value == Approx(2.0 * 1023.0 / 1024.0 * 3.5).epsilon(1e-12));
    CHECK(c.steps[0].value == Approx(6.993).margin(0.001));
    // NCCL's pipelined tree: 2·M/B = 7.0 s.
    CHECK(c.steps[1].value == Approx(7.0).epsilon(1e-12));
    // Textbook tree: 2·log2(1024)·M/B = 20 · 3.5 s = 70 s.
    CHECK(c.steps[2].value == Approx(70.0).epsilon(1e-12));
    CHECK(c.result().value == c.steps[0].value);
    // The same functions the simulator's collectives use.
    CHECK(c.steps[0].value == ring_all_reduce_time(1024, 350e9, 0.0, 100e9));
    CHECK(c.steps[1].value == tree_all_reduce_time(1024, 350e9, 0.0, 100e9));
    const std::string text = render(c);
    CHECK(text.find("6.99 s") != std::string::npos);
    CHECK(text.find("= 70 s") != std::string::npos);
    CHECK(text.find("pipelined") != std::string::npos);
}

TEST_CASE("all-reduce calc with a system prices every applicable registry algorithm", "[calc]") {
    const SystemSpec sys = Database::builtin().system("dgx-h100");
    CollectiveQuery q;
    q.bytes = 1e9;
    q.ranks = 64;
    q.GBps = 50;
    q.system = &sys;
    const Calc c = all_reduce_calc(q);
    CHECK(c.steps.size() > 3);
    const auto best = collective_time(sys, Collective::all_reduce, 1e9, place_group(64, 1, sys.scaleup_domain));
    double fastest = 1e300;
    for (std::size_t i = 3; i < c.steps.size(); ++i) fastest = std::min(fastest, c.steps[i].value);
    const double per_s = c.steps[0].unit == "s" ? 1.0 : c.steps[0].unit == "ms" ? 1e3 : 1e6;
    CHECK(fastest == Approx(best.time_s * per_s));
    // Results below a second are shown in ms or us, every row in the same unit.
    q.bytes = 64e3;
    q.system = nullptr;
    const Calc small = all_reduce_calc(q);
    CHECK(small.result().unit == "us");
    CHECK(small.result().value == Approx(ring_all_reduce_time(64, 64e3, 0.0, 50e9) * 1e6));
    CHECK(small.steps[2].unit == "us");
}

TEST_CASE("calcs equal hand-derived values", "[calc]") {
    // Bubble: 1F1B p = 8, m = 32: (p−1) = 7 units idle, 7/(32+7) of the step.
    const Calc b = bubble_calc(*find_schedule("1f1b"), 8, 32, 1);
    CHECK(b.steps[0].value == Approx(7.0));
    CHECK(b.result().value == Approx(100.0 * 7.0 / 39.0));
    const Calc bi = bubble_calc(*find_schedule("interleaved"), 8, 32, 2);
    CHECK(bi.steps[0].value == Approx(3.5));
    // Amdahl: 10% serial on 8 GPUs -> 1/(0.1 + 0.9/8).
    CHECK(amdahl_calc(0.1, 8).result().value == Approx(1.0 / (0.1 + 0.9 / 8)));
    CHECK(gustafson_calc(0.1, 8).result().value == Approx(0.1 + 0.9 * 8));
    // Strong scaling: 100 s on 8, 30 s on 32: (8·100)/(32·30) = 83.3%.
    CHECK(scaling_efficiency_calc(8, 100, 32, 30, false).result().value == Approx(100.0 * 800.0 / 960.0));
    CHECK(scaling_efficiency_calc(8, 1.0, 64, 1.25, true).result().value == Approx(80.0));
    // Speculative: α = 0.8, k = 4: (1 − 0.8^5)/0.2 = 3.3616 tokens; speedup / (4·0.05 + 1).
    const Calc sp = speculative_calc(0.8, 4, 0.05);
    CHECK(sp.steps[0].value == Approx(3.3616));
    CHECK(sp.steps[1].value == Approx(3.3616 / 1.2));
    // Training time: 6·70e9·1.4e12 FLOPs on 1,024 × 989.4 TFLOP/s at 40% MFU = 16.79 days.
    const Calc t = training_time_calc(70e9, 1.4e12, 1024, 989.4e12, 0.4, 2.0);
    CHECK(t.steps[0].value == Approx(5.88e23));
    CHECK(t.result().value == Approx(5.88e23 / (1024 * 989.4e12 * 0.4) / 86400));
    CHECK(t.steps[3].value == Approx(t.steps[2].value * 2.0));
    // Chinchilla: 20 tokens per parameter.
    CHECK(chinchilla_calc(70e9).result().value == Approx(1400.0));
    // GEMM 4096³ bf16: 2·4096³ FLOPs over 3·4096²·2 bytes = 1365.3 FLOP/byte.
    const auto h100 = Database::builtin().accelerator("h100-sxm");
    const Calc g = gemm_calc(h100, 4096, 4096, 4096, Precision::bf16);
    CHECK(g.result().value == Approx(2.0 * 4096 / 6.0));
    CHECK(g.steps[3].value == Approx(h100.peak(Precision::bf16) / (h100.hbm_GBps * 1e9)));
    // KV cache of Llama 2 7B: 2·32·32·128·2 B = 524,288 B per token; 4,096 tokens × 8 sequences.
    const auto l7 = Database::builtin().model("llama-2-7b");
    const Calc kv = kv_cache_calc(l7, h100, 4096, 8, Precision::bf16, Precision::bf16);
    CHECK(kv.steps[0].value == Approx(524.288));
    CHECK(kv.result().value == Approx(524288.0 * 4096 * 8 / 1e9));
    CHECK(kv_cache_calc(l7, h100, 4096, 8, Precision::int8, Precision::bf16).result().value ==
          Approx(kv.result().value / 2));
    // Model states of Llama 2 7B, ZeRO-0: (2 + 4 + 12) B per parameter.
    const Calc ms = model_states_calc(l7, 8, 0);
    const double n = 6.738415616e9;   // Llama 2 7B parameters
    CHECK(ms.result().value == Approx(18.0 * n / 1e9).epsilon(1e-3));
    // ZeRO-3 over 8 ranks divides all three by 8.
    CHECK(model_states_calc(l7, 8, 3).result().value == Approx(18.0 * n / 8 / 1e9).epsilon(1e-3));
    // Parameters.
    CHECK(params_calc(l7).result().value == Approx(n / 1e9).epsilon(1e-6));
    // GQA QKV of Llama 3 70B: h·(q + 2·kv) = 8192·(8192 + 2·1024).
    const auto l70 = Database::builtin().model("llama-3-70b");
    CHECK(params_calc(l70).steps[0].value == Approx(8192.0 * (8192 + 2048) / 1e6));
    // Checkpointing: L = 64 -> 8 checkpoints, (8 + 8)·A.
    const Calc ck = checkpointing_calc(64, 1e9);
    CHECK(ck.steps[1].value == 8);
    CHECK(ck.result().value == Approx(16.0));
    // FSDP 3(n−1)/n·Ψ vs DDP 2(n−1)/n·Ψ.
    const Calc fs = fsdp_vs_ddp_calc(70e9, 8, 2);
    CHECK(fs.steps[0].value == Approx(2.0 * 7 / 8 * 140));
    CHECK(fs.steps[1].value == Approx(3.0 * 7 / 8 * 140));
    // Little's law: 20 req/s · 3 s = 60 sequences.
    CHECK(littles_law_calc(20, 3, 1e9).steps[1].value == Approx(60.0));
    // Decode bound at batch 1: HBM bandwidth / weight bytes.
    const Calc dec = decode_bound_calc(l7, h100, 1, 0, Precision::bf16);
    CHECK(dec.result().value == Approx(h100.hbm_GBps * 1e9 / (dec.steps[0].value * 1e9)));
    // A MoE step reads the experts its tokens route to: Mixtral at batch 1 reads its top 2 of 8 experts per layer
    // (12.9B active parameters, ~25.9 GB in bf16), not all 46.7B (93.4 GB: a bound half of what estimate gives).
    const auto mixtral = Database::builtin().model("mixtral-8x7b");
    const Calc moe = decode_bound_calc(mixtral, h100, 1, 0, Precision::bf16);
    CHECK(moe.steps[0].value == Approx(2.0));   // experts touched by one token's top 2
    CHECK(moe.steps[1].value == Approx(2.0 * count_parameters(mixtral).active / 1e9).epsilon(0.01));
    // Batch 64 touches 8 · (1 − (6/8)^64) ≈ all 8.
    CHECK(decode_bound_calc(mixtral, h100, 64, 0, Precision::bf16).steps[0].value == Approx(8.0).epsilon(1e-6));
    // TP volume: 4 messages of s·b·h·2 bytes.
    CHECK(tp_comm_calc(l70, 4096, 1, 8, false, 450).result().value == Approx(4.0 * 4096 * 8192 * 2 / 1e9));
    // Sequence parallel: the same bytes, and the formula printed says so (it read V = 4 · 2 · M beside 4·M).
    const Calc seq_par = tp_comm_calc(l70, 8192, 1, 8, true, 450);
    CHECK(seq_par.result().value == Approx(4.0 * 8192 * 8192 * 2 / 1e9));
    CHECK(seq_par.steps[1].formula.rfind("V = 4 · M", 0) == 0);
    CHECK(grad_accum_calc(1024, 2, 64, 4096).result().value == 8);
}

TEST_CASE("calc inputs out of range are errors", "[calc]") {
    CollectiveQuery q;
    q.bytes = 1e9;
    q.ranks = 1;
    q.GBps = 100;
    CHECK_THROWS_AS(all_reduce_calc(q), llmsim::ConfigError);
    CHECK_THROWS_AS(speculative_calc(1.0, 4, 0.1), llmsim::ConfigError);
    CHECK_THROWS_AS(amdahl_calc(1.5, 8), llmsim::ConfigError);
    CHECK_THROWS_AS(bubble_calc(*find_schedule("1f1b"), 4, 8, 2), llmsim::ConfigError);
}

TEST_CASE("every topic makes valid, gradable questions for 1,000 seeds", "[drill]") {
    const Bank b = bank();
    for (const auto& t : topics()) {
        INFO("topic " << t.name);
        for (std::uint64_t seed = 1; seed <= 1000; ++seed) {
            Rng rng(seed);
            const Question q = t.generate(rng, b, Difficulty::medium);
            INFO("seed " << seed << ": " << q.text);
            REQUIRE(q.topic == t.name);
            REQUIRE(!q.text.empty());
            REQUIRE(!q.solution.empty());
            REQUIRE(std::isfinite(q.answer));
            if (q.multiple_choice()) {
                REQUIRE(q.answer >= 0);
                REQUIRE(q.answer < static_cast<double>(q.choices.size()));
                REQUIRE(grade(q, q.answer_text()).correct);
                const int wrong = q.answer == 0 ? 1 : 0;
                REQUIRE(!grade(q, std::string(1, static_cast<char>('a' + wrong))).correct);
            } else {
                REQUIRE(q.answer > 0);
                REQUIRE(q.tolerance > 0);
                REQUIRE(q.solution.find("n/a") == std::string::npos);   // num() of a non-finite value
                // The worked solution's final number is the grader's expected value.
                const std::size_t at = q.solution.find("<- answer");
                REQUIRE(at != std::string::npos);
                const std::size_t line = q.solution.rfind('\n', at) + 1;   // npos + 1 = 0: the first line
                const std::string marked = q.solution.substr(line, at - line);
                const std::string shown = "= " + num(q.answer) + " " + q.unit;
                REQUIRE(marked.find(shown) != std::string::npos);
                REQUIRE(grade(q, q.answer_text()).correct);
                REQUIRE(grade(q, num(q.answer)).correct);
                REQUIRE(!grade(q, num(q.answer * 1.5) + " " + q.unit).correct);
                REQUIRE(!grade(q, num(q.answer * 0.5)).correct);
            }
        }
    }
}

TEST_CASE("a seed reproduces a session; topics filter it", "[drill]") {
    const Bank b = bank();
    SessionOptions o;
    o.seed = 42;
    o.count = 30;
    const auto a = make_session(b, o);
    const auto c = make_session(b, o);
    REQUIRE(a.size() == 30);
    std::set<std::string> seen;
    for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i].text == c[i].text);
        CHECK(a[i].answer == c[i].answer);
        seen.insert(a[i].topic);
    }
    CHECK(seen.size() == topics().size());   // 30 questions cycle through all 24 topics
    o.topics = {"kv_cache", "bubble"};
    for (const auto& q : make_session(b, o)) CHECK((q.topic == "kv_cache" || q.topic == "bubble"));
    o.topics = {"nope"};
    CHECK_THROWS_AS(make_session(b, o), llmsim::ConfigError);
    // The portable draws: the same numbers everywhere (std::mt19937_64's 10,000th output is fixed by
    // the standard; our integer draw is rejection sampling over it).
    std::mt19937_64 g(5489u);
    g.discard(9999);
    CHECK(g() == 9981545732273789042ull);
}

TEST_CASE("answers score in every accepted form, wrong ones do not", "[drill]") {
    const Question gb = numeric_q(350, "GB");
    for (const char* a : {"350 GB", "350", "3.5e11", "350e9", "326 GiB", "0.35 TB", "350gb", " 350 GB ", "~350 GB",
                          "350,000,000,000", "340 GB"})
        CHECK(grade(gb, a).correct);
    for (const char* a : {"300 GB", "350 s", "350 TB", "abc", "", "GB", "3.5e10", "nan"}) CHECK(!grade(gb, a).correct);
    CHECK(!grade(gb, "abc").parsed);

    const Question s = numeric_q(1.2, "s");
    for (const char* a : {"1.2 s", "1.2", "1200 ms", "1.2s", "1.2 seconds"}) CHECK(grade(s, a).correct);
    for (const char* a : {"1.2 ms", "12 s", "1.2 GB"}) CHECK(!grade(s, a).correct);

    const Question pct = numeric_q(41, "%");
    for (const char* a : {"41%", "41 %", "41", "0.41", "40%"}) CHECK(grade(pct, a).correct);
    for (const char* a : {"0.41%", "50%", "4.1"}) CHECK(!grade(pct, a).correct);

    const Question x = numeric_q(2.4, "x");
    for (const char* a : {"2.4x", "2.4", "2.4 x", "2.4×"}) CHECK(grade(x, a).correct);
    CHECK(!grade(x, "3x").correct);

    const Question bn = numeric_q(175, "B");
    for (const char* a : {"175B", "175", "1.75e11", "175 billion", "0.175T", "175B params"})
        CHECK(grade(bn, a).correct);
    CHECK(!grade(bn, "175M").correct);

    const Question days = numeric_q(16.8, "days");
    for (const char* a : {"16.8 days", "16.8", "403 h", "1.45e6 s"}) CHECK(grade(days, a).correct);

    const Question toks = numeric_q(1400, "B tokens");
    for (const char* a : {"1.4T tokens", "1.4T", "1400", "1.4e12", "1400B tokens"}) CHECK(grade(toks, a).correct);

    const Question tps = numeric_q(1250, "tokens/s");
    for (const char* a : {"1250", "1.25k", "1250 tokens/s", "1.25k tok/s"}) CHECK(grade(tps, a).correct);

    Question mc;
    mc.unit = "choice";
    mc.tolerance = 0;
    mc.choices = {"a) ring", "b) NCCL's pipelined tree"};
    mc.answer = 1;
    for (const char* a : {"b", "B", "b)", "2", "NCCL's pipelined tree"}) CHECK(grade(mc, a).correct);
    for (const char* a : {"a", "1", "ring"}) CHECK(!grade(mc, a).correct);
    CHECK(!grade(mc, "c").parsed);
}

TEST_CASE("explain: the recommended lever, applied, improves the binding quantity", "[explain]") {
    for (const char* file : {"gpt3-175b-a100-1024.json", "llama3-70b-h100-64.json", "llama31-405b-h100-1024.json"}) {
        INFO(file);
        const Scenario s = load_scenario_file(std::string(LLMSIM_SOURCE_DIR) + "/scenarios/" + file);
        const auto e = app::explain_training(s);
        REQUIRE(!e.levers.empty());
        REQUIRE(e.recommended >= 0);
        const auto& l = e.levers[static_cast<std::size_t>(e.recommended)];
        // Re-run the estimate on the changed scenario, independently of explain.
        app::EstimateOptions o;
        o.fast = true;
        sim::StepSimulator simulator;
        const auto before = app::estimate_training(s.training_job(), o, simulator).chosen();
        const auto after = app::estimate_training(l.scenario.training_job(), o, simulator).chosen();
        if (e.binding == "memory") {
            CHECK(after.memory.total_bytes < before.memory.total_bytes);
        } else {
            CHECK(after.step_time_s < before.step_time_s);
            CHECK(after.memory.fits);
            CHECK(l.scenario.parallel.world() == s.parallel.world());
        }
    }
}

TEST_CASE("explain prices each lever with the memory levers estimate assumes for it", "[explain]") {
    // Levers were priced with fp32 master weights and gradients where estimate of the same layout assumes the
    // recipes' remainders and bf16 gradients: micro-batch 2 and pp 2 read "NO" fit (86.9, 91.5 GiB) while
    // estimate fits them, and the first action was a slower lever.
    Scenario s = load_scenario_file(std::string(LLMSIM_SOURCE_DIR) + "/scenarios/llama3-70b-h100-64.json");
    resolve_memory_levers(s);
    const auto e = app::explain_training(s);
    for (const auto& l : e.levers) {
        Scenario x = l.scenario;
        resolve_memory_levers(x);
        INFO(l.name << ": " << l.change);
        CHECK(l.fits == training_memory(x.training_job()).fits);
    }
    bool mb2 = false;
    for (const auto& l : e.levers)
        if (l.change == "micro_batch 1 -> 2") mb2 = l.fits;
    CHECK(mb2);
}

TEST_CASE("explain: a scenario that does not fit binds on memory and the first action fits it", "[explain]") {
    Scenario s = load_scenario_file(std::string(LLMSIM_SOURCE_DIR) + "/scenarios/llama3-70b-h100-64.json");
    s.parallel.tp = 1;
    s.parallel.sequence_parallel = false;
    s.parallel.dp *= 4;
    s.parallel.zero = 0;
    const auto e = app::explain_training(s);
    REQUIRE(e.binding == "memory");
    REQUIRE(e.recommended >= 0);
    const auto& l = e.levers[static_cast<std::size_t>(e.recommended)];
    CHECK(l.peak_bytes < e.binding_value);
    CHECK(l.scenario.parallel.world() == s.parallel.world());
}

TEST_CASE("explain: every lever is a scenario the reader accepts (optimizer precision rules)", "[explain]") {
    // With master-weight remainders, optimizer offload (CPU Adam keeps fp32) and FP8 parameters (NeMo keeps
    // full fp32 masters for them) would be refused by the reader, so explain does not offer them.
    Scenario s = load_scenario_file(std::string(LLMSIM_SOURCE_DIR) + "/scenarios/llama3-70b-h100-64.json");
    s.training.precision = Precision::fp8;
    s.training.master_weights = MasterWeights::remainder;
    const auto e = app::explain_training(s);
    REQUIRE(!e.levers.empty());
    bool moments = false;
    for (const auto& l : e.levers) {
        INFO(l.name);
        CHECK(optimizer_precision_violations(l.scenario.training).empty());
        CHECK(l.name != "optimizer offload");
        CHECK(l.name != "FP8 parameters");
        CHECK(l.name != "master-weight remainders");
        moments = moments || l.name == "bf16 optimizer moments";
    }
    CHECK(moments);
}

TEST_CASE("explain: first actions in turn reach a layout that fits", "[explain]") {
    Scenario s = load_scenario_file(std::string(LLMSIM_SOURCE_DIR) + "/scenarios/llama3-70b-h100-64.json");
    s.parallel.tp = 1;
    s.parallel.sequence_parallel = false;
    s.parallel.dp *= 4;
    s.parallel.zero = 0;
    const auto path = app::fit_path(s);
    REQUIRE(!path.empty());
    CHECK(path.back().fits);
    double peak = app::explain_training(s).binding_value;
    for (const auto& l : path) {   // every step lowers the peak, at the same GPU count
        CHECK(l.peak_bytes < peak);
        CHECK(l.scenario.parallel.world() == s.parallel.world());
        peak = l.peak_bytes;
    }
    // A scenario bound by time has no path.
    const Scenario t = load_scenario_file(std::string(LLMSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-a100-1024.json");
    CHECK(app::fit_path(t).empty());
}

namespace {

Scenario serving_scenario(const std::string& model, int gpus, int tp, const Json& inference) {
    Json j = {{"model", model},
              {"system", "dgx-h100"},
              {"gpus", gpus},
              {"parallel", {{"tp", tp}, {"pp", 1}}},
              {"inference", inference}};
    return parse_scenario(j);
}

// The binding quantity of a run, measured here from the serving simulator (or the static estimate),
// independently of explain.
double quantity(const std::string& name, const Scenario& s) {
    if (!s.inference.continuous()) {
        const auto e = estimate_inference(s.serving_job());
        return name == "TPOT" ? e.tpot_s : e.ttft_s;
    }
    const auto r = sim::simulate_serving(s.serving_job());
    if (name == "TTFT p99") return r.ttft_s.p99;
    if (name == "TPOT p99") return r.tpot_s.p99;
    REQUIRE(name == "output tokens/s per GPU");
    return r.output_tokens_per_s_per_gpu;
}

}   // namespace

TEST_CASE(
    "explain serving: hand-built scenarios bind on KV capacity, queueing and decode HBM; the recommended "
    "lever, re-run through the serving simulator, improves the binding quantity",
    "[explain][serving]") {
    const Json stream = {{"batching", "continuous"}, {"seed", 3}};
    struct Case {
        const char* what;
        Scenario s;
        const char* binding;
        const char* quantity;
    };
    auto with = [&](const Json& extra) {
        Json in = stream;
        in.update(extra);
        return in;
    };
    const Case cases[] = {
        // 70B in bf16 on tp 2 leaves 11.7 GiB of KV per GPU: about 16 requests of 4,500 tokens, admitted on
        // demand and preempted when a decode finds no block.
        {"KV capacity (online)",
         serving_scenario("llama-3-70b", 2, 2,
                          with({{"input_len", 4000},
                                {"output_len", 500},
                                {"qps", 0.5},
                                {"requests", 500},
                                {"kv_admission", "on_demand"}})),
         "KV capacity", "TTFT p99"},
        {"KV capacity (offline)",
         serving_scenario(
             "llama-3-70b", 2, 2,
             with({{"input_len", 4000}, {"output_len", 500}, {"requests", 300}, {"kv_admission", "on_demand"}})),
         "KV capacity", "output tokens/s per GPU"},
        // 21 req/s on one H100 whose offline capacity for 1000/250-token requests is about 22 req/s.
        {"queueing",
         serving_scenario("llama-3-8b", 1, 1,
                          with({{"input_len", 1000}, {"output_len", 250}, {"qps", 21}, {"requests", 2000}})),
         "queueing", "TTFT p99"},
        // 1 req/s of short prompts and long answers: about 3 sequences decoding, every step reads the weights.
        {"decode HBM",
         serving_scenario("llama-3-8b", 1, 1,
                          with({{"input_len", 200}, {"output_len", 500}, {"qps", 1}, {"requests", 300}})),
         "HBM", "TPOT p99"},
        // The same light load with a 50 ms TTFT target on tp 4 pp 2: the missed TTFT waits for prefill, which
        // is compute-bound.
        {"TTFT SLO missed, prefill compute",
         [&] {
             Scenario x = serving_scenario("llama-3-70b", 8, 4,
                                           with({{"input_len", 500},
                                                 {"output_len", 100},
                                                 {"qps", 2},
                                                 {"requests", 300},
                                                 {"slo", {{"ttft_p99_s", 0.05}}}}));
             x.parallel.pp = 2;
             x.parallel.dp = 1;
             return x;
         }(),
         "compute", "TTFT p99"},
        {"static batch, decode HBM",
         load_scenario_file(std::string(LLMSIM_SOURCE_DIR) + "/scenarios/llama3-8b-h100-serving-fp8.json"), "HBM",
         "TPOT"},
    };
    for (const auto& c : cases) {
        INFO(c.what);
        const auto e = app::explain_serving(c.s);
        CHECK(e.binding == c.binding);
        REQUIRE(e.quantity == c.quantity);
        REQUIRE(e.recommended >= 0);
        const auto& l = e.levers[static_cast<std::size_t>(e.recommended)];
        INFO(l.name << ": " << l.change);
        const double before = quantity(e.quantity, c.s);
        const double after = quantity(e.quantity, l.scenario);
        CHECK(e.binding_value == Approx(before).epsilon(1e-12));
        if (e.higher_is_better)
            CHECK(after > before);
        else
            CHECK(after < before);
        // What the classification rests on, measured independently.
        if (c.s.inference.continuous()) {
            const auto r = sim::simulate_serving(c.s.serving_job());
            if (e.binding == "KV capacity") CHECK((r.preemptions > 0 || r.kv_held_fraction >= app::kHeldShare));
            if (e.binding == "HBM") CHECK(r.decode_compute_fraction < 0.5);
            if (e.binding == "compute") {
                CHECK(!r.slo_met);
                CHECK(r.prefill_compute_fraction >= 0.5);
            }
            if (e.binding == "queueing") {
                // The offline rate estimate reports (saturated; a 1,000-request run counted its fill and drain).
                const double cap = app::offline_capacity_qps(c.s, app::CapacityOptions{}.max_requests);
                CHECK(e.capacity_requests_per_s == Approx(cap));
                CHECK(c.s.inference.qps / cap >= app::kQueueingUtilisation);
            }
        }
    }
}

TEST_CASE(
    "explain serving: a deployment whose weights do not fit binds on memory; the first action fits and "
    "keeps the GPU count",
    "[explain][serving]") {
    // Llama 3.1 70B in bf16 (131 GiB) on tp 1.
    const Scenario s = load_scenario_file(std::string(LLMSIM_SOURCE_DIR) + "/scenarios/llama31-70b-chat-slo.json");
    const auto e = app::explain_serving(s);
    CHECK(e.binding == "memory");
    CHECK(!e.base.fits);
    REQUIRE(e.recommended >= 0);
    const auto& l = e.levers[static_cast<std::size_t>(e.recommended)];
    CHECK(l.after.fits);
    CHECK(l.binding_after < e.binding_value);
    CHECK(l.gpus == s.parallel.world());
    // The lever's scenario runs in the simulator (it would throw if the KV cache could not hold a request).
    CHECK(sim::simulate_serving(l.scenario.serving_job()).requests == s.inference.requests);
}

TEST_CASE("explain serving: when the SLO is met, the recommended lever keeps it", "[explain][serving]") {
    Scenario s = load_scenario_file(std::string(LLMSIM_SOURCE_DIR) + "/scenarios/llama31-70b-chat-slo.json");
    s.parallel.tp = 8;
    s.parallel.dp = 2;
    s.gpus = 16;
    const auto e = app::explain_serving(s);
    REQUIRE(e.base.slo_met);
    REQUIRE(e.recommended >= 0);
    const auto& l = e.levers[static_cast<std::size_t>(e.recommended)];
    CHECK(sim::simulate_serving(l.scenario.serving_job()).slo_met);
    CHECK(l.gpus == 16);
}

TEST_CASE(
    "explain serving: a static batch whose KV cache does not fit binds on KV capacity; the first action "
    "fits",
    "[explain][serving]") {
    // Llama 3 8B, batch 2048 of 4,500 tokens: 2048 x 4500 x 128 KiB = 1,125 GiB of KV cache.
    const Scenario s =
        serving_scenario("llama-3-8b", 1, 1, {{"batch", 2048}, {"input_len", 4000}, {"output_len", 500}});
    const auto e = app::explain_serving(s);
    CHECK(e.binding == "KV capacity");
    CHECK(e.base.kv_bytes == Approx(2048.0 * 4500 * 2 * 32 * 8 * 128 * 2));
    REQUIRE(e.recommended >= 0);
    const auto& l = e.levers[static_cast<std::size_t>(e.recommended)];
    const auto after = inference_memory(l.scenario.model, l.scenario.system, l.scenario.parallel, l.scenario.inference);
    CHECK(after.fits);
    CHECK(after.total_bytes < e.binding_value);
    CHECK(l.gpus == 1);
}

TEST_CASE("explain: no lever proposes a layout the framework refuses; bf16 gradients halve the gradient memory",
          "[explain]") {
    // GPT-3 175B with pp 8 under ZeRO-1: Megatron and DeepSpeed do not run ZeRO-2/3 with pipeline stages.
    Scenario s = load_scenario_file(std::string(LLMSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-a100-1024.json");
    REQUIRE(s.parallel.pp > 1);
    REQUIRE(s.parallel.zero == 1);
    auto levers = app::explain_training(s).levers;
    bool bf16_grads = false;
    for (const auto& l : levers) {
        CHECK(!(l.scenario.parallel.zero >= 2 && l.scenario.parallel.pp > 1));
        if (l.name == "bf16 gradient reduction") {
            bf16_grads = true;
            app::EstimateOptions o;
            o.fast = true;
            sim::StepSimulator simulator;
            const auto before = app::estimate_training(s.training_job(), o, simulator).chosen();
            const auto after = app::estimate_training(l.scenario.training_job(), o, simulator).chosen();
            CHECK(after.memory.gradients_bytes == Approx(before.memory.gradients_bytes / 2));
        }
    }
    CHECK(bf16_grads);
    // torchtitan runs FSDP (ZeRO-2/3) with pipeline stages: there the lever is offered.
    s.parallel.framework = Framework::torchtitan;
    levers = app::explain_training(s).levers;
    bool zero2 = false;
    for (const auto& l : levers) zero2 = zero2 || (l.scenario.parallel.zero == 2 && l.scenario.parallel.pp > 1);
    CHECK(zero2);
}

TEST_CASE("explain: torch.compile is a lever where the layer runs eager, and it shortens the step", "[explain]") {
    Scenario s = parse_scenario(Json{{"model", "llama-3.1-8b"},
                                     {"system", "dgx-a100-80gb"},
                                     {"gpus", 64},
                                     {"parallel", {{"zero", 3}, {"framework", "torchtitan"}}},
                                     {"training", {{"seq_len", 8192}, {"micro_batch", 1}, {"global_batch", 64}}}});
    auto find = [](const std::vector<app::Lever>& levers) -> const app::Lever* {
        for (const auto& l : levers)
            if (l.name == "torch.compile") return &l;
        return nullptr;
    };
    const auto e = app::explain_training(s);
    const auto* compile = find(e.levers);
    REQUIRE(compile != nullptr);
    CHECK(compile->scenario.parallel.torch_compile == true);
    CHECK(compile->step_time_s < e.base.step_time_s);
    CHECK(compile->improves);
    // Compiled already, or Megatron (fused kernels): no such lever.
    s.parallel.torch_compile = true;
    CHECK(find(app::explain_training(s).levers) == nullptr);
    s.parallel.framework = Framework::megatron;
    s.parallel.torch_compile = false;
    CHECK(find(app::explain_training(s).levers) == nullptr);
}

TEST_CASE("explain: partial recompute and activation offload levers at the fewest layers that fit", "[explain]") {
    // Llama 3 70B FP8 on 64 GB200, FSDP, micro-batch 2 × 8K tokens: NVIDIA's 25.09 recipe offloads activations.
    const Scenario s = parse_scenario(
        Json{{"model", "llama-3-70b"},
             {"system", "gb200-nvl72"},
             {"gpus", 64},
             {"parallel", {{"zero", 3}}},
             {"training", {{"seq_len", 8192}, {"micro_batch", 2}, {"global_batch", 128}, {"precision", "fp8"}}}});
    const auto e = app::explain_training(s);
    REQUIRE(e.binding == "memory");
    auto find = [&](const std::string& name) -> const app::Lever* {
        for (const auto& l : e.levers)
            if (l.name == name) return &l;
        return nullptr;
    };
    const app::Lever* off = find("activation offload");
    const app::Lever* rc = find("recompute fewer layers");
    REQUIRE(off);
    REQUIRE(rc);
    for (const app::Lever* l : {off, rc}) {
        INFO(l->name);
        CHECK(l->fits);
        CHECK(l->scenario.parallel.world() == s.parallel.world());
    }
    // The fewest: one layer less does not fit.
    const int n_off = off->scenario.training.activation_offload_layers;
    Scenario less = off->scenario;
    less.training.activation_offload_layers = n_off - 1;
    const auto m_less = training_memory(less.training_job());
    CHECK(m_less.total_bytes > m_less.capacity_bytes);
    const int n_rc = rc->scenario.training.recompute_num_layers;
    Scenario fewer = rc->scenario;
    fewer.training.recompute_num_layers = n_rc - 1;
    CHECK_FALSE(training_memory(fewer.training_job()).fits);
    // Offload hides behind compute on NVLink-C2C: it is the recommended (fastest fitting) lever.
    REQUIRE(e.recommended >= 0);
    CHECK(e.levers[static_cast<std::size_t>(e.recommended)].name == "activation offload");
    CHECK(off->step_time_s < rc->step_time_s);
}

TEST_CASE("explain: a lever the reader would refuse is not priced (was optimizer offload at an infinite step)",
          "[explain]") {
    // A full system description without a host link (pcie_GBps) or host DRAM bandwidth: offloading the
    // optimizer is refused by the reader, so explain does not offer it; every lever it prices is finite.
    const Scenario s = parse_scenario(
        Json{{"model", "llama-3-8b"},
             {"system", {{"gpu", "h100-sxm"}, {"gpus_per_node", 8}, {"intra_node_GBps", 450}, {"inter_node_GBps", 50}}},
             {"gpus", 8},
             {"training", {{"global_batch", 64}}}});
    const auto e = app::explain_training(s);
    REQUIRE(!e.levers.empty());
    for (const auto& l : e.levers) {
        INFO(l.name);
        CHECK(l.name != "optimizer offload");
        CHECK(std::isfinite(l.step_time_s));
        CHECK(l.step_time_s > 0);
        CHECK(std::isfinite(l.mfu));
    }
}
