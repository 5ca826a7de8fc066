// Continuous batching as a discrete-event simulation (docs/serving.md): a seeded request stream
// (Poisson or Gamma gaps at `qps`, a trace, or offline: every request at t = 0) routed over the
// data-parallel replicas (round robin, or by their load: sim/router); on each replica an iteration-level scheduler (Orca, vLLM, TensorRT-LLM) with a sequence
// cap (`max_batch`), a token budget (`max_batch_tokens`, chunked prefill as in Sarathi-Serve), a paged
// KV cache (admission by free blocks, preemption with recompute when it is full, as vLLM) and
// prefix-cache hits. Every iteration is priced by cost_models/inference iteration_cost.
#pragma once

#include <functional>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "cost_models/inference.hpp"
#include "hardware_db/specs.hpp"
#include "sim/scheduler.hpp"

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

// Whether a Poisson stream reached the steady state its percentiles are meant to describe. The system
// fills for about one mean time in system (Little's law), and requests arriving in the last such span
// see it drain. A stream whose arrivals span fewer than kSteadySpans warm-ups is decided by its edges;
// one whose completions fall short of its arrivals in the later half of the stream (after the warm-up)
// by more than kKeepUpShortfall, and by more than the window's edges make by chance, is past capacity:
// its queue grows with the stream's length.
struct Steadiness {
    // A Poisson stream; or offline (every request queued at t = 0), whose steady state is saturation:
    // its rates are measured while requests wait (ServingResult), and long_enough says they could be.
    bool applies = false;
    double arrival_span_s = 0;   // first to last arrival
    double last_arrival_s = 0;   // the last arrival's time
    double saturated_s = 0;      // offline: how long every replica had a request waiting
    double warmup_s = 0;         // mean time in system
    double offered_qps = 0;      // arrivals per second in the window (deployment)
    double served_qps = 0;       // completions per second in the same window (deployment)
    bool long_enough = true;     // arrival_span_s >= kSteadySpans * warmup_s, and the profile's slices reached
    // A rate profile (InferenceConfig::rate_profile): the arrivals reach its last slice (percentiles over part
    // of the period describe only that part).
    bool covers_period = true;
    bool keeps_up = true;   // served_qps >= (1 - kKeepUpShortfall) * offered_qps
    bool steady() const { return long_enough && keeps_up; }
};
inline constexpr double kSteadySpans = 10.0;
// Offline: completions (in batches of the replica's largest) its saturated window must hold to be measured.
inline constexpr double kSaturatedBatches = 2.0;
inline constexpr double kKeepUpShortfall = 0.02;

// A window of the stream (ServingResult::windows): the requests arriving in it. A rate profile's slice
// gathers every period the stream spans; a window of window_s is one span of time from the start.
struct ServingWindow {
    double start_s = 0, end_s = 0;   // within the period (a profile's slice), or from the stream's start
    double level = -1;               // a profile's slice: its rate over the mean; -1 otherwise
    std::int64_t requests = 0;       // arrived in it (simulated)
    double offered_qps = 0;          // arrivals per second of the slice's time the stream spans (deployment)
    Distribution ttft_s, tpot_s;
    // Share of its requests within every stated SLO target's time (TTFT, and TPOT where a request has more
    // than one output token; DistServe's per-request attainment); -1 without an SLO.
    double slo_attainment = -1;
    double mean_replicas = -1;   // under autoscaling: replicas held, averaged over the window's time; else -1
};

// A disaggregated deployment's pools (ServingResult::disaggregated).
struct PoolStats {
    int replicas = 0, tp = 1;
    double mean_batch = 0;   // sequences per iteration, time weighted
    std::int64_t iterations = 0, preemptions = 0;
    double kv_occupancy_mean = 0;   // replica 0 (the decode pool's)
    double busy_fraction = 0;       // iteration time over replicas x makespan
};
struct DisaggregatedPools {
    PoolStats prefill, decode;
    Distribution transfer_s;          // a prompt's last token on the prefill pool to its cache on the decode pool
    double link_GBps = 0;             // per GPU, as resolved
    double transfer_bytes_mean = 0;   // per GPU of the slower side, per request
    double link_busy_fraction = 0;    // prefill replicas' link time over replicas x makespan
};

