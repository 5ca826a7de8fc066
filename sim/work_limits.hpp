// Work limits of the simulator (docs/reliability.md): a step whose passes exceed
// limits::kSimPasses is refused with a ConfigError naming the input that made it too large, instead of
// growing without bound (a global batch of 10^9 sequences is 10^9 micro-batch passes per stage).
#pragma once

#include "hardware_db/specs.hpp"

namespace llmsim::sim {

// F/B/W passes the simulator would play for `s` (pp · chunks · micro-batches · passes per micro-batch),
// saturated at INT64_MAX.
std::int64_t simulated_passes(const TrainingJob& s);

// Throws ConfigError (pointer /training/global_batch) when simulated_passes(s) > limits::kSimPasses.
void check_simulation_size(const TrainingJob& s);

}   // namespace llmsim::sim
