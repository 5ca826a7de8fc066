// The JSON of the library's results: one definition for every caller that prints or returns them (the
// CLI's --json, `llmsim run` rows, the Python module). Keys and units are the scenario contract's
// (docs/scenario.md): seconds, bytes, FLOPs, tokens.
#pragma once

#include "cost_models/flops.hpp"
#include "cost_models/memory.hpp"
#include "cost_models/model_params.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/specs.hpp"
#include "sim/serving.hpp"

namespace llmsim::report {

Json memory_json(const MemoryBreakdown& m);
Json inference_memory_json(const InferenceMemory& m);
Json flops_json(const TrainingFlops& f);
// {"mean", "p50", "p90", "p99", "max"}
Json distribution_json(const sim::Distribution& d);

// `llmsim memory --json`: {"memory": {...}, "scenario": {...}} (training or serving by the scenario's kind).
Json memory_document(const Scenario& s);
// A serving scenario's forward FLOPs per prompt token (causal, over the mean prompt) and per generated
// token (at the mean context input + output/2, as the static estimate prices decode), split into GEMMs
// and attention (docs/serving.md, "FLOPs per token").
struct ServingTokenFlops {
    double prompt = 0, context = 0;   // tokens
    InferenceTokenFlops prefill, generated, generated_at_zero;
    ParamCounts params;
};
ServingTokenFlops serving_token_flops(const Scenario& s);

// `llmsim flops --json`: {"flops": {...}, "scenario": {...}}; serving: per prefill and generated token.
Json flops_document(const Scenario& s);

}   // namespace llmsim::report
