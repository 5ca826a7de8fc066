// Pipeline schedules: the registry (schedules/registry.cpp) is the only place a schedule exists.
//
// A schedule is one table entry: its name, the micro-batches of activations each stage holds at its
// peak, the closed-form bubble the step-time model uses, and the generator of each stage's order of
// forward (F), backward (B) and weight-gradient (W) passes that the discrete-event simulator plays.
// Each implementation lives in its own file (schedules/impl/*.cpp). Adding a schedule is one new
// file plus one line in the table (docs/architecture.md shows an example).
//
// This room sits below every other: the scenario reader turns a name into a pointer into the
// table, cost_models/ reads in-flight counts and bubbles from it, sim/ plays its generator.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace llmsim {

enum class PassKind : std::uint8_t { F = 0, B = 1, W = 2 };

struct PipeOp {
    PassKind kind;
    std::int16_t chunk;   // model chunk 0..v−1 (always 0 unless the schedule runs chunks)
    std::int32_t mb;      // micro-batch 0..m−1
};

// What a closed-form bubble needs to know about one step's pipeline: per-stage times of one
// micro-batch (forward + backward, all of the stage's chunks), summed and at the busiest stage.
struct PipelineTimes {
    int stages = 1;                    // p
    int chunks = 1;                    // v (model chunks per stage)
    std::int64_t microbatches = 1;     // m
    double max_stage_s = 0;            // t_max = max over stages of (fwd + bwd)
    double sum_stage_s = 0;            // Σ over stages of (fwd + bwd)
    double sum_wgrad_s = 0;            // Σ over stages of the weight-gradient share of bwd
    double wgrad_of_max_stage_s = 0;   // that share on the busiest stage
};

struct ScheduleDef {
    std::string_view name;                     // as scenarios and flags spell it
    std::array<std::string_view, 3> aliases;   // other accepted spellings (empty: none)
    std::string_view contract;                 // one line: what the order guarantees
    bool uses_chunks;                          // runs v > 1 model chunks per stage (otherwise v is 1)
    bool split_backward;                       // emits W passes (B is then the input-gradient pass only)
    bool overlaps_p2p;                         // pipeline send/recv run beside compute (not inside the passes)
    bool m_multiple_of_p;                      // needs the micro-batches per step to be a multiple of the stages
    bool searched;                             // tried by `llmsim search` unless the request names schedules
    // Micro-batches of stage `stage` whose activations are alive at that stage's peak, in units of
    // one micro-batch through all of the stage's layers (Megatron's in-flight count).
    double (*in_flight)(int p, int v, std::int64_t m, int stage);
    // Idle time of the busiest stage inside the pipeline, closed form (seconds).
    double (*bubble_s)(const PipelineTimes& t);
    // Appends stage `stage`'s order of passes.
    void (*generate)(int p, int v, std::int64_t m, int stage, std::vector<PipeOp>& out);

    int id() const;   // position in the registry (a stable total order for ties)
};

// Every registered schedule, in registry order.
[[nodiscard]] std::span<const ScheduleDef> schedules();
// The schedule of that name or alias, or nullptr.
[[nodiscard]] const ScheduleDef* find_schedule(std::string_view name);
// The schedule a layout gets when it names none: interleaved when it has model chunks (vp > 1),
// else 1F1B (../shared/interface/scenario.md).
[[nodiscard]] const ScheduleDef& default_schedule(int vp = 1);
// `gpipe | 1f1b | interleaved | zero-bubble` (quoted: `"gpipe" | "1f1b" | ...`): the names, for help
// texts and error messages.
[[nodiscard]] std::string schedule_names(bool quoted = false);
// Every accepted spelling: names and aliases.
[[nodiscard]] std::vector<std::string> schedule_spellings();

// Micro-batches whose loss (LM-head output, fp32 logits) is alive at once on the last stage: all of
// the last stage's in-flight micro-batches for schedules without chunks, one with chunks (the loss
// belongs to the last chunk only).
[[nodiscard]] double loss_microbatches_in_flight(const ScheduleDef& s, int p, std::int64_t m);

}   // namespace llmsim
