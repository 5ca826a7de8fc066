#include "cli/commands.hpp"

int main(int argc, char** argv) { return llmsim::cli::run(argc, argv); }
