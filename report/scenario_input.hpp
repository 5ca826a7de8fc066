// A scenario document read as `llmsim estimate --scenario FILE` reads it, for callers that take a
// document rather than flags (the Python module): the strict reader, the memory levers a layout needs,
// and problems located in the file (`FILE#/parallel/tp: 3: expected ...`).
#pragma once

#include <string>

#include "hardware_db/errors.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim::report {

// `doc` (read from a file in `base_dir`, or given as a document: base_dir "."); `origin` names the file
// in problems (empty: the problems name JSON pointers alone).
Scenario read_scenario(const Json& doc, const std::string& base_dir, const std::string& origin);

// The problems of `e`, each that starts with a JSON pointer prefixed with `origin` + "#" (as the CLI
// names the --scenario file); unchanged when origin is empty.
ConfigError locate(const ConfigError& e, const std::string& origin);

}   // namespace llmsim::report
