// Simulating one training step of the 1T model (megatron-1t, p=64, 512 micro-batches, tp 8, dp 1 on
// dgx-a100-80gb): time per step simulation and events per second. docs/simulator.md records numbers.
#include <benchmark/benchmark.h>

#include "cost_models/step_time.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/scenario.hpp"
#include "sim/step_sim.hpp"

using namespace llmsim;

namespace {

Scenario one_t(const char* schedule, int vp) {
    Json j = {
        {"model", "megatron-1t"},
        {"system", "dgx-a100-80gb"},
        {"gpus", 512},
        {"parallel",
         {{"tp", 8}, {"pp", 64}, {"dp", 1}, {"vp", vp}, {"sequence_parallel", true}, {"schedule", schedule}}},
        {"training",
         {{"seq_len", 2048}, {"micro_batch", 1}, {"global_batch", 512}, {"precision", "bf16"}, {"recompute", "full"}}}};
    return parse_scenario(j);
}

// The engine alone on precomputed costs (what the search pays per candidate once costs exist).
void run_engine(benchmark::State& state, const char* schedule, int vp) {
    const Scenario s = one_t(schedule, vp);
    const StepCosts costs = step_costs(s.training_job());
    const sim::PipelineSetup setup = sim::make_setup(s.training_job(), costs);
    sim::StepSimulator simulator;
    std::int64_t events = 0;
    for (auto _ : state) {
        const auto& r = simulator.run(costs, setup);
        events += r.events;
        benchmark::DoNotOptimize(r.step_time_s);
    }
    state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
    state.counters["tasks"] = static_cast<double>(simulator.result().tasks);
}

// Costs + simulation + finish_estimate: what `llmsim estimate` pays.
void run_full(benchmark::State& state) {
    const Scenario s = one_t("1f1b", 1);
    sim::StepSimulator simulator;
    for (auto _ : state) {
        const auto e = sim::simulate_step(s.training_job(), {}, simulator);
        benchmark::DoNotOptimize(e.step_time_s);
    }
}

}   // namespace

BENCHMARK_CAPTURE(run_engine, megatron_1t_1f1b, "1f1b", 1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run_engine, megatron_1t_zero_bubble, "zero-bubble", 1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run_engine, megatron_1t_interleaved_v2, "interleaved", 2)->Unit(benchmark::kMillisecond);
BENCHMARK(run_full)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
