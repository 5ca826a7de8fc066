// nccl-tests log reader: every fixture of tests/data/nccl-tests/SOURCES.md parsed to its expected
// values (collective, ranks, row counts, first/last times and busbw, footer), plus the format
// variants the fixtures do not cover (tag-output prefixes, per-iteration columns, #wrong as float,
// the binary name on a command line, corrupted rows).
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "calibrate/nccl_tests.hpp"
#include "hardware_db/errors.hpp"

#ifndef LLMSIM_TEST_DATA_DIR
#define LLMSIM_TEST_DATA_DIR "tests/data"
#endif

using namespace llmsim::calibrate;
using Catch::Matchers::Contains;

namespace {

std::string fixture(const std::string& name) { return std::string(LLMSIM_TEST_DATA_DIR) + "/nccl-tests/" + name; }

struct Expected {
    std::string collective;
    int ranks;
    std::size_t rows;
    std::int64_t first_size;
    double first_oop_us, first_ip_us;
    std::int64_t last_size;
    double last_oop_busbw, last_ip_busbw;
    double avg;   // < 0: no footer
};

void check(const NcclTestsRun& t, const Expected& e) {
    INFO(t.source_file << " test at line " << t.first_line << ": " << t.collective);
    CHECK(t.collective == e.collective);
    CHECK(t.ranks == e.ranks);
    REQUIRE(t.rows.size() == e.rows);
    CHECK(t.rows.front().size_bytes == e.first_size);
    CHECK(t.rows.front().out_of_place.time_us == Approx(e.first_oop_us));
    CHECK(t.rows.front().in_place.time_us == Approx(e.first_ip_us));
    CHECK(t.rows.back().size_bytes == e.last_size);
    CHECK(t.rows.back().out_of_place.busbw_GBps == Approx(e.last_oop_busbw));
    CHECK(t.rows.back().in_place.busbw_GBps == Approx(e.last_ip_busbw));
    if (e.avg < 0) {
        CHECK_FALSE(t.avg_busbw_GBps.has_value());
    } else {
        REQUIRE(t.avg_busbw_GBps.has_value());
        CHECK(*t.avg_busbw_GBps == Approx(e.avg));
    }
    // Real logs are internally consistent: no busbw/algbw/time disagreement beyond rounding.
    for (const auto& w : t.warnings) CHECK_THAT(w, !Contains("GB/s but"));
}

NcclTestsRun single(const std::string& name) {
    auto f = read_nccl_tests_file(fixture(name));
    REQUIRE(f.tests.size() == 1);
    return f.tests.front();
}

}   // namespace

TEST_CASE("nccl-tests bus factors and ring steps follow nccl-tests doc/PERFORMANCE.md", "[calibrate][nccl-tests]") {
    CHECK(*nccl_bus_factor("all_reduce", 8) == Approx(1.75));
    CHECK(*nccl_bus_factor("all_gather", 8) == Approx(0.875));
    CHECK(*nccl_bus_factor("reduce_scatter", 16) == Approx(15.0 / 16));
    CHECK(*nccl_bus_factor("alltoall", 2) == Approx(0.5));
    CHECK(*nccl_bus_factor("sendrecv", 8) == 1.0);
    CHECK(*nccl_bus_factor("broadcast", 8) == 1.0);
    CHECK_FALSE(nccl_bus_factor("unknown", 8).has_value());
    CHECK(*nccl_ring_steps("all_reduce", 8) == 14);
    CHECK(*nccl_ring_steps("all_gather", 8) == 7);
    CHECK(*nccl_ring_steps("sendrecv", 8) == 1);
    CHECK(collective_from_binary("/opt/nccl-tests/build/reduce_scatter_perf_mpi") == "reduce_scatter");
}

