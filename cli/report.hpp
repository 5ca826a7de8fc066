// Text renderings of results shared by several subcommands (their JSON: report/results.hpp).
#pragma once

#include <string>
#include <vector>

#include "cost_models/flops.hpp"
#include "cost_models/memory.hpp"

namespace llmsim::cli {

// A table of memory components in GiB, what dominates, whether it fits, headroom.
std::string memory_text(const MemoryBreakdown& m);
// One line naming the memory levers a training scenario left unstated and its layout is priced with
// (resolve_memory_levers); empty when none.
std::string assumed_levers_text(const std::vector<std::string>& levers);
// The activation policy in a header: "full recompute (first 5 layers of each chunk)", and
// " | activations of 40 layers offloaded" when activation offload is on; then the model states'
// precisions that differ from the defaults (" | fp8 params | bf16 grads | bf16 moments | master remainders").
std::string training_options_text(const TrainingConfig& t);

}   // namespace llmsim::cli
