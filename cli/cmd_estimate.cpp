// llmsim estimate: step time, MFU, where the time goes, and the memory budget.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/estimate_report.hpp"
#include "hardware_db/scenario.hpp"

namespace llmsim::cli {

void register_estimate(CLI::App& app, Context& ctx) {
    auto flags = std::make_shared<ScenarioFlags>();
    auto* cmd = app.add_subcommand("estimate", "Step time, MFU, time breakdown and memory of a scenario");
    add_scenario_flags(cmd, *flags);
    cmd->callback([flags, &ctx] {
        const Scenario s = resolve_scenario(*flags);
        const Json result = estimate_json(s);
        if (flags->json) print_json(result);
        else std::cout << estimate_text(s, result);
        ctx.exit_code = 0;
    });
}

}  // namespace llmsim::cli
