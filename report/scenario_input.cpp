#include "report/scenario_input.hpp"

#include <vector>

#include "cost_models/memory.hpp"
#include "hardware_db/scenario.hpp"

namespace llmsim::report {

ConfigError locate(const ConfigError& e, const std::string& origin) {
    if (origin.empty()) return e;
    std::vector<std::string> lines;
    for (const auto& line : e.problems()) lines.push_back(line.rfind('/', 0) == 0 ? origin + "#" + line : line);
    return ConfigError(lines);
}

Scenario read_scenario(const Json& doc, const std::string& base_dir, const std::string& origin) {
    Scenario s;
    try {
        s = parse_scenario(doc, base_dir);
    } catch (const ConfigError& e) {
        throw locate(e, origin);
    }
    resolve_memory_levers(s);
    return s;
}

}   // namespace llmsim::report
