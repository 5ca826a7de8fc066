// The subcommand registry. To add a subcommand: write cli/cmd_NAME.cpp with setup_NAME() and add one
// entry here.
#include "cli/commands.hpp"

namespace llmsim::cli {

namespace {

constexpr CommandDef kCommands[] = {
    {"run", "Scenarios at scale: lists and sweeps on all cores, JSON lines or CSV rows, shards", setup_run},
    {"merge", "Join the outputs of run --shard K/N into the unsharded output, byte for byte", setup_merge},
    {"estimate", "Step time, MFU, time breakdown and memory of a scenario", setup_estimate},
    {"memory", "Per-GPU memory budget of a scenario (most loaded GPU)", setup_memory},
    {"flops", "FLOPs of a training step and per token (model vs hardware)", setup_flops},
    {"validate", "Predict every case of validation files and report the errors", setup_validate},
    {"search", "Best parallel layouts of a model on a GPU budget (top-k, Pareto front)", setup_search},
    {"chinchilla", "Compute-optimal model size and tokens (Chinchilla scaling laws)", setup_chinchilla},
    {"plan", "Capacity plan: budget -> Chinchilla model, shape, best layout, days, cost", setup_plan},
    {"scaling", "Strong and weak scaling: the best layout at each GPU count", setup_scaling},
    {"explain", "Binding constraint of a training scenario, every lever's predicted effect, the first action",
     setup_explain},
    {"calc", "Worked calculations: formula, numbers, result, why (collectives, roofline, bubble, memory, ...)",
     setup_calc},
    {"drill", "Interview drills with real models and GPUs, graded, with worked solutions", setup_drill},
    {"hw", "Hardware database: accelerators and systems", setup_hw},
    {"scenario-reference", "Every scenario key: type, unit, default, bounds, kinds (docs/scenario-reference.md)",
     setup_scenario_reference},
    {"model", "Model zoo: shapes and parameter counts", setup_model},
#if defined(LLMSIM_WITH_CALIBRATE)
    {"calibrate", "Calibration: nccl-tests logs and llmsim-probe measurements -> profile", setup_calibrate},
#endif
};

}   // namespace

std::span<const CommandDef> commands() { return kCommands; }

}   // namespace llmsim::cli
