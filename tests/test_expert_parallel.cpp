// Expert parallelism in serving (parallel.ep > 1): the busiest GPU's share of the routed experts, the
// dispatch and combine all-to-alls, two-batch overlap, the memory each GPU holds, the reader's rules and
// the commands that refuse it (docs/serving.md "Expert parallelism").
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "app/explain.hpp"
#include "app/serving.hpp"
#include "cost_models/collectives.hpp"
#include "cost_models/inference.hpp"
#include "cost_models/layer/layer.hpp"
#include "cost_models/memory.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/scenario.hpp"
#include "sim/serving.hpp"

using namespace llmsim;

namespace {

Scenario scenario(const std::string& model, int gpus, int ep, Json inference, int tp = 1) {
    Json j = {{"model", model},
              {"system", "dgx-h100"},
              {"gpus", gpus},
              {"parallel", {{"tp", tp}, {"pp", 1}, {"ep", ep}}},
              {"inference", std::move(inference)}};
    return parse_scenario(j);
}

std::string problems(const Json& j) {
    try {
        (void)parse_scenario(j);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

IterationBatch decodes(double seqs, double context) {
    IterationBatch b;
    b.decode_seqs = seqs;
    b.decode_kv_tokens = seqs * context;
    return b;
}

}   // namespace

TEST_CASE("uniform routing's spread: the largest of ep Binomial loads, by hand", "[serving][ep]") {
    // ep 8, 1,024 routed tokens per GPU: 1 + sqrt(2 ln 8 x 7/8 / 1024) = 1.0596.
    CHECK(uniform_routing_imbalance(8, 1024) == Approx(1.0 + std::sqrt(2.0 * std::log(8.0) * 0.875 / 1024.0)));
    CHECK(uniform_routing_imbalance(8, 1024) == Approx(1.0596).epsilon(1e-4));
    // More tokens, less spread; one GPU has none; never past every token on one GPU.
    CHECK(uniform_routing_imbalance(8, 16384) < uniform_routing_imbalance(8, 1024));
    CHECK(uniform_routing_imbalance(1, 10) == 1.0);
    CHECK(uniform_routing_imbalance(4, 1e-9) == 4.0);
}

TEST_CASE("the busiest GPU's experts and rows", "[serving][ep]") {
    // Without expert parallelism: every touched expert, M·k / touched rows each (the earlier formula).
    const auto one = expert_share(8, 2, 64, 1, 0);
    CHECK(one.experts == Approx(experts_touched(8, 2, 64)));
    CHECK(one.rows == Approx(64.0 * 2 / experts_touched(8, 2, 64)));
    CHECK(one.imbalance == 1.0);
    // Mixtral's 8 experts over ep 8, 64 tokens on each of the 8 replicas, balanced: 512 tokens x 2 / 8 =
    // 128 rows on the one expert of each GPU.
    const auto bal = expert_share(8, 2, 64, 8, 1.0);
    CHECK(bal.experts == 1.0);
    CHECK(bal.rows == Approx(128.0));
    // A stated skew scales the busiest GPU's rows; unstated, uniform routing's spread at 64 x 2 per GPU.
    CHECK(expert_share(8, 2, 64, 8, 1.5).rows == Approx(192.0));
    // A stated skew past ep would be more than every token on one GPU: at most ep, the group's 128 x 2 rows
    // on the busiest GPU's 4 experts.
    CHECK(expert_share(8, 2, 64, 2, 10.0).imbalance == 2.0);
    CHECK(expert_share(8, 2, 64, 2, 10.0).rows == Approx(128.0 * 2 / 4));
    CHECK(expert_share(8, 2, 64, 8, 0).imbalance == Approx(uniform_routing_imbalance(8, 128)));
    // DeepSeek-V3 (256 experts, top 8) over ep 32, 128 decodes per replica: all 256 touched, 8 per GPU,
    // 128 x 32 x 8 / 32 / 8 = 128 rows each, times the imbalance.
    const auto ds = expert_share(256, 8, 128, 32, 0);
    CHECK(ds.experts == Approx(8.0).epsilon(1e-6));
    CHECK(ds.rows == Approx(128.0 * ds.imbalance).epsilon(1e-6));
}

TEST_CASE("dispatch and combine as DeepEP's two kernels move them, by hand", "[serving][ep][collectives]") {
    const auto s = scenario("deepseek-v3", 32, 32, {{"weight_precision", "fp8"}});
    const auto& y = s.system;
    const double base = y.collective_base_latency_us * 1e-6, a_out = y.inter_node_latency_us * 1e-6;
    const double b_in = y.intra_node_GBps * 1e9 * y.intra_node_efficiency;
    const double b_out = y.inter_node_GBps * 1e9 * y.inter_node_efficiency;
    const auto g = place_group(32, 1, y.scaleup_domain);   // 4 nodes of 8
    REQUIRE(g.domains() == 4);
    const double B = 7168;   // bytes per copy
    // Low-latency: 128 tokens x 8 copies, 24/32 of them to other nodes, 7/32 over NVLink, at once.
    const double copies = 128.0 * 8 * B;
    CHECK(expert_all_to_all_time(y, g, 128, 8, B, ExpertAllToAll::per_expert) ==
          Approx(base + a_out + std::max(copies * 24 / 32 / b_out, copies * 7 / 32 / b_in)));
    // Normal: a token crosses to each other node holding one of its 8 experts, 3 x (1 - (3/4)^8) = 2.70 of
    // them, then NVLink carries every copy to its GPU (7/8 of them off the receiving GPU).
    const double nodes = 3.0 * (1.0 - std::pow(0.75, 8));
    CHECK(nodes == Approx(2.6997).epsilon(1e-4));
    CHECK(expert_all_to_all_time(y, g, 16384, 8, B, ExpertAllToAll::per_domain) ==
          Approx(base + a_out + std::max(16384 * nodes * B / b_out, 16384.0 * 8 * B * 7 / 8 / b_in)));
    // Per domain sends fewer network bytes than per expert whenever a token's experts share a node.
    CHECK(expert_all_to_all_time(y, g, 16384, 8, B, ExpertAllToAll::per_domain) <
          expert_all_to_all_time(y, g, 16384, 8, B, ExpertAllToAll::per_expert));
    // One node: the fabric's all-to-all of every copy; one rank: nothing.
    const auto one = place_group(8, 1, y.scaleup_domain);
    CHECK(expert_all_to_all_time(y, one, 128, 8, B, ExpertAllToAll::per_domain) ==
          Approx(base + y.intra_node_latency_us * 1e-6 + copies * 7 / 8 / b_in));
    CHECK(expert_all_to_all_time(y, place_group(1, 1, 8), 128, 8, B, ExpertAllToAll::per_expert) == 0.0);
}

TEST_CASE("memory: each GPU holds its share of the experts", "[serving][ep][memory]") {
    const auto one = scenario("mixtral-8x7b", 8, 1, {{"weight_precision", "fp8"}});
    const auto eight = scenario("mixtral-8x7b", 8, 8, {{"weight_precision", "fp8"}});
    const auto m1 = inference_memory(one.model, one.system, one.parallel, one.inference);
    const auto m8 = inference_memory(eight.model, eight.system, eight.parallel, eight.inference);
    // Mixtral: 32 layers x 8 experts x 3 x 4096 x 14336 fp8 bytes; ep 8 keeps 1/8 of them on each GPU.
    const double experts_bytes = 32.0 * 8 * 3 * 4096 * 14336;
    CHECK(m1.weights_bytes - m8.weights_bytes == Approx(experts_bytes * 7.0 / 8.0).epsilon(1e-9));
    CHECK(m8.max_batch > m1.max_batch);
}

TEST_CASE("redundant experts: EPLB's slots, each GPU holding its share", "[serving][ep][memory]") {
    // DeepSeek-V3 over 72 GPUs with 32 redundant experts (SGLang's EP 72): 288 slots, 4 per GPU, as 256
    // experts over 64 GPUs: the same weights per GPU.
    const Json base = {{"weight_precision", "fp8"}};
    Json red = base;
    red["expert_parallel"] = {{"redundant_experts", 32}};
    const auto s72 = scenario("deepseek-v3", 72, 72, red);
    const auto s64 = scenario("deepseek-v3", 64, 64, base);
    CHECK(inference_memory(s72.model, s72.system, s72.parallel, s72.inference).weights_bytes ==
          Approx(inference_memory(s64.model, s64.system, s64.parallel, s64.inference).weights_bytes));
    // The slots must divide over ep: named with both counts; without redundant experts, the experts must.
    Json j = {{"model", "deepseek-v3"},
              {"system", "dgx-h100"},
              {"gpus", 72},
              {"parallel", {{"ep", 72}}},
              {"inference", {{"expert_parallel", {{"redundant_experts", 30}}}}}};
    const std::string e30 = problems(j);
    CHECK(e30.find("/parallel/ep: 72") != std::string::npos);
    CHECK(e30.find("256 + 30 = 286") != std::string::npos);
    j["inference"].erase("expert_parallel");
    CHECK(problems(j).find("a divisor of moe.experts (256)") != std::string::npos);
    j["inference"]["expert_parallel"] = {{"redundant_experts", 32}};
    CHECK(problems(j).empty());
}

TEST_CASE("iteration: expert weights read once per GPU's share, dispatch and combine priced", "[serving][ep]") {
    // DeepSeek-V3 fp8 at tp 1 (no TP all-reduce): the only communication is expert parallelism's.
    const Json in = {{"weight_precision", "fp8"}, {"kv_precision", "fp8"}};
    const auto s1 = scenario("deepseek-v3", 32, 1, in);
    const auto s32 = scenario("deepseek-v3", 32, 32, in);
    const auto b = decodes(128, 2000);
    const auto c1 = iteration_cost(s1.serving_job(), b);
    const auto c32 = iteration_cost(s32.serving_job(), b);
    CHECK(c1.comm_s == 0.0);
    // Per MoE layer: 128 tokens to their top 8 experts, 7,168 wide, out in fp8 (+ a 4-byte scale per 128)
    // and back in 16-bit, each copy straight to its expert's GPU (a decode step: DeepEP's low-latency
    // kernels) over 32 GPUs (4 nodes of 8), times the busiest GPU's imbalance.
    const double h = 7168;
    const auto g = place_group(32, 1, s32.system.scaleup_domain);
    const double a2a = expert_all_to_all_time(s32.system, g, 128, 8, h * (1 + 4.0 / 128), ExpertAllToAll::per_expert) +
                       expert_all_to_all_time(s32.system, g, 128, 8, h * 2, ExpertAllToAll::per_expert);
    const double f = expert_share(256, 8, 128, 32, 0).imbalance;
    CHECK(c32.comm_s == Approx(61.0 * f * a2a).epsilon(1e-9));
    CHECK(a2a > 0);
    // At 128 decodes each GPU reads 8 of the 256 experts instead of all of them: far less HBM time.
    CHECK(c32.memory_s < 0.5 * c1.memory_s);
    // Two-batch overlap hides the all-to-alls under the computation: never slower, never below either.
    const auto so = scenario(
        "deepseek-v3", 32, 32,
        {{"weight_precision", "fp8"}, {"kv_precision", "fp8"}, {"expert_parallel", {{"two_batch_overlap", true}}}});
    const auto co = iteration_cost(so.serving_job(), b);
    CHECK(co.time_s < c32.time_s);
    CHECK(c32.time_s - co.time_s <= c32.comm_s * (1 + 1e-12));
    CHECK(co.time_s >= c32.comm_s);
    // A stated balance (EPLB) is used as given: less comm than uniform routing's spread at this batch.
    const auto sb = scenario(
        "deepseek-v3", 32, 32,
        {{"weight_precision", "fp8"}, {"kv_precision", "fp8"}, {"expert_parallel", {{"load_imbalance", 1.0}}}});
    CHECK(iteration_cost(sb.serving_job(), b).comm_s == Approx(61.0 * a2a).epsilon(1e-9));
}

TEST_CASE("two-batch overlap: a decode step hides the smaller side, a prompt pays SGLang's stage pairing",
          "[serving][ep]") {
    // Per layer of the whole batch: routed experts 1 s of the 3 s computation, dispatch 1.5 s, combine 2.5 s.
    IterationPricer::LayerGemms g;
    g.routed_s = 1.0;
    g.ep_dispatch_s = 1.5;
    g.ep_combine_s = 2.5;
    g.ep_comm_s = 4.0;
    const auto h100 = scenario("mixtral-8x7b", 8, 8, Json::object()).system.gpu;
    REQUIRE(h100.sm_count == 132);
    // Decode (DeepEP's low-latency kernels hold no SMs): the longer of the two, max(3, 4).
    CHECK(two_batch_layer_s(h100, false, 3.0, g) == Approx(4.0).epsilon(1e-12));
    // A prompt: the computation on 132 − 20 SMs (x 132/112), halves per micro-batch, four stages:
    // e = 1·132/112 = 1.17857, a = 2·132/112 = 2.35714; ½(max(e, 1.5) + max(e, 2.5) + max(a, 2.5) + max(a, 1.5))
    // = ½(1.5 + 2.5 + 2.5 + 2.35714) = 4.42857 — above both max(3.53571, 4) and below their sum.
    CHECK(two_batch_layer_s(h100, true, 3.0, g) ==
          Approx(0.5 * (1.5 + 2.5 + 2.5 + 2.0 * 132.0 / 112.0)).epsilon(1e-12));
    // Computation longer than each all-to-all at every stage: the whole of it, nothing of the communication.
    g.ep_dispatch_s = 0.5;
    g.ep_combine_s = 0.6;
    CHECK(two_batch_layer_s(h100, true, 3.0, g) == Approx(3.0 * 132.0 / 112.0).epsilon(1e-12));
}

TEST_CASE("an expert-parallel deployment fits where the whole model per replica cannot, and serves",
          "[serving][ep][sim]") {
    // DeepSeek-V3 in fp8 (~671 GB) on 16 H100s of 80 GB: one replica per GPU only with the experts spread.
    const Json in = {{"batching", "continuous"},
                     {"weight_precision", "fp8"},
                     {"kv_precision", "fp8"},
                     {"input_len", 1000},
                     {"output_len", 200},
                     {"requests", 400},
                     {"qps", 8}};
    const auto s = scenario("deepseek-v3", 16, 16, in);
    const auto m = inference_memory(s.model, s.system, s.parallel, s.inference);
    CHECK(m.weights_bytes < 80e9);
    CHECK(m.max_batch > 0);
    const auto one = scenario("deepseek-v3", 16, 1, in);
    CHECK(inference_memory(one.model, one.system, one.parallel, one.inference).max_batch == 0);
    const auto r = sim::simulate_serving(s.serving_job());
    CHECK(r.requests_per_s == Approx(8.0).epsilon(0.15));
    CHECK(std::isfinite(r.ttft_s.p99));
    CHECK(r.tpot_s.p99 > 0);
}

TEST_CASE("expert_parallel: strict reader and the commands that refuse ep", "[serving][ep][errors]") {
    Json j = {{"model", "mixtral-8x7b"},
              {"system", "dgx-h100"},
              {"gpus", 8},
              {"inference", {{"expert_parallel", {{"two_batch_overlap", true}}}}}};
    // Without ep > 1 the object does nothing: refused, naming it.
    CHECK(problems(j).find("/inference/expert_parallel") != std::string::npos);
    j["parallel"] = {{"ep", 8}};
    CHECK(problems(j).empty());
    j["inference"]["expert_parallel"]["load_imbalance"] = 0.5;   // the busiest GPU carries at least the mean
    CHECK(problems(j).find("/inference/expert_parallel/load_imbalance") != std::string::npos);
    j["inference"]["expert_parallel"] = {{"balance", 1}};
    CHECK(problems(j).find("/inference/expert_parallel/balance") != std::string::npos);
    // Disaggregated pools: /parallel/ep spreads the decode pool's experts, prefill_ep the prefill pool's,
    // each by the same rules.
    Json d = {{"model", "mixtral-8x7b"},
              {"system", "dgx-h100"},
              {"gpus", 8},
              {"parallel", {{"ep", 2}}},
              {"inference", {{"batching", "continuous"}, {"disaggregation", {{"prefill_gpus", 2}}}}}};
    CHECK(problems(d).empty());
    d["inference"]["disaggregation"]["prefill_ep"] = 4;   // 2 prefill replicas
    CHECK(problems(d).find("/inference/disaggregation/prefill_ep: 4: expected a divisor of the prefill replicas") !=
          std::string::npos);
    d["inference"]["disaggregation"]["prefill_ep"] = 3;
    CHECK(problems(d).find("/inference/disaggregation/prefill_ep: 3: expected a divisor of moe.experts (8)") !=
          std::string::npos);
    // With redundant copies the slots must divide: the same words as /parallel/ep's (one definition).
    d["inference"]["expert_parallel"] = {{"redundant_experts", 2}};
    CHECK(problems(d).find("/inference/disaggregation/prefill_ep: 3: expected a divisor of the expert slots, "
                           "moe.experts + inference.expert_parallel.redundant_experts = 8 + 2 = 10") !=
          std::string::npos);
    d["inference"].erase("expert_parallel");
    // The echo reads back.
    j["inference"]["expert_parallel"] = {{"load_imbalance", 1.25}, {"two_batch_overlap", true}};
    const Scenario s = parse_scenario(j);
    const Json echo = to_json(s)["inference"]["expert_parallel"];
    CHECK(echo["load_imbalance"] == 1.25);
    CHECK(echo["two_batch_overlap"] == true);
    j["inference"]["expert_parallel"] = echo;
    CHECK(parse_scenario(j).inference.expert_parallel.load_imbalance == 1.25);
    // The serving searches and explain lay out replicas without expert parallelism: refused, naming ep.
    Json c = {{"model", "mixtral-8x7b"},
              {"system", "dgx-h100"},
              {"gpus", 8},
              {"parallel", {{"ep", 8}}},
              {"inference",
               {{"batching", "continuous"},
                {"weight_precision", "fp8"},
                {"qps", 20},
                {"requests", 200},
                {"slo", {{"ttft_p99_s", 2.0}}}}}};
    const Scenario cs = parse_scenario(c);
    auto refuses = [](auto f) {
        try {
            f();
        } catch (const ConfigError& e) {
            return std::string(e.what()).find("/parallel/ep") != std::string::npos;
        }
        return false;
    };
    CHECK(refuses([&] { (void)app::serving_fleet_search(cs, 16); }));
    CHECK(refuses([&] { (void)app::capacity_per_gpu_search(cs, 16); }));
    CHECK(refuses([&] { (void)app::explain_serving(cs); }));
}

TEST_CASE("disaggregated pools with their experts spread: DeepSeek-V3 on 16 prefill and 32 decode H100s",
          "[serving][ep][disaggregation]") {
    Json j = {{"model", "deepseek-v3"},
              {"system", "dgx-h100"},
              {"gpus", 48},
              {"parallel", {{"tp", 1}, {"ep", 32}}},
              {"inference",
               {{"batching", "continuous"},
                {"weight_precision", "fp8"},
                {"kv_precision", "fp8"},
                {"input_len", 2000},
                {"output_len", 200},
                {"requests", 600},
                {"qps", 10},
                {"slo", {{"ttft_p99_s", 5.0}}},
                {"disaggregation", {{"prefill_gpus", 16}, {"prefill_tp", 1}, {"prefill_ep", 16}}}}}};
    const Scenario s = parse_scenario(j);
    CHECK(sim::prefill_layout(s.inference.disaggregation).ep == 16);
    CHECK(to_json(s)["inference"]["disaggregation"]["prefill_ep"] == 16);
    // Both pools fit only with their experts spread; the stream is served.
    CHECK(app::serving_fit(s).fits);
    const auto r = sim::simulate_serving(s.serving_job());
    REQUIRE(r.disaggregated);
    CHECK(r.requests_per_s == Approx(10.0).epsilon(0.2));
    CHECK(std::isfinite(r.ttft_s.p99));
    // Without prefill_ep the prefill replicas cannot hold the model.
    j["inference"]["disaggregation"].erase("prefill_ep");
    CHECK_FALSE(app::serving_fit(parse_scenario(j)).fits);
    // The pool search steps prefill replicas one at a time: it refuses prefill_ep, naming it.
    j["inference"]["disaggregation"]["prefill_ep"] = 16;
    j["parallel"]["ep"] = 1;
    j["gpus"] = 48;
    const Scenario t = parse_scenario(j);
    try {
        (void)app::disaggregated_fleet_search(t, 64);
        FAIL("expected a refusal");
    } catch (const ConfigError& e) {
        CHECK(std::string(e.what()).find("/inference/disaggregation/prefill_ep") != std::string::npos);
    }
}
