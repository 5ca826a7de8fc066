// Shared pieces of the subcommands: the scenario flags (--scenario FILE and/or --model --system ...),
// their resolution through the same strict reader as JSON (so flags and files fail alike), and the
// formatting of numbers and tables.
#pragma once

#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hardware_db/errors.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim::cli {

struct ScenarioFlags {
    std::string scenario;
    std::string model, system, precision, recompute, schedule, offload, framework, grad_precision;
    std::optional<int> gpus, tp, pp, dp, cp, ep, vp, zero;
    std::optional<std::int64_t> micro_batch, global_batch, seq_len, recompute_num_layers, activation_offload_layers;
    std::optional<double> token_budget;
    std::optional<bool> sp, torch_compile;
    // Megatron's overlap flags, as `search` prints them in a layout (so its answer re-runs from flags).
    std::optional<bool> tp_comm_overlap, overlap_grad_reduce, overlap_param_gather;
    // Serving what-if (written under /inference; a serving flag makes the scenario a serving one).
    std::optional<std::int64_t> batch, requests, max_batch, chunk, spec_tokens, seed;
    // --input-len / --output-len: TOKENS, DIST:MEAN[,STDEV[,MIN,MAX]] or uniform:MIN,MAX (length_flag_value)
    std::optional<std::string> input_len, output_len;
    std::optional<std::string> engine;        // --engine NAME[@VERSION] (inference.engine)
    std::optional<std::string> scheduler;     // --scheduler inflight | prefill-first (inference.scheduler)
    std::optional<bool> cuda_graphs;          // --cuda-graphs (inference.cuda_graphs)
    std::optional<double> prefix_cache_hit;   // --prefix-cache-hit (inference.prefix_cache_hit)
    std::optional<double> qps, acceptance, slo_ttft_p99, slo_tpot_p99, slo_ttft_p90, slo_tpot_p90, host_per_sequence_us,
        arrival_cv, price_per_gpu_hour, window_s;
    std::optional<std::string> qps_text;        // --qps as given: a rate or "max" (qps, when set, wins)
    std::optional<std::string> arrivals;        // --arrivals: a trace to replay (inference.arrivals)
    std::optional<std::string> router;          // --router: how requests spread over replicas (inference.router)
    std::optional<std::string> shared_prefix;   // --shared-prefix GROUPS:TOKENS[:ZIPF] (inference.shared_prefix)
    std::optional<std::string> rate_profile;    // --rate-profile PERIOD_S:L1,L2,... (inference.rate_profile)
    std::optional<std::string> autoscale;       // --autoscale TARGET:STORAGE_GBPS[:ENGINE_START_S[:MIN:MAX]]
    std::optional<std::string> kv_admission;    // --kv-admission on_demand | reserve (inference.kv_admission)
    std::string weight_precision, kv_precision, spec_draft, batching;
    // The flag named in errors about /inference/qps: --qps, or --qps-sweep when a sweep supplies it.
    const char* qps_flag = "--qps";
    bool json = false;
};

// Flags written into a scenario document at their JSON pointers, remembering which flag set which
// pointer, so that a problem the strict reader finds in a value a flag supplied names the flag
// (`--tp: 3: expected ...`), and the rest name the file (`file.json#/parallel/tp: ...`).
class FlagOverlay {
public:
    explicit FlagOverlay(Json& doc) : doc_(doc) {}
    // Sets `pointer` to `value` and records `flag` for it.
    void set(const std::string& pointer, const std::string& flag, Json value);
    template <class T>
    void set(const std::string& pointer, const std::string& flag, const std::optional<T>& v) {
        know(pointer, flag);
        if (v) set(pointer, flag, Json(*v));
    }
    void set(const std::string& pointer, const std::string& flag, const std::string& v) {
        know(pointer, flag);
        if (!v.empty()) set(pointer, flag, Json(v));
    }
    bool given(const std::string& pointer) const;
    // The problems of `e` with flags and the scenario file named (file may be empty).
    ConfigError rename(const ConfigError& e, const std::string& scenario_file) const;

private:
    void know(const std::string& pointer, const std::string& flag);
    Json& doc_;
    std::vector<std::pair<std::string, std::string>> flags_;   // pointer, flag (given)
    std::vector<std::pair<std::string, std::string>> known_;   // pointer, flag (every flag the command has)
};

// A comma-separated list: its items (empty text: none). `flag` names the list in errors.
std::vector<std::string> split_list(const std::string& text);
// A comma-separated list of integers in [lo, hi].
std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& flag, std::int64_t lo,
                                         std::int64_t hi);

