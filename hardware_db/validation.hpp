// Validation files (validation/README.md): published, measured runs written as scenarios.
// {"cases": [{"id", "source", "scenario", "measured": {quantity: value}, "derived", "assumed": [...]}]}
// Read strictly: every problem names the file and its JSON pointer; a case whose scenario does not
// parse is an error of the file, not a failed prediction.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hardware_db/database.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim {

struct ValidationCase {
    std::string id;
    std::string source;
    std::string file;      // where it was read from
    std::string pointer;   // of the case in its file: "/cases/3"
    Scenario scenario;
    std::map<std::string, double> measured;   // quantity (an estimate output key) -> measured value > 0
    bool exact = false;                       // the source states every input (`assumed` is empty)
};

// The cases of one validation document; `origin` names it in errors, `base_dir` resolves relative
// paths in its scenarios.
std::vector<ValidationCase> read_validation(const Json& doc, const std::string& origin, const std::string& base_dir,
                                            const Database& db = Database::builtin());
std::vector<ValidationCase> read_validation_file(const std::string& path, const Database& db = Database::builtin());

// The validation files compiled into the binary (validation/*.json), by name ("training.json", ...).
std::vector<std::string> builtin_validation_names();
std::vector<ValidationCase> read_builtin_validation(const std::string& name, const Database& db = Database::builtin());

}   // namespace llmsim
