// The command line end to end (the built binary): the subcommand registry is what `llmsim --help`
// lists and every entry answers --help; `estimate` prints the scenario contract's keys with the
// numbers the library computes, for training and serving; `run` estimates a batch.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cost_models/inference.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/scenario.hpp"
#include "sim/step_sim.hpp"
#include "tests/cli_runner.hpp"

using namespace llmsim;
namespace fs = std::filesystem;

namespace {

test::Run llmsim_cli(const std::vector<std::string>& args) { return test::run_llmsim(args, "cli"); }

std::string scenario_path(const char* name) { return (fs::path(LLMSIM_SOURCE_DIR) / "scenarios" / name).string(); }

// Runs of spaces and newlines as one space (text wrapped at 80 columns compared with its sentence).
std::string squash(const std::string& text) {
    std::string out;
    for (const char c : text) {
        const bool space = c == ' ' || c == '\n';
        if (space && !out.empty() && out.back() == ' ') continue;
        out += space ? ' ' : c;
    }
    return out;
}

// Terminal columns of a UTF-8 line (code points) and the widest line of a text.
std::size_t cols(const std::string& line) {
    std::size_t n = 0;
    for (const char c : line) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}
std::size_t widest(const std::string& text) {
    std::size_t w = 0, at = 0;
    while (at < text.size()) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        w = std::max(w, cols(text.substr(at, end - at)));
        at = end + 1;
    }
    return w;
}

// Restores the default table width when a test ends.
struct TableWidth {
    explicit TableWidth(std::size_t w) { cli::set_table_width(w); }
    ~TableWidth() { cli::set_table_width(80); }
};

}   // namespace

TEST_CASE("the subcommand registry is what --help lists, and every entry answers --help", "[cli]") {
    const auto cmds = cli::commands();
    REQUIRE(cmds.size() >= 12);
    std::set<std::string_view> names;
    for (const auto& c : cmds) CHECK(names.insert(c.name).second);   // unique
    const auto top = llmsim_cli({"--help"});
    REQUIRE(top.rc == 0);
    for (const auto& c : cmds) {
        const std::string name(c.name);
        INFO(name);
        CHECK(top.out.find("  " + name + " ") != std::string::npos);
        // Help wraps at 80 columns: compare with the whitespace runs as single spaces.
        CHECK(squash(top.out).find(squash(std::string(c.summary))) != std::string::npos);
        const auto h = llmsim_cli({name, "--help"});
        CHECK(h.rc == 0);
        CHECK(h.err.empty());
        CHECK(squash(h.out).find(squash(std::string(c.summary))) != std::string::npos);
    }
    // With no arguments, the same list.
    const auto none = llmsim_cli({});
    CHECK(none.rc == 0);
    CHECK(none.out == top.out);
    // An unknown subcommand is a usage error (exit 2) on stderr.
    const auto bad = llmsim_cli({"estimat"});
    CHECK(bad.rc == 2);
    CHECK(bad.out.empty());
    CHECK_FALSE(bad.err.empty());
}

TEST_CASE("llmsim estimate --json: the contract's training keys, equal to the simulator's numbers", "[cli][estimate]") {
    const std::string path = scenario_path("llama3-70b-h100-64.json");
    const auto r = llmsim_cli({"estimate", "--scenario", path, "--json"});
    INFO(r.err);
    REQUIRE(r.rc == 0);
    const Json j = Json::parse(r.out);
    for (const char* k : {"step_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "model_flops_per_step",
                          "hardware_flops_per_step", "mfu", "hfu", "bubble_fraction", "memory", "breakdown_s"})
        CHECK(j.contains(k));
    for (const char* k : {"weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes", "other_bytes",
                          "total_bytes", "capacity_bytes", "fits"})
        CHECK(j["memory"].contains(k));
    for (const char* k : {"compute", "tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm", "bubble", "optimizer",
                          "offload", "exposed_comm"})
        CHECK(j["breakdown_s"].contains(k));
    const Scenario s = load_scenario_file(path);
    const auto e = sim::simulate_step(s.training_job());
    CHECK(j["step_time_s"].get<double>() == Approx(e.step_time_s).epsilon(1e-12));
    CHECK(j["mfu"].get<double>() == Approx(e.mfu).epsilon(1e-12));
    CHECK(j["tokens_per_s_per_gpu"].get<double>() == Approx(e.tokens_per_s / s.gpus).epsilon(1e-12));
    CHECK(j["memory"]["total_bytes"].get<double>() == Approx(e.memory.total_bytes).epsilon(1e-12));
    // --fast prints the closed form.
    const auto f = llmsim_cli({"estimate", "--scenario", path, "--fast", "--json"});
    REQUIRE(f.rc == 0);
    CHECK(Json::parse(f.out)["step_time_s"].get<double>() == Approx(estimate_step(s.training_job()).step_time_s));
    // The text report names the model and says whether it fits.
    const auto t = llmsim_cli({"estimate", "--scenario", path});
    REQUIRE(t.rc == 0);
    CHECK(t.out.find("llama-3-70b") != std::string::npos);
    CHECK(t.out.find("MFU") != std::string::npos);
}

