#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/flag_checks.hpp"
#include "hardware_db/errors.hpp"

namespace llmsim::cli {

static void register_all(CLI::App& app, Context& ctx) {
    for (const auto& c : commands()) c.setup(app.add_subcommand(std::string(c.name), std::string(c.summary)), ctx);
}

int run(int argc, char** argv) {
    CLI::App app{"llmsim: analytical performance and capacity planning for LLM training and serving", "llmsim"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("llmsim ") + LLMSIM_VERSION);
    Context ctx;
    register_all(app, ctx);
    require_plain_values(app);
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
    } catch (const WriteError& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "internal error: " << e.what() << "\n";
        return 1;
    }
    // What went to stdout must have arrived (stdout on a full disk or /dev/full exited 0).
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
        const int err = errno;
        std::cerr << "error: stdout: cannot be written" << (err ? fmt::format(" ({})", std::strerror(err)) : "")
                  << "\n";
        return 1;
    }
    return ctx.exit_code;
}

}   // namespace llmsim::cli
