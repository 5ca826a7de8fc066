// JSON and text renderings of search results (llmsim search, plan, scaling).
#pragma once

#include <string>

#include "hardware_db/json_reader.hpp"
#include "sim/search/search.hpp"

namespace llmsim::cli {

// "tp8 pp8×3 cp1 ep1 dp16 zero1 sp mb1 selective interleaved"
std::string layout_brief(const search::Candidate& c);
// The overlap policies that are on: "tp+grad+param", "grad+param", ..., "none".
std::string overlap_brief(const search::Candidate& c);
// One result: {"gpus", "parallel", "training", "step_time_s", "tokens_per_s", "mfu",
// "bubble_fraction", "memory": {...}, ...}; `detailed` adds the full memory breakdown.
Json search_entry_json(const Scenario& base, const search::SearchEntry& e, bool detailed, double price_per_gpu_hour);
// {"results": [...], "evaluated", "rejected": {...}, "pareto": [...], ...}.
Json search_result_json(const Scenario& base, const search::SearchResult& r, const search::SearchOptions& o);
std::string search_result_text(const Scenario& base, const search::SearchResult& r, const search::SearchOptions& o);
// 1234567 -> "1,234,567"

}   // namespace llmsim::cli
