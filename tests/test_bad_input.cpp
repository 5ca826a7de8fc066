// Bad input, one test (at least) per defect class of issue 14 (docs/reliability.md lists each class
// with the test that guards it). Every one runs the built binary and asserts exit code 2, nothing on
// stdout, and a message naming the pointer (or flag, or file:line), the value and the expectation —
// never a crash, an uncaught exception, a hang or a silent result.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/cli_runner.hpp"

namespace fs = std::filesystem;
using llmsim::test::Run;

namespace {

const fs::path& dir() {
    static const fs::path d = llmsim::test::temp_dir("bad-input");
    return d;
}

fs::path write(const std::string& name, const std::string& text) {
    const fs::path p = dir() / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
}

std::string source(const std::string& relative) { return std::string(LLMSIM_SOURCE_DIR) + "/" + relative; }

// llmsim ARGS must exit 2, print nothing on stdout, and say every one of `needles` on stderr.
void expect_refused(const std::vector<std::string>& args, const std::vector<std::string>& needles) {
    const Run r = llmsim::test::run_llmsim(args, "bad-input");
    std::string cmd;
    for (const auto& a : args) {
        cmd.append(a, 0, std::min<std::size_t>(a.size(), 80));
        if (a.size() > 80) cmd += "...";
        cmd += ' ';
    }
    INFO("llmsim " << cmd << "\nexit " << r.rc << "\nstderr:\n"
                   << r.err.substr(0, 2000) << "\nstdout:\n"
                   << r.out.substr(0, 500));
    CHECK(r.rc == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("error: ", 0) == 0);
    CHECK(r.err.find("internal error") == std::string::npos);
    for (const auto& n : needles) {
        INFO("stderr should contain: " << n);
        CHECK(r.err.find(n) != std::string::npos);
    }
}

const std::string kBase = R"("model": "llama-3-8b", "system": "dgx-h100")";

}   // namespace

// ---------------------------------------------------------------------------------------------
// Crashes
// ---------------------------------------------------------------------------------------------

TEST_CASE("layout products beyond 2^20 GPUs are refused before any arithmetic (was SIGFPE)", "[bad-input]") {
    const auto f = write("product.json", "{" + kBase + R"(, "parallel": {"tp": 65536, "pp": 65536, "cp": 65536}})");
    expect_refused({"memory", "-s", f.string()},
                   {"product.json#/parallel/pp", ": 65536:", "tp·pp at most 1048576 GPUs"});
    expect_refused(
        {"memory", "--model", "llama-3-8b", "--system", "dgx-h100", "--tp", "1024", "--pp", "1024", "--cp", "1024"},
        {"--cp: 1024:", "tp·pp·cp at most 1048576 GPUs", "1024·1024·1024 = 1073741824"});
    const auto g = write("mbdp.json", "{" + kBase + R"(, "gpus": 1048576, "training": {"micro_batch": 16777216}})");
    expect_refused({"memory", "-s", g.string()}, {"mbdp.json#/training/micro_batch", "micro_batch·dp"});
}

TEST_CASE("JSON nested 10^5 deep is refused at parse time with its pointer (was a stack overflow)", "[bad-input]") {
    const auto f = write("deep.json", std::string(100000, '[') + std::string(100000, ']'));
    expect_refused({"memory", "-s", f.string()}, {"deep.json#/0/0/0", "nested more than 64 levels deep"});
    std::string obj;
    for (int i = 0; i < 100000; ++i) obj += "{\"model\":";
    obj += '1';
    obj.append(100000, '}');
    const auto g = write("deep-obj.json", obj);
    expect_refused({"flops", "-s", g.string()}, {"deep-obj.json#/model/model", "expected at most 64 levels"});
}

// ---------------------------------------------------------------------------------------------
// Uncaught exceptions
// ---------------------------------------------------------------------------------------------

TEST_CASE("a number too large for a double is an error with its pointer (was internal error, exit 1)", "[bad-input]") {
    const auto f = write("big.json", "{" + kBase + R"(, "gpus": 8, "training": {"token_budget": 1e400}})");
    expect_refused({"memory", "-s", f.string()}, {"big.json#/training/token_budget", "1e400", "a double can hold"});
}

TEST_CASE("wrong-typed fields of a validation file are errors with FILE#/pointer (was internal error)", "[bad-input]") {
    const auto f = write("val-types.json", R"({"cases": [{"id": "a", "scenario": {)" + kBase +
                                               R"(, "gpus": 8}, "measured": {"step_time_s": "fast"}},
                                           {"id": "b", "scenario": 7, "measured": {"step_time_s": 1.0}}]})");
    expect_refused(
        {"validate", f.string()},
        {"val-types.json#/cases/0/measured/step_time_s: \"fast\": expected a measured value in [1e-06, 1e+09] s",
         "val-types.json#/cases/1/scenario: 7: expected an object"});
}

TEST_CASE("wrong-typed fields of an nccl-tests -J log are errors with FILE#/pointer (was internal error)",
          "[bad-input]") {
    const auto f = write("nccl-types.json", R"({"results": [{"size": "8", "count": 2, "type": "float", "redop": "sum",
        "out_of_place": {"time": "fast", "alg_bw": 0.1, "bus_bw": 0.1}}]})");
    expect_refused({"calibrate", "import-nccl-tests", f.string()},
                   {"nccl-types.json#/results/0/size: \"8\": expected an integer",
                    "nccl-types.json#/results/0/out_of_place/time: \"fast\": expected a number"});
}

TEST_CASE(
    "an interleaved layout whose micro-batches are not a multiple of pp is refused (found by fuzz_properties: "
    "the simulator deadlocked, internal error)",
    "[bad-input]") {
    const auto f = write("interleaved-m.json", "{" + kBase + R"(, "gpus": 16, "parallel": {"tp": 8, "pp": 2, "vp": 2},
        "training": {"global_batch": 3}})");
    expect_refused({"estimate", "-s", f.string()},
                   {"interleaved-m.json#/training/global_batch: 3: expected micro-batches per step",
                    "a multiple of pp (2) for the interleaved schedule"});
}

// ---------------------------------------------------------------------------------------------
// Hangs and unbounded memory
// ---------------------------------------------------------------------------------------------

