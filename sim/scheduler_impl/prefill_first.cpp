// Prefill-first: an iteration runs prompts only whenever one can run, and decodes only when none can.
// vLLM V0's default scheduler ("Don't schedule decodes if prefills are scheduled", core/scheduler.py
// _schedule_default) and SGLang's (managers/scheduler.py get_next_batch_to_run: "run prefill first if
// possible"; --enable-mixed-chunk off). Decodes stall while prompts arrive: lower TTFT, higher TPOT
// tails than in-flight batching at the same load.
#include "sim/scheduler_impl/impl.hpp"

namespace llmsim::sim::scheduler_impl::prefill_first {

Held compose(ReplicaScheduler& s, IterationBatch& b, double now) {
    s.begin(b);
    s.prompts(b);
    const Held held = s.admit(b, now);
    if (b.prefill_tokens > 0) return held;
    s.begin(b);
    s.decodes(b);
    return held;
}

}   // namespace llmsim::sim::scheduler_impl::prefill_first