TEST_CASE("llmsim estimate on an RLHF scenario reports the PPO iteration by phase", "[cli][estimate][rlhf]") {
    const std::string path = scenario_path("rlhf-opt13b-a100-64.json");
    const auto r = llmsim_cli({"estimate", "--scenario", path, "--fast", "--json"});
    INFO(r.err);
    REQUIRE(r.rc == 0);
    const Json j = Json::parse(r.out);
    REQUIRE(j.contains("rlhf"));
    const Json& p = j["rlhf"];
    double sum = 0;
    for (const char* k : {"rollout_s", "actor_logprob_s", "reference_s", "reward_s", "critic_value_s", "actor_train_s",
                          "critic_train_s"})
        sum += p[k].get<double>();
    CHECK(p["iteration_s"].get<double>() == Approx(sum).epsilon(1e-12));
    CHECK(p["actor_train_s"].get<double>() == Approx(j["step_time_s"].get<double>()).epsilon(1e-12));
    CHECK(p["prompt_len"].get<int>() == 256);
    CHECK(p["response_len"].get<int>() == 256);
    const auto t = llmsim_cli({"estimate", "--scenario", path, "--fast"});
    REQUIRE(t.rc == 0);
    CHECK(t.out.find("RLHF (PPO) iteration") != std::string::npos);
    CHECK(t.out.find("rollout (generation)") != std::string::npos);
}

TEST_CASE("llmsim estimate --json on a serving scenario: the contract's serving keys", "[cli][estimate][serving]") {
    const std::string path = scenario_path("llama3-8b-h100-serving-fp8.json");
    const auto r = llmsim_cli({"estimate", "--scenario", path, "--json"});
    INFO(r.err);
    REQUIRE(r.rc == 0);
    const Json j = Json::parse(r.out);
    for (const char* k : {"ttft_s", "tpot_s", "output_tokens_per_s", "output_tokens_per_s_per_gpu", "kv_cache_bytes",
                          "max_batch", "memory"})
        CHECK(j.contains(k));
    const Scenario s = load_scenario_file(path);
    const auto e = estimate_inference(s.serving_job());
    CHECK(j["ttft_s"].get<double>() == Approx(e.ttft_s).epsilon(1e-12));
    CHECK(j["tpot_s"].get<double>() == Approx(e.tpot_s).epsilon(1e-12));
    CHECK(j["output_tokens_per_s_per_gpu"].get<double>() == Approx(e.output_tokens_per_s_per_gpu).epsilon(1e-12));
    CHECK(j["max_batch"].get<std::int64_t>() == e.memory.max_batch);
}

TEST_CASE("llmsim run estimates a batch of scenario files in order", "[cli][run]") {
    const std::vector<std::string> files{scenario_path("gpt3-175b-a100-1024.json"),
                                         scenario_path("llama3-8b-h100-serving-fp8.json")};
    auto args = std::vector<std::string>{"run"};
    args.insert(args.end(), files.begin(), files.end());
    args.push_back("--json");
    const auto r = llmsim_cli(args);
    INFO(r.err);
    REQUIRE(r.rc == 0);
    const Json j = Json::parse(r.out);
    REQUIRE(j["results"].size() == 2);
    CHECK(j["results"][0]["result"].contains("step_time_s"));
    CHECK(j["results"][1]["result"].contains("ttft_s"));
    // One bad file: exit 2, nothing on stdout, the file named.
    const auto bad = llmsim_cli({"run", files[0], "/nonexistent/scenario.json"});
    CHECK(bad.rc == 2);
    CHECK(bad.out.empty());
    CHECK(bad.err.find("/nonexistent/scenario.json") != std::string::npos);
}