TEST_CASE("a global batch beyond the simulator's work limit names the flag and the limit (was GBs of RSS)",
          "[bad-input]") {
    expect_refused(
        {"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "16000000"},
        {"--global-batch: 16000000: 2000000 micro-batches per step", "the simulator plays at most 2097152",
         "expected a global batch of at most"});
    const auto f = write("bigbatch.json", "{" + kBase + R"(, "gpus": 8, "training": {"global_batch": 16000000}})");
    expect_refused({"estimate", "-s", f.string()}, {"bigbatch.json#/training/global_batch: 16000000"});
}

TEST_CASE("a serving stream past the simulator's work limit is refused before simulating (was minutes of CPU)",
          "[bad-input]") {
    // 10^7 requests x 1,000 tokens: 10^10 decode steps. One 400,000-token request at a time: 4 x 10^8 steps
    // in at least 1.7 x 10^8 iterations (each holds its growing context in the 470k-token KV cache).
    expect_refused({"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--input-len", "1000", "--output-len",
                    "1000", "--qps", "1e9", "--requests", "10000000"},
                   {"--requests: 10000000: 1e+10 decode steps", "past the serving simulator's work limit",
                    "expected fewer requests or shorter outputs"});
    // (A model stating a 10^6-token context: the zoo's llama-3-8b stops at 8,192.)
    const auto longctx = write("longctx.json", R"({"model": {"preset": "llama-3-8b", "max_seq_len": 1000000},
                                                   "system": "dgx-h100", "gpus": 1})");
    expect_refused({"estimate", "-s", longctx.string(), "--input-len", "10", "--output-len", "400000", "--qps", "1e9",
                    "--requests", "1000"},
                   {"--requests: 1000: 4e+08 decode steps in at least 1.7e+08 iterations"});
}

TEST_CASE("a validation case beyond the simulator's work limit is an input error with its pointer", "[bad-input]") {
    const auto f =
        write("val-limit.json",
              R"({"cases": [{"id": "big", "scenario": {)" + kBase +
                  R"(, "gpus": 8, "training": {"global_batch": 16000000}}, "measured": {"step_time_s": 1.0}}]})");
    expect_refused({"validate", f.string()}, {"val-limit.json#/cases/0/scenario/training/global_batch: 16000000:",
                                              "the simulator plays at most"});
}

TEST_CASE("--global-batch-range beyond 2^24 is refused (was a power-of-two loop overflowing)", "[bad-input]") {
    // (scaling takes one global batch and has no --global-batch-range; search has it)
    expect_refused({"search", "--model", "llama-3-8b", "--system", "dgx-h100", "--gpus", "8", "--global-batch-range",
                    "1:9223372036854775807"},
                   {"--global-batch-range", "expected a:b with 1 <= a <= b <= 16777216"});
}

TEST_CASE("plan with an absurd budget is refused at once (was a runaway bisection)", "[bad-input]") {
    expect_refused({"plan", "--compute", "1e40", "--system", "dgx-h100", "--gpus", "1024"},
                   {"--compute: 1e+40:", "expected a budget whose compute-optimal model has at most 1e+15 parameters"});
    expect_refused({"plan", "--gpu-hours", "1e300", "--system", "dgx-h100", "--gpus", "8"},
                   {"--gpu-hours: 1e300: expected a number in (0, 1e+15]"});
}

TEST_CASE("inputs that are not regular files, or too large, are refused before reading (was /dev/zero forever)",
          "[bad-input]") {
    // A system profile path that is a character device.
    const auto f =
        write("devzero.json",
              R"({"model": "llama-3-8b", "gpus": 8, "system": {"preset": "dgx-h100", "profile": "/dev/zero"}})");
    expect_refused({"memory", "-s", f.string()},
                   {"devzero.json#/system/profile: /dev/zero: a character device: expected a readable JSON file"});
    // A directory and a FIFO as the scenario (a FIFO would block a reader forever).
    expect_refused({"memory", "-s", source("scenarios")}, {"scenarios: a directory: expected a readable JSON file"});
    const fs::path fifo = dir() / "fifo.json";
    fs::remove(fifo);
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    expect_refused({"flops", "-s", fifo.string()}, {"fifo.json: a FIFO: expected a readable JSON file"});
    // Larger than 64 MiB (a sparse file: no disk used).
    const fs::path huge = dir() / "huge.json";
    { std::ofstream(huge) << "{"; }
    fs::resize_file(huge, (std::uintmax_t{64} << 20) + 1);
    expect_refused({"memory", "-s", huge.string()},
                   {"huge.json: 67108865 bytes: expected a readable JSON file of at most 67108864 bytes"});
}

// ---------------------------------------------------------------------------------------------
// Silent nonsense
// ---------------------------------------------------------------------------------------------

TEST_CASE("output_len near INT64_MAX is refused (was negative KV-cache bytes and max_batch -1)", "[bad-input]") {
    const auto f =
        write("outlen.json", "{" + kBase + R"(, "gpus": 8, "inference": {"output_len": 9223372036854775000}})");
    expect_refused({"estimate", "-s", f.string(), "--json"},
                   {"outlen.json#/inference/output_len: 9223372036854775000: expected an integer in [1, 16777216]"});
}

TEST_CASE("a Hugging Face expansion_ratio giving an MLP width out of range is refused (was a negative width)",
          "[bad-input]") {
    const auto f = write("hf-ratio.json", R"({"model_type": "mpt", "n_layers": 4, "d_model": 1024, "n_heads": 8,
        "vocab_size": 50000, "expansion_ratio": 1e300})");
    expect_refused({"model", "show", f.string()},
                   {"/expansion_ratio: 1e+300:", "expected a number > 0 and <= 4194304"});
    const auto g = write("hf-ratio2.json", R"({"model_type": "mpt", "n_layers": 4, "d_model": 1048576, "n_heads": 8,
        "vocab_size": 50000, "expansion_ratio": 100})");
    expect_refused({"model", "show", g.string()},
                   {"/expansion_ratio: 100", "MLP width ratio·d_model (1048576) is in [1, 4194304]"});
}

