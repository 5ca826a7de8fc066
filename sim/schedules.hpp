// Pipeline schedules, chosen by name through a small explicit registry (sim/schedules.cpp).
//
// A schedule is a generator: given the pipeline depth p, the model chunks per stage v, the number of
// micro-batches m and a stage s, it appends the order in which stage s runs its forward (F),
// backward (B) and, for split-backward schedules, weight-gradient (W) passes. The order is all a
// schedule decides; the step simulator adds the cross-stage dependencies (F of stage s−1 before F of
// stage s, B of stage s+1 before B of stage s), durations and streams. Adding a schedule touches only
// sim/schedules.cpp: write the generator and add one line to the registry there.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace llmsim::sim {

enum class PassKind : std::uint8_t { F = 0, B = 1, W = 2 };

struct PipeOp {
    PassKind kind;
    std::int16_t chunk;   // model chunk 0..v−1 (always 0 unless the schedule is interleaved)
    std::int32_t mb;      // micro-batch 0..m−1
};

using ScheduleFn = void (*)(int p, int v, std::int64_t m, int stage, std::vector<PipeOp>& out);

struct ScheduleInfo {
    const char* name;       // "gpipe", "1f1b", "interleaved", "zero-bubble"
    const char* contract;   // one line: what the order guarantees
    bool uses_chunks;       // runs v model chunks per stage (otherwise v is treated as 1)
    bool split_backward;    // emits W passes (B is then the input-gradient pass only)
    ScheduleFn generate;
};

// Every registered schedule, in registry order.
std::span<const ScheduleInfo> schedules();
// The schedule of that name (aliases: "zb-h1" for "zero-bubble"), or nullptr.
const ScheduleInfo* find_schedule(std::string_view name);

}   // namespace llmsim::sim