TEST_CASE("llmsim estimate: a continuous-batching what-if by flags; the same seed gives byte-identical JSON",
          "[cli][estimate][serving]") {
    const std::vector<std::string> args{
        "estimate", "--model",      "llama-3-8b", "--system",       "dgx-h100", "--input-len",
        "512",      "--output-len", "128",        "--qps",          "8",        "--requests",
        "300",      "--chunk",      "1024",       "--slo-ttft-p99", "1",        "--json"};
    const auto a = llmsim_cli(args), b = llmsim_cli(args);
    INFO(a.err);
    REQUIRE(a.rc == 0);
    CHECK(a.out == b.out);
    const Json j = Json::parse(a.out);
    for (const char* k : {"ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "tpot_p50_s", "tpot_p90_s", "tpot_p99_s",
                          "e2e_latency_s", "e2e_latency_p99_s", "requests_per_s", "slo_met"})
        CHECK(j.contains(k));
    CHECK(j["scenario"]["inference"]["batching"] == "continuous");
    CHECK(j["scenario"]["inference"]["max_batch_tokens"] == 1024);
    // A training flag on a serving what-if is an error naming it; nothing on stdout.
    auto bad = args;
    bad.insert(bad.end(), {"--micro-batch", "2"});
    const auto c = llmsim_cli(bad);
    CHECK(c.rc == 2);
    CHECK(c.out.empty());
    CHECK_THAT(c.err, Catch::Contains("--micro-batch"));
}

TEST_CASE("--framework: estimate and search take it like parallel.framework; serving refuses it", "[cli][estimate]") {
    const std::vector<std::string> base = {
        "estimate", "--model", "gpt3-6.7b", "--system",       "dgx-h100", "--gpus",        "32", "--pp",
        "2",        "--zero",  "3",         "--global-batch", "256",      "--micro-batch", "4"};
    auto with = [&](std::vector<std::string> extra) {
        auto a = base;
        a.insert(a.end(), extra.begin(), extra.end());
        return llmsim_cli(a);
    };
    // ZeRO-3 with pipeline stages: refused unless the framework composes them, then run as ZeRO-1.
    const auto refused = with({});
    CHECK(refused.rc == 2);
    CHECK(refused.err.find("--zero: 3: expected at most 1 with pp > 1") != std::string::npos);
    const auto tt = with({"--framework", "torchtitan"});
    REQUIRE(tt.rc == 0);
    CHECK(tt.out.find("zero 3 (runs as 1: FSDP with pipeline stages)") != std::string::npos);
    CHECK(tt.out.find("| torchtitan") != std::string::npos);
    const auto j = Json::parse(with({"--framework", "torchtitan", "--json"}).out);
    CHECK(j["scenario"]["parallel"]["framework"] == "torchtitan");
    const auto bad = with({"--framework", "jax"});
    CHECK(bad.rc == 2);
    CHECK(bad.out.empty());
    CHECK(bad.err.find("--framework: \"jax\": expected one of") != std::string::npos);
    const auto serving = llmsim_cli({"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--input-len", "100",
                                     "--framework", "torchtitan"});
    CHECK(serving.rc == 2);
    CHECK(serving.err.find("--framework: given with --input-len") != std::string::npos);
    const auto search =
        llmsim_cli({"search", "--model", "gpt3-6.7b", "--system", "dgx-h100", "--gpus", "32", "--global-batch", "256",
                    "--pp", "2,4", "--zero", "3", "--framework", "torchtitan", "--confirm", "0"});
    REQUIRE(search.rc == 0);
    CHECK(search.out.find("framework torchtitan (eager)") != std::string::npos);
    CHECK(search.out.find("zero3") != std::string::npos);
}