TEST_CASE("Hugging Face MoE keys that leave no MoE layer are refused (was a dense model)", "[bad-input]") {
    const auto f = write("hf-moe.json", R"({"model_type": "deepseek_v3", "num_hidden_layers": 4, "hidden_size": 1024,
        "num_attention_heads": 8, "vocab_size": 32000, "n_routed_experts": 8, "num_experts_per_tok": 2,
        "first_k_dense_replace": 4})");
    expect_refused({"model", "show", f.string()},
                   {"/n_routed_experts: 8: expected experts in at least one of the 4 layers"});
    const auto g = write("hf-moe2.json", R"({"model_type": "mixtral", "num_hidden_layers": 4, "hidden_size": 1024,
        "num_attention_heads": 8, "vocab_size": 32000, "num_local_experts": 1, "num_experts_per_tok": 2})");
    expect_refused({"model", "show", g.string()}, {"/num_experts_per_tok: 2: expected at most num_local_experts (1)"});
}

TEST_CASE("infinite or undefined outputs come from refused inputs: straggler factors, Chinchilla budgets",
          "[bad-input]") {
    expect_refused(
        {"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--gpus", "8", "--straggler", "0:1e308"},
        {"--straggler: '0:1e308': expected a stage in 0..0 and a factor in (0, 1000]"});
    expect_refused({"chinchilla", "--compute", "1e308T"}, {"--compute: \"1e308T\": expected a count in [1, 1e+40]"});
    expect_refused({"chinchilla", "--params", "nanB"}, {"--params: \"nanB\": expected a count"});
    // A compute-optimal model of less than a parameter or a token ("params N 0" at --compute 1), and a plan
    // below the smallest model it designs ("N = 0 parameters", then an 18.1M-parameter design).
    // A throughput past the GPUs' peak (MFU 608,722%), a bandwidth of inf (CLI11's range message printed
    // 1.797e308 in full), more drill answers than questions (dropped without a word).
    expect_refused(
        {"calc", "mfu", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--gpus", "8", "--tokens-per-s", "1e9"},
        {"--tokens-per-s: 1e+09: expected at most 164048 (8 GPUs at their bf16 peak, 100% MFU)"});
    expect_refused({"calc", "allreduce", "--bytes", "1GB", "--ranks", "8", "--GBps", "inf"},
                   {"--GBps: 'inf' is not a finite decimal number"});
    expect_refused({"drill", "--seed", "7", "--count", "2", "--answers", "1;2;3"},
                   {"--answers: 3 answers: expected at most 2"});
    expect_refused({"chinchilla", "--compute", "1"},
                   {"--compute: 1: expected a budget whose compute-optimal model has at least one parameter"});
    expect_refused({"plan", "--system", "dgx-h100", "--gpus", "8", "--compute", "1"},
                   {"--compute: 1: expected a budget whose compute-optimal model has at least the 1.81e+07 "
                    "parameters of the smallest model plan designs at vocab 32000"});
    expect_refused({"plan", "--system", "dgx-h100", "--gpus", "8", "--days", "1e-6"},
                   {"--days: 1e-06: expected a budget whose compute-optimal model has at least"});
}

TEST_CASE("calibration fits on degenerate rows give no figure, never nan (and bad probe figures are refused)",
          "[bad-input]") {
    // Every row the same size: no bandwidth can be fitted; the profile says so and holds no nan.
    std::string log =
        "# Collective test starting: all_reduce_perf\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
        "#wrong\n";
    for (int i = 0; i < 5; ++i)
        log +=
            "     1048576        262144     float     sum      -1    20.48   51.20   89.60      0    20.48   51.20   "
            "89.60      0\n";
    const auto f = write("same-size.log", log);
    const fs::path out = dir() / "degenerate-profile.json";
    const Run r = llmsim::test::run_llmsim(
        {"calibrate", "fit", "--nccl-tests", f.string(), "--system", "dgx-h100", "-o", out.string(), "--json"},
        "bad-input");
    INFO(r.err);
    CHECK(r.rc == 0);
    CHECK(r.out.find("fewer than 2 distinct sizes") != std::string::npos);
    CHECK(r.out.find("null") == std::string::npos);   // nlohmann writes nan and inf as null
    const auto raw = write("raw-bad.json",
                           R"({"llmsim_probe": 1, "hbm": [{"kernel": "copy", "bytes_per_array": 1e9, "GBps": -3}]})");
    expect_refused({"calibrate", "fit", raw.string(), "--system", "dgx-h100", "-o", out.string()},
                   {"raw-bad.json#/hbm/0/GBps: -3: expected a number in (0, 1e+09]"});
}

TEST_CASE("validation files with zero or negative measurements are refused (was accepted)", "[bad-input]") {
    const auto f =
        write("val-zero.json",
              R"({"cases": [{"id": "z", "scenario": {)" + kBase +
                  R"(, "gpus": 8, "training": {"global_batch": 64}}, "measured": {"step_time_s": 0}},
        {"id": "n", "scenario": {)" +
                  kBase + R"(, "gpus": 8, "training": {"global_batch": 64}}, "measured": {"step_time_s": -2.5}}]})");
    expect_refused({"validate", f.string()},
                   {"val-zero.json#/cases/0/measured/step_time_s: 0: expected a measured value in [1e-06, 1e+09] s",
                    "val-zero.json#/cases/1/measured/step_time_s: -2.5"});
}

TEST_CASE("nccl-tests rows with nan, -inf or negative times are refused with file:line (was accepted)", "[bad-input]") {
    const std::string header =
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
        "#wrong\n";
    const auto f = write("nan.log", header +
                                        "     1048576        262144     float     sum      -1      nan   51.20   89.60 "
                                        "     0    20.48   51.20   89.60      0\n");
    expect_refused({"calibrate", "import-nccl-tests", f.string()},
                   {"nan.log:2: out-of-place time of the row of size 1048576: \"nan\": expected a number >= 0"});
    const auto g = write("neg.log", header +
                                        "     1048576        262144     float     sum      -1    20.48   51.20   89.60 "
                                        "     0   -20.48   51.20   89.60      0\n");
    expect_refused({"calibrate", "import-nccl-tests", g.string()},
                   {"neg.log:2: in-place time", "\"-20.48\": expected a number in [0, 1e+15]"});
    const auto h = write("inf.log", header +
                                        "     1048576        262144     float     sum      -1    20.48   51.20   89.60 "
                                        "     0    20.48    -inf   89.60      0\n");
    expect_refused({"calibrate", "import-nccl-tests", h.string()},
                   {"inf.log:2: in-place algbw", "\"-inf\": expected a number >= 0"});
}

TEST_CASE("a flag that does not apply to the scenario's kind is an error (was silently ignored)", "[bad-input]") {
    const auto f = write("serving.json", "{" + kBase + R"(, "gpus": 8, "inference": {"batch": 8}})");
    expect_refused({"memory", "-s", f.string(), "--micro-batch", "4", "--recompute", "bogus"},
                   {"--micro-batch: given with", "an inference scenario", "--recompute: given with"});
    expect_refused({"estimate", "-s", f.string(), "--straggler", "0:1.5", "--timeline"},
                   {"--straggler: given with an inference scenario", "--timeline: given with an inference scenario"});
    // --trace writes a continuous-batching run's iterations; a static batch has none (it wrote nothing, exit 0).
    const auto trace = (dir() / "static-trace.json").string();
    expect_refused({"estimate", "-s", f.string(), "--trace", trace},
                   {"--trace: given with a static-batching inference scenario"});
    CHECK_FALSE(fs::exists(trace));
}

TEST_CASE("a duplicate JSON key is an error naming it (was masking an invalid earlier value)", "[bad-input]") {
    const auto f = write("dup.json", "{" + kBase + R"(, "gpus": "eight", "parallel": {"tp": 1, "tp": 2}, "gpus": 8})");
    expect_refused({"memory", "-s", f.string()},
                   {"dup.json#/parallel/tp: duplicate key \"tp\": expected each key once"});
}

// ---------------------------------------------------------------------------------------------
// Vague errors
// ---------------------------------------------------------------------------------------------

TEST_CASE("search reports the scenario's own problems with their pointers (was a generic error)", "[bad-input]") {
    const auto f = write("search-bad.json", "{" + kBase + R"(, "gpus": 8, "training": {"global_batch": 64,
        "seq_len": "long"}, "search": {"max_tp": 0}})");
    expect_refused({"search", "-s", f.string()},
                   {"search-bad.json#/training/seq_len: \"long\": expected an integer",
                    "search-bad.json#/search/max_tp: 0: expected an integer in [1, 1048576]"});
}

