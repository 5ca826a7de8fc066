// The discrete-event step simulator: bubbles of the textbook schedules, memory in flight, traces,
// agreement with the closed form on the shared validation set.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "cost_models/layout.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/scenario.hpp"
#include "sim/engine.hpp"
#include "sim/parallel.hpp"
#include "sim/step_sim.hpp"

using namespace llmsim;
using namespace llmsim::sim;

namespace {

// Equal stages, free communication, no optimizer: only the schedule shapes the step.
StepCosts equal_stages(int p, std::int64_t m, double f, double b, double w = 0.0) {
    StepCosts c;
    c.microbatches = m;
    for (int s = 0; s < p; ++s) {
        StageCost st;
        st.stage = s;
        st.layers = 4;
        st.fwd_s = f;
        st.bwd_s = b;
        st.wgrad_s = w;
        st.compute_s = f + b;
        c.stages.push_back(st);
    }
    return c;
}

PipelineSetup setup_for(const char* schedule, int vp = 1, double act_bytes = 0, int p = 0) {
    PipelineSetup s;
    s.schedule = find_schedule(schedule);
    REQUIRE(s.schedule != nullptr);
    s.vp = vp;
    if (act_bytes > 0) s.activation_bytes.assign(static_cast<std::size_t>(p), act_bytes);
    return s;
}

}   // namespace

TEST_CASE("schedule registry knows the four schedules by name", "[sim]") {
    for (const char* n : {"gpipe", "1f1b", "interleaved", "zero-bubble", "zb-h1"}) CHECK(find_schedule(n) != nullptr);
    CHECK(find_schedule("pipedream-2bw") == nullptr);
    CHECK(schedules().size() == 4);
}

TEST_CASE("every registered schedule: the simulated bubble equals its closed-form bubble on uniform stages", "[sim]") {
    // The registry's promise: a schedule added to schedules/registry.cpp is played by the simulator and
    // priced by the closed form, and the two agree where the closed form is exact (uniform stages,
    // free communication, m a multiple of p).
    StepSimulator sim;
    for (const ScheduleDef& def : schedules())
        for (int p : {2, 4})
            for (std::int64_t m : {std::int64_t(p), std::int64_t(4 * p)}) {
                const int v = def.uses_chunks ? 2 : 1;
                const double f = 1.0, b = 2.0, w = def.split_backward ? 1.0 : 0.0;
                PipelineSetup setup;
                setup.schedule = &def;
                setup.vp = v;
                const auto& r = sim.run(equal_stages(p, m, f, b, w), setup);
                PipelineTimes t;
                t.stages = p;
                t.chunks = v;
                t.microbatches = m;
                t.max_stage_s = f + b;
                t.sum_stage_s = p * (f + b);
                t.sum_wgrad_s = p * w;
                t.wgrad_of_max_stage_s = w;
                INFO(def.name << " p=" << p << " m=" << m << " v=" << v);
                CHECK(r.bubble_s == Approx(def.bubble_s(t)).margin(1e-9));
                CHECK(r.pipeline_time_s == Approx(m * (f + b) + def.bubble_s(t)).epsilon(1e-12));
            }
}

TEST_CASE("engine: streams are in order, dependencies hold, ties are deterministic", "[sim]") {
    Engine e;
    e.reset(2);
    const int a = e.add(1.0, 0, {});
    const int b = e.add(2.0, 0, {});
    const int c = e.add(0.5, 1, {});
    e.depend(a, c);
    e.run();
    CHECK(e.task(a).start == 0.0);
    CHECK(e.task(b).start == 1.0);
    CHECK(e.task(c).start == 1.0);
    CHECK(e.makespan() == 3.0);
}

TEST_CASE("engine: a dependency cycle is reported, not hung", "[sim]") {
    Engine e;
    e.reset(2);
    const int a = e.add(1.0, 0, {});
    const int b = e.add(1.0, 1, {});
    e.depend(a, b);
    e.depend(b, a);
    CHECK_THROWS_AS(e.run(), std::logic_error);
}

TEST_CASE("GPipe and 1F1B bubble = (p-1)/(m+p-1) with equal stages and free communication", "[sim]") {
    StepSimulator sim;
    for (const char* sched : {"gpipe", "1f1b"})
        for (int p : {1, 2, 4, 8})
            for (std::int64_t m : {1, 3, 8, 32})
                for (auto fb : {std::pair{1.0, 2.0}, std::pair{0.3, 0.7}}) {
                    const auto& r = sim.run(equal_stages(p, m, fb.first, fb.second), setup_for(sched));
                    INFO(sched << " p=" << p << " m=" << m << " f=" << fb.first);
                    CHECK(r.bubble_fraction == Approx(double(p - 1) / double(m + p - 1)).margin(1e-9));
                    CHECK(r.pipeline_time_s == Approx((m + p - 1) * (fb.first + fb.second)).epsilon(1e-12));
                }
}

