// The one serving evaluation (docs/serving.md): static batching in closed form, continuous batching on
// the simulator, and MLPerf Server's question — the largest Poisson rate whose steady-state percentiles
// meet the SLO (`qps: "max"`, slo_capacity_qps) — behind one fit rule, with the stream's steadiness
// said. `estimate`, `run` rows, `--qps-sweep`, validation and the capacity search all call it and
// format its struct.
#pragma once

#include <functional>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/accuracy.hpp"
#include "cost_models/inference.hpp"
#include "hardware_db/specs.hpp"
#include "sim/serving.hpp"

namespace llmsim::app {

// Whether the deployment holds the work at all, one rule for every serving answer: the weights and the
// runtime fit one GPU, and the KV cache holds the static batch (static batching) or the stream's
// longest request (continuous batching: a request the cache cannot hold alone never finishes, and an
// engine refuses to start with a context longer than its cache). A deployment that does not fit is an
// answer (fits false and why), not an input error, and carries no latency or throughput.
struct ServingFit {
    bool fits = true;
    std::string reason;   // why not, in words (empty when it fits)
};
[[nodiscard]] ServingFit serving_fit(const Scenario& s);

// The iteration llmsim prices at an operating point a run measured (docs/serving.md "At the measured
// load"): Little's law puts λ·(E[o] − 1)·tpot sequences in their decode phase of each replica and λ·E[I]·tpot
// prompt tokens in each of its iterations (λ the replica's served rate, o and I the output and input lengths
// drawn, tpot the measured mean time per output token), each decoding sequence at the context it holds on
// average over its steps, E[I] + E[o(o − 1)]/(2(E[o] − 1)). With one token per sequence per iteration, a
// replica's iteration lasts the mean TPOT, so the two compare the iteration's cost at the real state, apart
// from the queueing and scheduling that decide which state a rate reaches. nullopt where one replica's
// iteration is not that state: static batching, speculation, disaggregated pools, request classes, pipeline
// stages, expert parallelism, or rates and TPOTs that are not finite and positive.
struct LoadState {
    double decode_seqs = 0;      // per replica
    double context_tokens = 0;   // mean context of a decoding sequence
    double prefill_tokens = 0;   // prompt tokens per iteration
    double iteration_s = 0;      // llmsim's iteration at that state
};
[[nodiscard]] std::optional<LoadState> iteration_at_load(const Scenario& s, double requests_per_s, double tpot_s);

// The capacity search's bounds. Every probed stream spans at least `stream_s` of arrivals (MLPerf
// loadgen's minimum run duration, 600 s) and kSteadySpans mean times in system, and at most
// `max_requests` requests, so a command's work is bounded whatever the rate.
struct CapacityOptions {
    double stream_s = 600;
    double tolerance = 0.005;   // the search stops when the rates that meet and miss are this close
    std::int64_t max_requests = 2'000'000;
    int max_simulations = 40;
    // The replica loads (replicas x requests) a load-aware router may read over one judged stream before the
    // rates are judged as round robin (SloCapacity::routed_round_robin): the serving simulator's work limit.
    double max_router_loads = sim::ServingOptions{}.max_sequence_steps;
};

struct SloCapacity {
    double qps = 0;              // slo_capacity_qps: the largest rate found meeting the SLO (0: none)
    std::int64_t requests = 0;   // the stream simulated at that rate (whole deployment)
    double offline_qps = 0;      // every request queued at once: the deployment's throughput bound
    double above_qps = 0;        // 5% above qps: the check that the answer is the edge
    std::int64_t above_requests = 0;
    sim::ServingResult above;   // the whole deployment at above_qps
    std::string above_misses;   // what misses there ("TTFT p99 2.31 s > 2 s"; empty when it meets)
    std::int64_t simulations = 0;
    bool stream_capped = false;   // a probed stream hit max_requests before it was long enough
    // A load-aware router whose streams passed the simulator's work limit: rates judged as round robin,
    // the answer a lower bound of the router's own capacity.
    bool routed_round_robin = false;
    std::string why_none;   // when qps == 0
    // The range the published runs most like this deployment measured (app/accuracy): set by
    // evaluate_serving when the validation residuals give one.
    std::optional<PublishedRange> published;
};

// What the deployment's throughput costs (docs/serving.md "Cost and energy"): its GPUs' board power (the
// accelerator's TDP, an upper bound: memory-bound decode draws less) per output token, and with a price
// per GPU-hour (inference.price_per_gpu_hour) dollars per hour and per million tokens.
struct ServingEconomics {
    double board_power_W = 0;                 // gpus x TDP (0 when the accelerator states none)
    double joules_per_output_token_max = 0;   // board power / output tokens/s
    double usd_per_hour = 0;                  // gpus x price (0 without a price)
    double usd_per_million_output_tokens = 0;
    double usd_per_million_tokens = 0;   // prompt and output tokens together
};
// `gpus_held`: the GPUs held on average (an autoscaled deployment's); 0: all of the scenario's, throughout.
[[nodiscard]] ServingEconomics serving_economics(const Scenario& s, double output_tokens_per_s,
                                                 double input_tokens_per_s, double gpus_held = 0);
// A capacity-search answer's economics when it serves `traffic_qps`: `c` was simulated at `at`'s qps (a
// fleet sized for a higher rate serves the traffic asked for, its tokens scaled by the rates).
[[nodiscard]] ServingEconomics candidate_economics(const Scenario& at, const sim::CapacityCandidate& c,
                                                   double traffic_qps);

struct ServingEvaluation {
    Scenario scenario;   // as priced: with qps "max", the rate found and its stream
    ServingFit fit;
    InferenceEstimate closed_form;                  // static batching (and the memory breakdown)
    std::optional<sim::ServingResult> continuous;   // continuous batching, simulated (when it fits)
    std::optional<SloCapacity> capacity;            // qps "max"
    // A Poisson stream's load against the deployment's offline throughput (one replica's share of
    // kOfflineProbeRequests requests per replica, queued at once, measured while requests wait: the
    // deployment's saturated throughput, the capacity an SLO-free stream could reach). From kFragileUtilisation on, a note says the
    // latencies are fragile: a few percent more load moves them severalfold.
    double offline_qps = 0, utilisation = 0;
    // Autoscaled (inference.autoscale): offline_qps is that of the replicas held on average (their mean over
    // the deployment's replicas times its offline throughput), and the load is against it.
    bool offline_of_held = false;
    // Output tokens/s per GPU of the continuous run against what the published runs most like it
    // measured (app/accuracy), when the validation residuals give a range.
    std::optional<PublishedRange> throughput_published;
    // Offline, when the scenario's stream was too short to measure the saturated rates: the requests of the
    // longer stream (offline_probe, one replica simulated) its rates come from; 0 otherwise.
    std::int64_t throughput_stream_requests = 0;
    std::vector<std::string> notes;   // what the reader should know about the stream, in words
    ServingEconomics economics;       // of the run reported (continuous, or the static closed form)
};

inline constexpr std::int64_t kOfflineProbeRequests = 3000;
// An offline probe too short to measure saturated rates is lengthened to this many batches per replica.
inline constexpr std::int64_t kOfflineProbeBatches = 8;
inline constexpr double kFragileUtilisation = 0.9;

// One replica's round-robin share of an offline stream (every request queued at once) of
// kOfflineProbeRequests requests per replica, lengthened once to kOfflineProbeBatches of its largest
// batch (`peak_batch` or the probe's own) when that is too short to measure the saturated rates; at most
// `max_requests` in all. None when the stream draws a request the KV cache cannot hold.
[[nodiscard]] std::optional<sim::ServingResult> offline_probe(const Scenario& s, std::int64_t max_requests,
                                                              std::int64_t peak_batch);
// The deployment's offline throughput (requests/s): offline_probe's saturated rate; 0 without one.
[[nodiscard]] double offline_capacity_qps(const Scenario& s, std::int64_t max_requests);

struct ServingEvalOptions {
    bool timeline = false;   // keep the iterations of the continuous run (--trace)
    CapacityOptions capacity;
};

// Throws ConfigError only for a work limit (naming the /inference key).
[[nodiscard]] ServingEvaluation evaluate_serving(const Scenario& s, const ServingEvalOptions& o = {});

// The largest Poisson rate at which the deployment meets `slo` in steady state (served rate equal to
// offered, the stream long enough that warm-up and drain do not decide the percentiles): a geometric
// bisection between a rate that meets and one that misses, each probe a simulation of one replica's
// round-robin share of one seeded stream (common random numbers: the stream at every rate is the same
// draws, so meeting is monotone in the rate up to the simulation's noise), the answer then confirmed on
// the whole deployment and checked to miss at 5% more. Throws ConfigError without an SLO.
[[nodiscard]] SloCapacity slo_capacity(const Scenario& s, const CapacityOptions& o = {});

// `search` with qps "max" (Vidur-Search's question): for each layout of one replica the capacity
// search tries (sim::capacity_groups, with the scenario's max_batch and chunk), the largest Poisson
// rate it holds within the SLO, and that rate per GPU. Rows best per GPU first; a layout holding no
// rate last with its reason. The layouts run on `threads` threads (0: every core); the result does not
// depend on the count. Throws ConfigError without an SLO.
struct LayoutCapacity {
    sim::CapacityCandidate layout;   // one replica
    SloCapacity capacity;
    double qps_per_gpu = 0;
};
struct CapacityPerGpu {
    std::vector<LayoutCapacity> rows;
    std::int64_t simulations = 0;
    std::string why_none;   // when no layout was tried
};
[[nodiscard]] CapacityPerGpu capacity_per_gpu_search(
    const Scenario& base, int max_gpus, const CapacityOptions& o = {}, int threads = 0,
    const std::function<void(std::size_t, std::size_t)>& progress = {});   // layouts done, of all
// `search` on a serving scenario with a rate (capacity planning): sim::serving_capacity_search, then the
// winner's layout sized again so that it holds the rate even if the engine is as slow as the slowest
// published run most like it (docs/serving.md, "How sure"): the capacity's published range (app/accuracy)
// says the published Server rates were low_ratio ... high_ratio of llmsim's capacity, so the winner's layout
// is given the fewest replicas meeting the SLO at qps / low_ratio (qps itself when low_ratio >= 1).
struct FleetSizing {
    sim::CapacityResult search;
    std::optional<PublishedRange> published;   // slo_capacity_qps's range for the winner (low/high: × qps)
    double sized_qps = 0;                      // the rate the winner's layout was sized for
    std::optional<sim::CapacityCandidate> sized;
    std::string sized_why_none;   // the range exists but no replica count within max_gpus holds sized_qps
};
[[nodiscard]] FleetSizing serving_fleet_search(const Scenario& base, int max_gpus, int threads = 0,
                                               const std::function<void(std::size_t, std::size_t)>& progress = {});
// `search` on a disaggregated serving scenario (docs/serving.md "Disaggregated prefill and decode"): the
// fewest GPUs of its pool layouts meeting the SLO at its qps (sim::fewest_pools), beside the colocated
// search's answer to the same question (the scenario without its disaggregation).
struct PoolSizing {
    sim::PoolSearch pools;
    FleetSizing colocated;
};
[[nodiscard]] PoolSizing disaggregated_fleet_search(const Scenario& base, int max_gpus, int threads = 0,
                                                    const std::function<void(std::size_t, std::size_t)>& progress = {});
// With qps "max": each split of the scenario's GPUs between the pools (1, 2, ... prefill replicas of
// prefill_tp, the GPUs left as decode replicas of /parallel; at most kMaxSplits of them, evenly spaced) and
// its capacity, beside the colocated deployment of the same GPUs as replicas of /parallel. Rows in
// prefill-replica order; the splits run on `threads`.
struct SplitCapacity {
    int prefill_replicas = 0, decode_replicas = 0, gpus = 0;
    SloCapacity capacity;
    double qps_per_gpu = 0;
};
inline constexpr int kMaxSplits = 16;
struct SplitCapacities {
    std::vector<SplitCapacity> rows;
    int splits = 0;   // the splits the GPUs allow (rows holds kMaxSplits of them, evenly spaced, when more)
    SloCapacity colocated;
    int colocated_gpus = 0;
    std::int64_t simulations = 0;
};
[[nodiscard]] SplitCapacities split_capacities(const Scenario& base, const CapacityOptions& o = {}, int threads = 0,
                                               const std::function<void(std::size_t, std::size_t)>& progress = {});
// The requests a stream at `qps` needs to span `span_s` of arrivals (times sim::arrival_dispersion: longer
// for bursty arrivals; at least the scenario's own), capped at `max_requests`.
[[nodiscard]] std::int64_t stream_requests(const InferenceConfig& in, double qps, double span_s,
                                           std::int64_t max_requests);

// Sentences on a simulated stream's steadiness (too short, past capacity), empty when steady.
[[nodiscard]] std::vector<std::string> steadiness_notes(const InferenceConfig& in, const sim::ServingResult& r);

}   // namespace llmsim::app