TEST_CASE("validate refuses a malformed case with exit 2 and nothing on stdout (was a table and exit 1)",
          "[bad-input]") {
    const auto f = write("val-malformed.json",
                         R"({"cases": [{"id": "ok", "scenario": {)" + kBase +
                             R"(, "gpus": 8, "training": {"global_batch": 64}}, "measured": {"step_time_s": 1.0}},
        {"id": "bad", "scenario": {)" +
                             kBase + R"(, "gpus": 8, "training": {"global_batch": 64, "micro_batch": 3}},
         "measured": {"step_time_s": 1.0}}, {"id": "nomeasure", "scenario": {)" +
                             kBase + R"(, "gpus": 8}}]})");
    expect_refused(
        {"validate", f.string()},
        {"val-malformed.json#/cases/1/scenario/training/global_batch: 64: expected a multiple of micro_batch·dp",
         "val-malformed.json#/cases/2/measured: missing"});
}

TEST_CASE("flag range errors state the accepted range, never one that contains the value", "[bad-input]") {
    expect_refused({"search", "--model", "llama-3-8b", "--system", "dgx-h100", "--gpus", "0", "--global-batch", "8"},
                   {"--gpus: 0: expected an integer in 1..1048576"});
    expect_refused({"memory", "--model", "llama-3-8b", "--system", "dgx-h100", "--zero", "4"},
                   {"--zero: 4: expected an integer in 0..3"});
    expect_refused({"plan", "--days", "0", "--system", "dgx-h100", "--gpus", "8"},
                   {"--days: 0: expected a number in (0, 1e+09]"});
    const Run r = llmsim::test::run_llmsim(
        {"search", "--model", "llama-3-8b", "--system", "dgx-h100", "--gpus", "0", "--global-batch", "8"}, "bad-input");
    CHECK(r.err.find("0 to") == std::string::npos);
    CHECK(r.err.find("1.79") == std::string::npos);
}

TEST_CASE("flag conversion errors say what was expected (was 'Could not convert')", "[bad-input]") {
    expect_refused({"memory", "--model", "llama-3-8b", "--system", "dgx-h100", "--gpus", "abc"},
                   {"--gpus: 'abc' is not an integer: expected an integer in 1..1048576"});
    expect_refused({"memory", "--model", "llama-3-8b", "--system", "dgx-h100", "--sp", "maybe"},
                   {"--sp: 'maybe': expected true or false"});
    // (estimate reports days for a token budget; memory and flops have no --token-budget)
    expect_refused({"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--token-budget", "lots"},
                   {"--token-budget: 'lots' is not a finite number"});
    const Run r =
        llmsim::test::run_llmsim({"memory", "--model", "llama-3-8b", "--system", "dgx-h100", "--tp", "x"}, "bad-input");
    CHECK(r.err.find("Could not convert") == std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Issue 34
// ---------------------------------------------------------------------------------------------

TEST_CASE("integer and number flags are decimal; empty values are refused (was 010 = 8, 0x10 = 16, '' = default)",
          "[bad-input]") {
    const std::vector<std::string> m = {"memory", "--model", "llama-3-8b", "--system", "dgx-h100"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = m;
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    };
    // Flags checked by int_in (a range in "lo..hi").
    expect_refused(with({"--gpus", "8", "--tp", "010"}), {"--tp: '010' has a leading 0 (octal is not read)"});
    expect_refused(with({"--gpus", "0x10"}), {"--gpus: '0x10' is not an integer"});
    expect_refused(with({"--gpus", ""}), {"--gpus: '' is not an integer"});
    // Flags with CLI11's own range check, which reads octal and hexadecimal.
    expect_refused({"calc", "amdahl", "--serial", "0.1", "--p", "04"}, {"--p: '04' is not a decimal integer"});
    expect_refused({"calc", "amdahl", "--serial", "0.1", "--p", "0x4"}, {"--p: '0x4' is not a decimal integer"});
    expect_refused({"calc", "amdahl", "--serial", "0.1", "--p", ""}, {"--p: empty value: expected an integer"});
    // An unsigned seed: -1 was 2^64 - 1.
    expect_refused({"drill", "--seed", "-1"}, {"--seed: '-1' is not a decimal integer", "or a sign"});
    // Past 64 bits: CLI11 saturated (99999999999999999999 ran as seed 2^63 - 1, the same stream as 2^64 - 1).
    const std::vector<std::string> stream = {"estimate", "--model",      "llama-3-8b", "--system", "dgx-h100",
                                             "--qps",    "10",           "--requests", "200",      "--input-len",
                                             "100",      "--output-len", "50"};
    auto streamed = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = stream;
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    };
    expect_refused(streamed({"--seed", "99999999999999999999"}),
                   {"--seed: '99999999999999999999'", "expected an integer in 0..9223372036854775807"});
    expect_refused({"calc", "amdahl", "--serial", "0.1", "--p", "99999999999999999999"},
                   {"--p: '99999999999999999999': out of range"});
    expect_refused({"drill", "--seed", "18446744073709551616"},
                   {"--seed: '18446744073709551616': out of range: expected an integer in [0, 18446744073709551615]"});
    // The same in a scenario: the range, not "an integer >= 0", which the value is.
    const auto seed = write("seed.json", "{" + kBase +
                                             R"(, "inference": {"batching": "continuous", "qps": 1,
                                                "seed": 9223372036854775808}})");
    expect_refused({"estimate", "-s", seed.string()},
                   {"/inference/seed: 9223372036854775808: expected an integer in [0, 9223372036854775807]"});
    // Numbers: hexadecimal floating point, inf and nan.
    expect_refused({"calc", "amdahl", "--serial", "0x0.1", "--p", "4"}, {"--serial: '0x0.1' is not a finite decimal"});
    expect_refused({"plan", "--days", "0x1p3", "--system", "dgx-h100", "--gpus", "8"},
                   {"--days: '0x1p3' is not a finite number"});
    // Empty text values.
    for (const char* flag : {"--schedule", "--recompute", "--offload", "--model"})
        expect_refused({"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--gpus", "8", flag, ""},
                       {std::string(flag) + ": empty value"});
}

