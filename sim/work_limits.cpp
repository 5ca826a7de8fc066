#include "sim/work_limits.hpp"

#include <fmt/format.h>

#include "cost_models/layout.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/limits.hpp"
#include "schedules/schedule.hpp"

namespace llmsim::sim {

namespace {
// Passes per micro-batch on one stage and chunk: F and B, plus W when the backward is split.
constexpr std::int64_t kPassesPerMicrobatch = 3;

std::int64_t chunks(const TrainingJob& s) {
    return s.parallel.schedule && s.parallel.schedule->uses_chunks ? std::max(1, s.parallel.vp) : 1;
}
}   // namespace

std::int64_t simulated_passes(const TrainingJob& s) {
    const std::int64_t m = num_microbatches(s.parallel, s.training);
    return limits::checked_product({std::max(1, s.parallel.pp), chunks(s), m, kPassesPerMicrobatch})
        .value_or(INT64_MAX);
}

void check_simulation_size(const TrainingJob& s) {
    const std::int64_t passes = simulated_passes(s);
    if (passes <= limits::kSimPasses) return;
    const auto& t = s.training;
    const auto& p = s.parallel;
    const std::int64_t per_microbatch = std::max(1, p.pp) * chunks(s) * kPassesPerMicrobatch;
    const std::int64_t max_batch = limits::kSimPasses / per_microbatch * t.micro_batch * p.dp;
    throw ConfigError(fmt::format(
        "/training/global_batch: {}: {} micro-batches per step (global_batch / (micro_batch·dp) = {} / ({}·{})) on "
        "pp·vp = {}·{} stages make {} passes; the simulator plays at most {}: expected a global batch of at most {} "
        "sequences with this layout (or the closed form: estimate --fast)",
        t.global_batch, num_microbatches(p, t), t.global_batch, t.micro_batch, p.dp, p.pp, chunks(s), passes,
        limits::kSimPasses, max_batch));
}

}   // namespace llmsim::sim
