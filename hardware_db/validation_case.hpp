// One published, measured run (validation/README.md), as the reader (hardware_db/validation.hpp)
// returns it: a plain struct the model rooms read without seeing JSON.
#pragma once

#include <map>
#include <string>

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

}   // namespace llmsim