TEST_CASE("a bandwidth of 0 where the system uses it is refused with its pointer (was a free collective or 1e18 s)",
          "[bad-input]") {
    const std::string t = R"(, "gpus": 16, "training": {"global_batch": 64}})";
    expect_refused(
        {"estimate", "-s",
         write("bw-inter.json", R"({"model": "llama-3-8b", "system": {"preset": "dgx-h100", "inter_node_GBps": 0})" + t)
             .string()},
        {"/system/inter_node_GBps: 0: expected a number >= 1e-06"});
    // A full description without its scale-out tier (was 1e-9 B/s: a step of 10^13 days).
    expect_refused({"estimate", "-s",
                    write("bw-tier.json", R"({"model": "llama-3-8b", "system": {"gpu": "h100-sxm", "gpus_per_node": 8,
                                             "intra_node_GBps": 450})" +
                                              t)
                        .string()},
                   {"/system/inter_node_GBps: missing"});
    expect_refused(
        {"estimate", "-s",
         write("bw-ici.json", R"({"model": "llama-3-8b", "system": {"preset": "tpu-v4", "ici_link_GBps": 0})" + t)
             .string()},
        {"/system/ici_link_GBps: 0: expected > 0 on a TPU torus"});
    expect_refused(
        {"estimate", "-s",
         write("bw-nic.json", R"({"model": "llama-3-8b", "system": {"preset": "dgx-h100", "nic_Gbps": 0})" + t)
             .string()},
        {"/system/nic_Gbps: 0: expected > 0 with nics_per_node = 8"});
    expect_refused(
        {"estimate", "-s",
         write("bw-nvls.json", R"({"model": "llama-3-8b", "system": {"preset": "dgx-h100", "nvls_GBps": 0})" + t)
             .string()},
        {"/system/nvls_GBps: 0: expected > 0 with nvls: true"});
    expect_refused(
        {"estimate", "-s",
         write("bw-host.json", R"({"model": "llama-3-8b", "system": {"preset": "dgx-h100", "host_memory_GBps": 0})" + t)
             .string()},
        {"/system/host_memory_GBps: 0: expected a number >= 1e-06"});
    // Host DRAM bandwidth absent from a full description: an optimizer offload needs it (was 100 GB/s).
    expect_refused({"estimate", "-s",
                    write("bw-host-full.json", R"({"model": "llama-3-8b", "system": {"gpu": "h100-sxm",
                        "gpus_per_node": 8, "intra_node_GBps": 450, "inter_node_GBps": 50, "pcie_GBps": 63},
                        "gpus": 8, "training": {"global_batch": 64, "offload": "optimizer"}})")
                        .string()},
                   {"/system/host_memory_GBps: missing: expected a host DRAM bandwidth > 0 for /training/offload"});
}

TEST_CASE("rates and measurements are bounded to a physical range (was qps 5e-324: infinite latencies)",
          "[bad-input]") {
    for (const char* qps : {"5e-324", "1e-300", "9.9e-7"}) {
        const auto f = write("qps-tiny.json", std::string(R"({"model": "llama-3-8b", "system": "dgx-h100", "gpus": 1,
            "inference": {"batching": "continuous", "requests": 50, "qps": )") +
                                                  qps + "}}");
        expect_refused({"estimate", "-s", f.string()},
                       {"/inference/qps: ", "expected 0 (off) or a number in [1e-06, 1000000000]"});
    }
    expect_refused({"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--gpus", "1", "--qps", "1e-300"},
                   {"--qps", "expected 0 (off) or a number in [1e-06"});
    const auto v = write("val-tiny.json", R"({"cases": [{"id": "t", "scenario": {)" + kBase +
                                              R"(, "gpus": 8, "training": {"global_batch": 64}},
                                                  "measured": {"step_time_s": 5e-324, "mfu": 1.5}}]})");
    expect_refused({"validate", v.string()},
                   {"val-tiny.json#/cases/0/measured/step_time_s: ", "expected a measured value in [1e-06, 1e+09] s",
                    "val-tiny.json#/cases/0/measured/mfu: 1.5: expected a measured value in [1e-06, 1]"});
}

TEST_CASE("validate refuses a measured quantity llmsim does not predict, up front (was a table and exit 1)",
          "[bad-input]") {
    const auto v = write("val-unknown.json", R"({"cases": [{"id": "u", "scenario": {)" + kBase +
                                                 R"(, "gpus": 8, "training": {"global_batch": 64}},
                                                     "measured": {"step_time_s": 1.0, "ttft_s": 0.2}}]})");
    expect_refused({"validate", v.string()},
                   {"val-unknown.json#/cases/0/measured/ttft_s: unknown quantity: expected one llmsim predicts for a "
                    "training case: step_time_s"});
}

