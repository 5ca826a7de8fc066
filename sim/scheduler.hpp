// Serving schedulers: how one replica composes an iteration from its running and waiting requests
// (docs/serving.md "Engines"). One implementation per policy in sim/scheduler_impl/, one row each in
// the registry (sim/scheduler.cpp kSchedulers), chosen by InferenceConfig::scheduler, which the engine
// registry resolves (hardware_db/engines.hpp). Every policy is built from the same three steps of a
// ReplicaScheduler — decodes (with preemption when the KV cache is full), the next chunks of admitted
// prompts, admissions — so a new policy is one file that orders them differently plus its row.
#pragma once

#include <cstdint>
#include <deque>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cost_models/inference.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim::sim {

// Requests and their lengths as the simulator draws them.
struct Request {
    double arrival_s = 0;
    std::int32_t input = 0, output = 0;
    std::int32_t group = -1;   // the shared prefix its prompt begins with (InferenceConfig::shared_prefix); -1: none
    std::int32_t cls = -1;     // its request class (InferenceConfig::classes); -1: the stream has none
};

// The latency targets a request is judged on: its class's (InferenceConfig::classes), else the scenario's.
[[nodiscard]] inline const ServingSlo& slo_of(const InferenceConfig& in, const Request& r) {
    return r.cls >= 0 ? in.classes[static_cast<std::size_t>(r.cls)].slo : in.slo;
}
// Its output length's distribution: its class's, else the stream's.
[[nodiscard]] inline const LengthDist& output_dist_of(const InferenceConfig& in, const Request& r) {
    return r.cls >= 0 ? in.classes[static_cast<std::size_t>(r.cls)].output_dist : in.output_dist;
}

// What the stream records of a request while it is served.
struct RequestState {
    double first_token = -1, finish = -1, admitted = -1;
    double generated = 0;        // survives preemption
    std::int32_t replica = -1;   // where it was routed
    // Its prompt's KV cache arrives with it (a disaggregated deployment's decode pool): admitted, it decodes at
    // once; a preemption frees that cache, and it is recomputed like any preempted request.
    bool kv_held = false;
};

// A request on a replica.
struct Seq {
    std::int32_t req = 0;
    double prompt = 0;         // tokens to prefill: the input, or input + generated after a preemption
    double computed = 0;       // of `prompt`, in the KV cache (computed or found in the prefix cache)
    std::int64_t blocks = 0;   // KV blocks held
    bool decoding = false;
    std::int64_t cached = 0;   // of its blocks, its group's prefix in the replica's prefix cache (referenced)
    std::uint8_t role = 0;     // this iteration: 0 idle, 1 decode, 2 prefill chunk
    double chunk = 0;
};

// The output tokens kv_admission "reserve" holds blocks for at admission: the request's output limit, as
// TensorRT-LLM's GUARANTEED_NO_EVICT reserves prompt + max_new_tokens (getRemainingBlocksToCompletion), not
// the length it will turn out to have. The limit is the scenario's output_len max when its lengths are
// drawn from a distribution with one (MLPerf's max_new_tokens 1,024), else the request's own length (fixed
// lengths, a trace: the client's max_tokens is the length, as trtllm-bench sets it); never more than the
// cache holds beside the prompt (the engine caps max_new_tokens at its max sequence length).
double reserved_output_tokens(const InferenceConfig& in, const Request& r, double pool_tokens);

// Why waiting requests were held back in an iteration.
enum class Held { none, kv, seats, tokens };

// One replica's queues and KV blocks, and the iteration being composed.
class ReplicaScheduler {
public:
    ReplicaScheduler(const InferenceConfig& in, std::int64_t kv_blocks, const std::vector<Request>& reqs,
                     std::vector<RequestState>& states);

    std::deque<Seq> waiting;    // arrived, not admitted (preempted ones go to the front)
    std::vector<Seq> running;   // in admission order
    std::int64_t free_blocks = 0;
    std::int64_t preemptions = 0;
    // Of the sequences the iteration being composed steps (by `decodes`, or admitted with their KV cache),
    // the fewest output tokens left before the step (infinity when none): the serving loop's fast decode
    // steps last until one would finish.
    double min_left = 0;

