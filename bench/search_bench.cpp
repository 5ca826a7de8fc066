// The layout search (docs/search.md "Benchmark"): the whole space of megatron-1t on 4,096 A100
// (dgx-a100-80gb, seq 2048, global batch 2048) with 1 and 2 threads, and the cached closed form
// alone (memory + step time of one layout). Target: < 2 s wall on 2 cores, >= 2 M closed-form
// evaluations per second per core.
#include <benchmark/benchmark.h>

#include <vector>

#include "app/search/search.hpp"
#include "hardware_db/database.hpp"

using namespace llmsim;
using namespace llmsim::search;

namespace {

Scenario one_t() {
    Scenario s;
    s.model = Database::builtin().model("megatron-1t");
    s.system = Database::builtin().system("dgx-a100-80gb");
    s.training.seq_len = 2048;
    return s;
}

SearchSpace space() {
    SearchSpace sp;
    sp.gpu_counts = {4096};
    sp.global_batches = {2048};
    return sp;
}

void full_search(benchmark::State& state) {
    const Scenario base = one_t();
    SearchOptions o;
    o.threads = static_cast<int>(state.range(0));
    std::int64_t evaluated = 0, checked = 0;
    for (auto _ : state) {
        const auto r = run_search(base, space(), o);
        evaluated += r.evaluated;
        checked += r.evaluated;
        for (const auto& [k, v] : r.rejected)
            if (k.rfind("out of", 0) == 0) checked += v;
        benchmark::DoNotOptimize(r.top.data());
    }
    state.counters["evaluations/s"] = benchmark::Counter(static_cast<double>(evaluated), benchmark::Counter::kIsRate);
    state.counters["memory_checks/s"] = benchmark::Counter(static_cast<double>(checked), benchmark::Counter::kIsRate);
}

void cached_closed_form(benchmark::State& state) {
    const Scenario base = one_t();
    SearchOptions o;
    o.threads = 1;
    o.top_k = 2000;
    const auto r = run_search(base, space(), o);
    FastEvaluator ev(base);
    struct P {
        Candidate c;
        const FastEvaluator::StateEntry* st;
        const FastEvaluator::LayerEntry* le;
        const FastEvaluator::EdgeEntry* ed;
        const TrainingFlops* fl;
        std::int64_t m;
    };
    std::vector<P> ps;
    for (const auto& e : r.top) {
        const auto& c = e.c;
        ps.push_back({c, &ev.state(c.tp, c.cp, c.pp, c.dp, c.ep, c.zero, c.offload),
                      &ev.layer(c.tp, c.cp, c.ep, c.micro_batch, c.sp, c.recompute, c.zero, c.dp, c.overlap),
                      &ev.edge(c.tp, c.cp, c.dp, c.pp, c.micro_batch, c.sp, *c.schedule), &ev.flops(c.global_batch),
                      c.global_batch / (c.micro_batch * c.dp)});
    }
    std::int64_t n = 0;
    for (auto _ : state) {
        for (const auto& p : ps) {
            const auto& c = p.c;
            const auto mem = ev.memory(*p.st, *p.le, c.tp, c.cp, c.pp, c.vp, *c.schedule, c.sp, c.micro_batch, p.m);
            const auto t = ev.time(*p.st, *p.le, *p.ed, c.gpus, c.vp, *c.schedule, p.m, *p.fl, c.overlap);
            benchmark::DoNotOptimize(mem.total_bytes + t.step_time_s);
        }
        n += static_cast<std::int64_t>(ps.size());
    }
    state.counters["evaluations/s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsRate);
}

}   // namespace

BENCHMARK(full_search)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(cached_closed_form)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
