// `llmsim plan` as a library call: from a budget (training FLOPs, GPU-hours, or days on N GPUs) to a
// compute-optimal model (Chinchilla), its shape and the best layout (search). A time budget is met by
// bisection in log compute: the training time of the compute-optimal model at its best layout's
// throughput grows with the compute, so the largest compute whose time fits is found (docs/search.md).
#pragma once

#include <cstdint>

#include "app/search/search.hpp"
#include "cost_models/scaling_laws.hpp"

namespace llmsim::search {

struct PlanRequest {
    SystemSpec system;
    int gpus = 1;
    Precision precision = Precision::bf16;
    std::int64_t seq_len = 4096;
    std::int64_t global_batch = 0;   // 0: the compute-optimal batch of each budget tried (default_global_batch)
    std::int64_t vocab = 32000;
    ScalingFit fit = ScalingFit::approach1;
    enum class Budget { compute_flops, gpu_hours, days } budget = Budget::compute_flops;
    double budget_value = 0;
    double memory_headroom_fraction = 0;   // of each GPU's memory kept free by the layout search
    SearchOptions options;                 // threads, price, progress
};

struct PlanResult {
    ScalingPoint chinchilla;   // the compute-optimal point chosen
    ModelSpec model;           // its shape
    Scenario base;             // the model on the system (the layout's scenario base)
    SearchResult search;       // the best layout first (empty when none fits)
    std::int64_t global_batch = 0;
    int iterations = 1;   // searches the bisection ran
    // Of the best layout (0 when none fits).
    double tokens_per_s = 0, train_s = 0, gpu_hours = 0;
};

// The global batch used when the request gives none: the batch near-optimal for a training budget of
// `flops` (optimal_batch_tokens, DeepSeek LLM's fit) in sequences of seq_len, rounded to a power of two.
std::int64_t default_global_batch(std::int64_t seq_len, double flops);

// The largest budget (FLOPs) plan designs a model for: that of a compute-optimal model of
// limits::kMaxDesignedParams parameters under `fit`.
[[nodiscard]] double max_plan_flops(ScalingFit fit);

// Throws ConfigError ("budget: VALUE: expected ...") for a budget beyond max_plan_flops (a work limit).
[[nodiscard]] PlanResult plan(const PlanRequest& request);

}   // namespace llmsim::search