    // A request entering the waiting queue (again after a preemption: its generated tokens are recomputed).
    Seq fresh(std::int32_t id) const;

    // The steps a policy orders, each within the iteration's token budget. `begin` starts an iteration.
    void begin(IterationBatch& b);
    // Every decoding sequence one step (preempting the youngest running ones when a step finds no free KV
    // block, as vLLM does), while the budget lasts.
    void decodes(IterationBatch& b);
    // The next chunk of every admitted prompt not yet prefilled (the whole rest without chunking).
    void prompts(IterationBatch& b);
    // Waiting requests admitted in order while seats, KV blocks and the budget allow; says what stopped
    // it. `now` is recorded as a request's first admission.
    Held admit(IterationBatch& b, double now);
    // Whether the head of the waiting queue could be admitted now (seats and KV blocks).
    bool can_admit() const;

    double budget() const { return budget_; }
    bool static_batches() const { return static_; }

    // Shared prefixes (InferenceConfig::shared_prefix). A sequence whose prompt has been computed keeps its
    // group's prefix (its whole KV blocks) in the cache for the requests after it; a request admitted while its
    // group's prefix is there reuses those blocks and computes the rest of its prompt (at least its last
    // token, whose logits it samples). A prefix no running sequence uses stays until its blocks are needed,
    // then the least recently used goes first (vLLM's automatic prefix caching, SGLang's radix cache).
    void prefilled(Seq& q);
    // A finished sequence leaves: its KV blocks freed, its reference to a cached prefix dropped.
    void finish(Seq& q);
    double prompt_tokens = 0;   // prompt tokens admitted to prefill (each admission)
    double hit_tokens = 0;      // of them, found in the prefix cache

private:
    bool fits_whole(const Seq& q, const IterationBatch& b) const;
    std::int64_t admission_need(const Seq& q, std::int64_t hit) const;   // hit: hit_blocks(q)
    void chunk_of(Seq& q, IterationBatch& b);

    // A shared prefix in the cache: its blocks, the running sequences using it, its last use (a counter).
    struct CachedPrefix {
        std::int64_t blocks = 0, refs = 0;
        std::uint64_t last_use = 0;
    };
    // Whole KV blocks of `r`'s shared prefix (a partial block is not shared); 0 without one.
    std::int64_t shareable_blocks(const Request& r) const;
    // Blocks of `q`'s prompt found in the prefix cache now.
    std::int64_t hit_blocks(const Seq& q) const;
    void release(std::int32_t group);
    // Frees unused cached prefixes, least recently used first, until `need` blocks are free (or none is
    // left to free); `keep`'s prefix stays.
    void evict(std::int64_t need, std::int32_t keep);

    const InferenceConfig& in_;
    const std::vector<Request>& reqs_;
    std::vector<RequestState>& st_;
    bool chunked_ = false, static_ = false;
    double budget_cap_ = 0, budget_ = 0, step_tokens_ = 1, hit_ = 0;
    double pool_tokens_ = 0;   // the replica's KV cache, tokens
    std::int64_t seat_cap_ = 0;
    std::unordered_map<std::int32_t, CachedPrefix> prefixes_;
    std::set<std::pair<std::uint64_t, std::int32_t>> idle_;   // unused cached prefixes: (last use, group)
    std::int64_t idle_blocks_ = 0;
    std::uint64_t uses_ = 0;
};

// A policy: composes the iteration `b` from the replica's queues at time `now`.
using ComposeFn = Held (*)(ReplicaScheduler& s, IterationBatch& b, double now);

struct SchedulerDef {
    SchedulerPolicy policy;
    std::string_view contract;   // one line: what the policy does, and which engines run it
    ComposeFn compose;
};

// Every policy, one row each (a policy without a row is a test failure, tests/test_serving.cpp).
const std::vector<SchedulerDef>& schedulers();
const SchedulerDef& scheduler(SchedulerPolicy p);

// KV blocks for `tokens` tokens.
[[nodiscard]] std::int64_t blocks_for(double tokens);

}   // namespace llmsim::sim
