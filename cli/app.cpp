#include <cstdio>
#include <exception>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "hardware_db/errors.hpp"

namespace llmsim::cli {

// Subcommands are registered here, in the order `llmsim --help` lists them.
static void register_all(CLI::App& app, Context& ctx) {
    register_run(app, ctx);
    register_estimate(app, ctx);
    register_memory(app, ctx);
    register_flops(app, ctx);
    register_validate(app, ctx);
    register_search(app, ctx);
    register_chinchilla(app, ctx);
    register_plan(app, ctx);
    register_scaling(app, ctx);
    register_hw(app, ctx);
    register_model(app, ctx);
#if defined(LLMSIM_WITH_CALIBRATE)
    register_calibrate(app, ctx);
#endif
}

int run(int argc, char** argv) {
    CLI::App app{"llmsim: analytical performance and capacity planning for LLM training and serving", "llmsim"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("llmsim ") + LLMSIM_VERSION);
    Context ctx;
    register_all(app, ctx);
    if (argc <= 1) {   // no subcommand: show what there is
        std::cout << app.help();
        return 0;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        // Flag errors name the flag, the value and what was expected; exit code 2 like bad JSON.
        std::fflush(stdout);
        std::cerr << "error: " << e.what() << "\n";
        return 2;
    } catch (const ConfigError& e) {
        for (const auto& line : e.problems()) std::cerr << "error: " << line << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "internal error: " << e.what() << "\n";
        return 1;
    }
    return ctx.exit_code;
}

}   // namespace llmsim::cli
