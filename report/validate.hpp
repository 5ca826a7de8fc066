// `llmsim validate` as JSON (its --json, llmsim.validate in Python): the cases of validation files
// (validation/README.md) read with every problem of every file reported, and the report of
// app::run_validation with its per-quantity error statistics. One definition; cli/cmd_validate.cpp
// prints the same report as text.
#pragma once

#include <string>
#include <vector>

#include "app/accuracy.hpp"
#include "app/validate.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/validation_case.hpp"

namespace llmsim::report {

// The cases of `files`; without files, the published runs compiled into the binary (training.json,
// inference.json, serving.json). Throws one ConfigError with the problems of all files.
std::vector<ValidationCase> read_validation_cases(const std::vector<std::string>& files);

Json validation_json(const app::ValidationReport& rep);

// How often "how sure" ranges held the runs they were tested on: runs, inside, stated_level (validate's
// `range_coverage`, --fit-sustained's `step_time_interval_coverage`).
Json coverage_json(const app::IntervalCoverage& c);

}   // namespace llmsim::report
