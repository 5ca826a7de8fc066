// llmsim calc: one worked calculation per subcommand (formula, numbers filled in, result, why),
// computed by app/drills/calc (the cost models the simulator uses); the subcommands, their flags and
// their JSON are report/calc's (the Python module's llmsim.calc reads the same); this file prints.
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "report/calc.hpp"

namespace llmsim::cli {

void setup_calc(CLI::App* calc, Context& ctx) {
    calc->require_subcommand(1);
    for (const auto& def : report::calc_defs()) {
        auto inputs = std::make_shared<report::CalcInputs>();
        auto json = std::make_shared<bool>(false);
        auto* cmd = calc->add_subcommand(def.name, def.summary);
        def.flags(cmd, *inputs);
        cmd->add_flag("--json", *json, "JSON output");
        cmd->callback([inputs, json, &def, &ctx] {
            const auto c = report::compute_calc(def, *inputs);
            if (*json)
                print_json(report::calc_json(c));
            else
                std::cout << fit_text(drills::render(c));
            ctx.exit_code = 0;
        });
    }
}

}   // namespace llmsim::cli
