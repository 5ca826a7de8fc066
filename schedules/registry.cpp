// The schedule registry: the one table of every pipeline schedule llmsim knows.
// To add a schedule: write schedules/impl/NAME.cpp (declare it in impl/impl.hpp) and add one entry
// below. Nothing else in the tree names a schedule.
#include <algorithm>

#include "schedules/impl/impl.hpp"
#include "schedules/schedule.hpp"

namespace llmsim {

namespace {

namespace si = schedule_impl;

// name, aliases, contract, uses_chunks, split_backward, overlaps_p2p, m_multiple_of_p, searched,
// in_flight, bubble_s, generate
constexpr ScheduleDef kSchedules[] = {
    // Never faster than 1F1B and holds m micro-batches: not searched unless asked for.
    {"gpipe",
     {},
     "all m forwards then all m backwards; holds m micro-batches of activations",
     false,
     false,
     false,
     false,
     false,
     si::gpipe::in_flight,
     si::flat_bubble_s,
     si::gpipe::generate},
    {"1f1b",
     {"pipedream-flush"},
     "warm-up p-s-1 forwards then alternate F/B; holds min(p-s, m) micro-batches",
     false,
     false,
     false,
     false,
     true,
     si::one_f_one_b::in_flight,
     si::flat_bubble_s,
     si::one_f_one_b::generate},
    // Megatron-LM asserts m % p == 0 for the interleaved schedule.
    {"interleaved",
     {"interleaved-1f1b"},
     "Megatron's v-chunk 1F1B, warm-up 2(p-s-1)+(v-1)p virtual forwards; bubble / v",
     true,
     false,
     true,
     true,
     true,
     si::interleaved::in_flight,
     si::interleaved::bubble_s,
     si::interleaved::generate},
    {"zero-bubble",
     {"zb-h1", "zb", "zbh1"},
     "ZB-H1: 1F1B with B/W split, s deferred W passes fill the cool-down; 1F1B's memory",
     false,
     true,
     false,
     false,
     true,
     si::one_f_one_b::in_flight,
     si::zero_bubble::bubble_s,
     si::zero_bubble::generate},
};

}   // namespace

int ScheduleDef::id() const { return static_cast<int>(this - kSchedules); }

std::span<const ScheduleDef> schedules() { return kSchedules; }

const ScheduleDef* find_schedule(std::string_view name) {
    for (const auto& s : kSchedules)
        if (name == s.name || std::find(s.aliases.begin(), s.aliases.end(), name) != s.aliases.end()) return &s;
    return nullptr;
}

const ScheduleDef& default_schedule(int vp) {
    static const ScheduleDef* const flat = find_schedule("1f1b");
    static const ScheduleDef* const chunked = find_schedule("interleaved");
    return vp > 1 ? *chunked : *flat;
}

std::string schedule_names(bool quoted) {
    std::string out;
    for (const auto& s : kSchedules) {
        if (!out.empty()) out += " | ";
        if (quoted) out += '"';
        out += s.name;
        if (quoted) out += '"';
    }
    return out;
}

std::vector<std::string> schedule_spellings() {
    std::vector<std::string> out;
    for (const auto& s : kSchedules) {
        out.emplace_back(s.name);
        for (auto a : s.aliases)
            if (!a.empty()) out.emplace_back(a);
    }
    return out;
}

double loss_microbatches_in_flight(const ScheduleDef& s, int p, std::int64_t m) {
    return s.uses_chunks ? 1.0 : s.in_flight(p, 1, m, p - 1);
}

}   // namespace llmsim