TEST_CASE("keys that would do nothing are refused: serving keys on a static scenario, empty profiles (issue 34)",
          "[bad-input]") {
    expect_refused(
        {"estimate", "-s",
         write("static-qps.json", "{" + kBase + R"(, "gpus": 8, "inference": {"batch": 8, "qps": 5,
                        "slo": {"ttft_p99_s": 1}}})")
             .string()},
        {"/inference/qps: 5: expected no such key in a static-batching inference scenario", "/inference/slo: "});
    expect_refused(
        {"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--gpus", "8", "--batch", "8", "--qps", "4"},
        {"--batch: 8: expected no such key in a serving scenario"});
    // A profile that sets nothing, an empty profile name, a profile whose system.gpu is a name (was an
    // internal error) that is not the system's accelerator.
    write("empty-profile.json", "{}");
    write("gpu-name-profile.json", R"({"llmsim_profile": 1, "system": {"gpu": "h200-sxm", "inter_node_GBps": 40}})");
    const std::string sys = R"({"model": "llama-3-8b", "gpus": 8, "system": {"preset": "dgx-h100", "profile": )";
    expect_refused({"estimate", "-s", write("sp-empty.json", sys + R"("empty-profile.json"}})").string()},
                   {"/system/profile: ", "empty-profile.json#/system: missing: expected the measured system keys"});
    expect_refused({"estimate", "-s", write("sp-blank.json", sys + R"(""}})").string()},
                   {"/system/profile: \"\": expected a calibration profile file or a built-in profile name"});
    expect_refused({"estimate", "-s", write("sp-gpu.json", sys + R"("gpu-name-profile.json"}})").string()},
                   {"gpu-name-profile.json#/system/gpu: \"h200-sxm\": expected the system's accelerator \"h100-sxm\""});
}

TEST_CASE("sequences beyond the model's stated context length are refused (was accepted silently)", "[bad-input]") {
    // A learned position table has no entry past its size.
    expect_refused({"estimate", "--model", "gpt3-1.3b", "--system", "dgx-h100", "--gpus", "8", "--seq-len", "4096"},
                   {"--seq-len: 4096: expected at most the model's context length (2048 tokens, its learned position "
                    "table)"});
    // A serving engine refuses a request longer than the model's context.
    expect_refused({"estimate", "--model", "llama-2-7b", "--system", "dgx-h100", "--gpus", "1", "--input-len", "4000",
                    "--output-len", "200", "--qps", "1"},
                   {"--input-len: 4000: expected a prompt that, with the 200 output tokens, fits the model's context "
                    "length (4096 tokens"});
    // Training a RoPE model past its stated context is long-context extension: accepted.
    const Run r = llmsim::test::run_llmsim(
        {"estimate", "--model", "llama-2-7b", "--system", "dgx-h100", "--gpus", "8", "--seq-len", "8192", "--fast"},
        "bad-input");
    CHECK(r.rc == 0);
}

TEST_CASE("write errors exit non-zero naming the path (was exit 0 on /dev/full)", "[bad-input]") {
    // /dev/full is a Linux character device every supported system has (Debian's udev and every container
    // runtime create it); without it this test fails instead of passing untested.
    INFO("/dev/full (a device whose every write fails with ENOSPC) is needed by this test");
    REQUIRE(fs::exists("/dev/full"));
    const std::string run_file = source("scenarios/sweeps/llama3-70b-tp-pp.json");
    // Outputs named by a flag.
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--gpus", "8", "--trace", "/dev/full"},
             {"run", run_file, "--fast", "-o", "/dev/full"}}) {
        const Run r = llmsim::test::run_llmsim(args, "bad-input");
        INFO(args[0] << " stderr: " << r.err);
        CHECK(r.rc == 1);
        CHECK(r.err.find("/dev/full: cannot be written (No space left on device)") != std::string::npos);
    }
    // merge -o, from two shards of a run.
    const auto a = dir() / "shard-a.jsonl", b = dir() / "shard-b.jsonl";
    REQUIRE(llmsim::test::run_llmsim({"run", run_file, "--fast", "--shard", "1/2", "-o", a.string()}).rc == 0);
    REQUIRE(llmsim::test::run_llmsim({"run", run_file, "--fast", "--shard", "2/2", "-o", b.string()}).rc == 0);
    const Run m = llmsim::test::run_llmsim({"merge", a.string(), b.string(), "-o", "/dev/full"}, "bad-input");
    CHECK(m.rc == 1);
    CHECK(m.err.find("-o: /dev/full: cannot be written") != std::string::npos);
    // stdout itself.
    const auto err = dir() / "stdout-full.err";
    const std::string cmd = llmsim::test::shell_quote(LLMSIM_BINARY) +
                            " estimate --model llama-3-8b --system dgx-h100 --gpus 8 >/dev/full 2>" +
                            llmsim::test::shell_quote(err.string());
    const int status = std::system(cmd.c_str());
    CHECK(WEXITSTATUS(status) == 1);
    CHECK(llmsim::test::slurp(err).find("error: stdout: cannot be written") != std::string::npos);
}

TEST_CASE("run decides --plot and -j before running or printing (was a table, then exit 2; -j 2000 SIGABRT)",
          "[bad-input]") {
    expect_refused({"run", source("scenarios/llama3-70b-h100-64.json"), "--fast", "--plot", (dir() / "x.svg").string()},
                   {"--plot: ", "the run files sweep no number: expected a sweep over a number"});
    CHECK(!fs::exists(dir() / "x.svg"));
    expect_refused({"run", source("scenarios/llama3-70b-h100-64.json"), "--fast", "-j", "2000"},
                   {"--threads: 2000: expected an integer in 1..1024"});
}

TEST_CASE("estimate --fast with the simulator's trace or timeline is refused (the trace was of another step)",
          "[bad-input]") {
    // --fast printed the closed form's 282 ms while --trace wrote the simulated step's 277.5 ms.
    const std::vector<std::string> m = {"estimate", "--model", "llama-3-8b", "--system", "dgx-h100",
                                        "--gpus",   "8",       "--pp",       "2",        "--fast"};
    auto with = [&](std::vector<std::string> extra) {
        auto a = m;
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    };
    const auto trace = (dir() / "fast-trace.json").string();
    expect_refused(with({"--trace", trace}), {"--fast: given with --trace: expected one of them"});
    CHECK_FALSE(fs::exists(trace));
    expect_refused(with({"--timeline"}), {"--fast: given with --timeline: expected one of them"});
}

