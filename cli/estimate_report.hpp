// The result of `llmsim estimate` as JSON (the scenario contract's keys and more) and as text.
#pragma once

#include <string>

#include "hardware_db/json_reader.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim::cli {

// Training or inference, by the scenario's kind.
Json estimate_json(const Scenario& s);
std::string estimate_text(const Scenario& s, const Json& result);

}  // namespace llmsim::cli