TEST_CASE("fixture 01: 16x H100 two nodes, mpirun, standard format", "[calibrate][nccl-tests]") {
    auto t = single("01_h100x16_2node_gcp-a3mega_all_reduce.txt");
    check(t, {"all_reduce", 16, 31, 8, 135.8, 123.5, 8589934592LL, 338.82, 337.35, 70.742});
    CHECK(t.nodes == 2);
    CHECK(t.gpus_per_node() == 8);
    CHECK(t.gpu_name == "NVIDIA H100 80GB HBM3");
    CHECK(t.ranks_source == "device lines");
}

TEST_CASE("fixtures 02-04: 2x RTX 2080 Ti, zero-byte rows, N/A #wrong", "[calibrate][nccl-tests]") {
    auto ar = single("02_rtx2080ti-x2_pcie_all_reduce.txt");
    check(ar, {"all_reduce", 2, 28, 8, 12.25, 12.00, 1073741824LL, 4.00, 4.00, 2.05774});
    auto ag = single("03_rtx2080ti-x2_pcie_all_gather.txt");
    check(ag, {"all_gather", 2, 28, 0, 0.33, 0.36, 1073741824LL, 3.79, 3.84, 1.6651});
    // First non-zero row.
    CHECK(ag.rows[2].size_bytes == 32);
    CHECK(ag.rows[2].out_of_place.time_us == Approx(10.52));
    CHECK(ag.rows[2].in_place.time_us == Approx(10.01));
    auto a2a = single("04_rtx2080ti-x2_pcie_alltoall.txt");
    check(a2a, {"alltoall", 2, 28, 0, 12.97, 12.86, 1073741824LL, 4.61, 4.73, 2.06935});
    CHECK(a2a.rows[2].size_bytes == 32);
    CHECK(a2a.rows[2].out_of_place.time_us == Approx(13.51));
    CHECK(a2a.rows[2].in_place.time_us == Approx(13.11));
    CHECK_FALSE(a2a.rows[5].in_place.wrong.has_value());   // N/A
    CHECK(a2a.rows[5].out_of_place.wrong == 0.0);
    // The footer is the mean of every busbw figure (out-of-place and in-place).
    CHECK(*mean_busbw(ar) == Approx(2.05774).epsilon(1e-3));
}

TEST_CASE("fixture 05: old format without root, error column, SHARP INFO lines", "[calibrate][nccl-tests]") {
    auto t = single("05_a100x16_2node_ib-hdr-sharp_abci_all_reduce_oldfmt.txt");
    check(t, {"all_reduce", 16, 29, 8, 22.54, 24.94, 2147483648LL, 105.46, 105.51, 29.0317});
    CHECK(t.format == "text-old");
    CHECK_FALSE(t.rows.front().root.has_value());
    REQUIRE(t.rows.front().out_of_place.wrong.has_value());
    CHECK(*t.rows.front().out_of_place.wrong == Approx(4e-07));
    CHECK(t.nodes == 2);
    CHECK(t.gpu_name == "NVIDIA A100-SXM4-40GB");
}

TEST_CASE("fixture 07: srun --label prefixes, no device lines, no footer", "[calibrate][nccl-tests]") {
    auto t = single("07_a100x16_2node_efa-p4de_all_reduce_srun-label.txt");
    // Ranks come from busbw/algbw = 2(n-1)/n = 1.875 -> 16.
    check(t, {"all_reduce", 16, 29, 8, 164.3, 163.3, 2147483648LL, 78.33, 78.33, -1});
    CHECK(t.ranks_source == "busbw/algbw ratio");
    CHECK(t.nodes == 0);
}

TEST_CASE("fixture 10: NCCL INFO interleaved, four zero-byte rows, _mpi binary", "[calibrate][nccl-tests]") {
    auto t = single("10_h100x8_2node_ib-snellius_reduce_scatter_ncclinfo.txt");
    check(t, {"reduce_scatter", 8, 31, 0, 0.13, 0.10, 8589934592LL, 97.68, 97.68, 35.9589});
    CHECK(t.rows[4].size_bytes == 128);
    CHECK(t.rows[4].out_of_place.time_us == Approx(17.93));
    CHECK(t.rows[4].in_place.time_us == Approx(16.94));
    CHECK(t.collective_source == "header");
    CHECK(t.nccl_version == "2.22.3+cuda12.6");
    CHECK(t.nodes == 2);
    CHECK(t.gpus_per_node() == 4);
}