TEST_CASE("run: a failed scenario's message is under the table, which keeps to 80 columns", "[bad-input]") {
    // The message was a cell: the table grew to ~220 columns and the scenario names broke into 8-letter pieces.
    const auto list =
        write("run-list.json", "{\"scenarios\": [{\"name\": \"a long name of a scenario that fits\", " + kBase +
                                   R"(, "gpus": 8}, {)" + kBase + R"(, "gpus": 8, "parallel": {"tp": 3}}]})");
    const Run r = llmsim::test::run_llmsim({"run", list.string(), "--fast"}, "bad-input");
    CHECK(r.out.find("(below)") != std::string::npos);
    CHECK(r.out.find("#1: ") != std::string::npos);
    CHECK(r.out.find("/parallel/tp: 3") != std::string::npos);
    std::size_t widest = 0, from = 0;
    for (std::size_t nl = r.out.find('\n'); nl != std::string::npos; from = nl + 1, nl = r.out.find('\n', from))
        widest = std::max(widest, nl - from);
    CHECK(widest <= 80);
}

TEST_CASE("calibrate check takes the system from the truth file's GPU and refuses a mismatch (was dgx-h100)",
          "[bad-input]") {
    const std::string h200 = source("hardware_db/profiles/h200-sxm-141gb-2026-11-26/torch-truth.json");
    const Run ok = llmsim::test::run_llmsim(
        {"calibrate", "check", h200, "--profile", "h200-sxm-141gb-2026-11-26", "--json"}, "bad-input");
    REQUIRE(ok.rc == 0);
    CHECK(ok.out.find("\"system\": \"hgx-h200\"") != std::string::npos);
    expect_refused(
        {"calibrate", "check", h200, "--profile", "h200-sxm-141gb-2026-11-26", "--system", "dgx-h100"},
        {"--system: dgx-h100: its GPU is h100-sxm: expected a system of the truth file's GPU (\"NVIDIA H200\"",
         "torch-truth.json#/gpu"});
    expect_refused({"calibrate", "check", h200, "--profile", "h100-sxm5-80gb-2026-11-22"},
                   {"--profile: h100-sxm5-80gb-2026-11-22: measured on \"NVIDIA H100 80GB HBM3\""});
    // Shapes are bounded (seq_len x micro_batch was an int overflow) and a model the zoo does not know is
    // an error at its pointer.
    const std::string head = R"({"llmsim_layer_truth": 1, "gpu": "NVIDIA H200", "date": "2026-11-26", )";
    expect_refused(
        {"calibrate", "check",
         write("truth-big.json", head + R"("layers": [{"model": "llama-3-8b", "mode": "eager", "seq_len": 20000000,
                "micro_batch": 9000000, "fwd_ms": 1, "fwd_bwd_ms": 3}]})")
             .string(),
         "--profile", "h200-sxm-141gb-2026-11-26"},
        {"truth-big.json#/layers/0/seq_len: 20000000: expected a positive number up to 1.67772e+07"});
    expect_refused(
        {"calibrate", "check",
         write("truth-prod.json", head + R"("layers": [{"model": "llama-3-8b", "mode": "eager", "seq_len": 8192,
                "micro_batch": 8192, "fwd_ms": 1, "fwd_bwd_ms": 3}]})")
             .string(),
         "--profile", "h200-sxm-141gb-2026-11-26"},
        {"truth-prod.json#/layers/0/micro_batch: 8192: expected seq_len · micro_batch at most 16777216 tokens"});
    expect_refused({"calibrate", "check",
                    write("truth-model.json", head + R"("gemms": [{"model": "llama-9", "op": "qkv", "pass": "fwd",
                        "m": 8, "n": 8, "k": 8, "ms": 0.1}]})")
                        .string(),
                    "--profile", "h200-sxm-141gb-2026-11-26"},
                   {"truth-model.json#/gemms/0/model: "});
}

TEST_CASE("flag errors name flags: the settings they refer to, a flag given twice, one problem once (was keys)",
          "[bad-input]") {
    const std::vector<std::string> m = {"estimate",    "--model", "llama-3-8b",   "--system", "dgx-h100",
                                        "--input-len", "100",     "--output-len", "50"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = m;
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    };
    // Cross-references: the SLO flags, not /inference/slo (ttft_p99_s, ...); --qps, not "arrival_cv with a qps".
    expect_refused(with({"--qps", "max"}),
                   {"--qps: \"max\": expected a number, or \"max\" with --slo-ttft-p99, --slo-tpot-p99, --slo-ttft-p90 "
                    "or --slo-tpot-p90: the largest rate meeting it"});
    expect_refused(with({"--arrival-cv", "3"}), {"--arrival-cv: 3.0: expected --qps with it"});
    expect_refused(with({"--batch", "4", "--prefix-cache-hit", "0.5"}),
                   {"--batching \"continuous\" simulates a request stream"});
    // A flag given twice: its values and what is expected ("At Most 1 required but received 2").
    expect_refused(with({"--qps", "5", "--qps", "6"}), {"--qps: given 2 times (5, 6): expected it once"});
    // A stdev out of range is said once (it was then also "stdev: 0.0: expected > 0", a value never given).
    const Run r = llmsim::test::run_llmsim({"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--input-len",
                                            "lognormal:100,1e9,1,1000", "--output-len", "50", "--qps", "5"},
                                           "bad-input");
    CHECK(r.rc == 2);
    CHECK(r.err.find("--input-len/stdev: 1000000000.0: expected a number >= 0 and <= 16777216") != std::string::npos);
    CHECK(r.err.find("stdev: 0.0") == std::string::npos);
    // A stdev its family cannot take is refused, not dropped.
    const auto fixed = write("fixed-stdev.json", "{" + kBase + R"(, "gpus": 1, "inference": {"batching": "continuous",
        "qps": 1, "input_len": {"mean": 100, "dist": "fixed", "stdev": 5}}})");
    expect_refused({"estimate", "-s", fixed.string()},
                   {"/inference/input_len/stdev: 5.0: expected 0 or no stdev for a fixed length"});
    expect_refused({"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--input-len",
                    "exponential:100,30,1,1000", "--output-len", "50", "--qps", "5"},
                   {"--input-len/stdev: 30.0: expected the mean (100), 0 or no stdev"});
}

