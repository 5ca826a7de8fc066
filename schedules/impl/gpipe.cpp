// GPipe (Huang et al. 2019): every forward, then every backward, micro-batches in order. Every stage
// holds all m micro-batches of activations at its peak.
#include "schedules/impl/impl.hpp"

namespace llmsim::schedule_impl {

void push(std::vector<PipeOp>& out, PassKind k, int chunk, std::int64_t mb) {
    out.push_back(PipeOp{k, static_cast<std::int16_t>(chunk), static_cast<std::int32_t>(mb)});
}

double flat_bubble_s(const PipelineTimes& t) { return t.sum_stage_s - t.max_stage_s; }

namespace gpipe {

double in_flight(int, int, std::int64_t m, int) { return static_cast<double>(m < 1 ? 1 : m); }

void generate(int, int, std::int64_t m, int, std::vector<PipeOp>& out) {
    for (std::int64_t j = 0; j < m; ++j) push(out, PassKind::F, 0, j);
    for (std::int64_t j = 0; j < m; ++j) push(out, PassKind::B, 0, j);
}

}   // namespace gpipe
}   // namespace llmsim::schedule_impl