TEST_CASE("fixture 11: a data row split by NCCL INFO lines is rejoined", "[calibrate][nccl-tests]") {
    auto t = single("11_h100x8_2node_ib-snellius_all_reduce_ncclinfo-splitrow.txt");
    check(t, {"all_reduce", 8, 31, 8, 20.09, 17.42, 8589934592LL, 156.14, 156.30, 48.8121});
    const NcclTestsRow* split = nullptr;
    for (const auto& r : t.rows)
        if (r.size_bytes == 2097152) split = &r;
    REQUIRE(split != nullptr);
    CHECK(split->line == 334);
    CHECK(split->out_of_place.time_us == Approx(87.18));
    CHECK(split->out_of_place.algbw_GBps == Approx(24.05));
    CHECK(split->out_of_place.busbw_GBps == Approx(42.10));
    CHECK(split->in_place.time_us == Approx(85.11));
    CHECK(split->in_place.busbw_GBps == Approx(43.12));
    // Rows stay in size order.
    for (std::size_t i = 1; i < t.rows.size(); ++i) CHECK(t.rows[i].size_bytes == 2 * t.rows[i - 1].size_bytes);
}

TEST_CASE("fixture 13: five tests in one file, nccl-tests 2.17 format", "[calibrate][nccl-tests]") {
    auto f = read_nccl_tests_file(fixture("13_h100x8_1node_nvswitch_multi-collective_nccltests2.17.txt"));
    REQUIRE(f.tests.size() == 5);
    const std::int64_t first = 33554432, last = 17179869184LL;
    check(f.tests[0], {"all_reduce", 8, 10, first, 182.87, 182.88, last, 482.27, 482.12, 437.957});
    check(f.tests[1], {"all_gather", 8, 10, first, 123.44, 120.61, last, 361.86, 366.03, 328.618});
    check(f.tests[2], {"reduce_scatter", 8, 10, first, 111.83, 111.63, last, 364.76, 365.09, 330.721});
    check(f.tests[3], {"alltoall", 8, 10, first, 124.79, 123.64, last, 348.03, 347.25, 313.838});
    check(f.tests[4], {"sendrecv", 8, 10, first, 422.19, 422.04, last, 367.25, 367.23, 279.874});
    for (const auto& t : f.tests) {
        CHECK(t.nccl_version == "2.29.2");
        CHECK(t.nccl_tests_version == "2.17.8");
        CHECK(t.nodes == 1);
    }
    CHECK(f.tests[0].rows[3].out_of_place.time_us == Approx(1081.14));
}

TEST_CASE("fixture 15: modern format without footer", "[calibrate][nccl-tests]") {
    auto t = single("15_rtx5090x8_1node_pcie-p2p_all_reduce_nofooter.txt");
    check(t, {"all_reduce", 8, 25, 8, 25.47, 24.82, 134217728LL, 43.86, 44.07, -1});
    CHECK(t.nccl_version == "2.29.7");
    auto j = to_json(t);
    CHECK(j["avg_busbw_GBps"].is_null());
    CHECK(j.contains("mean_busbw_GBps"));
}

