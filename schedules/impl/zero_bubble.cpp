// ZB-H1 (Qi et al. 2023, "Zero Bubble Pipeline Parallelism"): 1F1B's forwards with the backward split
// into B (input gradient, on the critical path) and W (weight gradient). Stage s defers s W passes
// (warm-up p−s−1 forwards, then s rounds of F B, then F B W, then B W, then the s deferred W), so the
// W passes fill the cool-down bubble while at most p−s micro-batches are in flight, as in 1F1B.
#include <algorithm>

#include "schedules/impl/impl.hpp"

namespace llmsim::schedule_impl::zero_bubble {

// (p−1)(T_F + T_B − T_W) with T_B the input-gradient pass, i.e. (p−1)(t_f + t_b − 2·t_w), over
// uneven stages: (Σ_s − 2Σ_w) − (t_max − 2·w_max).
double bubble_s(const PipelineTimes& t) {
    return std::max(0.0, (t.sum_stage_s - 2.0 * t.sum_wgrad_s) - (t.max_stage_s - 2.0 * t.wgrad_of_max_stage_s));
}

void generate(int p, int, std::int64_t m, int s, std::vector<PipeOp>& out) {
    std::int64_t f = 0, b = 0, w = 0;
    for (std::int64_t k = 0; k < std::min<std::int64_t>(p - s - 1, m); ++k) push(out, PassKind::F, 0, f++);
    for (int k = 0; k < s && f < m; ++k) {
        push(out, PassKind::F, 0, f++);
        push(out, PassKind::B, 0, b++);
    }
    while (f < m) {
        push(out, PassKind::F, 0, f++);
        push(out, PassKind::B, 0, b++);
        push(out, PassKind::W, 0, w++);
    }
    while (b < m) {
        push(out, PassKind::B, 0, b++);
        push(out, PassKind::W, 0, w++);
    }
    while (w < m) push(out, PassKind::W, 0, w++);
}

}   // namespace llmsim::schedule_impl::zero_bubble
