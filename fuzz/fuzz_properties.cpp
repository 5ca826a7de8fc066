// The property harness: for every scenario the reader accepts, the memory model, the closed-form step,
// the discrete-event simulator (training) or the serving estimate, and the whole `llmsim estimate
// --json` result hold only finite numbers, and every size, time, rate and count is >= 0 (the few
// signed figures are listed below). A violation traps.
#include <cmath>
#include <set>
#include <string>

#include "cli/estimate_report.hpp"
#include "cost_models/inference.hpp"
#include "cost_models/memory.hpp"
#include "cost_models/step_time.hpp"
#include "fuzz/fuzz_common.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/scenario.hpp"
#include "sim/step_sim.hpp"

namespace {

using namespace llmsim;

bool ok(double v) { return std::isfinite(v) && v >= 0; }

// Keys of `llmsim estimate --json` whose value may be negative by definition.
const std::set<std::string>& signed_keys() {
    static const std::set<std::string> keys{"headroom_bytes", "rel_diff", "method_rel_diff"};
    return keys;
}

void check_json(const Json& j, const std::string& key) {
    if (j.is_number()) {
        FUZZ_CHECK(std::isfinite(j.get<double>()));
        if (!signed_keys().count(key)) {
            if (!(j.get<double>() >= 0)) std::fprintf(stderr, "negative: %s = %g\n", key.c_str(), j.get<double>());
            FUZZ_CHECK(j.get<double>() >= 0);
        }
    } else if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) check_json(*it, it.key());
    } else if (j.is_array()) {
        for (const auto& x : j) check_json(x, key);
    }
}

void check_memory(const MemoryBreakdown& m) {
    for (double v : {m.weights_bytes, m.gradients_bytes, m.optimizer_bytes, m.activations_bytes, m.other_bytes,
                     m.total_bytes, m.capacity_bytes})
        FUZZ_CHECK(ok(v));
    FUZZ_CHECK(std::isfinite(m.headroom_bytes));
}

void check_step(const StepEstimate& e) {
    FUZZ_CHECK(ok(e.step_time_s) && e.step_time_s > 0);
    for (double v :
         {e.pipeline_time_s, e.tokens_per_step, e.tokens_per_s, e.tokens_per_s_per_gpu, e.model_flops_per_step,
          e.hardware_flops_per_step, e.mfu, e.hfu, e.bubble_fraction, e.achieved_tflops_per_gpu})
        FUZZ_CHECK(ok(v));
    const auto& b = e.breakdown;
    for (double v :
         {b.compute, b.tp_comm, b.cp_comm, b.ep_comm, b.pp_comm, b.dp_comm, b.bubble, b.optimizer, b.exposed_comm})
        FUZZ_CHECK(ok(v));
    FUZZ_CHECK(e.microbatches >= 1);
    check_memory(e.memory);
}

}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Scenario s;
    try {
        s = parse_scenario(parse_json_text(fuzz::text_of(data, size), "fuzz.json"), "/nonexistent-fuzz-dir");
    } catch (const ConfigError&) {
        return 0;   // refused: the reader harness checks how
    }
    sim::EstimateOptions options;
    if (s.is_inference) {
        const InferenceEstimate e = estimate_inference(s.serving_job());
        for (double v : {e.ttft_s, e.tpot_s, e.e2e_latency_s, e.output_tokens_per_s, e.output_tokens_per_s_per_gpu})
            FUZZ_CHECK(ok(v));
        const auto& m = e.memory;
        for (double v : {m.weights_bytes, m.kv_cache_bytes, m.kv_bytes_per_token, m.activations_bytes, m.other_bytes,
                         m.total_bytes, m.capacity_bytes})
            FUZZ_CHECK(ok(v));
        FUZZ_CHECK(m.max_batch >= 0);
    } else {
        const TrainingJob job = s.training_job();
        check_memory(training_memory(job));
        check_step(estimate_step(job));
        try {
            check_step(sim::simulate_step(job));
        } catch (const ConfigError& e) {
            // Only the simulator's work limit may refuse an accepted scenario, naming the batch.
            FUZZ_CHECK(e.problems().size() == 1 && e.problems()[0].rfind("/training/global_batch:", 0) == 0);
            options.fast = true;
        }
    }
    // Everything `llmsim estimate --json` prints.
    sim::StepSimulator simulator;
    check_json(cli::estimate_json(s, cli::run_estimate(s, options, simulator), options), "");
    return 0;
}