TEST_CASE("--grad-precision: estimate and search take it like training.grad_precision; serving refuses it",
          "[cli][estimate]") {
    const std::vector<std::string> base = {
        "estimate", "--model", "gpt3-6.7b",      "--system", "dgx-h100",      "--gpus", "8",
        "--zero",   "0",       "--global-batch", "64",       "--micro-batch", "1",      "--json"};
    auto with = [&](std::vector<std::string> extra) {
        auto a = base;
        a.insert(a.end(), extra.begin(), extra.end());
        return llmsim_cli(a);
    };
    const auto fp32 = with({});
    const auto bf16 = with({"--grad-precision", "bf16"});
    REQUIRE(fp32.rc == 0);
    REQUIRE(bf16.rc == 0);
    const Json a = Json::parse(fp32.out), b = Json::parse(bf16.out);
    CHECK(a["scenario"]["training"]["grad_precision"] == "fp32");
    CHECK(b["scenario"]["training"]["grad_precision"] == "bf16");
    // Unsharded main gradients: 4 bytes per parameter in fp32, 2 in bf16.
    CHECK(b["memory"]["gradients_bytes"].get<double>() == Approx(a["memory"]["gradients_bytes"].get<double>() / 2));
    const auto bad = with({"--grad-precision", "fp8"});
    CHECK(bad.rc == 2);
    CHECK(bad.out.empty());
    CHECK(bad.err.find("--grad-precision: \"fp8\": expected one of") != std::string::npos);
    const auto serving = llmsim_cli({"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--input-len", "100",
                                     "--grad-precision", "bf16"});
    CHECK(serving.rc == 2);
    CHECK(serving.err.find("--grad-precision: given with --input-len") != std::string::npos);
    const auto search = llmsim_cli({"search", "--model", "gpt3-6.7b", "--system", "dgx-h100", "--gpus", "32",
                                    "--global-batch", "256", "--grad-precision", "bf16", "--confirm", "0", "--json"});
    INFO(search.err);
    REQUIRE(search.rc == 0);
    const auto search32 = llmsim_cli({"search", "--model", "gpt3-6.7b", "--system", "dgx-h100", "--gpus", "32",
                                      "--global-batch", "256", "--confirm", "0", "--json"});
    REQUIRE(search32.rc == 0);
    const Json w16 = Json::parse(search.out)["results"][0], w32 = Json::parse(search32.out)["results"][0];
    REQUIRE(w16["layout"] == w32["layout"]);
    CHECK(w16["memory"]["gradients_bytes"].get<double>() == Approx(w32["memory"]["gradients_bytes"].get<double>() / 2));
    const auto sbad = llmsim_cli({"search", "--model", "gpt3-6.7b", "--system", "dgx-h100", "--gpus", "32",
                                  "--global-batch", "256", "--grad-precision", "int8"});
    CHECK(sbad.rc == 2);
    CHECK(sbad.out.empty());
    CHECK(sbad.err.find("--grad-precision") != std::string::npos);
}

TEST_CASE("--torch-compile: estimate and search take it like parallel.torch_compile; eager is slower",
          "[cli][estimate]") {
    const std::vector<std::string> base = {
        "estimate", "--model",   "llama-3.1-8b", "--system",      "dgx-h100", "--gpus",         "8", "--zero",
        "3",        "--seq-len", "8192",         "--micro-batch", "2",        "--global-batch", "16"};
    auto step_s = [&](std::vector<std::string> extra) {
        auto a = base;
        a.insert(a.end(), extra.begin(), extra.end());
        a.push_back("--json");
        const auto r = llmsim_cli(a);
        REQUIRE(r.rc == 0);
        const auto j = Json::parse(r.out);
        return std::pair{j["step_time_s"].get<double>(), j["scenario"]["parallel"]};
    };
    const auto [eager_s, eager_p] = step_s({"--framework", "torchtitan"});
    const auto [compiled_s, compiled_p] = step_s({"--framework", "torchtitan", "--torch-compile", "true"});
    CHECK(eager_p["torch_compile"] == false);   // echoed: the default under torchtitan
    CHECK(compiled_p["torch_compile"] == true);
    // torchtitan's Table 1 (8 H100s, Llama 3.1 8B): 5,762 vs 6,667 tokens/s per GPU, eager 16% slower.
    CHECK(eager_s / compiled_s > 1.05);
    CHECK(eager_s / compiled_s < 1.30);
    auto text = base;
    for (const char* a : {"--framework", "torchtitan", "--torch-compile", "true"}) text.emplace_back(a);
    CHECK(llmsim_cli(text).out.find("| torchtitan + torch.compile") != std::string::npos);
    // Megatron runs Transformer Engine's fused kernels: nothing to compile; a serving what-if neither.
    auto megatron = base;
    for (const char* a : {"--framework", "megatron", "--torch-compile", "false"}) megatron.emplace_back(a);
    const auto refused = llmsim_cli(megatron);
    CHECK(refused.rc == 2);
    CHECK(refused.out.empty());
    CHECK(refused.err.find("--torch-compile: false: expected only with parallel.framework torchtitan") !=
          std::string::npos);
    const auto serving = llmsim_cli(
        {"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--input-len", "100", "--torch-compile", "true"});
    CHECK(serving.rc == 2);
    CHECK(serving.err.find("--torch-compile: given with --input-len") != std::string::npos);
    const auto search =
        llmsim_cli({"search", "--model", "llama-3.1-8b", "--system", "dgx-h100", "--gpus", "8", "--global-batch", "16",
                    "--framework", "torchtitan", "--torch-compile", "true", "--confirm", "0"});
    REQUIRE(search.rc == 0);
    CHECK(search.out.find("framework torchtitan + torch.compile") != std::string::npos);
}

