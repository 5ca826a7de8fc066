// Megatron-LM's interleaved 1F1B (Narayanan et al. 2021): v model chunks per stage; the bubble
// shrinks by v, stage s holds (2(p−s−1) + (v−1)p + 1)/v micro-batches of activations (capped by m).
#include <algorithm>

#include "schedules/impl/impl.hpp"

namespace llmsim::schedule_impl::interleaved {

double in_flight(int p, int v, std::int64_t m, int stage) {
    v = std::max(1, v);
    const double chunks = 2.0 * (p - stage - 1) + (v - 1.0) * p + 1.0;
    return std::min(chunks / v, static_cast<double>(std::max<std::int64_t>(1, m)));
}

double bubble_s(const PipelineTimes& t) { return flat_bubble_s(t) / std::max(1, t.chunks); }

// Virtual micro-batches ordered in groups of p micro-batches, chunk by chunk (forward chunks 0..v−1,
// backward chunks v−1..0); warm-up min(2(p−s−1) + (v−1)p, v·m) forwards, then 1F1B over virtual
// micro-batches. A last group smaller than p (m not a multiple of p) is ordered the same way.
// Megatron's special case m == p ("all warm-up") is not reproduced, so the in-flight count stays the
// analytic one above.
void generate(int p, int v, std::int64_t m, int s, std::vector<PipeOp>& out) {
    using I64 = std::int64_t;
    if (v <= 1) {
        one_f_one_b::generate(p, v, m, s, out);
        return;
    }
    const I64 total = static_cast<I64>(v) * m;
    const I64 warm = std::min<I64>(2 * static_cast<I64>(p - s - 1) + static_cast<I64>(v - 1) * p, total);
    // k-th forward / backward virtual micro-batch -> (chunk, mb), without materialising the lists.
    auto virt = [&](I64 k, bool backward, int& chunk, I64& mb) {
        const I64 group = k / (static_cast<I64>(v) * p);   // full groups of p micro-batches before
        const I64 g0 = group * p;
        const I64 gs = std::min<I64>(p, m - g0);             // size of this group
        const I64 r = k - group * static_cast<I64>(v) * p;   // position inside the group
        const int c = static_cast<int>(r / gs);
        chunk = backward ? v - 1 - c : c;
        mb = g0 + r % gs;
    };
    int c = 0;
    I64 j = 0;
    for (I64 k = 0; k < warm; ++k) {
        virt(k, false, c, j);
        push(out, PassKind::F, c, j);
    }
    for (I64 k = 0; k < total - warm; ++k) {
        virt(warm + k, false, c, j);
        push(out, PassKind::F, c, j);
        virt(k, true, c, j);
        push(out, PassKind::B, c, j);
    }
    for (I64 k = total - warm; k < total; ++k) {
        virt(k, true, c, j);
        push(out, PassKind::B, c, j);
    }
}

}   // namespace llmsim::schedule_impl::interleaved
