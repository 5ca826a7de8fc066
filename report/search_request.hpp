// A search request read from a scenario document (docs/search.md, "Input"): the scenario's model,
// system and training settings, its "parallel" block read as constraints (a number or an array of
// allowed values per dimension) rather than a layout, training.micro_batch / recompute / offload as
// constraints when present, and the "search" block (max_gpus, memory_headroom, max_tp, min_pp,
// max_pp, objective, top_k, global_batch, ...). Strict: unknown keys are errors with JSON pointers.
#pragma once

#include <string>

#include "app/search/search.hpp"
#include "hardware_db/database.hpp"
#include "hardware_db/json_reader.hpp"

namespace llmsim::search {

struct SearchRequest {
    Scenario base;   // model, system, training settings; its layout is not used
    SearchSpace space;
    SearchOptions options;
};

// `j` is a training scenario (gpus may be absent when search.max_gpus is given).
SearchRequest parse_search_request(const Json& j, const std::string& base_dir = ".",
                                   const Database& db = Database::builtin());

// "a:b" -> the powers of two in [a, b]; throws ConfigError naming `what` otherwise.
std::vector<std::int64_t> parse_batch_range(const std::string& text, const std::string& what);

}   // namespace llmsim::search
