// Disaggregated prefill and decode (inference.disaggregation; docs/serving.md "Disaggregated prefill and
// decode"): the KV transfer priced by hand, the pools' invariants, the goodput comparisons DistServe and
// Splitwise make, and the scenario's strict reading.
#include <catch2/catch.hpp>

#include <string>

#include "app/serving.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/scenario.hpp"
#include "sim/serving.hpp"

using namespace llmsim;

namespace {

// Llama-3-70B FP8 on one DGX H100 (8 GPUs), decode replicas of tp 2.
Json deployment(int prefill_gpus, Json inference) {
    Json in = {{"batching", "continuous"}, {"weight_precision", "fp8"}, {"kv_precision", "fp8"}};
    for (auto it = inference.begin(); it != inference.end(); ++it) in[it.key()] = *it;
    if (prefill_gpus > 0) {
        if (!in.contains("disaggregation")) in["disaggregation"] = Json::object();
        in["disaggregation"]["prefill_gpus"] = prefill_gpus;
        if (!in["disaggregation"].contains("prefill_tp")) in["disaggregation"]["prefill_tp"] = 2;
    }
    return {
        {"model", "llama-3-70b"}, {"system", "dgx-h100"}, {"gpus", 8}, {"parallel", {{"tp", 2}}}, {"inference", in}};
}

sim::ServingResult simulate(const Json& doc) { return sim::simulate_serving(parse_scenario(doc).serving_job()); }

double capacity(const Json& doc) {
    Json d = doc;
    d["inference"]["qps"] = "max";
    return app::slo_capacity(parse_scenario(d)).qps;
}

std::string error_of(const Json& doc) {
    try {
        (void)parse_scenario(doc);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

}   // namespace

TEST_CASE("disaggregation: the KV transfer is the slower side's bytes per GPU over the link", "[disaggregation]") {
    // 2,000-token prompts at a trickle (no queueing, no link contention), 10 GB/s per GPU. Llama-3-70B's
    // KV cache: 80 layers x 8 KV heads x 128 x 2 (K and V) x 1 byte (fp8) = 163,840 bytes a token, 81,920
    // per GPU at tp 2 on both sides: 2,000 tokens move 163.84 MB per GPU, 16.384 ms at 10 GB/s, plus the
    // scale-up fabric's latency (all 8 GPUs share one NVLink domain).
    const Json doc = deployment(4, {{"input_len", 2000},
                                    {"output_len", 2},
                                    {"qps", 0.05},
                                    {"requests", 40},
                                    {"disaggregation", {{"link_GBps", 10.0}}}});
    const Scenario s = parse_scenario(doc);
    const double latency_s = s.system.intra_node_latency_us * 1e-6;
    const auto r = sim::simulate_serving(s.serving_job());
    REQUIRE(r.disaggregated);
    const auto& d = *r.disaggregated;
    CHECK(d.transfer_bytes_mean == Approx(2000.0 * 81920.0));
    CHECK(d.transfer_s.mean == Approx(0.016384 + latency_s).epsilon(1e-9));
    CHECK(d.transfer_s.max == Approx(0.016384 + latency_s).epsilon(1e-9));
    CHECK(d.prefill.replicas == 2);
    CHECK(d.decode.replicas == 2);
    CHECK(r.output_tokens_per_s_per_gpu == Approx(r.output_tokens_per_s / 8));
    // The first token is the prefill pool's: a lone prompt costs what it costs on a colocated replica of
    // the same layout. The second token waits for the transfer, then one decode step.
    Json colocated = doc;
    colocated["inference"].erase("disaggregation");
    const auto c = simulate(colocated);
    CHECK(r.ttft_s.p50 == Approx(c.ttft_s.p50).epsilon(1e-12));
    CHECK(r.tpot_s.p50 == Approx(c.tpot_s.p50 + 0.016384 + latency_s).epsilon(1e-9));
}

TEST_CASE("disaggregation: a one-token request ends on the prefill pool; every request is served", "[disaggregation]") {
    const auto r = simulate(deployment(4, {{"input_len", 500}, {"output_len", 1}, {"qps", 4.0}, {"requests", 200}}));
    CHECK(r.requests == 200);
    CHECK(r.e2e_latency_s.max == Approx(r.ttft_s.max));
    CHECK(r.disaggregated->decode.iterations == 0);
    // Lognormal lengths, a load-reading router on both pools, a tight decode KV cache (Llama-3-70B fp16
    // at tp 2 leaves a few GiB per GPU) that preempts (on-demand admission, TensorRT-LLM's MAX_UTILIZATION):
    // every request still finishes, after its first token.
    Json tight = deployment(4, {{"input_len", {{"mean", 1500}, {"dist", "lognormal"}, {"stdev", 600}}},
                                {"kv_admission", "on_demand"},
                                {"output_len", {{"mean", 1500}, {"dist", "lognormal"}, {"stdev", 600}}},
                                {"weight_precision", "bf16"},
                                {"kv_precision", "bf16"},
                                {"router", "least-requests"},
                                {"qps", 3.0},
                                {"requests", 300}});
    const auto t = simulate(tight);
    CHECK(t.requests == 300);
    CHECK(t.preemptions > 0);
    CHECK(t.tpot_s.p50 > 0);
    CHECK(t.e2e_latency_s.mean > t.ttft_s.mean);
}

// DistServe (Zhong et al., OSDI 2024, Sec. 2, Fig. 1) and Splitwise (Patel et al., ISCA 2024): colocated
// prefills stall the decodes batched with them, so under a tight TPOT SLO long prompts cut a colocated
// deployment's goodput; separate pools remove the interference. With short prompts and a loose SLO there is
// no interference to remove and a fixed split wastes whichever pool the traffic needs less of.
TEST_CASE("disaggregation: beats colocated on goodput where the papers say, loses where they say",
          "[disaggregation][capacity][heavy]") {
    const Json long_prompts = {{"input_len", {{"mean", 2000}, {"dist", "lognormal"}, {"stdev", 800}}},
                               {"output_len", {{"mean", 200}, {"dist", "lognormal"}, {"stdev", 100}}},
                               {"requests", 2000},
                               {"slo", {{"ttft_p99_s", 2.0}, {"tpot_p99_s", 0.04}}}};
    const double colocated = capacity(deployment(0, long_prompts));
    const double split = capacity(deployment(6, long_prompts));   // 3 prefill, 1 decode replica of tp 2
    CHECK(colocated > 0);
    CHECK(split > 1.5 * colocated);
    // The same split over a slow link loses: at 0.3 GB/s per GPU a prompt's 164 MB per GPU hold its
    // prefill replica's links for 0.55 s, so three replicas pass at most 5.5 prompts a second.
    Json slow = long_prompts;
    slow["disaggregation"] = {{"link_GBps", 0.3}};
    CHECK(capacity(deployment(6, slow)) < colocated);
    // Short prompts, long outputs and a loose SLO: no split of the 8 GPUs beats colocation by more than the
    // search's tolerance, and putting half the GPUs on prefill loses a third.
    const Json chat = {{"input_len", {{"mean", 200}, {"dist", "lognormal"}, {"stdev", 80}}},
                       {"output_len", {{"mean", 400}, {"dist", "lognormal"}, {"stdev", 200}}},
                       {"requests", 2000},
                       {"slo", {{"ttft_p99_s", 5.0}, {"tpot_p99_s", 0.2}}}};
    const double chat_colocated = capacity(deployment(0, chat));
    const double half = capacity(deployment(4, chat));
    CHECK(half < 0.75 * chat_colocated);
    for (const int prefill : {2, 6}) CHECK(capacity(deployment(prefill, chat)) < 1.03 * chat_colocated);
}

TEST_CASE("disaggregation: the scenario is read strictly", "[disaggregation][scenario]") {
    const Json ok = deployment(4, {{"qps", 2.0}});
    const Scenario s = parse_scenario(ok);
    CHECK(s.gpus == 8);
    CHECK(s.parallel.dp == 2);   // the decode pool: (8 - 4) / tp 2
    CHECK(s.inference.disaggregation.prefill_tp == 2);
    // All 8 GPUs on one NVLink domain: the scale-up fabric's achievable rate.
    CHECK(s.inference.disaggregation.link_GBps == Approx(s.system.intra_node_GBps * s.system.intra_node_efficiency));
    Json wide = ok;
    wide["gpus"] = 16;   // two nodes: the network's
    const Scenario w = parse_scenario(wide);
    CHECK(w.parallel.dp == 6);
    CHECK(w.inference.disaggregation.link_GBps == Approx(w.system.inter_node_GBps * w.system.inter_node_efficiency));
    CHECK(to_json(s)["inference"]["disaggregation"]["prefill_gpus"] == 4);

    auto with = [&](const char* key, Json v) {
        Json d = ok;
        d["inference"]["disaggregation"][key] = std::move(v);
        return error_of(d);
    };
    CHECK_THAT(with("prefill_gpus", 8),
               Catch::Contains("/inference/disaggregation/prefill_gpus: 8") && Catch::Contains("fewer than /gpus (8)"));
    CHECK_THAT(with("prefill_gpus", 3), Catch::Contains("/inference/disaggregation/prefill_gpus: 3") &&
                                            Catch::Contains("multiple of prefill_tp (2)"));
    Json three = ok;   // Llama-3-70B's 64 heads do not split 3 ways
    three["inference"]["disaggregation"] = {{"prefill_gpus", 6}, {"prefill_tp", 3}};
    CHECK_THAT(error_of(three), Catch::Contains("/inference/disaggregation/prefill_tp: 3"));
    CHECK_THAT(with("link_GBps", 0), Catch::Contains("/inference/disaggregation/link_GBps: 0"));
    CHECK_THAT(with("prefil_tp", 1),
               Catch::Contains("/inference/disaggregation/prefil_tp") && Catch::Contains("prefill_tp"));
    Json odd = ok;
    odd["gpus"] = 7;   // 7 - 4 = 3 decode GPUs for replicas of tp 2
    CHECK_THAT(error_of(odd), Catch::Contains("/gpus: 7") && Catch::Contains("prefill_gpus (4) + a multiple"));
    Json none = ok;
    none["inference"]["disaggregation"].erase("prefill_gpus");
    CHECK_THAT(error_of(none), Catch::Contains("/inference/disaggregation/prefill_gpus: missing"));
    Json fixed = ok;   // a static batch has no stream to split
    fixed["inference"]["batching"] = "static";
    fixed["inference"].erase("qps");
    CHECK_THAT(error_of(fixed), Catch::Contains("/inference/disaggregation"));
}

TEST_CASE("disaggregation: each pool must hold the model; the colocated search refuses pools", "[disaggregation]") {
    // Llama-3-70B in bf16 (~131 GiB) on one 80 GB H100: the prefill pool at tp 1 cannot hold it.
    Json doc = deployment(2, {{"qps", 1.0}, {"weight_precision", "bf16"}, {"disaggregation", {{"prefill_tp", 1}}}});
    const auto fit = app::serving_fit(parse_scenario(doc));
    CHECK_FALSE(fit.fits);
    CHECK_THAT(fit.reason, Catch::StartsWith("prefill pool: weights"));
    Json search = deployment(4, {{"qps", 4.0}, {"slo", {{"ttft_p99_s", 2.0}}}});
    CHECK_THROWS_WITH(sim::capacity_groups(parse_scenario(search), 16),
                      Catch::Contains("/inference/disaggregation: this search sizes colocated"));
}

TEST_CASE("disaggregation: the fewest pools meet the SLO fed back, and one replica fewer in either misses",
          "[disaggregation][capacity][heavy]") {
    Json doc = deployment(6, {{"input_len", {{"mean", 2000}, {"dist", "lognormal"}, {"stdev", 800}}},
                              {"output_len", {{"mean", 200}, {"dist", "lognormal"}, {"stdev", 100}}},
                              {"qps", 12.0},
                              {"slo", {{"ttft_p99_s", 2.0}, {"tpot_p99_s", 0.04}}}});
    const Scenario s = parse_scenario(doc);
    const auto r = sim::fewest_pools(s, 16);
    REQUIRE(r.best);
    const auto& b = *r.best;
    CHECK(b.meets);
    CHECK(b.gpus() <= 16);
    CHECK(b.gpus() == 2 * (b.prefill_replicas + b.decode_replicas));
    // The answer as a scenario: the stream the search judged it on meets the SLO; one replica fewer in
    // either pool misses it.
    Scenario at = s;
    at.inference.requests = sim::capacity_stream_requests(s.inference);
    auto run = [&](int p, int d) { return sim::simulate_serving(sim::pool_scenario(at, p, d).serving_job()); };
    CHECK(run(b.prefill_replicas, b.decode_replicas).slo_met);
    if (b.prefill_replicas > 1) CHECK_FALSE(run(b.prefill_replicas - 1, b.decode_replicas).slo_met);
    if (b.decode_replicas > 1) CHECK_FALSE(run(b.prefill_replicas, b.decode_replicas - 1).slo_met);
    // The colocated deployment of the same question needs more GPUs (DistServe's regime).
    const auto fleet = app::disaggregated_fleet_search(s, 16, 1);
    REQUIRE_FALSE(fleet.colocated.search.best.empty());
    CHECK(fleet.colocated.search.best.front().gpus() > b.gpus());
    Json none = doc;
    none["inference"]["qps"] = 500.0;
    CHECK_FALSE(sim::fewest_pools(parse_scenario(none), 8).best);
}

TEST_CASE("disaggregation: offline, the slower pool's saturated rate, whatever the batch's size", "[disaggregation]") {
    // scenarios/llama3-70b-h100-disaggregated.json: 3 prefill replicas and 1 decode replica of tp 2, 2,000-token
    // prompts. The decode pool binds; its rate from the first landing to its last token counted its fill and
    // drain, so 3,000 requests read 19.14 req/s and 30,000 21.55, and the capacity (19.63) was above the
    // offline rate the same output printed (19.14).
    const Json lengths = {{"input_len", {{"mean", 2000}, {"dist", "lognormal"}, {"stdev", 800}}},
                          {"output_len", {{"mean", 200}, {"dist", "lognormal"}, {"stdev", 100}}},
                          {"slo", {{"ttft_p99_s", 2.0}, {"tpot_p99_s", 0.04}}}};
    auto offline = [&](std::int64_t requests) {
        Json in = lengths;
        in["requests"] = requests;
        return simulate(deployment(6, in));
    };
    const auto few = offline(3000), many = offline(30000);
    CHECK(few.steadiness.long_enough);
    CHECK(few.requests_per_s / many.requests_per_s == Approx(1.0).margin(0.03));
    Json in = lengths;
    in["qps"] = 16;
    in["requests"] = 10000;
    in["qps"] = "max";
    const auto c = app::slo_capacity(parse_scenario(deployment(6, in)));
    REQUIRE(c.qps > 0);
    CHECK(c.qps <= c.offline_qps);
    CHECK(c.offline_qps / many.requests_per_s == Approx(1.0).margin(0.03));
}