TEST_CASE("--recompute-num-layers and --activation-offload-layers set their keys; the header names them",
          "[cli][estimate]") {
    const std::vector<std::string> base = {
        "estimate", "--model",   "llama-3-70b", "--system",      "gb200-nvl72", "--gpus",         "64", "--zero",
        "3",        "--seq-len", "8192",        "--micro-batch", "2",           "--global-batch", "128"};
    auto with = [&](std::vector<std::string> extra) {
        auto a = base;
        a.insert(a.end(), extra.begin(), extra.end());
        return llmsim_cli(a);
    };
    const auto off = with({"--precision", "fp8", "--activation-offload-layers", "40"});
    REQUIRE(off.rc == 0);
    CHECK(off.out.find("none recompute | activations of 40 layers offloaded") != std::string::npos);
    const auto j = Json::parse(with({"--precision", "fp8", "--activation-offload-layers", "40", "--json"}).out);
    CHECK(j["scenario"]["training"]["activation_offload_layers"] == 40);
    CHECK(j["memory"]["offload"]["activations_offloaded_bytes"].get<double>() > 0);
    CHECK(j["breakdown_s"]["offload"].get<double>() >= 0);
    const auto rc = with({"--recompute", "full", "--recompute-num-layers", "3"});
    REQUIRE(rc.rc == 0);
    CHECK(rc.out.find("full recompute (first 3 layers of each chunk)") != std::string::npos);
    const auto bad = with({"--recompute", "full", "--activation-offload-layers", "40"});
    CHECK(bad.rc == 2);
    CHECK(bad.out.empty());
    CHECK(bad.err.find("--activation-offload-layers: 40: expected 0 with --recompute = \"full\"") != std::string::npos);
}

TEST_CASE("llmsim estimate names the memory levers it assumed for a layout that needs them",
          "[cli][estimate][levers]") {
    // NeMo 24.07's Llama-3-8B FP8 layout on 8 H100 (validation NEMO2407-11): over capacity with fp32 master
    // weights, within it with remainders (docs/memory-model.md, "Unstated memory levers").
    const std::vector<std::string> layout = {
        "estimate", "--model", "llama-3.1-8b", "--system", "dgx-h100",       "--gpus", "8",           "--cp", "2",
        "--zero",   "1",       "--seq-len",    "8192",     "--global-batch", "128",    "--precision", "fp8"};
    auto json_args = layout;
    json_args.push_back("--json");
    const auto r = llmsim_cli(json_args);
    INFO(r.err);
    REQUIRE(r.rc == 0);
    const Json j = Json::parse(r.out);
    CHECK(j["memory"]["fits"] == true);
    CHECK(j["memory"]["assumed_levers"] == Json::array({"training.master_weights: remainder"}));
    CHECK(j["scenario"]["training"]["master_weights"] == "remainder");
    CHECK(j["scenario"]["training"]["grad_precision"] == "fp32");
    const auto t = llmsim_cli(layout);
    REQUIRE(t.rc == 0);
    CHECK(t.out.find("master remainders (assumed)") != std::string::npos);
    CHECK(t.out.find("assumed to fit") != std::string::npos);
}

