// Continuous batching as a discrete-event simulation (docs/serving.md): a seeded request stream
// (Poisson at `qps`, or offline: every request at t = 0) spread round-robin over the data-parallel
// replicas; on each replica an iteration-level scheduler (Orca, vLLM, TensorRT-LLM) with a sequence
// cap (`max_batch`), a token budget (`max_batch_tokens`, chunked prefill as in Sarathi-Serve), a paged
// KV cache (admission by free blocks, preemption with recompute when it is full, as vLLM) and
// prefix-cache hits. Every iteration is priced by cost_models/inference iteration_cost.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cost_models/inference.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim::sim {

struct Distribution {
    double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// One iteration of one replica, for traces.
struct ServingIteration {
    double start_s = 0, end_s = 0;
    std::int32_t replica = 0;
    std::int32_t prefill_tokens = 0, decode_seqs = 0;
    bool compute_bound = false;
};

struct ServingResult {
    Distribution ttft_s, tpot_s, e2e_latency_s, queue_s;
    double requests_per_s = 0, output_tokens_per_s = 0, output_tokens_per_s_per_gpu = 0;
    double input_tokens_per_s = 0;
    double makespan_s = 0;
    double mean_in_system = 0;      // time average of requests arrived and not finished (per deployment)
    double kv_occupancy_mean = 0;   // time average of KV blocks in use / blocks (replica 0)
    double kv_occupancy_max = 0;
    double mean_batch = 0;   // sequences per iteration, time weighted
    double spec_tokens_per_step = 1;
    std::int64_t requests = 0, iterations = 0, preemptions = 0, kv_blocks = 0, replicas = 0;
    double prefill_compute_fraction = 0;   // share of prefill-carrying iteration time that is compute-bound
    double decode_compute_fraction = 0;    // same for decode-only iterations
    double prefill_iteration_s = 0;        // summed time of prefill-carrying iterations (all replicas)
    double decode_iteration_s = 0;         // summed time of decode-only iterations (all replicas)
    std::int64_t peak_batch = 0;           // most sequences running in one iteration
    // Share of iteration time (all replicas) during which a waiting request was held back, by the
    // reason admission stopped: no free KV blocks, `max_batch` seats full, or the token budget spent.
    double kv_held_fraction = 0, seats_held_fraction = 0, budget_held_fraction = 0;
    bool slo_met = true;
    std::vector<ServingIteration> timeline;   // when asked for
};

struct ServingOptions {
    bool timeline = false;
    std::int64_t max_iterations = 200'000'000;   // work limit: ConfigError past it
};

// Throws ConfigError (naming the /inference key) when a request can never fit the KV cache or the
// work limit is reached.
[[nodiscard]] ServingResult simulate_serving(const ServingJob& job, const ServingOptions& options = {});

// Requests and their lengths as the simulator draws them (seeded; for tests and the bench).
struct Request {
    double arrival_s = 0;
    std::int32_t input = 0, output = 0;
};
[[nodiscard]] std::vector<Request> request_stream(const InferenceConfig& in);

// Capacity planning: the fewest GPUs (replicas x tp, weight/KV precision) whose simulated percentiles
// meet the scenario's SLO at its qps. For each tp (powers of two up to the scale-up domain, valid for
// the model) and precision (the scenario's, and fp8 where the chip has it), the offline capacity of one
// replica bounds the replicas from below; replicas then grow until the simulation at `qps` meets the
// SLO. Every answer is a simulation; `fewer_fails` says the same configuration with one replica fewer
// was simulated and missed.
struct CapacityCandidate {
    int tp = 1, replicas = 1;
    Precision weight_precision = Precision::bf16, kv_precision = Precision::bf16;
    bool meets = false;
    ServingResult result;
};
struct CapacityResult {
    std::vector<CapacityCandidate> best;      // per (tp, precision), the fewest replicas meeting the SLO
    std::optional<CapacityCandidate> fewer;   // the winner with one replica fewer (simulated, missing)
    std::int64_t simulations = 0;
};
// Throws ConfigError when the scenario has no qps or no slo.
[[nodiscard]] CapacityResult serving_capacity_search(const Scenario& base, int max_gpus);

// Writes the iterations as a Chrome/Perfetto trace (one track per replica).
void write_serving_trace(std::ostream& os, const ServingResult& r);

}   // namespace llmsim::sim