TEST_CASE("fixture 16: the -J JSON form", "[calibrate][nccl-tests]") {
    auto t = single("16_rtx5090x8_1node_all_reduce_J-json_synthetic.json");
    CHECK(t.format == "json");
    CHECK(t.collective == "all_reduce");
    CHECK(t.collective_source == "json args");
    CHECK(t.ranks == 8);
    REQUIRE(t.rows.size() == 25);
    CHECK(t.rows.front().size_bytes == 8);
    CHECK(t.rows.front().out_of_place.time_us == Approx(25.47));
    CHECK(t.rows.front().in_place.time_us == Approx(24.82));
    CHECK(t.rows.front().root == -1);
    CHECK(t.rows.back().out_of_place.busbw_GBps == Approx(43.86).margin(0.01));
    CHECK(t.rows.back().in_place.busbw_GBps == Approx(44.07).margin(0.01));
    REQUIRE(t.avg_busbw_GBps.has_value());
    CHECK(*t.avg_busbw_GBps == Approx(14.528320));
    CHECK(t.nccl_version == "2.29.7");
    CHECK(t.gpu_name == "NVIDIA GeForce RTX 5090");
    CHECK(t.warnings.empty());
}

TEST_CASE("--json shape: rows, in_place.rows, avg_busbw_GBps, source_file", "[calibrate][nccl-tests]") {
    auto t = single("02_rtx2080ti-x2_pcie_all_reduce.txt");
    auto j = to_json(t);
    CHECK(j["collective"] == "all_reduce");
    CHECK(j["ranks"] == 2);
    REQUIRE(j["rows"].size() == 28);
    CHECK(j["rows"][0]["size_bytes"] == 8);
    CHECK(j["rows"][0]["time_us"].get<double>() == Approx(12.25));
    CHECK(j["rows"][0].contains("algbw_GBps"));
    CHECK(j["rows"][0].contains("busbw_GBps"));
    REQUIRE(j["in_place"]["rows"].size() == 28);
    CHECK(j["in_place"]["rows"][0]["time_us"].get<double>() == Approx(12.00));
    CHECK(j["avg_busbw_GBps"].get<double>() == Approx(2.05774));
    CHECK(j["source_file"].get<std::string>().find("02_rtx2080ti") != std::string::npos);
}

TEST_CASE("mpirun --tag-output prefixes, per-iteration columns, timestamps, #wrong as float",
          "[calibrate][nccl-tests]") {
    const std::string log =
        "[1,0]<stdout>:# nccl-tests version 2.18.0 nccl-headers=22803 nccl-library=22803\n"
        "[1,0]<stdout>:# Collective test starting: all_gather_perf\n"
        "[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 1024 maxBytes 4096 step: 2(factor) warmup iters: 5 iters: 20\n"
        "[1,0]<stdout>:#\n"
        "[1,0]<stdout>:# Using devices\n"
        "[1,0]<stdout>:#  Rank  0 Group  0 Pid   101 on      node1 device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n"
        "[1,1]<stdout>:#  Rank  1 Group  0 Pid   102 on      node1 device  1 [0000:05:00] NVIDIA H100 80GB HBM3\n"
        "[1,2]<stdout>:#  Rank  2 Group  0 Pid   103 on      node1 device  2 [0000:06:00] NVIDIA H100 80GB HBM3\n"
        "[1,3]<stdout>:#  Rank  3 Group  0 Pid   104 on      node1 device  3 [0000:07:00] NVIDIA H100 80GB HBM3\n"
        "[1,0]<stdout>:#\n"
        "[1,0]<stdout>:#       size    count   type  redop  root    time  algbw  busbw #wrong   i_min   i_max   i_p99  "
        " "
        "i_cv%    time  algbw  busbw #wrong   i_min   i_max   i_p99   i_cv%           timestamp\n"
        "[1,0]<stdout>:#        (B) (elements)                      (us) (GB/s) (GB/s)          (us)    (us)    (us)   "
        " "
        "(%)    (us) (GB/s) (GB/s)          (us)    (us)    (us)     (%)  %Y-%m-%d %H:%M:%S\n"
        "[1,0]<stdout>:        1024       64  float   none    -1   10.00   0.10   0.08  0.000    9.90   10.20   10.10  "
        "  "
        "0.50   10.50   0.10   0.07  0.000    9.90   10.90   10.80    0.60  2026-01-28 14:50:17\n"
        "[1,1]<stderr>:node1:102:102 [1] NCCL INFO some message\n"
        "[1,0]<stdout>:        2048      128  float   none    -1   11.00   0.19   0.14      0   10.90   11.20   11.10  "
        "  "
        "0.40   11.00   0.19   0.14      0   10.90   11.20   11.10    0.40  2026-01-28 14:50:18\n"
        "[1,0]<stdout>:        4096      256  float   none    -1   12.00   0.34   0.26      0   11.90   12.20   12.10  "
        "  "
        "0.40   12.00   0.34   0.26      0   11.90   12.20   12.10    0.40  2026-01-28 14:50:19\n"
        "[1,0]<stdout>:# Out of bounds values : 0 OK\n"
        "[1,0]<stdout>:# Avg bus bandwidth    : 0.165\n";
    auto f = parse_nccl_tests(log, "synthetic-tag-output.log");
    REQUIRE(f.tests.size() == 1);
    const auto& t = f.tests[0];
    CHECK(t.collective == "all_gather");
    CHECK(t.ranks == 4);
    REQUIRE(t.rows.size() == 3);
    CHECK(t.rows[0].out_of_place.time_us == Approx(10.00));
    CHECK(t.rows[0].out_of_place.wrong == 0.0);
    CHECK(t.rows[0].in_place.time_us == Approx(10.50));   // not an i_* column
    CHECK(t.rows[0].in_place.busbw_GBps == Approx(0.07));
    CHECK(t.rows[2].in_place.time_us == Approx(12.00));
    CHECK(*t.avg_busbw_GBps == Approx(0.165));
    CHECK(t.warnings.empty());
}