TEST_CASE("a scenario file is taken positionally as with -s; both at once is an error", "[cli]") {
    const auto path = scenario_path("gpt3-175b-a100-1024.json");
    for (const char* cmd : {"estimate", "memory", "flops"}) {
        const auto pos = llmsim_cli({cmd, path, "--json"});
        const auto flag = llmsim_cli({cmd, "-s", path, "--json"});
        REQUIRE(pos.rc == 0);
        CHECK(pos.out == flag.out);
    }
    const auto both = llmsim_cli({"estimate", path, "-s", path});
    CHECK(both.rc == 2);
    CHECK(both.out.empty());
    CHECK(both.err.find("--scenario") != std::string::npos);
}

TEST_CASE("Megatron's and vLLM's flag names are aliases of estimate's", "[cli]") {
    const auto megatron =
        llmsim_cli({"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--gpus", "8",
                    "--tensor-model-parallel-size", "2", "--pipeline-model-parallel-size", "2", "--seq-length", "4096",
                    "--global-batch-size", "64", "--micro-batch-size", "1", "--json"});
    const auto ours =
        llmsim_cli({"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--gpus", "8", "--tp", "2", "--pp",
                    "2", "--seq-len", "4096", "--global-batch", "64", "--micro-batch", "1", "--json"});
    REQUIRE(ours.rc == 0);
    CHECK(megatron.out == ours.out);
    const auto vllm = llmsim_cli({"estimate", "--model",        "llama-3-8b", "--system",
                                  "dgx-h100", "--input-len",    "500",        "--output-len",
                                  "100",      "--batching",     "continuous", "--requests",
                                  "200",      "--gpus",         "1",          "--tensor-parallel-size",
                                  "1",        "--max-num-seqs", "64",         "--max-num-batched-tokens",
                                  "2048",     "--json"});
    const auto mine = llmsim_cli({"estimate", "--model",      "llama-3-8b", "--system",   "dgx-h100",   "--input-len",
                                  "500",      "--output-len", "100",        "--batching", "continuous", "--requests",
                                  "200",      "--gpus",       "1",          "--tp",       "1",          "--max-batch",
                                  "64",       "--chunk",      "2048",       "--json"});
    REQUIRE(mine.rc == 0);
    CHECK(vllm.out == mine.out);
}

TEST_CASE("a mistyped command or flag is answered with the nearest names", "[cli]") {
    const auto cmd = llmsim_cli({"estimat"});
    CHECK(cmd.rc == 2);
    CHECK(cmd.out.empty());
    CHECK(cmd.err.find("'estimat': not a command; closest: estimate") != std::string::npos);
    const auto flag = llmsim_cli({"estimate", "--modle", "llama-3-8b"});
    CHECK(flag.rc == 2);
    CHECK(flag.out.empty());
    CHECK(flag.err.find("--modle: not a flag of `llmsim estimate`; closest: --model") != std::string::npos);
    // A known flag with a bad value keeps its own message.
    const auto value = llmsim_cli({"estimate", "--tp", "0"});
    CHECK(value.rc == 2);
    CHECK(value.err.find("--tp: 0: expected") != std::string::npos);
}

TEST_CASE("a table wider than 80 columns wraps its text columns, never its numbers", "[cli][table]") {
    const TableWidth width(80);
    cli::Table t({"name", "value", "note"});
    t.left(2);
    t.row(
        {"alpha", "123456", std::string(30, 'x') + " " + "a sentence that goes on well past the edge of the terminal"});
    t.row({"β-gamma", "7", "short"});
    const std::string s = t.str();
    CHECK(widest(s) <= 80);
    CHECK(s.find("123456") != std::string::npos);   // numbers whole
    CHECK(s.find("β-gamma") != std::string::npos);
    // Each row's name on its first line, the note continued under its column.
    CHECK(s.find("\nalpha ") != std::string::npos);
    CHECK(s.find("edge of the") != std::string::npos);
    // The natural width: one line per row.
    cli::set_table_width(0);
    const std::string wide = t.str();
    CHECK(std::count(wide.begin(), wide.end(), '\n') == 4);
    CHECK(widest(wide) > 80);
}

