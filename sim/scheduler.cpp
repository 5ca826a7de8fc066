#include "sim/scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "hardware_db/limits.hpp"
#include "sim/interrupt.hpp"
#include "sim/scheduler_impl/impl.hpp"

namespace llmsim::sim {

std::int64_t blocks_for(double tokens) { return static_cast<std::int64_t>(std::ceil(tokens / kKvBlockTokens)); }

namespace {
// The decode steps' tokens an admission keeps free beside a request's blocks: one step on demand (the
// step that follows), two under reservation (that step and the next, so a reserved request never waits
// on a block in flight). One rule for admission_blocks and the room reserved_output_tokens leaves.
double admission_slack_tokens(const InferenceConfig& in) {
    return (in.kv_reserve ? 2.0 : 1.0) * decode_step_tokens(in.speculative);
}
}   // namespace

std::int64_t admission_blocks(const InferenceConfig& in, double tokens) {
    return blocks_for(tokens + admission_slack_tokens(in));
}

double reserved_output_tokens(const InferenceConfig& in, const Request& r, double pool_tokens) {
    const double drawn = r.output;
    const auto& d = output_dist_of(in, r);
    if (in.arrivals || d.is_fixed() || !(d.max < static_cast<double>(limits::kSeqLen))) return drawn;
    const double room = pool_tokens - r.input - admission_slack_tokens(in);
    return std::max(drawn, std::min(d.max, room));
}

ReplicaScheduler::ReplicaScheduler(const InferenceConfig& in, std::int64_t kv_blocks, const std::vector<Request>& reqs,
                                   std::vector<RequestState>& states)
    : free_blocks(kv_blocks), in_(in), reqs_(reqs), st_(states) {
    // The token budget of one iteration: `max_batch_tokens` with chunked prefill; unset, the engine's
    // budget for whole prompts (a prompt longer than it runs as its iteration's only prompt: TensorRT-LLM
    // without chunked context, vLLM V0 without chunked prefill).
    chunked_ = in.max_batch_tokens > 0;
    budget_cap_ = chunked_ ? static_cast<double>(in.max_batch_tokens) : in.prompt_budget_tokens;
    // Static batching on a stream: a batch of up to `batch` requests is admitted only when the previous
    // one has finished entirely.
    static_ = !in.continuous();
    seat_cap_ = static_ ? in.batch : in.max_batch > 0 ? in.max_batch : std::numeric_limits<std::int64_t>::max();
    step_tokens_ = decode_step_tokens(in.speculative);
    hit_ = in.prefix_cache_hit;
    pool_tokens_ = static_cast<double>(kv_blocks) * kKvBlockTokens;
}

Seq ReplicaScheduler::fresh(std::int32_t id) const {
    const auto& r = reqs_[static_cast<std::size_t>(id)];
    const double generated = st_[static_cast<std::size_t>(id)].generated;
    Seq q;
    q.req = id;
    q.prompt = r.input + (generated > 1 ? generated - 1 : 0);
    q.computed = std::floor(hit_ * r.input);           // prefix-cache hit: not recomputed
    if (st_[static_cast<std::size_t>(id)].kv_held) {   // prefilled elsewhere, its KV cache here
        q.computed = q.prompt;
        q.decoding = true;
    }
    return q;
}

std::int64_t ReplicaScheduler::shareable_blocks(const Request& r) const {
    if (r.group < 0) return 0;
    return static_cast<std::int64_t>(in_.shared_prefix.tokens_of(r.input) / kKvBlockTokens);
}

std::int64_t ReplicaScheduler::hit_blocks(const Seq& q) const {
    const auto& r = reqs_[static_cast<std::size_t>(q.req)];
    if (r.group < 0 || q.decoding) return 0;
    const auto it = prefixes_.find(r.group);
    return it == prefixes_.end() ? 0 : std::min(it->second.blocks, shareable_blocks(r));
}

void ReplicaScheduler::release(std::int32_t group) {
    auto& e = prefixes_.at(group);
    if (--e.refs > 0) return;
    e.last_use = ++uses_;
    idle_.emplace(e.last_use, group);
    idle_blocks_ += e.blocks;
}

void ReplicaScheduler::evict(std::int64_t need, std::int32_t keep) {
    for (auto it = idle_.begin(); it != idle_.end() && free_blocks < need;) {
        if (it->second == keep) {
            ++it;
            continue;
        }
        const auto e = prefixes_.find(it->second);
        free_blocks += e->second.blocks;
        idle_blocks_ -= e->second.blocks;
        prefixes_.erase(e);
        it = idle_.erase(it);
    }
}

void ReplicaScheduler::prefilled(Seq& q) {
    const auto& r = reqs_[static_cast<std::size_t>(q.req)];
    const std::int64_t share = shareable_blocks(r);
    if (q.cached > 0 || share <= 0 || q.blocks < share || prefixes_.count(r.group) > 0) return;
    prefixes_.emplace(r.group, CachedPrefix{share, 1, ++uses_});
    q.blocks -= share;   // the prefix's blocks now belong to the cache, this sequence using them
    q.cached = share;
}

void ReplicaScheduler::finish(Seq& q) {
    free_blocks += q.blocks;
    q.blocks = 0;
    if (q.cached > 0) release(reqs_[static_cast<std::size_t>(q.req)].group);
    q.cached = 0;
}

void ReplicaScheduler::begin(IterationBatch& b) {
    poll_interrupt();   // every iteration of the serving simulator starts here (a caller's Ctrl-C)
    b = IterationBatch{};
    b.decode_tokens_per_seq = step_tokens_;
    budget_ = budget_cap_;
    min_left = std::numeric_limits<double>::infinity();
    for (auto& q : running) q.role = 0;
}

void ReplicaScheduler::decodes(IterationBatch& b) {
    // Sums kept in locals (the loop is the simulator's hottest): the same additions in the same order.
    double budget = budget_, seqs = b.decode_seqs, kv_tokens = b.decode_kv_tokens;
    double fewest = min_left;
    std::int64_t free = free_blocks;
    for (std::size_t i = 0; i < running.size() && budget >= step_tokens_; ++i) {
        auto& q = running[i];
        if (!q.decoding) continue;
        const auto& r = reqs_[static_cast<std::size_t>(q.req)];
        const double generated = st_[static_cast<std::size_t>(q.req)].generated;
        const double ctx = r.input + generated;
        fewest = std::min(fewest, r.output - generated);
        // The step fits the blocks held (most steps): nothing to allocate.
        const double after = ctx + step_tokens_;
        const std::int64_t held = q.blocks + q.cached;
        const std::int64_t need = after <= static_cast<double>(held) * kKvBlockTokens ? 0 : blocks_for(after) - held;
        while (need > free) {
            free_blocks = free;
            evict(need, -1);   // unused cached prefixes go before a running sequence
            free = free_blocks;
            if (need <= free || running.size() <= i + 1) break;
            finish(running.back());   // its prefix, if no one else uses it, is then the first to go
            free = free_blocks;
            st_[static_cast<std::size_t>(running.back().req)].kv_held = false;   // its cache is gone
            waiting.push_front(fresh(running.back().req));
            running.pop_back();
            ++preemptions;
        }
        if (need > free) break;   // one request alone always fits (the simulator checks)
        if (need > 0) {
            free -= need;
            q.blocks += need;
        }
        budget -= step_tokens_;
        q.role = 1;
        seqs += 1;
        kv_tokens += ctx;
    }
    budget_ = budget;
    free_blocks = free;
    min_left = fewest;
    b.decode_seqs = seqs;
    b.decode_kv_tokens = kv_tokens;
}

bool ReplicaScheduler::fits_whole(const Seq& q, const IterationBatch& b) const {
    const double rest = q.prompt - q.computed;
    return rest <= budget_ || (rest > budget_cap_ && b.prefill_tokens <= 0);
}

void ReplicaScheduler::chunk_of(Seq& q, IterationBatch& b) {
    if (!chunked_ && !fits_whole(q, b)) return;
    const double tokens = chunked_ ? std::min(q.prompt - q.computed, budget_) : q.prompt - q.computed;
    if (tokens <= 0) return;
    budget_ -= tokens;
    q.role = 2;
    q.chunk = tokens;
    b.prefill_seqs += 1;
    b.prefill_tokens += tokens;
    b.prefill_pairs += tokens * (q.computed + (tokens + 1.0) / 2.0);
    b.prefill_kv_tokens += q.computed + tokens;
}

void ReplicaScheduler::prompts(IterationBatch& b) {
    for (auto& q : running) {
        if (budget_ <= 0) break;
        if (!q.decoding && q.role == 0) chunk_of(q, b);
    }
}

// Reserve: the whole request at admission, so a decode never needs a block and nothing is preempted; on
// demand: the prompt and one step (a request whose KV cache arrived with it: its context and one step).
// A shared prefix found in the cache is not allocated again.
std::int64_t ReplicaScheduler::admission_need(const Seq& q, std::int64_t hit) const {
    const auto& r = reqs_[static_cast<std::size_t>(q.req)];
    if (in_.kv_reserve) return admission_blocks(in_, r.input + reserved_output_tokens(in_, r, pool_tokens_)) - hit;
    const double held = q.decoding ? r.input + st_[static_cast<std::size_t>(q.req)].generated : q.prompt;
    return blocks_for(held + step_tokens_) - hit;
}

bool ReplicaScheduler::can_admit() const {
    if (waiting.empty() || static_cast<std::int64_t>(running.size()) >= seat_cap_) return false;
    if (static_ && !running.empty()) return false;
    return admission_need(waiting.front(), hit_blocks(waiting.front())) <= free_blocks + idle_blocks_;
}

Held ReplicaScheduler::admit(IterationBatch& b, double now) {
    if (static_ && !running.empty()) return Held::none;
    while (!waiting.empty()) {
        if (budget_ <= 0) return Held::tokens;
        if (static_cast<std::int64_t>(running.size()) >= seat_cap_) return Held::seats;
        std::int64_t hit = hit_blocks(waiting.front());
        std::int64_t need = admission_need(waiting.front(), hit);
        if (need > free_blocks && idle_blocks_ > 0) {
            // Other prefixes first (its own hit stays); its own only if it is still short (a longer prompt
            // of its group may have left more blocks than it reuses).
            const std::int32_t group = reqs_[static_cast<std::size_t>(waiting.front().req)].group;
            evict(need, group);
            if (need > free_blocks) {
                evict(need + hit, -1);
                hit = hit_blocks(waiting.front());
                need = admission_need(waiting.front(), hit);
            }
        }
        if (need > free_blocks) return Held::kv;
        // Found in the prefix cache: computed already, but for the last token, whose logits it samples.
        Seq probe = waiting.front();
        if (hit > 0) probe.computed = std::min(static_cast<double>(hit) * kKvBlockTokens, probe.prompt - 1.0);
        if (!chunked_ && !fits_whole(probe, b)) return Held::tokens;
        Seq q = probe;
        waiting.pop_front();
        free_blocks -= need;
        q.blocks = need;
        if (!q.decoding) {
            prompt_tokens += q.prompt;
            hit_tokens += q.computed;
        }
        if (hit > 0) {
            auto& e = prefixes_.at(reqs_[static_cast<std::size_t>(q.req)].group);
            if (e.refs++ == 0) {
                idle_.erase({e.last_use, reqs_[static_cast<std::size_t>(q.req)].group});
                idle_blocks_ -= e.blocks;
            }
            q.cached = hit;
        }
        auto& rs = st_[static_cast<std::size_t>(q.req)];
        if (rs.admitted < 0) rs.admitted = now;
        running.push_back(q);
        if (!q.decoding) {
            chunk_of(running.back(), b);
        } else if (budget_ >= step_tokens_) {   // its KV cache arrived with it: its first step now
            auto& d = running.back();
            budget_ -= step_tokens_;
            d.role = 1;
            b.decode_seqs += 1;
            b.decode_kv_tokens += reqs_[static_cast<std::size_t>(d.req)].input + rs.generated;
            min_left = std::min(min_left, reqs_[static_cast<std::size_t>(d.req)].output - rs.generated);
        }
    }
    return Held::none;
}

const std::vector<SchedulerDef>& schedulers() {
    static const std::vector<SchedulerDef> table = {
        {SchedulerPolicy::inflight,
         "in-flight batching: every decode one step, then the next chunks of admitted prompts, then new "
         "admissions, within one token budget (TensorRT-LLM, vLLM V1, Sarathi-Serve; vLLM V0 with chunked "
         "prefill)",
         scheduler_impl::inflight::compose},
        {SchedulerPolicy::prefill_first,
         "prefill-first: whenever a prompt can run, an iteration of prompts only (admitted ones' next chunks, "
         "then admissions); decodes only when none can (vLLM V0 without chunked prefill, SGLang)",
         scheduler_impl::prefill_first::compose},
    };
    return table;
}

const SchedulerDef& scheduler(SchedulerPolicy p) {
    for (const auto& d : schedulers())
        if (d.policy == p) return d;
    throw std::logic_error("serving scheduler without a registry row");
}

}   // namespace llmsim::sim
