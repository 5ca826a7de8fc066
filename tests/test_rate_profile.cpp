// A rate that varies (inference.rate_profile): the arrival rate piecewise constant over equal slices of a
// repeating period, qps its mean; the stream is the stationary one with its clock changed, and the result
// reports each slice (docs/serving.md "A rate that varies").
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cost_models/memory.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/scenario.hpp"
#include "sim/serving.hpp"

using namespace llmsim;

namespace {

Scenario serving(Json inference) {
    Json j = {{"model", "llama-3-8b"},
              {"system", "dgx-h100"},
              {"gpus", 1},
              {"parallel", {{"tp", 1}, {"pp", 1}}},
              {"inference", std::move(inference)}};
    return parse_scenario(j);
}

Json stream(double qps, std::int64_t requests, Json profile) {
    Json in = {{"batching", "continuous"},
               {"weight_precision", "fp8"},
               {"kv_precision", "fp8"},
               {"input_len", {{"mean", 500}, {"dist", "exponential"}}},
               {"output_len", 100},
               {"requests", requests},
               {"qps", qps}};
    if (!profile.is_null()) in["rate_profile"] = std::move(profile);
    return in;
}

std::string problems(Json inference) {
    try {
        (void)serving(std::move(inference));
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

}   // namespace

TEST_CASE("rate profile: levels are read relative, scaled to mean 1, and echoed", "[serving][profile]") {
    const Scenario s = serving(stream(10, 100, {{"period_s", 100}, {"levels", {2, 6}}}));
    const auto& p = s.inference.rate_profile;
    REQUIRE(p.enabled());
    CHECK(p.period_s == 100);
    REQUIRE(p.levels.size() == 2);
    CHECK(p.levels[0] == Approx(0.5));
    CHECK(p.levels[1] == Approx(1.5));
    CHECK(p.slice_s() == 50);
    const Json echo = to_json(s)["inference"]["rate_profile"];
    CHECK(echo["period_s"] == 100.0);
    CHECK(echo["levels"][1].get<double>() == Approx(1.5));
    // The period defaults to a day.
    CHECK(serving(stream(10, 100, {{"levels", {1, 1, 2}}})).inference.rate_profile.period_s == 86400);
}

TEST_CASE("rate profile: bad values name their pointer", "[serving][profile][errors]") {
    struct Bad {
        Json profile;
        const char* pointer;
    };
    const std::vector<Bad> bad = {
        {{{"period_s", 100}, {"levels", Json::array()}}, "/inference/rate_profile/levels"},
        {{{"period_s", 100}, {"levels", {1, -1}}}, "/inference/rate_profile/levels"},
        {{{"period_s", 100}, {"levels", {0, 0}}}, "/inference/rate_profile/levels"},
        {{{"period_s", 100}, {"levels", {1, "2"}}}, "/inference/rate_profile/levels"},
        {{{"period_s", 100}, {"levels", 3}}, "/inference/rate_profile/levels"},
        {{{"period_s", 100}}, "/inference/rate_profile/levels: missing"},
        {{{"period_s", 0}, {"levels", {1}}}, "/inference/rate_profile/period_s"},
        {{{"period_s", 100}, {"levels", {1}}, {"shape", "sine"}}, "/inference/rate_profile/shape"},
    };
    for (const auto& b : bad) {
        INFO(b.profile.dump());
        CHECK_THAT(problems(stream(10, 100, b.profile)), Catch::Contains(b.pointer));
    }
    std::vector<double> many(10081, 1.0);
    CHECK_THAT(problems(stream(10, 100, {{"levels", many}})), Catch::Contains("/inference/rate_profile/levels"));
    // Offline: no rate to vary.
    Json offline = stream(10, 100, {{"levels", {1, 2}}});
    offline.erase("qps");
    CHECK_THAT(problems(offline), Catch::Contains("/inference/rate_profile") && Catch::Contains("offline"));
}

TEST_CASE("rate profile: the clock change of the stationary stream, by hand", "[serving][profile]") {
    RateProfile p;
    p.period_s = 100;
    p.levels = {0.5, 1.5};   // slices of 50 s holding 25 and 75 mean-rate seconds
    const sim::ProfileClock clock(p);
    CHECK(clock(0) == 0);
    CHECK(clock(25) == Approx(50));   // the first slice's 25 s of mean-rate arrivals take its 50 s
    CHECK(clock(40) == Approx(50 + 15 / 1.5));
    CHECK(clock(100) == Approx(100));     // one period
    CHECK(clock(112.5) == Approx(125));   // into the next period's first slice
    RateProfile z;
    z.period_s = 100;
    z.levels = {0.0, 2.0};   // no arrivals in the first half
    const sim::ProfileClock zc(z);
    CHECK(zc(0.5) == Approx(50.25));
    CHECK(zc(150) == Approx(175));
    const RateProfile none;
    CHECK(sim::ProfileClock(none)(12.5) == 12.5);
}

TEST_CASE("rate profile: arrivals follow the levels, the mean rate and the lengths are kept", "[serving][profile]") {
    // 10 req/s mean, a quarter of the period at 0.5x, a quarter at 1.5x, half at 1x: 40 periods of 100 s.
    const Scenario s = serving(stream(10, 40000, {{"period_s", 100}, {"levels", {1, 3, 2, 2}}}));
    const Scenario flat = serving(stream(10, 40000, nullptr));
    const auto reqs = sim::request_stream(s.inference);
    const auto same = sim::request_stream(flat.inference);
    REQUIRE(reqs.size() == same.size());
    std::vector<double> per_slice(4, 0.0);
    bool lengths_kept = true;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
        per_slice[static_cast<std::size_t>(std::fmod(reqs[i].arrival_s, 100.0) / 25.0)] += 1;
        lengths_kept = lengths_kept && reqs[i].input == same[i].input && reqs[i].output == same[i].output;
    }
    CHECK(lengths_kept);
    CHECK(std::is_sorted(reqs.begin(), reqs.end(),
                         [](const sim::Request& a, const sim::Request& b) { return a.arrival_s < b.arrival_s; }));
    // The stream spans ~40 periods at a mean of 10 req/s (Poisson counts: 1% is several sigma here).
    CHECK(reqs.back().arrival_s == Approx(same.back().arrival_s).epsilon(0.01));
    const double total = static_cast<double>(reqs.size());
    CHECK(per_slice[0] / total == Approx(0.125).epsilon(0.04));
    CHECK(per_slice[1] / total == Approx(0.375).epsilon(0.02));
    CHECK(per_slice[2] / total == Approx(0.25).epsilon(0.03));
}

TEST_CASE("rate profile: each slice reported; a peak past capacity misses only there", "[serving][profile]") {
    // One H100 replica of Llama-3-8B: ~104 req/s offline at 500 in / 100 out. A quiet half at 0.25x and a
    // peak half at 1.75x of 64 req/s mean: 16 and 112 req/s, the peak past what the replica holds.
    Json in = stream(64, 38000, {{"period_s", 600}, {"levels", {1, 7}}});   // one period
    in["slo"] = {{"ttft_p99_s", 0.25}};
    const auto r = sim::simulate_serving(serving(in).serving_job());
    REQUIRE(r.windows.size() == 2);
    const auto& quiet = r.windows[0];
    const auto& peak = r.windows[1];
    CHECK(quiet.start_s == 0);
    CHECK(quiet.end_s == 300);
    CHECK(peak.end_s == 600);
    CHECK(quiet.level == Approx(0.25));
    CHECK(quiet.requests + peak.requests == r.requests);
    CHECK(quiet.offered_qps == Approx(16).epsilon(0.05));
    CHECK(peak.offered_qps == Approx(112).epsilon(0.03));
    CHECK(quiet.slo_attainment > 0.99);
    CHECK(peak.ttft_s.p99 > 10 * quiet.ttft_s.p99);
    CHECK(peak.slo_attainment < quiet.slo_attainment);
    CHECK(!r.slo_met);
    // Without an SLO there is no attainment.
    in.erase("slo");
    const auto u = sim::simulate_serving(serving(in).serving_job());
    CHECK(u.windows[0].slo_attainment == -1);
}

TEST_CASE("rate profile: a stream that ends inside the period says so", "[serving][profile]") {
    // 20 req/s mean over an hour wants ~72,000 requests; 2,000 reach about 100 s into it.
    const auto r =
        sim::simulate_serving(serving(stream(20, 2000, {{"period_s", 3600}, {"levels", {1, 1, 1, 1}}})).serving_job());
    CHECK(!r.steadiness.covers_period);
    CHECK(!r.steadiness.long_enough);
    REQUIRE(r.windows.size() == 4);
    CHECK(r.windows[0].requests == 2000);
    CHECK(r.windows[3].requests == 0);
    CHECK(r.windows[3].offered_qps == 0);
    const auto whole =
        sim::simulate_serving(serving(stream(20, 80000, {{"period_s", 3600}, {"levels", {1, 1, 1, 1}}})).serving_job());
    CHECK(whole.steadiness.covers_period);
}

TEST_CASE("window_s: the stream reported in windows from its start, bounded", "[serving][profile]") {
    // 10 req/s for ~100 s in 30-s windows: four windows, the last partly spanned; no profile levels.
    Json in = stream(10, 1000, nullptr);
    in["window_s"] = 30;
    in["slo"] = {{"ttft_p99_s", 1.0}};
    const Scenario s = serving(in);
    CHECK(to_json(s)["inference"]["window_s"] == 30.0);
    const auto reqs = sim::request_stream(s.inference);
    const auto r = sim::simulate_serving(s.serving_job());
    const auto n = static_cast<std::size_t>(std::ceil(reqs.back().arrival_s / 30.0));
    REQUIRE(r.windows.size() == n);
    std::int64_t total = 0;
    for (const auto& w : r.windows) {
        total += w.requests;
        CHECK(w.level == -1);
        CHECK(w.end_s - w.start_s == 30);
    }
    CHECK(total == r.requests);
    CHECK(r.windows[0].offered_qps == Approx(10).epsilon(0.25));   // ~300 Poisson arrivals
    CHECK(r.windows[0].slo_attainment == Approx(1.0));
    // The last window's rate counts only the part of it the arrivals span.
    const double spanned = reqs.back().arrival_s - r.windows.back().start_s;
    CHECK(r.windows.back().offered_qps == Approx(static_cast<double>(r.windows.back().requests) / spanned));
    // Windows are bounded as a profile's slices are (10,080): refused before anything runs, naming the key.
    in["window_s"] = 0.001;
    try {
        (void)sim::simulate_serving(serving(in).serving_job());
        FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
        CHECK_THAT(e.what(), Catch::Contains("/inference/window_s") && Catch::Contains("10080"));
    }
    Json offline = stream(10, 100, nullptr);
    offline.erase("qps");
    offline["window_s"] = 10;
    CHECK_THAT(problems(offline), Catch::Contains("/inference/window_s"));
    offline["window_s"] = 0;
    CHECK_THAT(problems(offline), Catch::Contains("/inference/window_s"));
}

TEST_CASE("rate profile: a capacity stream that cannot span the period is refused, not judged on part of it",
          "[serving][profile]") {
    // 100 req/s over a day's period: 8.64 million requests per judged stream, past the 2,000,000 bound.
    Json in = stream(100, 1000, {{"levels", {1, 3}}});
    in["slo"] = {{"ttft_p99_s", 1.0}};
    const Scenario day = serving(in);
    try {
        (void)sim::capacity_stream_requests(day.inference);
        FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
        CHECK_THAT(e.what(), Catch::Contains("/inference/rate_profile/period_s") && Catch::Contains("shorter period") &&
                                 Catch::Contains("2000000"));
    }
    // The same levels over an hour span it: 360,000 requests.
    in["rate_profile"]["period_s"] = 3600;
    CHECK(sim::capacity_stream_requests(serving(in).inference) == 360000);
}

namespace {

// Four H100 replicas of Llama-3-8B fp8 under a 10-minute period: a quiet first half (a quarter of the mean
// rate), a busy second half (1.75x), each replica aimed at `target` requests in the system.
Scenario autoscaled(double qps, std::int64_t requests, Json autoscale) {
    Json in = stream(qps, requests, {{"period_s", 600}, {"levels", {1, 7}}});
    in["autoscale"] = std::move(autoscale);
    Json j = {{"model", "llama-3-8b"},
              {"system", "dgx-h100"},
              {"gpus", 4},
              {"parallel", {{"tp", 1}, {"pp", 1}}},
              {"inference", std::move(in)}};
    return parse_scenario(j);
}

}   // namespace

TEST_CASE("autoscale: replicas follow the load after their cold start; GPU-hours are those held",
          "[serving][autoscale]") {
    const Json policy = {{"target_outstanding", 8}, {"storage_GBps", 2}, {"engine_start_s", 20}};
    const Scenario s = autoscaled(24, 14400, policy);   // one 600-s period
    REQUIRE(s.inference.autoscale.enabled());
    CHECK(s.inference.autoscale.max_replicas == 4);   // unset: the deployment's replicas
    CHECK(to_json(s)["inference"]["autoscale"]["max_replicas"] == 4);
    sim::ServingOptions opt;
    opt.timeline = true;
    const auto r = sim::simulate_serving(s.serving_job(), opt);
    REQUIRE(r.autoscale);
    const auto& a = *r.autoscale;
    // The cold start: the replica's weights (every GPU's shard) at 2 GB/s, then the engine's 20 s.
    const auto mem = inference_memory(s.model, s.system, s.parallel, s.inference);
    CHECK(a.cold_start_s == Approx(mem.weights_bytes / 2e9 + 20.0));
    CHECK(a.cold_start_s > 20.0);
    // One replica at t = 0 (min_replicas), more when the busy half comes, all held at its height.
    REQUIRE(a.held.size() >= 2);
    CHECK(a.held.front() == std::pair<double, int>{0.0, 1});
    CHECK(a.peak_replicas == 4);
    CHECK(a.scale_ups >= 3);
    REQUIRE(r.windows.size() == 2);
    CHECK(r.windows[0].mean_replicas == Approx(1.0).margin(0.2));
    CHECK(r.windows[1].mean_replicas > 2.5);
    // A replica started at t serves nothing before t + its cold start.
    const double first_up = a.held[1].first;
    double first_start = std::numeric_limits<double>::infinity();   // of any iteration off replica 0
    for (const auto& it : r.timeline)
        if (it.replica > 0) first_start = std::min(first_start, it.start_s);
    CHECK(first_start >= first_up + a.cold_start_s - 1e-9);
    CHECK(first_start < 600.0);
    // Held replica-time, summed, is the GPU-hours; fewer than the fixed deployment's four for the makespan.
    CHECK(a.gpu_hours == Approx(a.replica_hours));   // tp 1, pp 1
    CHECK(a.mean_replicas == Approx(a.replica_hours * 3600 / r.makespan_s));
    CHECK(a.mean_replicas < 4.0);
    CHECK(a.mean_replicas > 1.0);
    // Every request served; the same seed gives the same fleet.
    CHECK(r.requests == 14400);
    const auto again = sim::simulate_serving(s.serving_job(), opt);
    CHECK(again.autoscale->held == a.held);
    CHECK(again.ttft_s.p99 == r.ttft_s.p99);
}

TEST_CASE("autoscale: a load under one replica's target never scales; the bounds hold", "[serving][autoscale]") {
    // At 1 req/s a replica holds about one request: one replica throughout, its GPU-hours the makespan's.
    const auto r =
        sim::simulate_serving(autoscaled(1, 600, {{"target_outstanding", 64}, {"storage_GBps", 2}}).serving_job());
    REQUIRE(r.autoscale);
    CHECK(r.autoscale->scale_ups == 0);
    CHECK(r.autoscale->peak_replicas == 1);
    CHECK(r.autoscale->replica_hours == Approx(r.makespan_s / 3600));
    // max_replicas caps the fleet whatever the load asks.
    const auto capped = sim::simulate_serving(
        autoscaled(24, 14400, {{"target_outstanding", 1}, {"storage_GBps", 2}, {"max_replicas", 2}}).serving_job());
    CHECK(capped.autoscale->peak_replicas == 2);
}

TEST_CASE("autoscale: bad values and combinations name their pointer", "[serving][autoscale][errors]") {
    auto err = [](Json policy, double qps = 10) {
        try {
            (void)autoscaled(qps, 100, std::move(policy));
        } catch (const ConfigError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(err({{"storage_GBps", 2}}).find("/inference/autoscale/target_outstanding: missing") != std::string::npos);
    CHECK(err({{"target_outstanding", 8}}).find("/inference/autoscale/storage_GBps: missing") != std::string::npos);
    CHECK(err({{"target_outstanding", 0}, {"storage_GBps", 2}}).find("/inference/autoscale/target_outstanding: 0") !=
          std::string::npos);
    CHECK(err({{"target_outstanding", 8}, {"storage_GBps", 2}, {"max_replicas", 5}})
              .find("/inference/autoscale/max_replicas: 5: expected at most the deployment's replicas") !=
          std::string::npos);
    CHECK(err({{"target_outstanding", 8}, {"storage_GBps", 2}, {"min_replicas", 3}, {"max_replicas", 2}})
              .find("/inference/autoscale/min_replicas: 3: expected at most max_replicas (2)") != std::string::npos);
    CHECK(err({{"target_outstanding", 8}, {"storage_GBps", 2}, {"surge", 1}}).find("unknown key \"surge\"") !=
          std::string::npos);
    // Offline there is no stream to follow (the rate profile is refused there too, each named).
    CHECK(err({{"target_outstanding", 8}, {"storage_GBps", 2}}, 0).find("/inference/autoscale") != std::string::npos);
    // A search sizes fixed deployments.
    const Scenario s = autoscaled(10, 100, {{"target_outstanding", 8}, {"storage_GBps", 2}});
    CHECK_THROWS_WITH(sim::refuse_autoscale(s, "the serving search"),
                      Catch::Contains("/inference/autoscale: the serving search sizes fixed deployments"));
}

namespace {
// Chat turns (the stream's lengths) beside long summaries with their own lengths and SLO.
Json classes_stream(double qps, std::int64_t requests, Json summary_slo = {{"ttft_p99_s", 10.0}}) {
    Json in = {{"batching", "continuous"},
               {"weight_precision", "fp8"},
               {"kv_precision", "fp8"},
               {"input_len", 300},
               {"output_len", 100},
               {"requests", requests},
               {"qps", qps},
               {"slo", {{"ttft_p99_s", 0.5}}}};
    in["classes"] = {{"chat", {{"share", 3}}},
                     {"summary", {{"share", 1}, {"input_len", 3000}, {"output_len", 200}, {"slo", summary_slo}}}};
    return in;
}
}   // namespace

TEST_CASE("classes: shares normalised, lengths the scenario's unless stated, the mixture's moments, echoed",
          "[serving][classes]") {
    const Scenario s = serving(classes_stream(5, 100));
    const auto& c = s.inference.classes;
    REQUIRE(c.size() == 2);
    CHECK(c[0].name == "chat");
    CHECK(c[0].share == Approx(0.75));
    CHECK(c[1].share == Approx(0.25));
    CHECK(c[0].input_dist.mean == 300);   // the scenario's
    CHECK(c[1].input_dist.mean == 3000);
    CHECK(*c[0].slo.ttft_p99_s == 0.5);   // the scenario's
    CHECK(*c[1].slo.ttft_p99_s == 10.0);
    // The mixture: mean 0.75·300 + 0.25·3000 = 975; variance 0.75·300² + 0.25·3000² − 975² = 1,366,875.
    CHECK(s.inference.input_dist.mean == Approx(975));
    CHECK(s.inference.input_dist.stdev == Approx(std::sqrt(1366875.0)));
    CHECK(s.inference.input_len == 975);
    CHECK(s.inference.output_dist.mean == Approx(125));
    CHECK(s.inference.input_dist.min == 300);
    CHECK(s.inference.input_dist.max == 3000);
    const Json echo = to_json(s);
    CHECK(echo["inference"]["classes"]["chat"]["share"].get<double>() == Approx(0.75));
    CHECK(echo["inference"]["classes"]["summary"]["input_len"].get<double>() == 3000);
    CHECK(echo["inference"]["classes"]["summary"]["slo"]["ttft_p99_s"].get<double>() == 10.0);
    CHECK(echo["inference"]["classes"]["chat"]["slo"]["ttft_p99_s"].get<double>() == 0.5);   // the scenario's
}

TEST_CASE("classes: each request drawn by share with its class's lengths", "[serving][classes]") {
    const Scenario s = serving(classes_stream(5, 20000));
    const auto reqs = sim::request_stream(s.inference);
    double summaries = 0;
    for (const auto& r : reqs) {
        REQUIRE((r.cls == 0 || r.cls == 1));
        CHECK(r.input == (r.cls == 0 ? 300 : 3000));
        CHECK(r.output == (r.cls == 0 ? 100 : 200));
        summaries += r.cls == 1 ? 1 : 0;
    }
    // A quarter, within four binomial standard deviations (sqrt(20000·0.25·0.75) = 61).
    CHECK(std::fabs(summaries - 5000) < 4 * 61.3);
    // Without classes no request has one.
    for (const auto& r : sim::request_stream(serving(stream(5, 50, nullptr)).inference)) CHECK(r.cls == -1);
}

TEST_CASE("classes: every class judged on its own SLO; the stream meets it only when every class does",
          "[serving][classes]") {
    const Scenario s = serving(classes_stream(4, 3000));
    const auto r = sim::simulate_serving(s.serving_job());
    REQUIRE(r.classes.size() == 2);
    CHECK(r.classes[0].requests + r.classes[1].requests == r.requests);
    CHECK(r.classes[0].mean_input == 300);
    CHECK(r.classes[1].mean_input == 3000);
    // Long prompts wait longer for their first token.
    CHECK(r.classes[1].ttft_s.p99 > r.classes[0].ttft_s.p99);
    for (std::size_t k = 0; k < 2; ++k)
        CHECK(r.classes[k].slo_met == (r.classes[k].ttft_s.p99 <= *s.inference.classes[k].slo.ttft_p99_s));
    CHECK(r.slo_met == (r.classes[0].slo_met && r.classes[1].slo_met && r.steadiness.keeps_up));
    // A target no summary can meet: the stream misses, and the miss names the class.
    const Scenario strict = serving(classes_stream(4, 3000, {{"ttft_p99_s", 0.001}}));
    const auto m = sim::simulate_serving(strict.serving_job());
    CHECK_FALSE(m.slo_met);
    CHECK_FALSE(m.classes[1].slo_met);
    const auto misses = sim::stream_slo_misses(strict.inference, m);
    REQUIRE_FALSE(misses.empty());
    CHECK(misses.front().cls == "summary");
    CHECK(m.classes[1].slo_attainment < 0.01);
}

TEST_CASE("classes: bad values and combinations name their pointer", "[serving][classes][errors]") {
    auto with = [](Json classes, Json extra = Json::object()) {
        Json in = stream(5, 100, nullptr);
        in["slo"] = {{"ttft_p99_s", 1}};
        in["classes"] = std::move(classes);
        for (auto it = extra.begin(); it != extra.end(); ++it) in[it.key()] = *it;
        return problems(in);
    };
    CHECK_THAT(with(Json::array()), Catch::Contains("/inference/classes: []"));
    CHECK_THAT(with(Json::object()), Catch::Contains("/inference/classes: {}"));
    CHECK_THAT(with({{"a b", {{"share", 1}}}}), Catch::Contains("/inference/classes: a class named \"a b\""));
    CHECK_THAT(with({{"x", {{"share", 0}}}}), Catch::Contains("/inference/classes/x/share: 0"));
    CHECK_THAT(with({{"x", {{"share", -1}}}}), Catch::Contains("/inference/classes/x/share: -1"));
    CHECK_THAT(with({{"x", Json::object()}}), Catch::Contains("/inference/classes/x/share"));
    CHECK_THAT(with({{"x", 3}}), Catch::Contains("/inference/classes/x: 3"));
    CHECK_THAT(with({{"x", {{"share", 1}, {"color", 1}}}}), Catch::Contains("/inference/classes/x/color"));
    CHECK_THAT(with({{"x", {{"share", 1}, {"input_len", 0}}}}), Catch::Contains("/inference/classes/x/input_len: 0"));
    CHECK_THAT(with({{"x", {{"share", 1}, {"slo", {{"ttft_p99_s", -1}}}}}}),
               Catch::Contains("/inference/classes/x/slo/ttft_p99_s: -1"));
    // A class SLO beside no scenario SLO.
    Json in = stream(5, 100, nullptr);
    in["classes"] = {{"x", {{"share", 1}, {"slo", {{"ttft_p99_s", 1}}}}}};
    CHECK_THAT(problems(in), Catch::Contains("/inference/classes/x/slo"));
    // With a trace, whose rows give every request's lengths.
    Json tr = {{"batching", "continuous"},
               {"arrivals", std::string(LLMSIM_SOURCE_DIR) + "/scenarios/traces/chat-day.csv"},
               {"classes", {{"x", {{"share", 1}}}}}};
    CHECK_THAT(problems(tr), Catch::Contains("/inference/classes"));
    // Too many classes.
    Json many = Json::object();
    for (int i = 0; i <= 64; ++i) many[fmt::format("c{}", i)] = {{"share", 1}};
    CHECK_THAT(with(many), Catch::Contains("/inference/classes"));
}

TEST_CASE("classes: a class whose request cannot fit the model's context is named", "[serving][classes][errors]") {
    Json in = classes_stream(5, 100);
    in["classes"]["summary"]["input_len"] = 9000;   // Llama-3-8B: 8,192 tokens of context
    CHECK_THAT(problems(in), Catch::Contains("/inference/classes/summary/input_len: 9000"));
    CHECK_THAT(problems(in), !Catch::Contains("/inference/classes/chat"));
}