TEST_CASE("a table that cannot fit readably moves its detail column under each row; optional columns leave",
          "[cli][table]") {
    const TableWidth width(80);
    cli::Table t({"lever", "a", "b", "c", "d", "e", "f", "trade-off"});
    t.left(7);
    for (int i = 0; i < 3; ++i)
        t.row({"lever " + std::to_string(i), "1111111111", "2222222222", "3333333333", "4444444444", "5555555555",
               "6666666666", "splits weights, gradients and optimizer states; adds per-layer all-reduces on NVLink"});
    const std::string s = t.str();
    CHECK(widest(s) <= 80);
    CHECK(s.find("\n    trade-off: splits weights") != std::string::npos);
    CHECK(s.find("6666666666") != std::string::npos);

    cli::Table o({"qps", "p50", "p99", "mean", "more", "stream"});
    o.left(5).optional(1).optional(3);
    o.row({"5", std::string(30, '1'), std::string(30, '2'), std::string(30, '3'), "4", "steady"});
    const std::string so = o.str();
    CHECK(so.find(std::string(30, '1')) == std::string::npos);   // the first optional column left
    CHECK(so.find(std::string(30, '2')) != std::string::npos);
    CHECK(so.find(std::string(30, '3')) == std::string::npos);   // and the second, still too wide
    CHECK(so.find("(p50, mean left out to fit 80 columns; --wide shows them)") != std::string::npos);
}

TEST_CASE("a clipped column keeps one line per row, cut with '...'; --wide shows it whole", "[cli][table]") {
    const TableWidth width(80);
    cli::Table t({"system", "gpus", "description"});
    t.clip(2);
    const std::string desc = "NVIDIA DGX H100 (8x H100 SXM5, 4x NVSwitch gen3 with NVLink SHARP, 8x 400 Gb/s NDR)";
    t.row({"dgx-h100", "8", desc});
    t.row({"x", "1", "short"});
    const std::string s = t.str();
    CHECK(widest(s) <= 80);
    CHECK(std::count(s.begin(), s.end(), '\n') == 4);   // header, rule, two rows
    CHECK(s.find("NVIDIA DGX H100 (8x") != std::string::npos);
    CHECK(s.find("...\n") != std::string::npos);
    cli::set_table_width(0);
    CHECK(t.str().find(desc) != std::string::npos);
}

TEST_CASE("wrap_lines breaks at spaces and cuts a long word after a separator", "[cli][table]") {
    CHECK(cli::wrap_lines("one two three", 7) == std::vector<std::string>{"one two", "three"});
    CHECK(cli::wrap_lines("output_tokens_per_s_per_gpu", 16) ==
          std::vector<std::string>{"output_tokens_", "per_s_per_gpu"});
    CHECK(cli::wrap_lines("a\nb", 80) == std::vector<std::string>{"a", "b"});
}

TEST_CASE("text output fits 80 columns: tables, headers, notes and every --help; --wide keeps tables whole",
          "[cli][table]") {
    const std::vector<std::vector<std::string>> commands = {
        {"hw", "list"},
        {"hw", "show", "h100-sxm"},
        {"model", "show", "deepseek-v3"},
        {"estimate", scenario_path("llama3-70b-h100-64.json")},
        {"estimate", scenario_path("rlhf-opt13b-a100-64.json")},
        {"explain", scenario_path("llama3-70b-h100-64.json")},
        {"explain", scenario_path("llama31-70b-chat-slo.json")},
        {"plan", "--compute", "1e23", "--system", "dgx-h100", "--gpus", "1024"},
        {"search", "--model", "gpt3-175b", "--system", "dgx-a100-80gb", "--gpus", "512", "--seq-len", "2048",
         "--global-batch", "1536", "--top-k", "3"},
        {"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--input-len", "1000", "--output-len", "250",
         "--qps-sweep", "5,20", "--requests", "200", "--slo-ttft-p99", "0.1"},
        {"validate", (fs::path(LLMSIM_SOURCE_DIR) / "validation" / "inference.json").string()},
        // The README's other commands: a text Gantt, a scaling table, worked calculations, a drill's questions
        // and solutions, an nccl-tests log's table and a calibration report (long lines wrap under their text).
        {"estimate", scenario_path("llama3-70b-h100-64.json"), "--timeline"},
        {"scaling", "--model", "gpt3-175b", "--system", "dgx-h100", "--seq-len", "2048", "--global-batch", "1536",
         "--gpus", "64,128"},
        {"calc", "allreduce", "--params", "175B", "--ranks", "1024", "--GBps", "100"},
        {"calc", "gemm", "--gpu", "h100-sxm", "--m", "16", "--n", "28672", "--k", "8192"},
        {"calc", "speculative", "--alpha", "0.8", "--k", "4"},
        {"drill", "--topic", "kv_cache,bubble", "--count", "5", "--seed", "7", "--answers", "1;2;3;4;5"},
        {"calibrate", "import-nccl-tests",
         (fs::path(LLMSIM_SOURCE_DIR) / "tests" / "data" / "nccl-tests" / "01_h100x16_2node_gcp-a3mega_all_reduce.txt")
             .string()},
        {"calibrate", "fit", (fs::path(LLMSIM_SOURCE_DIR) / "tests" / "data" / "calibrate" / "raw_small.json").string(),
         "-o", (fs::temp_directory_path() / "llmsim-cli.json").string()},
    };
    for (const auto& args : commands) {
        INFO(args[0] << " " << args[1]);
        const auto r = llmsim_cli(args);
        CHECK(r.rc == 0);
        CHECK(widest(r.out) <= 80);
    }
    for (const auto& c : cli::commands()) {
        INFO(c.name);
        const auto r = llmsim_cli({std::string(c.name), "--help"});
        // An option's own name and type may pass the edge (CLI11 prints them on one line); descriptions wrap.
        std::size_t at = 0, over = 0;
        while (at < r.out.size()) {
            const std::size_t end = std::min(r.out.find('\n', at), r.out.size());
            const std::string line = r.out.substr(at, end - at);
            if (cols(line) > 80 && !line.starts_with("  -")) ++over;
            at = end + 1;
        }
        CHECK(over == 0);
    }
    const auto wide = llmsim_cli({"hw", "list", "--wide"});
    CHECK(wide.rc == 0);
    CHECK(widest(wide.out) > 80);
}

