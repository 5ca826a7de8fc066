// Subcommands whose implementation lands later register here (temporary).
#include "cli/commands.hpp"

namespace llmsim::cli {
void register_run(CLI::App&, Context&) {}
}  // namespace llmsim::cli
