// The result of `llmsim estimate` as text, formatted from the library's structs (sim/estimate.hpp,
// app/serving.hpp); its JSON is report/estimate.hpp's (one definition for the CLI, `run` rows and the
// Python module).
#pragma once

#include <string>

#include "hardware_db/specs.hpp"
#include "report/estimate.hpp"

namespace llmsim::cli {

using report::Estimate;
using report::estimate_json;
using report::run_estimate;

std::string estimate_text(const Scenario& s, const Estimate& e);

}   // namespace llmsim::cli
