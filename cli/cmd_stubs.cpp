// Subcommands whose implementation lands later register here (temporary).
#include "cli/commands.hpp"

namespace llmsim::cli {
void register_estimate(CLI::App&, Context&) {}
void register_validate(CLI::App&, Context&) {}
void register_run(CLI::App&, Context&) {}
}  // namespace llmsim::cli
