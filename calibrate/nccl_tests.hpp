// Reader of nccl-tests output (all_reduce_perf & co.): the text logs in every variant seen in the
// wild (with/without the root column, old `error` column, `#wrong` N/A or float, per-iteration or
// timestamp columns, `mpirun --tag-output` and `srun --label` prefixes, NCCL_DEBUG=INFO lines
// interleaved, data rows split by INFO lines, several tests per file, missing footer) and the `-J`
// JSON form. Pure parsing: no hardware knowledge. Units: bytes, microseconds, GB/s (1e9 B/s).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace llmsim::calibrate {

// A data type or reduction name as printed ("float", "sum"): at most 15 characters, held inline so
// that a row stays small (a 10^6-row log is read in less memory than twice its size).
class ShortName {
public:
    ShortName() = default;
    ShortName(std::string_view s) {   // NOLINT: implicit, like the std::string it replaces
        len_ = static_cast<std::uint8_t>(std::min<std::size_t>(s.size(), sizeof text_));
        s.copy(text_, len_);
    }
    std::string_view view() const { return {text_, len_}; }
    std::string str() const { return std::string(view()); }
    operator std::string() const { return str(); }   // NOLINT
    bool empty() const { return len_ == 0; }
    friend bool operator==(const ShortName& a, std::string_view b) { return a.view() == b; }
    static constexpr std::size_t kMax = 15;

private:
    char text_[15] = {};
    std::uint8_t len_ = 0;
};

// One half of a row: out-of-place or in-place. Every figure is finite and >= 0 (the reader refuses
// anything else with the line number).
struct NcclTestsResult {
    double time_us = 0;
    double algbw_GBps = 0;
    double busbw_GBps = 0;
    std::optional<double> wrong;   // #wrong / error column; nullopt for N/A or absent
    // Half a unit in the last printed digit of each figure (rounding uncertainty; 0 for JSON).
    float time_res = 0, algbw_res = 0, busbw_res = 0;
    bool present = false;
};

struct NcclTestsRow {
    std::int64_t size_bytes = 0;
    std::int64_t count = 0;
    ShortName type;
    ShortName redop;
    std::optional<int> root;   // absent in the old format
    NcclTestsResult out_of_place;
    NcclTestsResult in_place;
    int line = 0;   // 1-based line where the row starts (0 for JSON)
};

// One test (one collective sweep) found in a file.
struct NcclTestsRun {
    std::string collective = "unknown";   // all_reduce, all_gather, reduce_scatter, alltoall, sendrecv, ...
    std::string collective_source;        // "header" | "command line" | "json args" | "data" | "file name" | "unknown"
    int ranks = 0;                        // 0 = unknown
    std::string ranks_source;             // "device lines" | "json config" | "busbw/algbw ratio" | "unknown"
    std::vector<std::string> hosts;       // distinct host names, in order of the device lines
    int nodes = 0;                        // 0 = unknown
    std::string gpu_name;
    std::string binary;         // e.g. all_reduce_perf_mpi
    std::string nccl_version;   // "2.22.3+cuda12.6", "2.29.2" ("" if not in the log)
    std::string nccl_tests_version;
    std::string format;   // "text" | "text-old" | "json"
    std::vector<NcclTestsRow> rows;
    std::optional<double> avg_busbw_GBps;   // the footer's "Avg bus bandwidth"
    std::string source_file;
    int first_line = 0;
    std::vector<std::string> warnings;   // rows whose bandwidths disagree with size/time, recoveries, ...

    int gpus_per_node() const { return (nodes > 0 && ranks > 0 && ranks % nodes == 0) ? ranks / nodes : 0; }
};

struct NcclTestsFile {
    std::vector<NcclTestsRun> tests;
    std::vector<std::string> warnings;   // file-level (lines that could not be used, ...)
};

// nccl-tests' bus-bandwidth factor (doc/PERFORMANCE.md): 2(n-1)/n all_reduce; (n-1)/n all_gather,
// reduce_scatter, alltoall (and gather, scatter); 1 broadcast, reduce, sendrecv. nullopt when the
// collective is unknown or n < 1.
std::optional<double> nccl_bus_factor(const std::string& collective, int n);
// Latency steps of the ring algorithm: 2(n-1) all_reduce; n-1 all_gather, reduce_scatter, alltoall;
// 1 sendrecv, broadcast, reduce (pipelined chain counted as one step). nullopt when unknown.
std::optional<int> nccl_ring_steps(const std::string& collective, int n);
// "all_reduce_perf_mpi", "/opt/nccl-tests/build/all_gather_perf" -> "all_reduce", "all_gather".
std::string collective_from_binary(const std::string& binary);

// Parses text (or -J JSON) output. `source_name` is used in messages and as a collective hint
// (file names like "..._all_gather.txt") when the log itself cannot tell. Rows are read exactly or
// refused: a row with a value that is not a finite number >= 0 (nan, -inf, -5), a row glued to other
// output where the boundary cannot be told, or a row never completed is a ConfigError naming
// source:line. mpirun --tag-output and srun --label prefixes are removed wherever they appear, and the
// output of each rank (task) is reassembled line by line. -J JSON is read strictly (types, ranges,
// pointers in messages).
NcclTestsFile parse_nccl_tests(const std::string& text, const std::string& source_name);
// Reads and parses a file, streaming it (a regular file of at most limits::kNcclTestsFileBytes; -J
// JSON at most limits::kJsonFileBytes); a missing file or one without any result row is a ConfigError.
NcclTestsFile read_nccl_tests_file(const std::string& path);

// Checks every row: algbw = size/time/1e3 and busbw = algbw·factor(n), within the printed rounding.
// Returns one message per disagreeing figure (also used by the parser to fill run.warnings).
std::vector<std::string> check_bandwidths(const NcclTestsRun& run);

// Mean of the busbw column over non-empty rows (out-of-place and in-place), as nccl-tests computes
// its footer; used when a log lacks the footer.
std::optional<double> mean_busbw(const NcclTestsRun& run);

// {"collective","ranks","rows":[...],"in_place":{"rows":[...]},"avg_busbw_GBps",...}
nlohmann::json to_json(const NcclTestsRun& run);
// {"tests": [to_json(run)...], "warnings": [file warnings...]} written to `os` exactly as
// nlohmann's dump(2) writes it, the rows streamed (no JSON tree of a 10^6-row log is built).
void write_import_json(std::ostream& os, const std::vector<NcclTestsFile>& files);

}   // namespace llmsim::calibrate
