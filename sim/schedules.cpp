// The pipeline schedules and their registry. To add a schedule: write a generator below (same
// signature as ScheduleFn) and add one line to kSchedules at the bottom of this file.
#include "sim/schedules.hpp"

#include <algorithm>

namespace llmsim::sim {

namespace {

using I64 = std::int64_t;

void push(std::vector<PipeOp>& out, PassKind k, int chunk, I64 mb) {
    out.push_back(PipeOp{k, static_cast<std::int16_t>(chunk), static_cast<std::int32_t>(mb)});
}

// GPipe (Huang et al. 2019): every forward, then every backward, micro-batches in order.
void gen_gpipe(int, int, I64 m, int, std::vector<PipeOp>& out) {
    for (I64 j = 0; j < m; ++j) push(out, PassKind::F, 0, j);
    for (I64 j = 0; j < m; ++j) push(out, PassKind::B, 0, j);
}

// 1F1B (PipeDream-Flush, Megatron-LM): min(p−s−1, m) warm-up forwards, then one forward and one
// backward alternately, then the remaining backwards.
void gen_1f1b(int p, int, I64 m, int s, std::vector<PipeOp>& out) {
    const I64 warm = std::min<I64>(p - s - 1, m);
    for (I64 j = 0; j < warm; ++j) push(out, PassKind::F, 0, j);
    for (I64 j = 0; j < m - warm; ++j) {
        push(out, PassKind::F, 0, warm + j);
        push(out, PassKind::B, 0, j);
    }
    for (I64 j = m - warm; j < m; ++j) push(out, PassKind::B, 0, j);
}

// Megatron-LM's interleaved 1F1B (Narayanan et al. 2021): virtual micro-batches ordered in groups of
// p micro-batches, chunk by chunk (forward chunks 0..v−1, backward chunks v−1..0); warm-up
// min(2(p−s−1) + (v−1)p, v·m) forwards, then 1F1B over virtual micro-batches. A last group smaller
// than p (m not a multiple of p) is ordered the same way. Megatron's special case m == p ("all
// warm-up") is not reproduced, so the in-flight count stays the analytic one (layout.hpp).
void gen_interleaved(int p, int v, I64 m, int s, std::vector<PipeOp>& out) {
    if (v <= 1) return gen_1f1b(p, v, m, s, out);
    const I64 total = static_cast<I64>(v) * m;
    const I64 warm = std::min<I64>(2 * static_cast<I64>(p - s - 1) + static_cast<I64>(v - 1) * p, total);
    // k-th forward / backward virtual micro-batch -> (chunk, mb), without materialising the lists.
    auto virt = [&](I64 k, bool backward, int& chunk, I64& mb) {
        const I64 group = k / (static_cast<I64>(v) * p);   // full groups of p micro-batches before
        const I64 g0 = group * p;
        const I64 gs = std::min<I64>(p, m - g0);             // size of this group
        const I64 r = k - group * static_cast<I64>(v) * p;   // position inside the group
        const int c = static_cast<int>(r / gs);
        chunk = backward ? v - 1 - c : c;
        mb = g0 + r % gs;
    };
    int c = 0;
    I64 j = 0;
    for (I64 k = 0; k < warm; ++k) {
        virt(k, false, c, j);
        push(out, PassKind::F, c, j);
    }
    for (I64 k = 0; k < total - warm; ++k) {
        virt(warm + k, false, c, j);
        push(out, PassKind::F, c, j);
        virt(k, true, c, j);
        push(out, PassKind::B, c, j);
    }
    for (I64 k = total - warm; k < total; ++k) {
        virt(k, true, c, j);
        push(out, PassKind::B, c, j);
    }
}

// ZB-H1 (Qi et al. 2023, "Zero Bubble Pipeline Parallelism"): 1F1B's forwards with the backward split
// into B (input gradient, on the critical path) and W (weight gradient); stage s defers s W passes
// (warm-up p−s−1 forwards, then s rounds of F B, then F B W, then B W, then the s deferred W), so the
// W passes fill the cool-down bubble while at most p−s micro-batches are in flight, as in 1F1B.
void gen_zb_h1(int p, int, I64 m, int s, std::vector<PipeOp>& out) {
    I64 f = 0, b = 0, w = 0;
    for (I64 k = 0; k < std::min<I64>(p - s - 1, m); ++k) push(out, PassKind::F, 0, f++);
    for (int k = 0; k < s && f < m; ++k) {
        push(out, PassKind::F, 0, f++);
        push(out, PassKind::B, 0, b++);
    }
    while (f < m) {
        push(out, PassKind::F, 0, f++);
        push(out, PassKind::B, 0, b++);
        push(out, PassKind::W, 0, w++);
    }
    while (b < m) {
        push(out, PassKind::B, 0, b++);
        push(out, PassKind::W, 0, w++);
    }
    while (w < m) push(out, PassKind::W, 0, w++);
}

// The registry: name, contract, uses chunks, splits backward, generator.
constexpr ScheduleInfo kSchedules[] = {
    {"gpipe", "all m forwards then all m backwards; holds m micro-batches of activations", false, false, gen_gpipe},
    {"1f1b", "warm-up p-s-1 forwards then alternate F/B; holds min(p-s, m) micro-batches", false, false, gen_1f1b},
    {"interleaved", "Megatron's v-chunk 1F1B, warm-up 2(p-s-1)+(v-1)p virtual forwards; bubble / v", true, false,
     gen_interleaved},
    {"zero-bubble", "ZB-H1: 1F1B with B/W split, s deferred W passes fill the cool-down; 1F1B's memory", false, true,
     gen_zb_h1},
};

}   // namespace

std::span<const ScheduleInfo> schedules() { return kSchedules; }

const ScheduleInfo* find_schedule(std::string_view name) {
    if (name == "zb-h1" || name == "zb" || name == "zbh1") name = "zero-bubble";
    for (const auto& s : kSchedules)
        if (name == s.name) return &s;
    return nullptr;
}

}   // namespace llmsim::sim