TEST_CASE("interleaved bubble = (p-1)/(v*m+p-1) with equal stages and free communication", "[sim]") {
    StepSimulator sim;
    for (int p : {2, 4, 8})
        for (int v : {2, 3, 4})
            for (std::int64_t m : {std::int64_t(p), std::int64_t(2 * p), std::int64_t(4 * p)}) {
                const auto& r = sim.run(equal_stages(p, m, 1.0, 2.0), setup_for("interleaved", v));
                INFO("p=" << p << " v=" << v << " m=" << m);
                CHECK(r.bubble_fraction == Approx(double(p - 1) / double(v * m + p - 1)).margin(1e-9));
            }
}

TEST_CASE("interleaved with m not a multiple of p still completes", "[sim]") {
    StepSimulator sim;
    const auto& r = sim.run(equal_stages(4, 6, 1.0, 2.0), setup_for("interleaved", 2));
    CHECK(r.pipeline_time_s >= 6 * 3.0);
}

TEST_CASE("ZB-H1 has a smaller bubble than 1F1B and matches (p-1)(t_f + t_b - 2 t_w)", "[sim]") {
    StepSimulator sim;
    for (int p : {2, 4, 8}) {
        const std::int64_t m = 4 * p;
        const double f = 1.0, b = 2.0, w = 1.0;   // B (input gradient) = W = 1
        const double one_f_one_b = sim.run(equal_stages(p, m, f, b, w), setup_for("1f1b")).pipeline_time_s;
        const auto& r = sim.run(equal_stages(p, m, f, b, w), setup_for("zero-bubble"));
        INFO("p=" << p);
        CHECK(r.pipeline_time_s < one_f_one_b);
        CHECK(r.bubble_s == Approx((p - 1) * (f + b - 2 * w)).epsilon(1e-9));
    }
}

TEST_CASE("1F1B stage s holds p-s micro-batches at its peak, GPipe m, interleaved the analytic count", "[sim]") {
    StepSimulator sim;
    const int p = 8;
    const std::int64_t m = 24;
    const double bytes = 1e9;
    ParallelConfig pc;
    pc.pp = p;
    for (auto [name, sched, v] :
         {std::tuple{"1f1b", find_schedule("1f1b"), 1}, std::tuple{"gpipe", find_schedule("gpipe"), 1},
          std::tuple{"interleaved", find_schedule("interleaved"), 3},
          std::tuple{"zero-bubble", find_schedule("zero-bubble"), 1}}) {
        pc.schedule = sched;
        pc.vp = v;
        const auto& r = sim.run(equal_stages(p, m, 1.0, 2.0, 0.5), setup_for(name, v, bytes, p));
        for (int s = 0; s < p; ++s) {
            INFO(name << " stage " << s);
            const double expect = microbatches_in_flight(pc, m, s);
            CHECK(r.stages[s].peak_microbatches == Approx(expect));
            CHECK(r.stages[s].peak_activation_bytes == Approx(expect * bytes));
            if (sched == find_schedule("1f1b")) CHECK(r.stages[s].peak_microbatches == p - s);
            if (sched == find_schedule("gpipe")) CHECK(r.stages[s].peak_microbatches == m);
        }
    }
}

TEST_CASE("DP buckets overlap the last backward; the optimizer follows the last reduction", "[sim]") {
    StepSimulator sim;
    auto c = equal_stages(1, 4, 1.0, 2.0);
    c.stages[0].dp_grad_s = 1.6;
    c.stages[0].optimizer_s = 0.25;
    c.stages[0].layers = 8;
    auto st = setup_for("1f1b");
    const auto& r = sim.run(c, st);
    // 8 buckets of 0.2 s behind 8 pieces of 0.25 s: only the last bucket is exposed.
    CHECK(r.pipeline_time_s == Approx(12.0));
    CHECK(r.grad_sync_s == Approx(12.2));
    CHECK(r.step_time_s == Approx(12.45));
    st.overlap_grad_reduce = false;
    CHECK(sim.run(c, st).step_time_s == Approx(12.0 + 1.6 + 0.25));
}

