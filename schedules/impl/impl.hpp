// The schedule implementations the registry (schedules/registry.cpp) lists; one file each.
#pragma once

#include "schedules/schedule.hpp"

namespace llmsim::schedule_impl {

void push(std::vector<PipeOp>& out, PassKind k, int chunk, std::int64_t mb);

// Bubble shared by schedules whose passes all sit on the critical path: (p−1) slots of the busiest
// stage's neighbours, Σ_s t_s − t_max (exact for uneven stages, Narayanan et al. 2021 Sec. 2.2).
double flat_bubble_s(const PipelineTimes& t);

namespace gpipe {
double in_flight(int p, int v, std::int64_t m, int stage);
void generate(int p, int v, std::int64_t m, int stage, std::vector<PipeOp>& out);
}   // namespace gpipe

namespace one_f_one_b {
double in_flight(int p, int v, std::int64_t m, int stage);
void generate(int p, int v, std::int64_t m, int stage, std::vector<PipeOp>& out);
}   // namespace one_f_one_b

namespace interleaved {
double in_flight(int p, int v, std::int64_t m, int stage);
double bubble_s(const PipelineTimes& t);
void generate(int p, int v, std::int64_t m, int stage, std::vector<PipeOp>& out);
}   // namespace interleaved

namespace zero_bubble {
double bubble_s(const PipelineTimes& t);
void generate(int p, int v, std::int64_t m, int stage, std::vector<PipeOp>& out);
}   // namespace zero_bubble

}   // namespace llmsim::schedule_impl