TEST_CASE("collective from the binary on a command line; inconsistent rows are reported", "[calibrate][nccl-tests]") {
    const std::string log =
        "$ mpirun -np 8 /opt/nccl-tests/build/reduce_scatter_perf -b 1M -e 4M -f 2\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
        "#wrong\n"
        "     1048576         32768     float     sum      -1    20.00   52.43   45.88      0    20.00   52.43   45.88 "
        "   "
        "  0\n"
        "     2097152         65536     float     sum      -1    30.00   69.91   61.17      0    30.00   69.91   99.99 "
        "   "
        "  0\n"
        "     4194304        131072     float     sum      -1    50.00   83.89   73.40      0    50.00   88.00   73.40 "
        "   "
        "  0\n";
    auto f = parse_nccl_tests(log, "x.log");
    REQUIRE(f.tests.size() == 1);
    const auto& t = f.tests[0];
    CHECK(t.collective == "reduce_scatter");
    CHECK(t.collective_source == "command line");
    CHECK(t.ranks == 8);   // 45.88/52.43 = 0.875 = 7/8
    auto w = check_bandwidths(t);
    REQUIRE(w.size() == 2);
    CHECK_THAT(w[0], Contains("size 2097152 in-place: busbw 99.99"));
    CHECK_THAT(w[1], Contains("size 4194304 in-place: algbw 88"));
}

TEST_CASE("an unknown collective and a missing file are reported, not guessed", "[calibrate][nccl-tests]") {
    // alltoall vs all_gather cannot be told apart from 2-rank data without a name.
    const std::string log =
        "#  Rank  0 Group  0 Pid  1 on h device  0 [0000:01:00] GPU\n"
        "#  Rank  1 Group  0 Pid  1 on h device  1 [0000:02:00] GPU\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
        "#wrong\n"
        "     1048576        131072     float    none      -1    100.0   10.49    5.24      0    100.0   10.49    5.24 "
        "  "
        "   0\n";
    auto f = parse_nccl_tests(log, "mystery.log");
    REQUIRE(f.tests.size() == 1);
    CHECK(f.tests[0].collective == "unknown");
    CHECK(f.tests[0].ranks == 2);
    CHECK_THROWS_AS(read_nccl_tests_file(fixture("does-not-exist.txt")), llmsim::ConfigError);
    CHECK_THROWS_AS(parse_nccl_tests("{not json", "bad.json"), llmsim::ConfigError);
}