TEST_CASE("overlapped pipeline send/recv is a task on its own stream", "[sim]") {
    StepSimulator sim;
    const double free_comm = sim.run(equal_stages(4, 8, 1.0, 2.0), setup_for("interleaved", 2)).pipeline_time_s;
    auto c = equal_stages(4, 8, 1.0, 2.0);
    c.pp_p2p_overlapped = true;
    for (auto& s : c.stages) s.p2p_s = 0.1;
    const auto& r = sim.run(c, setup_for("interleaved", 2));
    CHECK(r.pipeline_time_s > free_comm);
    CHECK(r.exposed.pp > 0);
    // Every send is a task of 0.1 s on a pipeline stream, never on a compute stream, and each one
    // waits for the pass whose output it carries.
    int sends = 0;
    const Engine& eng = sim.engine();
    for (const auto& t : eng.tasks()) {
        const auto k = static_cast<TaskKind>(t.tag.kind);
        if (k != TaskKind::SendAct && k != TaskKind::SendGrad) continue;
        ++sends;
        CHECK(t.dur_s == Approx(0.1));
        const int stream = t.stream % kStreamsPerStage;
        CHECK(stream == (k == TaskKind::SendAct ? kPpFwd : kPpBwd));
    }
    // 4 stages x 2 chunks x 8 micro-batches: every forward but the last chunk's on the last stage
    // sends, and every backward but the first chunk's on the first stage.
    CHECK(sends == 2 * (4 * 2 * 8 - 8));
    for (const auto& [a, b] : eng.edges()) CHECK(eng.task(b).start >= eng.task(a).end - 1e-12);
}

