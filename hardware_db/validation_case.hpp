// One published, measured run (validation/README.md), as the reader (hardware_db/validation.hpp)
// returns it: a plain struct the model rooms read without seeing JSON.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "hardware_db/specs.hpp"

namespace llmsim {

// The source a case's `source` text names, as leave-one-source-out groups runs: a repository
// ("NVIDIA/NeMo" of "NVIDIA/NeMo docs/... @commit ...") or a paper ("Narayanan et al. 2021" of
// "Narayanan et al. 2021, Efficient ... (arXiv ...)").
[[nodiscard]] std::string source_key(std::string_view source);

// The quantities a validation case may state as measured, per scenario kind (the keys sim/validate's
// predicted_quantities returns), with the physical range a measurement of each lies in: times from a
// microsecond to 10^9 s, rates from 10^-6 to 10^15 per second, utilisations and shares in (0, 1]. A
// value outside is refused by the reader (5e-324 gave an infinite error), an unknown name too (it printed
// a table and exited 1).
struct MeasuredQuantity {
    std::string_view name;
    unsigned kinds;   // bits: 1 training, 2 static-batching inference, 4 serving (continuous batching)
    double lo, hi;
    std::string_view unit;
};
inline constexpr MeasuredQuantity kMeasuredQuantities[] = {
    {"step_time_s", 1, 1e-6, 1e9, "s"},
    {"tokens_per_s", 1, 1e-6, 1e15, "tokens/s"},
    {"tokens_per_s_per_gpu", 1, 1e-6, 1e15, "tokens/s"},
    {"mfu", 1, 1e-6, 1.0, ""},
    {"hfu", 1, 1e-6, 1.0, ""},
    {"bubble_fraction", 1, 1e-6, 1.0, ""},
    {"ttft_s", 6, 1e-6, 1e9, "s"},
    {"tpot_s", 6, 1e-6, 1e9, "s"},
    {"e2e_latency_s", 6, 1e-6, 1e9, "s"},
    {"output_tokens_per_s", 6, 1e-6, 1e15, "tokens/s"},
    {"output_tokens_per_s_per_gpu", 6, 1e-6, 1e15, "tokens/s"},
    {"ttft_p50_s", 4, 1e-6, 1e9, "s"},
    {"ttft_p90_s", 4, 1e-6, 1e9, "s"},
    {"ttft_p99_s", 4, 1e-6, 1e9, "s"},
    {"tpot_p50_s", 4, 1e-6, 1e9, "s"},
    {"tpot_p90_s", 4, 1e-6, 1e9, "s"},
    {"tpot_p99_s", 4, 1e-6, 1e9, "s"},
    {"e2e_latency_p99_s", 4, 1e-6, 1e9, "s"},
    {"requests_per_s", 4, 1e-6, 1e9, "requests/s"},
};

struct ValidationCase {
    std::string id;
    std::string source;
    std::string file;      // where it was read from
    std::string pointer;   // of the case in its file: "/cases/3"
    Scenario scenario;
    std::map<std::string, double> measured;   // quantity (an estimate output key) -> measured value > 0
    bool exact = false;                       // the source states every input (`assumed` is empty)
};

}   // namespace llmsim
