// The subcommands: one registry (cli/commands.cpp) that `llmsim --help`, the tests and the docs read.
// Each entry names a subcommand, says in one line what it does and points to the function that adds its
// flags and callback (one cli/cmd_*.cpp per subcommand). The callback does the work and stores its exit
// code in `ctx.exit_code`. Libraries throw; cli/app.cpp turns ConfigError into "error: ..." lines on
// stderr and exit code 2.
#pragma once
#include <span>
#include <string_view>

#include <CLI/CLI.hpp>

namespace llmsim::cli {

struct Context {
    int exit_code = 0;
};

struct CommandDef {
    std::string_view name;
    std::string_view summary;
    void (*setup)(CLI::App* cmd, Context& ctx);
};

// Every subcommand, in the order `llmsim --help` lists them.
std::span<const CommandDef> commands();

void setup_run(CLI::App* cmd, Context& ctx);
void setup_merge(CLI::App* cmd, Context& ctx);
void setup_estimate(CLI::App* cmd, Context& ctx);
void setup_memory(CLI::App* cmd, Context& ctx);
void setup_flops(CLI::App* cmd, Context& ctx);
void setup_validate(CLI::App* cmd, Context& ctx);
void setup_search(CLI::App* cmd, Context& ctx);
void setup_chinchilla(CLI::App* cmd, Context& ctx);
void setup_plan(CLI::App* cmd, Context& ctx);
void setup_scaling(CLI::App* cmd, Context& ctx);
void setup_explain(CLI::App* cmd, Context& ctx);
void setup_calc(CLI::App* calc, Context& ctx);
void setup_drill(CLI::App* cmd, Context& ctx);
void setup_hw(CLI::App* hw, Context& ctx);
void setup_scenario_reference(CLI::App* cmd, Context& ctx);
void setup_model(CLI::App* model, Context& ctx);
void setup_calibrate(CLI::App* cal, Context& ctx);

int run(int argc, char** argv);

}   // namespace llmsim::cli
