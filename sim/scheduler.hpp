// Serving schedulers: how one replica composes an iteration from its running and waiting requests
// (docs/serving.md "Engines"). One implementation per policy in sim/scheduler_impl/, one row each in
// the registry (sim/scheduler.cpp kSchedulers), chosen by InferenceConfig::scheduler, which the engine
// registry resolves (hardware_db/engines.hpp). Every policy is built from the same three steps of a
// ReplicaScheduler — decodes (with preemption when the KV cache is full), the next chunks of admitted
// prompts, admissions — so a new policy is one file that orders them differently plus its row.
#pragma once

#include <cstdint>
#include <deque>
#include <string_view>
#include <vector>

#include "cost_models/inference.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim::sim {

// Requests and their lengths as the simulator draws them.
struct Request {
    double arrival_s = 0;
    std::int32_t input = 0, output = 0;
};

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
    std::uint8_t role = 0;   // this iteration: 0 idle, 1 decode, 2 prefill chunk
    double chunk = 0;
};

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

private:
    bool fits_whole(const Seq& q, const IterationBatch& b) const;
    std::int64_t admission_need(const Seq& q) const;
    void chunk_of(Seq& q, IterationBatch& b);

    const InferenceConfig& in_;
    const std::vector<Request>& reqs_;
    std::vector<RequestState>& st_;
    bool chunked_ = false, static_ = false;
    double budget_cap_ = 0, budget_ = 0, step_tokens_ = 1, hit_ = 0;
    std::int64_t seat_cap_ = 0;
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