TEST_CASE(
    "hunt 3: a trace's own rate, calendar dates, engine versions, sweep/zip, run's -o with --json or a bad --plot",
    "[bad-input]") {
    const std::vector<std::string> est = {"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--gpus", "1"};
    auto with = [&](std::vector<std::string> extra) {
        auto a = est;
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    };
    // Two rows 1e-300 s apart replayed at 1e300 req/s (a 300-digit load share, 326-column tables).
    const auto tiny = write("tiny-trace.csv", "arrival_s,input_tokens,output_tokens\n0,100,10\n1e-300,100,10\n");
    expect_refused(with({"--arrivals", tiny.string()}),
                   {"--arrivals", "expected a trace arriving at a rate in [1e-06, 1e+09] req/s"});
    // Feb 30 was read as Mar 2 (and an error then blamed the next, valid row); second 60 only at 23:59.
    const auto feb = write("feb30.csv",
                           "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-02-30 00:00:00,374,44\n"
                           "2023-03-03 00:00:00,396,109\n");
    expect_refused(with({"--arrivals", feb.string()}), {"feb30.csv:2", "2023-02-30 00:00:00", "of a calendar date"});
    const auto sec = write("sec60.csv",
                           "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-03-01 10:00:60,374,44\n"
                           "2023-03-03 00:00:00,396,109\n");
    expect_refused(with({"--arrivals", sec.string()}), {"sec60.csv:2"});
    const auto leap = write("leap.csv",
                            "TIMESTAMP,ContextTokens,GeneratedTokens\n2024-02-29 00:00:00,374,44\n"
                            "2024-02-29 00:00:01,396,109\n");
    CHECK(llmsim::test::run_llmsim(with({"--arrivals", leap.string(), "--fast"})).rc == 0);
    // Engine versions before the first release.
    expect_refused(with({"--batching", "continuous", "--engine", "vllm@0.0.1"}),
                   {"0.0.1", "expected a release of vllm (0.1.0 or later: its first public release)"});
    expect_refused(with({"--batching", "continuous", "--engine", "tensorrt-llm@0.4"}), {"(0.5.0 or later"});
    // A path both swept and zipped: said once, at its zip entry.
    const auto sz = write("sz.json", R"({"model": "llama-3-8b", "system": "dgx-h100", "gpus": 8,
        "parallel": {"tp": 8}, "training": {"seq_len": 2048, "micro_batch": 1, "global_batch": 8},
        "sweep": {"parallel.tp": [1, 2]}, "zip": {"parallel.tp": [4, 8]}})");
    const Run r = llmsim::test::run_llmsim({"run", sz.string(), "--fast"}, "bad-input");
    CHECK(r.rc == 2);
    const std::string said = "sz.json#/zip/parallel.tp: \"parallel.tp\" is both swept and zipped";
    CHECK(r.err.find(said) != std::string::npos);
    CHECK(r.err.find(said, r.err.find(said) + 1) == std::string::npos);
    // run: -o with --json, and a chart path that cannot be written, refused before anything runs.
    const std::string sweep = source("scenarios/sweeps/llama3-70b-tp-pp.json");
    const auto rows = dir() / "rows.jsonl";
    expect_refused({"run", sweep, "--fast", "--json", "-o", rows.string()},
                   {"--json: with -o", "expected one of them"});
    expect_refused({"run", sweep, "--fast", "-o", rows.string(), "--plot", (dir() / "no-dir" / "p.svg").string()},
                   {"--plot: ", "p.svg: cannot be written"});
    CHECK(!fs::exists(rows));
}

TEST_CASE("nccl-tests text rows are bounded as the -J form is (a size past 2^63 vanished, 1e300 us was taken)",
          "[bad-input]") {
    const std::string header =
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
        "#wrong\n";
    const std::string good =
        "    33554432       4194304    double     sum      -1   182.87  183.49  321.10       0   182.88  183.48  "
        "321.08  "
        "     0\n";
    const auto big =
        write("big-size.log", header + good +
                                  "    9223372036854775808       4194304    double     sum      -1   182.87  "
                                  "183.49  321.10       0   182.88  183.48  321.08       0\n");
    expect_refused({"calibrate", "import-nccl-tests", big.string()},
                   {"big-size.log:3: size of the row of size", "9223372036854775808", "expected an integer"});
    const auto slow = write("slow.log", header +
                                            "    33554432       4194304    double     sum      -1   1e300  183.49  "
                                            "321.10       0   182.88  183.48  321.08       0\n");
    expect_refused({"calibrate", "import-nccl-tests", slow.string()}, {"slow.log:2: out-of-place time", "1e300"});
}

TEST_CASE("validate refuses a repeated or empty case id; explain refuses qps max", "[bad-input]") {
    // A repeated id was counted twice in the means; an empty one printed as "()". Explain read qps "max" as an
    // offline run and said the SLO was missed.
    const std::string scen = R"({"model": "llama-3-8b", "system": "dgx-h100", "gpus": 8, "parallel": {"tp": 8},
        "training": {"seq_len": 2048, "micro_batch": 1, "global_batch": 8}})";
    const auto dup =
        write("val-dup.json", R"({"cases": [{"id": "A", "scenario": )" + scen +
                                  R"(, "measured": {"step_time_s": 1.0}}, {"id": "A", "scenario": )" + scen +
                                  R"(, "measured": {"step_time_s": 1.1}}, {"id": "", "scenario": )" + scen +
                                  R"(, "measured": {"step_time_s": 1.2}}]})");
    expect_refused({"validate", dup.string()},
                   {"val-dup.json#/cases/1/id: \"A\": expected an id not used before (it names /cases/0)",
                    "val-dup.json#/cases/2/id: \"\": expected a non-empty case id"});
    expect_refused({"explain", "--model", "llama-3-8b", "--system", "dgx-h100", "--gpus", "1", "--qps", "max",
                    "--slo-ttft-p99", "2"},
                   {"qps: \"max\": expected a rate"});
}