// What the autoscaler did (ServingResult::autoscale, inference.autoscale).
struct AutoscaleResult {
    double cold_start_s = 0;      // a replica's: its weights over storage_GBps, plus engine_start_s
    double replica_hours = 0;     // replicas held (starting, serving or draining) x time, to the last finish
    double gpu_hours = 0;         // replica_hours x GPUs per replica
    double mean_replicas = 0;     // replica_hours over the makespan
    int peak_replicas = 0;        // most held at once
    std::int64_t scale_ups = 0;   // replicas started or kept from draining
    std::int64_t scale_downs = 0;
    std::vector<std::pair<double, int>> held;   // (time, replicas held from then), at t = 0 and each change
};

// One request class of the stream (ServingResult::classes, inference.classes): its requests' latencies and
// whether they meet its own SLO.
struct ClassResult {
    std::string name;
    double share = 0;                         // of the arrivals, as stated (normalised)
    std::int64_t requests = 0;                // measured (simulated)
    double mean_input = 0, mean_output = 0;   // tokens, as drawn
    Distribution ttft_s, tpot_s, e2e_latency_s;
    double slo_attainment = -1;   // share of its requests within every target of its SLO; -1 without one
    bool slo_met = true;          // its percentiles meet its SLO
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
    // Of the prompt tokens admitted to prefill (every admission, a preempted request's again), the share found
    // in the prefix cache (a stated prefix_cache_hit, or shared prefixes kept by the replicas).
    double prefix_hit_fraction = 0;
    double prefill_compute_fraction = 0;   // share of prefill-carrying iteration time that is compute-bound
    double decode_compute_fraction = 0;    // same for decode-only iterations
    double prefill_iteration_s = 0;        // summed time of prefill-carrying iterations (all replicas)
    double decode_iteration_s = 0;         // summed time of decode-only iterations (all replicas)
    std::int64_t peak_batch = 0;           // most sequences running in one iteration
    // Share of iteration time (all replicas) during which a waiting request was held back, by the
    // reason admission stopped: no free KV blocks, `max_batch` seats full, or the token budget spent.
    double kv_held_fraction = 0, seats_held_fraction = 0, budget_held_fraction = 0;
    bool slo_met = true;
    Steadiness steadiness;
    // Only replica `sampled_replica` was simulated (ServingOptions::sample_replica): distributions are
    // over its requests, rates are its own times the replica count.
    int sampled_replica = -1;
    std::vector<ServingIteration> timeline;   // when asked for
    // A disaggregated deployment (inference.disaggregation): its pools and transfers. Its rates are the whole
    // deployment's, per GPU over both pools; `replicas`, `mean_batch`, KV occupancy are the decode pool's.
    std::optional<DisaggregatedPools> disaggregated;
    // The stream's windows in order (inference.window_s, else a rate profile's slices; empty without either).
    std::vector<ServingWindow> windows;
    std::optional<AutoscaleResult> autoscale;   // inference.autoscale
    // Per request class (inference.classes), in name order (JSON objects are read sorted); empty without
    // classes. The stream's slo_met then asks that every class meet its own SLO.
    std::vector<ClassResult> classes;
};

struct ServingOptions {
    bool timeline = false;
    // Work limits (ConfigError past them, checked before simulating against lower bounds of the work, and
    // while simulating): iterations of all replicas (~0.25 us each), and sequence-steps, the sequences run
    // summed over iterations (~7 ns each): about 12 s and 7 s on one core.
    std::int64_t max_iterations = 50'000'000;
    double max_sequence_steps = 1e9;
    // Simulate only this replica, with its round-robin share of the stream (replicas are identical and
    // independent given the stream, so its requests' latencies have the deployment's distribution); -1:
    // every replica. The capacity search probes rates this way and confirms its answer on all. Round robin
    // only: a router that reads the replicas' load simulates every replica (sampled_replica is then -1), as
    // does a disaggregated deployment (its pools meet through the transfers).
    int sample_replica = -1;
    // The fleet a sampled replica's rates are scaled to (0: the job's replicas): a fleet probed as fewer of
    // its replicas at the same rate each (sampled_probe_scenario) reports the whole fleet's rates.
    int fleet_replicas = 0;
    // Runs of decode-only iterations (every running sequence one token, none finishing, none waiting or
    // arriving) applied and composed in O(1) per iteration instead of per sequence: the same events and the
    // same numbers, bit for bit, as the per-sequence loop that `false` runs (tests/test_serving.cpp compares
    // them); a day of 10^6 autoscaled requests 11.7 -> 7.8 s (docs/serving.md "Speed").
    bool fast_decode_steps = true;
};

