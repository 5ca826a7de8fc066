// Reader of nccl-tests output (all_reduce_perf & co.): the text logs in every variant seen in the
// wild (with/without the root column, old `error` column, `#wrong` N/A or float, per-iteration or
// timestamp columns, `mpirun --tag-output` and `srun --label` prefixes, NCCL_DEBUG=INFO lines
// interleaved, data rows split by INFO lines, several tests per file, missing footer) and the `-J`
// JSON form. Pure parsing: no hardware knowledge. Units: bytes, microseconds, GB/s (1e9 B/s).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace llmsim::calibrate {

// One half of a row: out-of-place or in-place.
struct NcclTestsResult {
    bool present = false;
    double time_us = 0;
    double algbw_GBps = 0;
    double busbw_GBps = 0;
    std::optional<double> wrong;   // #wrong / error column; nullopt for N/A or absent
    // Half a unit in the last printed digit of each figure (rounding uncertainty; 0 for JSON).
    double time_res = 0, algbw_res = 0, busbw_res = 0;
};

struct NcclTestsRow {
    std::int64_t size_bytes = 0;
    std::int64_t count = 0;
    std::string type;
    std::string redop;
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
// (file names like "..._all_gather.txt") when the log itself cannot tell.
NcclTestsFile parse_nccl_tests(const std::string& text, const std::string& source_name);
// Reads and parses a file; a missing file or one without any result row is a ConfigError.
NcclTestsFile read_nccl_tests_file(const std::string& path);

// Checks every row: algbw = size/time/1e3 and busbw = algbw·factor(n), within the printed rounding.
// Returns one message per disagreeing figure (also used by the parser to fill run.warnings).
std::vector<std::string> check_bandwidths(const NcclTestsRun& run);

// Mean of the busbw column over non-empty rows (out-of-place and in-place), as nccl-tests computes
// its footer; used when a log lacks the footer.
std::optional<double> mean_busbw(const NcclTestsRun& run);

// {"collective","ranks","rows":[...],"in_place":{"rows":[...]},"avg_busbw_GBps",...}
nlohmann::json to_json(const NcclTestsRun& run);

}   // namespace llmsim::calibrate
