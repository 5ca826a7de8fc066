// Shared pieces of the subcommands: the scenario flags (--scenario FILE and/or --model --system ...),
// their resolution through the same strict reader as JSON (so flags and files fail alike), and the
// formatting of numbers and tables.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hardware_db/json_reader.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim::cli {

struct ScenarioFlags {
    std::string scenario;
    std::string model, system, precision, recompute, schedule, offload;
    std::optional<int> gpus, tp, pp, dp, cp, ep, vp, zero;
    std::optional<std::int64_t> micro_batch, global_batch, seq_len;
    std::optional<double> token_budget;
    std::optional<bool> sp;
    bool json = false;
};

// Adds --scenario, --json and the layout flags to `cmd`.
void add_scenario_flags(CLI::App* cmd, ScenarioFlags& f, bool with_json = true);

// Reads a scenario file; `base_dir` becomes its folder (for relative paths inside it).
Json read_scenario_file(const std::string& path, std::string& base_dir);

// The scenario JSON from --scenario (if any) with the flags applied on top.
Json scenario_json(const ScenarioFlags& f, std::string& base_dir);
// Parses it; ConfigError messages name the flag where a flag supplied the value.
Scenario resolve_scenario(const ScenarioFlags& f);

// Formatting.
std::string gib(double bytes, int decimals = 2);   // "12.34 GiB"
std::string human_seconds(double s);               // "13.9 s", "412 ms", "38 us", "2.1 days"
std::string human_flops(double flops);             // "1.23 EFLOP"
std::string human_count(double n);                 // "174.6B", "12.9M"

// A plain text table with a header row; columns right-aligned except the first.
class Table {
public:
    explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
    void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
    // Left-align this column too (text columns); the first one always is.
    Table& left(std::size_t column) {
        left_.push_back(column);
        return *this;
    }
    std::string str() const;

private:
    std::vector<std::string> header_;
    std::vector<std::size_t> left_;
    std::vector<std::vector<std::string>> rows_;
};

// Prints JSON to stdout with a trailing newline.
void print_json(const Json& j);

}   // namespace llmsim::cli
