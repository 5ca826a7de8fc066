// llmsim scenario-reference: the scenario key table (hardware_db/scenario_keys.cpp), the same one the
// strict readers use, as markdown (docs/scenario-reference.md is this output, checked by ctest
// doc_generated) or JSON.
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "hardware_db/scenario_keys.hpp"

namespace llmsim::cli {

void setup_scenario_reference(CLI::App* cmd, Context& ctx) {
    auto json = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json, "Print the key table as JSON instead of markdown");
    cmd->callback([json, &ctx] {
        if (*json)
            print_json(scenario_reference_json());
        else
            std::cout << scenario_reference_markdown();
        ctx.exit_code = 0;
    });
}

}   // namespace llmsim::cli