TEST_CASE("straggler: one slow stage slows the whole pipeline", "[sim]") {
    const Scenario s = load_scenario_file(std::string(LLMSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-a100-1024.json");
    const auto base = simulate_step(s.training_job());
    SimOptions o;
    o.straggler_stage = 3;
    o.straggler_factor = 1.2;
    const auto slow = simulate_step(s.training_job(), o);
    CHECK(slow.step_time_s > base.step_time_s * 1.1);
    CHECK(slow.method == "simulator");
}

TEST_CASE("trace is valid JSON; tasks never overlap on a stream and respect every dependency", "[sim]") {
    Scenario s = load_scenario_file(std::string(LLMSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-a100-1024.json");
    s.training.global_batch = 16 * 24;
    for (const char* sched : {"1f1b", "interleaved", "zero-bubble", "gpipe"}) {
        INFO(sched);
        Scenario sc = s;
        SimOptions o;
        o.schedule = sched;
        if (std::string(sched) == "interleaved") sc.parallel.vp = 3;
        StepSimulator sim;
        const auto e = simulate_step(sc.training_job(), o, sim);
        const Engine& eng = sim.engine();
        for (const auto& [a, b] : eng.edges()) REQUIRE(eng.task(b).start >= eng.task(a).end - 1e-15);
        std::ostringstream os;
        sim.write_trace(os);
        const Json j = Json::parse(os.str());
        REQUIRE(j.contains("traceEvents"));
        std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> tracks;
        std::map<std::string, std::pair<double, double>> named;   // "pid name" -> (ts, end)
        int counters = 0, names = 0;
        for (const auto& ev : j["traceEvents"]) {
            const auto ph = ev["ph"].get<std::string>();
            if (ph == "C") ++counters;
            if (ph == "M" && ev["name"] == "thread_name") ++names;
            if (ph != "X" || ev["cat"] != "task") continue;
            const double ts = ev["ts"].get<double>(), dur = ev["dur"].get<double>();
            tracks[{ev["pid"].get<int>(), ev["tid"].get<int>()}].emplace_back(ts, ts + dur);
            named[std::to_string(ev["pid"].get<int>()) + " " + ev["name"].get<std::string>()] = {ts, ts + dur};
        }
        CHECK(counters > 0);
        CHECK(names > 0);
        for (auto& [k, v] : tracks) {
            std::sort(v.begin(), v.end());
            for (std::size_t i = 1; i < v.size(); ++i) REQUIRE(v[i].first >= v[i - 1].second - 1e-3);
        }
        // Cross-stage dependencies seen from the trace: F mb0 on stage 1 after F mb0 on stage 0,
        // B mb0 on stage 0 after B mb0 on stage 1 (chunk 0 for interleaved).
        const std::string c0 = std::string(sched) == "interleaved" ? " c0" : "";
        REQUIRE(named.count("1 F mb0" + c0));
        CHECK(named["1 F mb0" + c0].first >= named["0 F mb0" + c0].second - 1e-3);
        const std::string b0 = "B mb0" + c0;
        REQUIRE(named.count("0 " + b0));
        REQUIRE(named.count("1 " + b0));
        CHECK(named["0 " + b0].first >= named["1 " + b0].second - 1e-3);
        CHECK(e.step_time_s > 0);
        CHECK(!sim.timeline(80).empty());
    }
}

TEST_CASE("simulate_step keeps the estimate's invariants", "[sim]") {
    const Scenario s = load_scenario_file(std::string(LLMSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-a100-1024.json");
    const auto e = simulate_step(s.training_job());
    const auto& b = e.breakdown;
    const double sum =
        b.compute + b.tp_comm + b.cp_comm + b.ep_comm + b.pp_comm + b.dp_comm + b.bubble + b.optimizer + b.offload;
    CHECK(sum == Approx(e.step_time_s).epsilon(1e-6));
    CHECK(e.mfu > 0);
    CHECK(e.mfu < 1);
    CHECK(e.tokens_per_s == Approx(e.tokens_per_step / e.step_time_s));
}

TEST_CASE("simulator agrees with the closed form within 2% on the shared validation set, or says why", "[sim]") {
    const std::string path = std::string(LLMSIM_VALIDATION_DIR) + "/training.json";
    REQUIRE(std::filesystem::exists(path));
    const Json doc = parse_json_file(path);
    int agree = 0, explained = 0;
    for (const auto& c : doc["cases"]) {
        const Scenario s = parse_scenario(c["scenario"], std::filesystem::path(path).parent_path().string());
        const auto cf = estimate_step(s.training_job());
        StepSimulator sim;
        const auto se = simulate_step(s.training_job(), {}, sim);
        const auto cmp = compare_methods(s.training_job(), cf, se, sim.result());
        INFO(c["id"].get<std::string>() << ": " << cmp.note);
        if (cmp.agree)
            ++agree;
        else {
            ++explained;
            // The note names the reason (compare_methods' diagnoses), not only the two numbers.
            const bool reasoned = cmp.note.find("uneven stages") != std::string::npos ||
                                  cmp.note.find("W passes") != std::string::npos ||
                                  cmp.note.find("send/recv latency") != std::string::npos ||
                                  cmp.note.find("DP gradient bucket") != std::string::npos ||
                                  cmp.note.find("bubble differs") != std::string::npos;
            CHECK(reasoned);
            CHECK(std::fabs(cmp.rel_diff) < 0.10);
        }
    }
    WARN("validation set: " << agree << " cases agree within 2%, " << explained << " differ with a reason");
    CHECK(agree > 0);
}

TEST_CASE("the trace streams: written a MiB at a time, never held whole (issue 34: 1.16 GB in memory)", "[sim]") {
    // A stream buffer that keeps what it is given and the largest single write.
    struct Recorder : std::streambuf {
        std::string all;
        std::size_t largest = 0;
        std::streamsize xsputn(const char* s, std::streamsize n) override {
            all.append(s, static_cast<std::size_t>(n));
            largest = std::max(largest, static_cast<std::size_t>(n));
            return n;
        }
        int overflow(int c) override {
            if (c != traits_type::eof()) all.push_back(static_cast<char>(c));
            return c;
        }
    };
    Scenario s = load_scenario_file(std::string(LLMSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-a100-1024.json");
    s.training.global_batch = 16 * 1024;   // 1,024 micro-batches per pipeline: a trace of several MiB
    StepSimulator sim;
    (void)simulate_step(s.training_job(), SimOptions{}, sim);
    Recorder rec;
    std::ostream os(&rec);
    sim.write_trace(os);
    REQUIRE(rec.all.size() > (std::size_t{3} << 20));
    CHECK(rec.largest < (std::size_t{1} << 20) + 4096);
    const Json j = Json::parse(rec.all);
    CHECK(j["traceEvents"].size() > 1000);
}

TEST_CASE(
    "parallel_for: every index once on any thread count, done counted to n, the smallest failing index's "
    "exception",
    "[sim][parallel]") {
    for (const int threads : {1, 2, 7, 0}) {
        std::vector<int> hits(100, 0);
        std::size_t last = 0, calls = 0;
        parallel_for(
            hits.size(), threads, [&](std::size_t i) { hits[i] += 1; },
            [&](std::size_t k, std::size_t n) {
                CHECK(n == 100);
                CHECK(k == last + 1);   // one call at a time, counting up
                last = k;
                ++calls;
            });
        CHECK(calls == 100);
        for (const int h : hits) CHECK(h == 1);
        std::vector<int> ran(50, 0);
        try {
            parallel_for(ran.size(), threads, [&](std::size_t i) {
                ran[i] = 1;
                if (i == 31 || i == 17 || i == 44) throw std::runtime_error(std::to_string(i));
            });
            FAIL("no exception");
        } catch (const std::runtime_error& e) {
            CHECK(std::string(e.what()) == "17");
        }
        for (const int r : ran) CHECK(r == 1);   // the others still ran
    }
    parallel_for(0, 4, [](std::size_t) { FAIL("no index in an empty range"); });
}