// ---------------------------------------------------------------------------------------------
// Prefixes in the middle of a line, and rows that cannot be read exactly
// ---------------------------------------------------------------------------------------------

TEST_CASE("fixture 20: mpirun --tag-output prefixes in the middle of lines (ranks interleaved)",
          "[calibrate][nccl-tests][reliability]") {
    auto t = single("20_h100x4_1node_all_reduce_tag-output-midline_synthetic.txt");
    check(t, {"all_reduce", 4, 4, 1048576, 20.48, 20.11, 8388608, 139.81, 140.28, 111.6});
    CHECK(t.rows[1].out_of_place.time_us == Approx(30.72));   // the rest of its line came two lines later
    CHECK(t.rows[1].line == 15);
    CHECK(t.rows[2].in_place.time_us == Approx(49.80));   // the same rank's tag inside its own line
    CHECK(t.rows[3].out_of_place.busbw_GBps == Approx(139.81));
    CHECK(t.warnings.empty());
}

TEST_CASE("fixture 21: srun --label prefixes in the middle of lines (tasks interleaved)",
          "[calibrate][nccl-tests][reliability]") {
    auto t = single("21_a100x16_2node_all_reduce_srun-label-midline_synthetic.txt");
    check(t, {"all_reduce", 16, 3, 1048576, 45.00, 44.50, 4194304, 65.54, 65.81, 51.6});
    CHECK(t.nodes == 2);
    CHECK(t.rows[1].out_of_place.algbw_GBps == Approx(29.96));
    CHECK(t.rows[2].out_of_place.time_us == Approx(120.00));
    CHECK(t.warnings.empty());
}

namespace {
const std::string kHeader =
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
    "#wrong\n";

// parse_nccl_tests must refuse `log` with a message naming `where` (file:line) and `what`.
void expect_refused(const std::string& log, const std::string& where, const std::string& what) {
    try {
        parse_nccl_tests(log, "bad.log");
        FAIL("accepted:\n" << log);
    } catch (const llmsim::ConfigError& e) {
        INFO(e.what());
        CHECK_THAT(e.what(), Contains(where));
        CHECK_THAT(e.what(), Contains(what));
    }
}
}   // namespace

TEST_CASE("rows with nan, inf, negative or non-numeric figures are refused with the line",
          "[calibrate][nccl-tests][reliability]") {
    const std::string row1 =
        "     1048576        262144     float     sum      -1    20.48   51.20   76.80      0    20.11   52.14   78.21 "
        "     0\n";
    expect_refused(kHeader + row1 +
                       "     2097152        524288     float     sum      -1      nan   68.27  102.40      0    30.50  "
                       " 68.76  103.14      0\n",
                   "bad.log:3", "out-of-place time of the row of size 2097152: \"nan\": expected a number >= 0");
    expect_refused(kHeader +
                       "     2097152        524288     float     sum      -1    30.72    -inf  102.40      0    30.50  "
                       " 68.76  103.14      0\n",
                   "bad.log:2", "out-of-place algbw");
    expect_refused(kHeader +
                       "     2097152        524288     float     sum      -1   -30.72   68.27  102.40      0    30.50  "
                       " 68.76  103.14      0\n",
                   "bad.log:2", "\"-30.72\": expected a number in [0, 1e+15]");
    expect_refused(kHeader +
                       "     2097152        524288     float     sum      -1    30.72   68.27  102.40      0    30.50  "
                       " 68.76  1e999      0\n",
                   "bad.log:2", "in-place busbw");
    expect_refused(kHeader +
                       "     2097152        524288     float     sum      -7    30.72   68.27  102.40      0    30.50  "
                       " 68.76  103.14      0\n",
                   "bad.log:2", "root of the row of size 2097152: \"-7\": expected an integer in [-1, ");
    expect_refused("# Avg bus bandwidth    : nan\n", "bad.log:1", "average bus bandwidth \"nan\"");
}

