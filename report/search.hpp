// Search results as JSON (`llmsim search --json`, plan, scaling, `llmsim run` rows of search scenarios,
// llmsim.search in Python) and the one-line layout names they carry. One definition;
// cli/search_report.hpp prints the same results as text.
#pragma once

#include <string>

#include "app/accuracy.hpp"
#include "app/search/search.hpp"
#include "app/serving.hpp"
#include "hardware_db/json_reader.hpp"
#include "sim/serving.hpp"

namespace llmsim::report {

// "tp8 pp8×3 cp1 ep1 dp16 zero1 sp mb1 selective interleaved"
std::string layout_brief(const search::Candidate& c);
// The overlap policies that are on: "tp+grad+param", "grad+param", ..., "none".
std::string overlap_brief(const search::Candidate& c);
// The range of step times the published runs most like a search entry measured (app/accuracy
// step_time_range: same GPU and framework, ...), around its simulated step when confirmed, else its ranked one.
[[nodiscard]] std::optional<app::PublishedRange> search_step_time_range(const Scenario& base,
                                                                        const search::SearchEntry& e);
// One result: {"gpus", "parallel", "training", "step_time_s", "tokens_per_s", "mfu",
// "bubble_fraction", "memory": {...}, "step_time_interval_s", ...}; `detailed` adds the full memory breakdown.
Json search_entry_json(const Scenario& base, const search::SearchEntry& e, bool detailed, double price_per_gpu_hour);
// {"results": [...], "evaluated", "rejected": {...}, "pareto": [...], ...}.
Json search_result_json(const Scenario& base, const search::SearchResult& r, const search::SearchOptions& o);

// Dollars per million tokens trained on a layout at `price_per_gpu_hour`: its GPUs' hours for 10^6 tokens
// at its throughput. One definition for the search and scaling tables and their JSON.
double cost_per_million_tokens_usd(const search::SearchEntry& e, double price_per_gpu_hour);

// The step time the discrete-event simulator plays for a layout (SearchOptions::confirm_step_time: the
// search confirms its best layouts with it); 0 when the layout cannot be played.
double simulated_step_time(const Scenario& s);

// Capacity planning on a serving scenario (`llmsim search --json` with "inference"): the fewest GPUs
// meeting its SLO at its qps, per (tp, pp, precision), and the winner with one replica fewer; where the
// published runs give a range, "published_range" (low/high: qps × the published/llmsim ratios) and
// "sized_for_published_low" (the winner's layout holding qps / low_ratio, or "why_none").
Json capacity_search_json(const Scenario& s, const app::FleetSizing& f, int max_gpus);

// Capacity per GPU on a serving scenario with qps "max" (`llmsim search --json`): each replica layout's
// largest Poisson rate meeting the SLO (req/s) and that rate per GPU, best per GPU first.
Json capacity_per_gpu_json(const app::CapacityPerGpu& r, int max_gpus);

// A disaggregated serving scenario (`llmsim search --json`): "disaggregated" (the fewest GPUs of its pools
// meeting the SLO at its qps: prefill and decode replicas, each pool's layout, the simulated percentiles, or
// "why_none") and "colocated" (capacity_search_json of the same question without pools).
Json pool_search_json(const Scenario& s, const app::PoolSizing& p, int max_gpus);
// With qps "max": each split's capacity and the colocated deployment's on the same GPUs.
Json split_capacities_json(const Scenario& s, const app::SplitCapacities& r);

// The serving search's JSON for a serving scenario, as `llmsim search --json` answers it: pools
// (pool_search_json, or split_capacities_json with qps "max") for a disaggregated scenario, else
// capacity_per_gpu_json with qps "max", else capacity_search_json. For callers without a progress bar
// (the Python module).
Json serving_search_json(const Scenario& s, int max_gpus, int threads);

}   // namespace llmsim::report
