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
        CHECK(top.out.find(std::string(c.summary)) != std::string::npos);
        const auto h = llmsim_cli({name, "--help"});
        CHECK(h.rc == 0);
        CHECK(h.err.empty());
        CHECK(h.out.find(std::string(c.summary)) != std::string::npos);
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
    CHECK(bad.err.find("--activation-offload-layers: 40: expected 0 with training.recompute = \"full\"") !=
          std::string::npos);
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
