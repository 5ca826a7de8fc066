// `llmsim calc`'s worked calculations (app/drills/calc) as a table: each one's name, summary, the flags
// it reads (CLI11 options over CalcInputs, their checks and defaults) and the calculation. One
// definition: the CLI registers each row as a `llmsim calc NAME` subcommand and prints it; run_calc
// parses the same flags from an argument list (the Python module's llmsim.calc). Its JSON: calc_json.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "app/drills/calc.hpp"
#include "hardware_db/json_reader.hpp"

namespace CLI {
class App;
}   // namespace CLI

namespace llmsim::report {

// Every flag of every calculation (each reads its own); the defaults are the CLI's.
struct CalcInputs {
    std::string bytes, params, system, gpu, model, precision, schedule = "1f1b", kv_precision = "bf16",
                                                              weights = "bf16", layer_bytes;
    int ranks = 0, p = 0, v = 1, p1 = 0, p2 = 0, gpus = 0, dp = 1, zero = 0, tp = 1, layers = 0, k = 4, rank = 16;
    double GBps = 0, latency_us = 0, m_dim = 0, n_dim = 0, k_dim = 0, serial = 0, t1 = 0, t2 = 0, mfu = 0,
           peak_tflops = 0, usd = 0, rate = 0, latency_s = 0, kv_bytes_per_seq = 0, alpha = 0, draft_cost = 0.05,
           bytes_per_param = 2, tokens_per_s = 0;
    std::string tokens;
    std::int64_t m = 0, seq = 4096, micro_batch = 1, context = 4096, batch = 1, global_batch = 0;
    bool weak = false, sp = false, qlora = false;
};

struct CalcDef {
    const char* name;
    const char* summary;
    std::function<void(CLI::App*, CalcInputs&)> flags;   // adds the calculation's options to a CLI11 app
    std::function<drills::Calc(const CalcInputs&)> compute;
};

// `llmsim calc`'s subcommands, in its --help order.
const std::vector<CalcDef>& calc_defs();

// The calculation of `def` on `inputs`; throws ConfigError when an input is bad or the inputs give a
// non-finite step (an "inf" bandwidth, a 1e300 dimension), rather than a result holding inf or nan.
drills::Calc compute_calc(const CalcDef& def, const CalcInputs& inputs);

// `llmsim calc NAME --json`: {"title", "given", "steps": [{"label", "formula", "numbers", "value", "unit",
// "why"}], "note", "answer": {"value", "unit", "label"}}.
Json calc_json(const drills::Calc& c);

// `llmsim calc NAME ARGS... --json` without the CLI: `args` are NAME's flags and values as the command
// line gives them ("--model", "llama-3-70b", "--sp"), parsed by the same definitions. Throws ConfigError
// with the parser's message (an unknown flag, a value out of range, a missing required flag).
Json run_calc(const std::string& name, const std::vector<std::string>& args);

}   // namespace llmsim::report
