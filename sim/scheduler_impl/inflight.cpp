// In-flight (iteration-level) batching, Orca's: decodes first, then prompt chunks of admitted requests,
// then admissions, all in one iteration within the token budget. TensorRT-LLM's batch manager packs
// context and generation requests into one iteration (docs/source/advanced/gpt-attention.md "In-flight
// Batching"); vLLM V1 schedules running requests first, then waiting ones (v1/core/sched/scheduler.py).
#include "sim/scheduler_impl/impl.hpp"

namespace llmsim::sim::scheduler_impl::inflight {

Held compose(ReplicaScheduler& s, IterationBatch& b, double now) {
    s.begin(b);
    s.decodes(b);
    s.prompts(b);
    return s.admit(b, now);
}

}   // namespace llmsim::sim::scheduler_impl::inflight
