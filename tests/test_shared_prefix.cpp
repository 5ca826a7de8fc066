// Shared prefixes (inference.shared_prefix): each replica's prefix cache keeps computed prefixes in whole KV
// blocks and reuses them, unused ones evicted least recently used first; the cache-aware router sends a
// prompt where its prefix went (docs/serving.md "Shared prefixes").
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "hardware_db/errors.hpp"
#include "hardware_db/scenario.hpp"
#include "sim/router.hpp"
#include "sim/scheduler.hpp"
#include "sim/serving.hpp"

using namespace llmsim;

namespace {

Scenario serving(int gpus, Json inference) {
    Json j = {{"model", "llama-3-8b"},
              {"system", "dgx-h100"},
              {"gpus", gpus},
              {"parallel", {{"tp", 1}, {"pp", 1}}},
              {"inference", std::move(inference)}};
    return parse_scenario(j);
}

Json stream(int input, int prefix, Json extra = Json::object()) {
    Json in = {{"batching", "continuous"},
               {"weight_precision", "fp8"},
               {"kv_precision", "fp8"},
               {"input_len", input},
               {"output_len", 50},
               {"requests", 200},
               {"qps", 1.0}};
    if (prefix > 0) in["shared_prefix"] = {{"groups", 1}, {"tokens", prefix}};
    for (const auto& [k, v] : extra.items()) in[k] = v;
    return in;
}

std::string problems(Json inference) {
    try {
        (void)serving(1, std::move(inference));
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

}   // namespace

TEST_CASE("shared prefix: whole blocks found in the cache after the first request, the last token computed",
          "[serving][prefix]") {
    // One group, requests a second apart (each finds the prefix the first one left): the first computes
    // its whole prompt, each of the other 199 finds floor(prefix / 16) blocks.
    struct Case {
        int input, prefix;
        double hit_per_request;   // tokens found in the cache
        double ttft_below;        // TTFT p50 below this share of the same stream's without the prefix
    };
    // (Short prompts: reading the weights, not the prompt, sets most of an iteration's time.)
    for (const Case c : {Case{1500, 1000, 992.0, 0.5},     // 62 whole blocks of the 1,000-token prefix
                         Case{500, 1000, 496.0, 1.0},      // a prompt shorter than the prefix: its 31 whole blocks
                         Case{512, 1024, 511.0, 1.0}}) {   // all of it in the cache: the last token computed
        INFO("input " << c.input << " prefix " << c.prefix);
        const auto r = sim::simulate_serving(serving(1, stream(c.input, c.prefix)).serving_job());
        CHECK(r.preemptions == 0);
        CHECK(r.prefix_hit_fraction == Approx(199.0 * c.hit_per_request / (200.0 * c.input)).epsilon(1e-12));
        const auto none = sim::simulate_serving(serving(1, stream(c.input, 0)).serving_job());
        CHECK(none.prefix_hit_fraction == 0.0);
        CHECK(r.ttft_s.p50 < c.ttft_below * none.ttft_s.p50);   // most of the prompt is not computed
        CHECK(r.requests_per_s == Approx(none.requests_per_s).epsilon(1e-3));
    }
}

TEST_CASE("shared prefix: the groups come from a stream of their own; Zipf favours the first", "[serving][prefix]") {
    Json in = stream(1500, 0, {{"requests", 40000}});
    const auto plain = sim::request_stream(serving(1, in).inference);
    in["shared_prefix"] = {{"groups", 8}, {"tokens", 256}};
    const auto uniform = sim::request_stream(serving(1, in).inference);
    in["shared_prefix"]["zipf"] = 1.0;
    const auto zipf = sim::request_stream(serving(1, in).inference);
    REQUIRE(plain.size() == uniform.size());
    std::vector<double> u(8), z(8);
    for (std::size_t i = 0; i < plain.size(); ++i) {
        CHECK(plain[i].arrival_s == uniform[i].arrival_s);
        CHECK(plain[i].input == uniform[i].input);
        CHECK(plain[i].output == zipf[i].output);
        CHECK(plain[i].group == -1);
        u[static_cast<std::size_t>(uniform[i].group)] += 1;
        z[static_cast<std::size_t>(zipf[i].group)] += 1;
    }
    // Uniform: 5,000 each; Zipf 1 over 8: group r with weight 1/r over H_8 = 2.7179 (group 1: 36.8%).
    for (double n : u) CHECK(n == Approx(5000).epsilon(0.05));
    CHECK(z[0] / 40000.0 == Approx(1.0 / 2.717857).epsilon(0.03));
    CHECK(z[7] / 40000.0 == Approx(1.0 / 8 / 2.717857).epsilon(0.1));
}

TEST_CASE("shared prefix: the cache keeps whole blocks, references them, and frees the least recently used",
          "[serving][prefix]") {
    Scenario s = serving(1, stream(64, 64));
    InferenceConfig in = s.inference;
    std::vector<sim::Request> reqs = {{0, 64, 4, 0}, {0, 64, 4, 0}, {0, 1540, 4, 1}};
    std::vector<sim::RequestState> st(reqs.size());
    sim::ReplicaScheduler rs(in, 100, reqs, st);
    IterationBatch b;
    auto admit = [&](std::int32_t id) {
        rs.waiting.push_back(rs.fresh(id));
        rs.begin(b);
        return rs.admit(b, 0);
    };
    REQUIRE(admit(0) == sim::Held::none);
    CHECK(rs.free_blocks == 100 - 5);   // 64 prompt tokens + one step: 5 blocks
    auto& first = rs.running.front();
    first.computed = first.prompt;   // its prompt computed: the 4 whole blocks of its prefix kept
    first.decoding = true;
    rs.prefilled(first);
    CHECK(first.blocks == 1);
    CHECK(first.cached == 4);
    REQUIRE(admit(1) == sim::Held::none);
    CHECK(rs.running.back().computed == 63.0);   // found in the cache but for the last token
    CHECK(rs.running.back().cached == 4);
    CHECK(rs.free_blocks == 95 - 1);   // its own block only
    CHECK(rs.hit_tokens == 63.0);
    for (auto& q : rs.running) rs.finish(q);
    rs.running.clear();
    CHECK(rs.free_blocks == 96);   // the unused prefix stays: 4 blocks
    CHECK(rs.can_admit() == false);
    // 1,540 + 1 tokens need 97 blocks: the unused prefix is freed for them.
    REQUIRE(admit(2) == sim::Held::none);
    CHECK(rs.free_blocks == 100 - 97);
}

TEST_CASE("shared prefix: a request frees its own group's prefix when it cannot fit beside it", "[serving][prefix]") {
    // Reserve admission (prompt + output at once), 100 blocks, prefixes of 1,024 tokens: a 1,024-token prompt
    // leaves 64 blocks; a 900-token prompt of the same group reuses 56 of them and needs 97 - 56 = 41 more,
    // more than the 36 free beside the prefix: the prefix goes, and it is admitted with all 97.
    Json j = stream(1024, 1024, {{"kv_admission", "reserve"}});
    InferenceConfig in = serving(1, j).inference;
    std::vector<sim::Request> reqs = {{0, 1024, 4, 0}, {0, 900, 650, 0}};
    std::vector<sim::RequestState> st(reqs.size());
    sim::ReplicaScheduler rs(in, 100, reqs, st);
    IterationBatch b;
    rs.waiting.push_back(rs.fresh(0));
    rs.begin(b);
    REQUIRE(rs.admit(b, 0) == sim::Held::none);
    auto& first = rs.running.front();
    first.computed = first.prompt;
    first.decoding = true;
    rs.prefilled(first);
    CHECK(first.cached == 64);
    rs.finish(first);
    rs.running.clear();
    CHECK(rs.free_blocks == 36);
    rs.waiting.push_back(rs.fresh(1));
    rs.begin(b);
    REQUIRE(rs.admit(b, 0) == sim::Held::none);
    CHECK(rs.running.back().cached == 0);
    CHECK(rs.free_blocks == 100 - 97);
}

TEST_CASE("cache-aware routing: where the prefix went unless the load is uneven, else the fewest tokens",
          "[serving][prefix][router]") {
    const auto& route = sim::router(RouterPolicy::cache_aware);
    CHECK(route.uses_load);
    CHECK(route.reads_prefixes);
    // Balanced: the replica holding the prefix (more than half the prompt), the fewest requests among equals.
    std::vector<sim::ReplicaLoad> load = {{10, 9000, 0}, {12, 4000, 0.8}, {11, 5000, 0.8}, {10, 100, 0}};
    CHECK(route.route(load, 0, 0) == 2);
    // Half the prompt or less matches: the fewest unfinished tokens.
    for (auto& l : load) l.match = std::min(l.match, 0.5);
    CHECK(route.route(load, 0, 0) == 3);
    // Uneven (45 - 10 > 32 and 45 > 1.1 x 10): the fewest requests, whatever matches.
    load = {{45, 9000, 0.9}, {10, 4000, 0}, {12, 100, 0}};
    CHECK(route.route(load, 0, 0) == 1);
    load[0].requests = 42;   // 42 - 10 = 32: not past the absolute gap
    CHECK(route.route(load, 0, 0) == 0);
}

TEST_CASE("cache-aware routing keeps each prefix on few replicas: more hits and shorter tails than round robin",
          "[serving][prefix][router]") {
    // 8 replicas of Llama-3-8B fp8 (64,689 KV blocks each), 512 prefixes of 4,096 tokens (256 blocks each):
    // all of them need 131,072 blocks, so a replica seeing every prefix (round robin) evicts them; routed by
    // prefix each replica keeps about 64.
    auto run = [](const char* router) {
        Json in = {{"batching", "continuous"},
                   {"weight_precision", "fp8"},
                   {"kv_precision", "fp8"},
                   {"input_len", {{"dist", "lognormal"}, {"mean", 5000}, {"stdev", 600}, {"min", 4200}, {"max", 8000}}},
                   {"output_len", {{"dist", "lognormal"}, {"mean", 200}, {"stdev", 100}, {"min", 10}, {"max", 1000}}},
                   {"shared_prefix", {{"groups", 512}, {"tokens", 4096}}},
                   {"requests", 12000},
                   {"qps", 60.0},
                   {"router", router}};
        return sim::simulate_serving(serving(8, in).serving_job());
    };
    const auto rr = run("round-robin"), ca = run("cache-aware");
    INFO("hits rr " << rr.prefix_hit_fraction << " ca " << ca.prefix_hit_fraction);
    INFO("TTFT p99 rr " << rr.ttft_s.p99 << " ca " << ca.ttft_s.p99);
    CHECK(ca.prefix_hit_fraction > 1.8 * rr.prefix_hit_fraction);
    CHECK(ca.prefix_hit_fraction < 4096.0 / 4200.0);   // at most the prefix's share of the shortest prompt
    CHECK(ca.ttft_s.mean < 0.7 * rr.ttft_s.mean);
    CHECK(ca.tpot_s.p99 < rr.tpot_s.p99);
    CHECK(rr.kv_occupancy_max > 0.95);   // round robin's replicas fill their caches with prefixes
    CHECK(ca.requests_per_s == Approx(rr.requests_per_s).epsilon(0.02));
}

TEST_CASE("shared prefix: strict reader", "[serving][prefix][errors]") {
    CHECK(problems(stream(1500, 1000)).empty());
    Json in = stream(1500, 1000);
    in["shared_prefix"]["groups"] = 0;
    CHECK(problems(in).find("/inference/shared_prefix/groups") != std::string::npos);
    in = stream(1500, 1000);
    in["shared_prefix"].erase("tokens");
    CHECK(problems(in).find("/inference/shared_prefix/tokens: missing") != std::string::npos);
    in = stream(1500, 1000);
    in["shared_prefix"]["zipf"] = 5;
    CHECK(problems(in).find("/inference/shared_prefix/zipf") != std::string::npos);
    in = stream(1500, 1000);
    in["shared_prefix"]["share"] = 0.5;
    CHECK(problems(in).find("/inference/shared_prefix/share") != std::string::npos);
    in = stream(1500, 1000, {{"prefix_cache_hit", 0.5}});
    CHECK(problems(in).find("/inference/shared_prefix") != std::string::npos);
    CHECK(problems(in).find("prefix_cache_hit") != std::string::npos);
    in = stream(1500, 1000, {{"batching", "static"}});
    in.erase("qps");
    CHECK(problems(in).find("/inference/shared_prefix") != std::string::npos);
    // The echo reads back.
    in = stream(1500, 1000);
    in["shared_prefix"]["zipf"] = 0.8;
    Json j = {{"model", "llama-3-8b"}, {"system", "dgx-h100"}, {"gpus", 1}, {"inference", in}};
    const Json echo = to_json(parse_scenario(j))["inference"]["shared_prefix"];
    CHECK(echo == Json{{"groups", 1}, {"tokens", 1000}, {"zipf", 0.8}});
}
