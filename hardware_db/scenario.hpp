// The scenario contract (../shared/interface/scenario.md): one JSON document -> a validated
// Scenario. Every problem is reported at once, each naming its JSON pointer, the value and what was
// expected; a bad scenario throws ConfigError.
#pragma once

#include <string>

#include "hardware_db/database.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim {

// `base_dir` resolves relative paths (HF config.json, calibration profiles).
Scenario parse_scenario(const Json& j, const std::string& base_dir = ".", const Database& db = Database::builtin());

Scenario load_scenario_file(const std::string& path, const Database& db = Database::builtin());

// Cross-field checks of a layout against its model (used by the parser and by the search).
// Appends one line per problem to `problems`.
// `redundant_experts`: a serving deployment's extra expert copies (inference.expert_parallel).
void check_layout(const ModelSpec& m, int gpus, const ParallelConfig& p, const TrainingConfig& t, Problems& problems,
                  bool is_inference = false, int redundant_experts = 0);

// The fully resolved scenario, as echoed next to every result.
Json to_json(const Scenario& s);
Json to_json(const ParallelConfig& p);
Json to_json(const TrainingConfig& t);
Json to_json(const InferenceConfig& in);

}   // namespace llmsim