TEST_CASE("a row cut short and never completed, or glued where the boundary cannot be told, is refused",
          "[calibrate][nccl-tests][reliability]") {
    // Cut at the end of the log.
    expect_refused(kHeader + "     2097152        524288     float     sum      -1    30.72\n", "bad.log:2",
                   "has 6 of 13 columns and is never completed at the end of the log");
    // Cut, then another row starts.
    expect_refused(kHeader +
                       "     2097152        524288     float     sum      -1\n"
                       "     4194304       1048576     float     sum      -1    50.00   83.89  125.83      0    49.80  "
                       " 84.22  126.33      0\n",
                   "bad.log:2", "(line 3 starts another row)");
    // Glued to an NCCL INFO line of a host whose name starts with a digit: "-1"+"1node" or "-11"+"node"?
    expect_refused(kHeader +
                       "     2097152        524288     float     sum      -11node:12:13 [0] NCCL INFO x\n"
                       "    30.72   68.27  102.40      0    30.50   68.76  103.14      0\n",
                   "bad.log:2", "the boundary cannot be told");
    // srun --label: a task's label glued to the row ("-1" then task 12, or "-11" then task 2?).
    expect_refused(" 0: " + kHeader +
                       " 0:      2097152        524288     float     sum      -12: hello\n"
                       " 0:     30.72   68.27  102.40      0    30.50   68.76  103.14      0\n",
                   "bad.log:2", "glued to a task label (srun --label)");
}

TEST_CASE("-J JSON is read strictly: types, ranges, duplicate keys, numbers beyond a double",
          "[calibrate][nccl-tests][reliability]") {
    const std::string half = R"("out_of_place": {"time": 20.48, "alg_bw": 51.2, "bus_bw": 76.8, "nwrong": 0})";
    expect_refused(R"({"results": [{"size": "big", "count": 1, "type": "float", "redop": "sum", )" + half + "}]}",
                   "bad.log#/results/0/size", "\"big\": expected an integer");
    expect_refused(R"({"results": [{"size": 8, "count": 2, "type": "float", "redop": "sum",
                      "out_of_place": {"time": -1, "alg_bw": 0, "bus_bw": 0}}]})",
                   "bad.log#/results/0/out_of_place/time", "-1: expected a number in [0, 1e+15]");
    expect_refused(R"({"results": {"size": 8}})", "bad.log#/results", "expected an array of result rows");
    expect_refused(R"({"results": [{"size": 8, "size": 9}]})", "bad.log#/results/0/size", "duplicate key");
    expect_refused(R"({"results": [{"size": 1e400}]})", "bad.log#/results/0/size", "a double can hold");
    expect_refused(
        R"({"results": [{"size": 8, "count": 2, "type": "float", "redop": "sum", "root": "x", )" + half + "}]}",
        "bad.log#/results/0/root", "expected an integer in [-1,");
}

TEST_CASE("the streamed --json import is byte-identical to dump(2) of to_json", "[calibrate][nccl-tests]") {
    std::vector<NcclTestsFile> files;
    for (const char* name : {"01_h100x16_2node_gcp-a3mega_all_reduce.txt", "04_rtx2080ti-x2_pcie_alltoall.txt",
                             "05_a100x16_2node_ib-hdr-sharp_abci_all_reduce_oldfmt.txt",
                             "13_h100x8_1node_nvswitch_multi-collective_nccltests2.17.txt",
                             "16_rtx5090x8_1node_all_reduce_J-json_synthetic.json"})
        files.push_back(read_nccl_tests_file(fixture(name)));
    nlohmann::json tests = nlohmann::json::array(), warnings = nlohmann::json::array();
    for (const auto& f : files) {
        for (const auto& t : f.tests) tests.push_back(to_json(t));
        for (const auto& w : f.warnings) warnings.push_back(w);
    }
    std::ostringstream os;
    write_import_json(os, files);
    CHECK(os.str() == nlohmann::json{{"tests", tests}, {"warnings", warnings}}.dump(2) + "\n");
}