// The pools of a disaggregated deployment (inference.disaggregation), one definition for the simulator and
// the fit check: the prefill pool's layout (prefill_gpus / prefill_tp replicas of tp prefill_tp, pp 1),
// and each pool's settings (the scenario's without the disaggregation; the prefill pool makes one token per
// request, so no speculation). The decode pool's layout is the scenario's own `parallel`.
[[nodiscard]] ParallelConfig prefill_layout(const Disaggregation& d);
[[nodiscard]] InferenceConfig pool_inference(const InferenceConfig& in, bool prefill);

// Throws ConfigError (naming the /inference key) when a request can never fit the KV cache or the
// work limit is reached.
[[nodiscard]] ServingResult simulate_serving(const ServingJob& job, const ServingOptions& options = {});

// Requests and their lengths as the simulator draws them (seeded; for tests and the bench).
[[nodiscard]] std::vector<Request> request_stream(const InferenceConfig& in);
// A rate profile's clock: the time by which a stream at the profile's rates has had `u` seconds' worth of
// arrivals at its mean rate (the stationary stream's time u run on the profile's clock: the time-rescaling
// theorem, Brown et al. 2002, Neural Computation 14(2):325); u itself without a profile.
class ProfileClock {
public:
    explicit ProfileClock(const RateProfile& p);
    [[nodiscard]] double operator()(double u) const;

private:
    const RateProfile& p_;
    std::vector<double> cumulative_;   // mean-rate seconds up to each slice's start
};

// KV blocks a request of `tokens` (input + output) takes to be admitted on its own: its tokens and the
// decode step in flight (under kv_admission reserve, taken whole at admission, plus one step of
// overshoot). The simulator refuses a stream whose longest request needs more than a replica's pool.
[[nodiscard]] std::int64_t admission_blocks(const InferenceConfig& in, double tokens);
// Input + output tokens of the stream's longest request.
[[nodiscard]] std::int32_t longest_request(const InferenceConfig& in);

// Capacity planning: the fewest GPUs (replicas x tp x pp, weight/KV precision, max_batch, chunk) whose
// simulated percentiles meet the scenario's SLO at its qps. Searched: tp (powers of two up to the
// scale-up domain, valid for the model's heads); pp (the smallest power of two the layers allow at
// which one request fits the KV cache); precision (the scenario's, and fp8
// where the chip has it); max_batch (the scenario's, its half and double; unset: as many as the KV
// cache holds, 256 (vLLM's default max_num_seqs) and 128); chunk = max_batch_tokens (the scenario's,
// none, 2048, 8192). Per (tp, pp, precision) group the variants are tried in that order (the scenario's
// own first), each only below the group's best replica count so far (ties keep the earlier variant).
// Every answer is a simulation; `fewer` is the winner simulated with one replica fewer.
struct CapacityCandidate {
    int tp = 1, pp = 1, replicas = 1;
    Precision weight_precision = Precision::bf16, kv_precision = Precision::bf16;
    std::int64_t max_batch = 0;          // 0: as many sequences as the KV cache holds
    std::int64_t max_batch_tokens = 0;   // chunked-prefill token budget; 0: whole prompts
    bool meets = false;
    // Judged as round robin on one sampled replica even whole: a load-aware router over this many replicas
    // and the judged stream is past the simulator's work limit (judge_candidate).
    bool routed_round_robin = false;
    // Judged on the whole deployment (its replica count then the fewest meeting whole, confirm_whole); else
    // `result` is one sampled replica's share, and the whole deployment may need more replicas.
    bool judged_whole = false;
    ServingResult result;
    int gpus() const { return tp * pp * replicas; }
};
struct CapacityResult {
    std::vector<CapacityCandidate> best;      // per (tp, pp, precision), the fewest replicas meeting the SLO
    std::optional<CapacityCandidate> fewer;   // the winner with one replica fewer (simulated)
    std::string why_none;                     // when `best` is empty
    std::int64_t simulations = 0;
    std::int64_t variants = 0;   // (tp, pp, precision, max_batch, chunk) configurations tried
};
// Every candidate is judged on a stream spanning kCapacityStreamS of arrivals at the scenario's qps (at
// least its `requests`, at most kCapacityMaxRequests: capacity_stream_requests), one sampled replica's
// share while searching (its round-robin share: replicas are identical given the stream); the winner is
// then simulated on the whole deployment (the next replica count taken while that misses) and with one
// replica fewer. Replicas are found by an exponential step up from one replica's offline bound, then a
// bisection. Throws ConfigError when the scenario has no qps or no slo. The groups run on `threads`
// threads (0: every core); the result does not depend on the count.
[[nodiscard]] CapacityResult serving_capacity_search(
    const Scenario& base, int max_gpus, int threads = 0,
    const std::function<void(std::size_t, std::size_t)>& progress = {});   // groups done, of all
