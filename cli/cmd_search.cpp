// llmsim search: every valid parallel layout of a model on a GPU budget, pruned by rules and
// memory, ranked by the closed-form step time, the best confirmed on the simulator (docs/search.md).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/flag_checks.hpp"
#include "cli/progress.hpp"
#include "cli/search_flags.hpp"
#include "cli/search_report.hpp"
#include "cli/search_request.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/limits.hpp"
#include "sim/step_sim.hpp"

namespace llmsim::cli {

void setup_search(CLI::App* cmd, Context& ctx) {
    auto f = std::make_shared<SearchFlags>();

    add_search_flags(cmd, *f, true);
    cmd->add_option("--top-k", f->top_k, "Layouts to report (default 10)")->check(int_in(1, limits::kSearchTopK));
    cmd->add_option("--confirm", f->confirm,
                    "Re-rank the best K on the discrete-event simulator (default 5; 0: closed form only)")
        ->check(int_in(0, limits::kSearchTopK));
    cmd->add_flag("--json", f->json, "Print JSON instead of tables");
    cmd->callback([f, &ctx] {
        auto req = resolve_search_request(*f);
        if (f->top_k) req.options.top_k = *f->top_k;
        req.options.confirm = f->confirm.value_or(req.options.confirm > 0 ? req.options.confirm : 5);
        req.options.confirm_step_time = [](const Scenario& s) {
            try {
                return sim::simulate_step(s.training_job()).step_time_s;
            } catch (const std::exception&) {
                return 0.0;
            }
        };
        ProgressBar bar("search");
        req.options.progress = [&bar](double done) { bar.update(done); };
        const auto res = search::run_search(req.base, req.space, req.options);
        if (f->json)
            print_json(search_result_json(req.base, res, req.options));
        else
            std::cout << search_result_text(req.base, res, req.options);
        ctx.exit_code = res.top.empty() ? 1 : 0;
    });
}

}   // namespace llmsim::cli
