// 1F1B (PipeDream-Flush, Megatron-LM): min(p−s−1, m) warm-up forwards, then one forward and one
// backward alternately, then the remaining backwards. Stage s holds min(p − s, m) micro-batches.
#include <algorithm>

#include "schedules/impl/impl.hpp"

namespace llmsim::schedule_impl::one_f_one_b {

double in_flight(int p, int, std::int64_t m, int stage) {
    return std::min<double>(p - stage, static_cast<double>(std::max<std::int64_t>(1, m)));
}

void generate(int p, int, std::int64_t m, int s, std::vector<PipeOp>& out) {
    const std::int64_t warm = std::min<std::int64_t>(p - s - 1, m);
    for (std::int64_t j = 0; j < warm; ++j) push(out, PassKind::F, 0, j);
    for (std::int64_t j = 0; j < m - warm; ++j) {
        push(out, PassKind::F, 0, warm + j);
        push(out, PassKind::B, 0, j);
    }
    for (std::int64_t j = m - warm; j < m; ++j) push(out, PassKind::B, 0, j);
}

}   // namespace llmsim::schedule_impl::one_f_one_b
