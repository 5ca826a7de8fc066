// One register_* function per subcommand (cli/cmd_*.cpp). Each adds its subcommand to the app and
// sets a callback that does the work and stores its exit code in `exit_code`. Libraries throw;
// cli/app.cpp turns ConfigError into "error: ..." lines on stderr and exit code 2.
#pragma once
#include <CLI/CLI.hpp>

namespace llmsim::cli {

struct Context {
    int exit_code = 0;
};

void register_hw(CLI::App& app, Context& ctx);
void register_model(CLI::App& app, Context& ctx);
void register_memory(CLI::App& app, Context& ctx);
void register_flops(CLI::App& app, Context& ctx);
void register_estimate(CLI::App& app, Context& ctx);
void register_validate(CLI::App& app, Context& ctx);
void register_calibrate(CLI::App& app, Context& ctx);
void register_run(CLI::App& app, Context& ctx);
void register_search(CLI::App& app, Context& ctx);
void register_chinchilla(CLI::App& app, Context& ctx);
void register_plan(CLI::App& app, Context& ctx);
void register_scaling(CLI::App& app, Context& ctx);

int run(int argc, char** argv);

}   // namespace llmsim::cli
