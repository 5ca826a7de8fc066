// How a model is laid out over the pipeline: layers per stage (uneven splits allowed), and the
// micro-batches each schedule keeps in flight. Pure functions of the structs.
#pragma once

#include <vector>

#include "hardware_db/specs.hpp"

namespace llmsim {

// Layers on each of the pp stages. When layers do not divide by pp, the remainder goes one extra
// layer each to the middle stages first (1 .. pp−2), then to the last and finally the first stage,
// because the first stage also runs the embedding and the last the logits and loss (Llama 3 405B:
// 126 layers on 16 stages -> 7, 8 × 14, 7).
[[nodiscard]] std::vector<int> layers_per_stage(int layers, int pp);

// MoE layers among the layers of one stage (leading dense layers sit on the first stages).
[[nodiscard]] int moe_layers_on_stage(const ModelSpec& m, int pp, int stage);

// Micro-batches of stage `stage` whose activations are alive at that stage's peak, in units of
// "one micro-batch through all of the stage's layers" (Megatron's in-flight count): the schedule's
// own count (schedules/impl/*.cpp).
[[nodiscard]] double microbatches_in_flight(const ParallelConfig& p, std::int64_t m, int stage);

// Number of micro-batches per step: global_batch / (micro_batch · dp).
[[nodiscard]] std::int64_t num_microbatches(const ParallelConfig& p, const TrainingConfig& t);

}   // namespace llmsim