// Adds --scenario, --json and the layout flags to `cmd`, and the serving flags (add_serving_flags).
void add_scenario_flags(CLI::App* cmd, ScenarioFlags& f, bool with_json = true);
// Adds the serving flags (--batch, --input-len, --qps, ..., --slo-tpot-p99) to `cmd` in help group `group`.
void add_serving_flags(CLI::App* cmd, ScenarioFlags& f, const std::string& group);
// The first serving flag given (any makes the scenario a serving one), or nullptr.
const char* first_serving_flag(const ScenarioFlags& f);

// Reads a scenario file; `base_dir` becomes its folder (for relative paths inside it).
Json read_scenario_file(const std::string& path, std::string& base_dir);

// Parses it; ConfigError messages name the flag where a flag supplied the value.
Scenario resolve_scenario(const ScenarioFlags& f);
// A ConfigError about the scenario of `f` (from the parser or a later work limit), its pointers
// replaced by the flag that supplied the value, or prefixed with the scenario file.
ConfigError locate_problems(const ScenarioFlags& f, const ConfigError& e);

// Formatting.
std::string gib(double bytes, int decimals = 2);   // "12.34 GiB"
std::string human_seconds(double s);               // "13.9 s", "412 ms", "38 us", "4.5 min", "2.1 days"; "0" below 1 ns
std::string human_flops(double flops);             // "1.23 EFLOP"
std::string human_count(double n);                 // "174.6B", "12.9M"
std::string with_commas(std::int64_t n);           // "1,234,567"
std::string fixed_commas(double x, int decimals);   // "18,163.8" (thousands separators, `decimals` after the point)
// A sentence as lines of at most `width` columns (0: table_width(), a terminal's 80, or one line under
// --wide), broken at spaces, each line after the first indented by two spaces; every line ends with a
// newline. A word longer than a line stays whole.
std::string wrap_text(const std::string& text, std::size_t width = 0);
// Lines of text (a worked calculation, a drill's question) fitted to `width` columns (0: table_width(),
// as wrap_text): a line that passes the edge is broken at spaces, its continuation lines indented under
// its text, past its own indent and a leading "label: " (so "    why: ..." hangs under its first word).
std::string fit_text(const std::string& text, std::size_t width = 0);
// Fields joined by `separator` on lines of at most `width` columns (0: table_width(), as wrap_text): a field that would pass the edge
// starts the next line (indented by two spaces); empty fields are left out. Ends with a newline.
std::string join_fields(const std::vector<std::string>& fields, const std::string& separator = "  |  ",
                        std::size_t width = 0);

// The columns text tables fit (`--wide`: 0, no limit); 80, a terminal's, unless set.
void set_table_width(std::size_t cols);
std::size_t table_width();

// Text as lines of at most `width` columns, broken at spaces (each line of `text` apart); a word wider
// than a line is cut, after a '_', '/', '-', ',' or '.' where one is near.
std::vector<std::string> wrap_lines(const std::string& text, std::size_t width);

// A plain text table with a header row; columns right-aligned except the first. Wider than
// table_width(), its left-aligned (text) columns wrap at spaces, the widest first, down to their
// longest word; numbers never wrap. When that leaves a text column narrower than it reads well, the
// detail columns (below) move under their rows.
class Table {
public:
    explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
    void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
    // Left-align this column too (text columns); the first one always is.
    Table& left(std::size_t column) {
        left_.push_back(column);
        return *this;
    }
    // When the table cannot fit table_width() readably, this text column leaves it and is printed under
    // each row ("name: value", indented); without any, the last column does when it is a text column.
    Table& detail(std::size_t column) {
        left(column);
        detail_.push_back(column);
        return *this;
    }
    // A text column cut to one line ("...") instead of wrapped when the table is narrowed (a listing's
    // description: one line per row); --wide shows it whole.
    Table& clip(std::size_t column) {
        left(column);
        clip_.push_back(column);
        return *this;
    }
    // A column left out, in the order marked, while the table is wider than table_width() (a line under
    // the table names what was left out and `--wide`).
    Table& optional(std::size_t column) {
        optional_.push_back(column);
        return *this;
    }
    std::string str() const;

private:
    std::vector<std::string> header_;
    std::vector<std::size_t> left_, detail_, optional_, clip_;
    std::vector<std::vector<std::string>> rows_;
};

// Prints JSON to stdout with a trailing newline.
void print_json(const Json& j);

// A failed write of an output (a full disk, /dev/full, a closed pipe): `error: PATH: cannot be written
// (REASON)`, exit 1 (cli/app.cpp). Not an input error: the input was fine.
struct WriteError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// Flushes `out` and throws WriteError naming `path` (and the flag that named it) when any write to it
// failed; a partial regular file is removed first, so nothing half-written is left.
void check_written(std::ostream& out, const std::string& path, const std::string& flag);

}   // namespace llmsim::cli