TEST_CASE("fit_text: a line past the edge wraps under its text, past its indent and a short label", "[cli][table]") {
    // "    why: " hangs its continuation under the first word after the label; a line without an indent of its
    // own continues two spaces in, as wrap_text does; lines that fit are kept as they are.
    const std::string why = "    why: aaaa bbbb cccc dddd eeee ffff";   // 38 columns
    CHECK(cli::fit_text(why + "\n", 30) == "    why: aaaa bbbb cccc dddd\n         eeee ffff\n");
    CHECK(cli::fit_text("aaaa bbbb cccc dddd eeee\n", 12) == "aaaa bbbb\n  cccc dddd\n  eeee\n");
    CHECK(cli::fit_text("short\n  also short\n", 20) == "short\n  also short\n");
    CHECK(cli::fit_text("no newline at the end", 80) == "no newline at the end");
}

TEST_CASE("the overlap flags search prints in a layout re-run it from estimate's flags", "[cli][estimate][search]") {
    // search answers 'tp4 pp2x41 ... (overlap tp+grad+param)': from flags, estimate had no --tp-comm-overlap
    // and gave 4.4 min for search's 4.0.
    const std::vector<std::string> layout = {
        "--model",        "llama-3-70b", "--system",  "dgx-h100",  "--gpus",        "8", "--seq-len",   "4096",
        "--global-batch", "512",         "--tp",      "4",         "--pp",          "2", "--vp",        "41",
        "--zero",         "0",           "--offload", "optimizer", "--micro-batch", "1", "--recompute", "none",
        "--sp",           "true",        "--json"};
    std::vector<std::string> e = {"estimate"};
    e.insert(e.end(), layout.begin(), layout.end());
    e.insert(e.end() - 1,
             {"--tp-comm-overlap", "true", "--overlap-grad-reduce", "true", "--overlap-param-gather", "true"});
    const auto est = llmsim_cli(e);
    REQUIRE(est.rc == 0);
    const auto j = Json::parse(est.out);
    CHECK(j["scenario"]["parallel"]["tp_comm_overlap"] == true);
    const auto off = [&] {
        auto x = layout;
        x.insert(x.begin(), "estimate");
        x.insert(x.end() - 1, {"--tp-comm-overlap", "false"});
        return Json::parse(llmsim_cli(x).out);
    }();
    CHECK(off["step_time_s"].get<double>() > j["step_time_s"].get<double>());
    // A serving scenario has no such settings: refused by name.
    const auto serving = llmsim_cli(
        {"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--qps", "2", "--tp-comm-overlap", "true"});
    CHECK(serving.rc == 2);
    CHECK(serving.err.find("--tp-comm-overlap: given with") != std::string::npos);
}