// The fewest replicas (from `from` up, at most max_gpus GPUs) of candidate `c`'s layout and variant
// (precisions, max_batch, chunk) meeting the SLO at base's qps: searched as serving_capacity_search
// searches a group's replicas, then confirmed on the whole deployment. None when no count within max_gpus
// meets. Adds the simulations run to `simulations`. Throws ConfigError without a qps or an SLO.
[[nodiscard]] std::optional<CapacityCandidate> fewest_replicas(const Scenario& base, const CapacityCandidate& c,
                                                               int from, int max_gpus, std::int64_t& simulations);
// The searched (tp, pp, precision) groups in their fixed order (one replica each, the scenario's
// max_batch and chunk): tp a power of two up to the scale-up domain and max_gpus that the model's heads
// divide; the scenario's precision and fp8 where the chip has it; the smallest power-of-two pp at which
// the stream's longest request fits the KV cache.
[[nodiscard]] std::vector<CapacityCandidate> capacity_groups(const Scenario& base, int max_gpus);
// The commands that lay out replicas one at a time (the serving search, the pool search, explain's
// levers) cannot split an expert-parallel group of ep replicas sharing their experts: a ConfigError naming
// /parallel/ep or /inference/disaggregation/prefill_ep when ep > 1, `who` saying which command refuses
// ("the serving search"). One sentence for all of them.
void refuse_expert_parallel(const Scenario& s, std::string_view who);
// The same for an autoscaled deployment (inference.autoscale): a search sizes fixed deployments, and a fleet
// that changes has no one capacity; `who` names the caller.
void refuse_autoscale(const Scenario& s, std::string_view who);
// The scenario of a candidate: its layout, replicas, precisions, max_batch and chunk; continuous batching.
[[nodiscard]] Scenario capacity_scenario(const Scenario& base, const CapacityCandidate& c);
// The streams a capacity is judged on: 600 s of arrivals (MLPerf loadgen's minimum run duration; times
// arrival_dispersion), at most 2,000,000 requests (a bound on the work of one simulation whatever the rate).
inline constexpr double kCapacityStreamS = 600;
inline constexpr std::int64_t kCapacityMaxRequests = 2'000'000;
// The arrivals a judged stream spans: `span_s`, or a rate profile's whole period when longer (every slice
// judged). One rule for the capacity searches here and in app/serving.
[[nodiscard]] double judged_span_s(const InferenceConfig& in, double span_s);
// The requests a judged stream at `qps` wants: judged_span_s of arrivals times arrival_dispersion (before
// any cap; not finite for a rate that is not).
[[nodiscard]] double wanted_stream_requests(const InferenceConfig& in, double qps, double span_s);
// (With a rate profile the stream spans its period; past kCapacityMaxRequests the question is refused.)
[[nodiscard]] std::int64_t capacity_stream_requests(const InferenceConfig& in);
// The scenario that judges one sampled replica of `s` (at its qps and requests) on a stream spanning
// `span_s` of arrivals within `max_requests`: `s` itself, or, for a fleet whose stream would pass the cap,
// the fewest of its replicas R' whose stream at the same rate per replica fits (qps and GPUs scaled by
// R'/R). Round robin gives each replica every R-th arrival, independently of the others, so the sampled
// replica then sees Erlang-R' gaps for Erlang-R (both near-regular for large R) over a whole stream, not a
// few hundred requests whose warm-up decides the percentiles (a 64-replica fleet capped at 20,000 requests
// read 51% above one replica's capacity, above its own offline throughput). Not for replicas that share
// load (a load-aware router, an autoscaler), pools, a rate profile or a trace: they are simulated whole.
[[nodiscard]] Scenario sampled_probe_scenario(const Scenario& s, double span_s, std::int64_t max_requests);
// The replica loads read over `requests` arrivals to `replicas` replicas by a router or autoscaler that
// reads them (each arrival reads every replica's load; 0 when none does), and whether a router's pass
// `limit_loads`, the serving
// simulator's work limit (ServingOptions::max_sequence_steps): check_router_work refuses such a run, and
// the capacity searches judge it as round robin (balancing on load serves a fleet at least as well as
// turns, so the rate found bounds the router's own). One rule for every caller.
[[nodiscard]] double router_loads_read(bool reads_loads, std::int64_t replicas, double requests);
[[nodiscard]] bool router_past_work_limit(RouterPolicy r, std::int64_t replicas, double requests,
                                          double limit_loads = ServingOptions{}.max_sequence_steps);
