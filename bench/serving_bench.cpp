// The serving simulator (docs/serving.md "Benchmark"): 100,000 requests of Llama-3.1-70B on 8 H100
// (fp8, tp 2: four replicas), offline and at 90% of capacity. Target: <= 1 s on one core.
#include <benchmark/benchmark.h>

#include "hardware_db/scenario.hpp"
#include "sim/serving.hpp"

using namespace llmsim;

namespace {

Scenario deployment(double qps) {
    Json in = {{"batching", "continuous"},
               {"weight_precision", "fp8"},
               {"kv_precision", "fp8"},
               {"input_len", {{"mean", 467}, {"dist", "lognormal"}, {"stdev", 300}, {"min", 16}, {"max", 4096}}},
               {"output_len", {{"mean", 256}, {"dist", "lognormal"}, {"stdev", 200}, {"min", 2}, {"max", 2048}}},
               {"requests", 100000},
               {"qps", qps},
               {"max_batch_tokens", 8192},
               {"seed", 1}};
    return parse_scenario({{"model", "llama-3.1-70b"},
                           {"system", "dgx-h100"},
                           {"gpus", 8},
                           {"parallel", {{"tp", 2}}},
                           {"inference", in}});
}

void serve_100k(benchmark::State& state) {
    const Scenario s = deployment(static_cast<double>(state.range(0)));
    std::int64_t iterations = 0;
    for (auto _ : state) {
        const auto r = sim::simulate_serving(s.serving_job());
        iterations += r.iterations;
        benchmark::DoNotOptimize(r.ttft_s.p99);
    }
    state.counters["iterations_per_s"] =
        benchmark::Counter(static_cast<double>(iterations), benchmark::Counter::kIsRate);
}
BENCHMARK(serve_100k)->Arg(0)->Arg(40)->Unit(benchmark::kMillisecond);

}   // namespace

BENCHMARK_MAIN();
