// The property harness: for every scenario the reader accepts, the memory model, the closed-form step,
// the discrete-event simulator (training) or the serving estimate, and the whole `llmsim estimate
// --json` result hold only finite numbers, and every size, time, rate and count is >= 0 (the few
// signed figures are listed below). A violation traps.
//
// Everything is computed once, as `llmsim estimate --json` computes it (run_estimate), and the
// harness checks the parts (closed form, simulated step, memory, serving estimate) and the JSON.
//
// Fuzz-only work bounds (docs/reliability.md, "Fuzzing"). The simulators' work grows with the input
// (a pass per micro-batch and stage; an iteration per generated token), and under the sanitizers
// one pass or decode step costs microseconds, so a few realistic seeds (20,000 requests, 280
// micro-batches on 105 stage chunks) took seconds each. To keep ~10^2 executions per second the
// harness bounds the work of each input, never its kind:
//  - training: a step of more than kFuzzSimPasses F/B/W passes (sim::simulated_passes) is checked in
//    closed form only (estimate --fast), as the simulator's own work limit does past 2^21 passes;
//  - continuous-batching serving: the request stream is cut to kFuzzServingTokens input + output
//    tokens (mean lengths; at least one request), so the scheduler, the KV cache and preemption
//    still run on every accepted scenario; a stream still longer than twice that (one very long
//    request) is skipped.
// The production work limits themselves (2^21 passes, 2*10^8 serving iterations) are guarded by
// tests/test_bad_input.cpp, not here.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "cost_models/inference.hpp"
#include "cost_models/memory.hpp"
#include "cost_models/step_time.hpp"
#include "fuzz/fuzz_common.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/scenario.hpp"
#include "report/estimate.hpp"
#include "sim/serving.hpp"
#include "sim/step_sim.hpp"
#include "sim/work_limits.hpp"

namespace {

using namespace llmsim;

constexpr std::int64_t kFuzzSimPasses = std::int64_t{1} << 13;       // F/B/W passes of one simulated step
constexpr std::int64_t kFuzzServingTokens = std::int64_t{1} << 14;   // input + output tokens of one stream

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
    for (double v : {b.compute, b.tp_comm, b.cp_comm, b.ep_comm, b.pp_comm, b.dp_comm, b.bubble, b.optimizer, b.offload,
                     b.exposed_comm})
        FUZZ_CHECK(ok(v));
    FUZZ_CHECK(e.microbatches >= 1);
    // No kernel runs above the peak (issue 34: HFU 110% from in-range efficiencies), and the model's
    // FLOPs are a part of what the hardware runs.
    FUZZ_CHECK(e.hfu <= 1.0 + 1e-9);
    FUZZ_CHECK(e.mfu <= e.hfu * (1.0 + 1e-9));
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
    app::EstimateOptions options;
    if (s.is_inference && s.inference.continuous()) {
        auto& in = s.inference;
        // The capacity search (qps "max") runs many long streams: the harness prices one rate instead
        // (tests/test_capacity.cpp checks the search).
        if (in.qps_max) {
            in.qps_max = false;
            in.qps = 1.0;
        }
        const std::int64_t per_request = std::max<std::int64_t>(1, in.input_len + in.output_len);
        in.requests = std::clamp<std::int64_t>(kFuzzServingTokens / per_request, 1, in.requests);
        std::int64_t tokens = 0;
        for (const auto& r : sim::request_stream(in)) tokens += r.input + r.output;
        if (tokens > 2 * kFuzzServingTokens) return 0;
    }
    if (!s.is_inference && sim::simulated_passes(s.training_job()) > kFuzzSimPasses) options.fast = true;
    sim::StepSimulator simulator;
    report::Estimate e;
    try {
        e = report::run_estimate(s, options, simulator);
    } catch (const ConfigError& err) {
        // Only the simulator's work limit may refuse an accepted scenario, naming the batch.
        FUZZ_CHECK(!s.is_inference && !options.fast);
        FUZZ_CHECK(err.problems().size() == 1 && err.problems()[0].rfind("/training/global_batch:", 0) == 0);
        options.fast = true;
        e = report::run_estimate(s, options, simulator);
    }
    if (s.is_inference) {
        FUZZ_CHECK(e.serving.has_value());
        const InferenceEstimate& r = e.serving->closed_form;
        for (double v : {r.ttft_s, r.tpot_s, r.e2e_latency_s, r.output_tokens_per_s, r.output_tokens_per_s_per_gpu})
            FUZZ_CHECK(ok(v));
        const auto& m = r.memory;
        for (double v : {m.weights_bytes, m.kv_cache_bytes, m.kv_bytes_per_token, m.activations_bytes, m.other_bytes,
                         m.total_bytes, m.capacity_bytes})
            FUZZ_CHECK(ok(v));
        FUZZ_CHECK(m.max_batch >= 0);
    } else {
        FUZZ_CHECK(e.training.has_value());
        const auto& te = *e.training;
        check_step(te.closed_form);
        FUZZ_CHECK(te.simulated.has_value() != options.fast);
        if (te.simulated) check_step(*te.simulated);
    }
    // Everything `llmsim estimate --json` prints.
    check_json(report::estimate_json(s, e, options), "");
    return 0;
}