// A capacity question whose judged stream cannot span the rate profile's period within `max_requests` at
// `qps`: a ConfigError naming /inference/rate_profile/period_s (its later slices would go unjudged, the answer
// too high where the peak comes late). One sentence for every capacity search.
[[noreturn]] void refuse_uncovered_profile(const InferenceConfig& in, double qps, std::int64_t max_requests);
// How many times longer than a Poisson stream's a stream must be for its counts to settle as well: a
// renewal process's index of dispersion, the variance of the arrivals in a long window over their mean,
// is the square of its gaps' coefficient of variation (Cox 1962, "Renewal Theory", Sec. 3.3), so bursty
// arrivals (arrival_cv > 1) are judged on streams cv^2 times as long; 1 otherwise.
[[nodiscard]] double arrival_dispersion(const InferenceConfig& in);
// The max_batch and chunk values the search tries for `in` (the scenario's first).
[[nodiscard]] std::vector<std::int64_t> capacity_max_batches(const InferenceConfig& in);
[[nodiscard]] std::vector<std::int64_t> capacity_chunks(const InferenceConfig& in);

// Sizing a disaggregated deployment (docs/serving.md "Disaggregated prefill and decode"): the prefill
// replicas (of the scenario's prefill_tp) and the decode replicas (of its /parallel layout) as two counts.
struct PoolCandidate {
    int prefill_replicas = 0, decode_replicas = 0;
    int prefill_tp = 1, decode_gpus_per_replica = 1;
    bool meets = false;
    ServingResult result;
    int prefill_gpus() const { return prefill_replicas * prefill_tp; }
    int gpus() const { return prefill_gpus() + decode_replicas * decode_gpus_per_replica; }
};
struct PoolSearch {
    std::optional<PoolCandidate> best;   // the fewest GPUs meeting the SLO at the scenario's qps
    std::string why_none;
    std::int64_t simulations = 0;
};
// The scenario of a split: `prefill` replicas of base's prefill_tp and `decode` replicas of its layout.
[[nodiscard]] Scenario pool_scenario(const Scenario& base, int prefill, int decode);
// The fewest GPUs (at most max_gpus) of a disaggregated scenario meeting its SLO at its qps, each split judged
// on a stream of kCapacityStreamS of arrivals, every pool simulated. The first token is the prefill pool's,
// so its replicas are found first (the fewest meeting the TTFT target and keeping up, with every GPU left to
// the decode pool), then the fewest decode replicas meeting the whole SLO: an exponential step up from one,
// then a bisection, for each. Throws ConfigError without a qps, an SLO or a disaggregation.
[[nodiscard]] PoolSearch fewest_pools(const Scenario& base, int max_gpus);

// The SLO's targets a run missed, each with what was measured, in ServingSlo::targets' order (empty: every
// target met). One judgement for the simulator (ServingResult::slo_met), the capacity searches and explain.
struct SloMiss {
    ServingSlo::Target target;
    double measured_s = 0;
};
[[nodiscard]] std::vector<SloMiss> slo_misses(const ServingSlo& slo, const Distribution& ttft_s,
                                              const Distribution& tpot_s);
// The misses of a result: the stream's against the scenario's SLO, or with request classes each class's
// against its own (`cls` naming the class; empty otherwise).
struct StreamSloMiss {
    std::string cls;
    SloMiss miss;
};
[[nodiscard]] std::vector<StreamSloMiss> stream_slo_misses(const InferenceConfig& in, const ServingResult& r);
// The largest measured / target ratio over the stated TTFT targets (ttft) or TPOT targets; 0 without one.
[[nodiscard]] double slo_ratio(const ServingSlo& slo, bool ttft, const Distribution& ttft_s,
                               const Distribution& tpot_s);
// The same over a result: the stream's, or with request classes the largest of the classes' own.
[[nodiscard]] double stream_slo_ratio(const InferenceConfig& in, bool ttft, const ServingResult& r);

// Writes the iterations as a Chrome/Perfetto trace (one track per replica).
void write_serving_trace(std::ostream& os, const ServingResult& r);

}   // namespace llmsim::sim
