// Bad scenarios (../shared/interface/scenario.md, "Errors"): run through the built binary, each must
// exit with code 2, print nothing on stdout, and name on stderr the JSON pointer (or flag), the bad
// value and what was expected. Also parse_scenario in the library: ConfigError listing every problem.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hardware_db/errors.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/scenario.hpp"

#include "tests/cli_runner.hpp"

using namespace llmsim;
namespace fs = std::filesystem;

namespace {

using test::Run;

const fs::path& temp_dir() {
    static const fs::path dir = test::temp_dir("errors");
    return dir;
}

Run run_llmsim(const std::vector<std::string>& args) { return test::run_llmsim(args, "errors"); }

fs::path write_scenario(const std::string& name, const std::string& text) {
    const fs::path p = temp_dir() / (name + ".json");
    std::ofstream(p) << text;
    return p;
}

// Runs `llmsim memory --scenario FILE` (and `flops`) on `text`; both must fail the same way.
void expect_rejected(const std::string& name, const std::string& text, const std::vector<std::string>& needles) {
    const fs::path file = write_scenario(name, text);
    for (const std::string cmd : {"memory", "flops"}) {
        const Run r = run_llmsim({cmd, "--scenario", file.string(), "--json"});
        INFO("case " << name << " (" << cmd << ")\nstderr:\n" << r.err << "stdout:\n" << r.out);
        CHECK(r.rc == 2);
        CHECK(r.out.empty());
        CHECK_FALSE(r.err.empty());
        for (const auto& n : needles) {
            INFO("stderr should contain: " << n);
            CHECK(r.err.find(n) != std::string::npos);
        }
    }
}

void expect_flags_rejected(const std::vector<std::string>& args, const std::vector<std::string>& needles) {
    const Run r = run_llmsim(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    INFO("llmsim " << joined << "\nstderr:\n" << r.err << "stdout:\n" << r.out);
    CHECK(r.rc == 2);
    CHECK(r.out.empty());
    for (const auto& n : needles) {
        INFO("stderr should contain: " << n);
        CHECK(r.err.find(n) != std::string::npos);
    }
}

const std::string kBase = R"("model": "llama-3-8b", "system": "dgx-h100", "gpus": 8)";

}   // namespace

TEST_CASE("a valid scenario is accepted (the harness itself can tell success from failure)", "[errors][cli]") {
    const fs::path file = write_scenario("valid", "{" + kBase + R"(, "training": {"global_batch": 64}})");
    const Run r = run_llmsim({"memory", "--scenario", file.string(), "--json"});
    INFO(r.err);
    CHECK(r.rc == 0);
    CHECK(r.err.empty());
    CHECK_NOTHROW(Json::parse(r.out));
}

TEST_CASE("unknown keys name their JSON pointer and the closest known key", "[errors][cli]") {
    expect_rejected("unknown_top", "{" + kBase + R"(, "gpu": 8})",
                    {"/gpu", "unknown key \"gpu\"", "did you mean \"gpus\""});
    expect_rejected("unknown_nested", "{" + kBase + R"(, "training": {"seq_length": 2048}})",
                    {"/training/seq_length", "unknown key", "did you mean \"seq_len\""});
    expect_rejected("unknown_parallel", "{" + kBase + R"(, "parallel": {"tp": 1, "zero_stage": 1}})",
                    {"/parallel/zero_stage", "did you mean \"zero\""});
    expect_rejected("unknown_model_key",
                    R"({"model": {"layers": 2, "hidden": 64, "heads": 4, "vocab": 100, "n_layers": 2},
                        "system": "dgx-h100", "gpus": 1})",
                    {"/model/n_layers", "unknown key", "did you mean \"layers\""});
}

TEST_CASE("wrong types name the pointer, the value and the type expected", "[errors][cli]") {
    expect_rejected("wrong_type_gpus", R"({"model": "llama-3-8b", "system": "dgx-h100", "gpus": "eight"})",
                    {"/gpus", "\"eight\"", "expected an integer"});
    expect_rejected("wrong_type_sp", "{" + kBase + R"(, "parallel": {"sequence_parallel": "yes"}})",
                    {"/parallel/sequence_parallel", "\"yes\"", "true or false"});
    expect_rejected("wrong_type_parallel", "{" + kBase + R"(, "parallel": [8]})", {"/parallel", "[8]", "an object"});
}

TEST_CASE("non-positive sizes are rejected with their allowed range", "[errors][cli]") {
    expect_rejected("zero_micro_batch", "{" + kBase + R"(, "training": {"micro_batch": 0}})",
                    {"/training/micro_batch", ": 0:", "an integer in [1, 16777216]"});
    expect_rejected("zero_tp", "{" + kBase + R"(, "parallel": {"tp": 0}})", {"/parallel/tp", ": 0:", "[1,"});
    expect_rejected("negative_seq", "{" + kBase + R"(, "training": {"seq_len": -4096}})",
                    {"/training/seq_len", "-4096", "[1, 16777216]"});
    expect_rejected("zero_layers",
                    R"({"model": {"layers": 0, "hidden": 1024, "heads": 8, "vocab": 1000}, "system": "dgx-h100",
                        "gpus": 8})",
                    {"/model/layers", ": 0:", "[1,"});
    expect_rejected("zero_stage_4", "{" + kBase + R"(, "parallel": {"zero": 4}})",
                    {"/parallel/zero", ": 4:", "[0, 3]"});
    // DeepSpeed's pipeline engine refuses ZeRO-2/3 and Megatron offers ZeRO-1 with pipelines.
    expect_rejected("zero2_with_pp", "{" + kBase + R"(, "parallel": {"pp": 2, "zero": 2}})",
                    {"/parallel/zero", ": 2:", "at most 1 with pp > 1", "torchtitan"});
    expect_rejected("zero3_with_pp_deepspeed",
                    "{" + kBase + R"(, "parallel": {"pp": 2, "zero": 3, "framework": "deepspeed"}})",
                    {"/parallel/zero", ": 3:"});
    expect_rejected("unknown_framework", "{" + kBase + R"(, "parallel": {"framework": "colossal"}})",
                    {"/parallel/framework", "megatron", "deepspeed", "torchtitan", "llm-foundry"});
    // Composer (llm-foundry) trains with FSDP only: no pipeline stages, whatever the ZeRO stage.
    expect_rejected("llm_foundry_pp",
                    "{" + kBase + R"(, "parallel": {"pp": 2, "zero": 1, "framework": "llm-foundry"}})",
                    {"/parallel/pp", ": 2:", "1 under parallel.framework \"llm-foundry\""});
    // torch.compile is a choice only where the layer is PyTorch modules; Megatron runs fused kernels.
    expect_rejected("torch_compile_no_framework", "{" + kBase + R"(, "parallel": {"torch_compile": true}})",
                    {"/parallel/torch_compile", ": true:", "torchtitan, deepspeed or llm-foundry", "none is named"});
    expect_rejected("torch_compile_megatron",
                    "{" + kBase + R"(, "parallel": {"framework": "megatron", "torch_compile": false}})",
                    {"/parallel/torch_compile", ": false:", "(here \"megatron\""});
    expect_rejected("torch_compile_type",
                    "{" + kBase + R"(, "parallel": {"framework": "torchtitan", "torch_compile": "max-autotune"}})",
                    {"/parallel/torch_compile", "\"max-autotune\"", "true or false"});
}

TEST_CASE("activation offload and partial recompute where Megatron-Core refuses them", "[errors][cli]") {
    expect_rejected("offload_pp",
                    "{" + kBase + R"(, "parallel": {"pp": 2}, "training": {"activation_offload_layers": 4}})",
                    {"/training/activation_offload_layers", ": 4:", "pipeline parallelism (pp = 2)"});
    expect_rejected("offload_recompute",
                    "{" + kBase + R"(, "training": {"recompute": "full", "activation_offload_layers": 4}})",
                    {"/training/activation_offload_layers", ": 4:", "without recomputation"});
    expect_rejected("recompute_layers_selective",
                    "{" + kBase + R"(, "training": {"recompute": "selective", "recompute_num_layers": 2}})",
                    {"/training/recompute_num_layers", ": 2:", "\"full\""});
}

TEST_CASE("optimizer precision only where the frameworks offer it", "[errors][cli]") {
    expect_rejected("remainder_fp16",
                    "{" + kBase + R"(, "training": {"precision": "fp16", "master_weights": "remainder"}})",
                    {"/training/master_weights", "\"remainder\"", "bf16 or fp8 training"});
    expect_rejected(
        "remainder_fp8_params",
        "{" + kBase + R"(, "training": {"precision": "fp8", "fp8_params": true, "master_weights": "remainder"}})",
        {"/training/master_weights", "fp8_params"});
    expect_rejected("no_master_fp32", "{" + kBase + R"(, "training": {"precision": "fp32", "master_weights": "none"}})",
                    {"/training/master_weights", "\"none\"", "no separate master"});
    expect_rejected("offload_bf16_moments",
                    "{" + kBase + R"(, "training": {"offload": "optimizer", "optimizer_state_precision": "bf16"}})",
                    {"/training/optimizer_state_precision", "\"bf16\"", "CPU Adam"});
    expect_rejected("moments_int8", "{" + kBase + R"(, "training": {"optimizer_state_precision": "int8"}})",
                    {"/training/optimizer_state_precision", "\"int8\"", "bf16"});
}

TEST_CASE("torchtitan composes FSDP with pipeline parallelism: ZeRO-3 with pp is accepted", "[errors][cli]") {
    const fs::path file = write_scenario(
        "zero3_pp_torchtitan",
        "{" + kBase +
            R"(, "parallel": {"pp": 2, "zero": 3, "framework": "torchtitan"}, "training": {"global_batch": 8}})");
    const Run r = run_llmsim({"memory", "--scenario", file.string(), "--json"});
    INFO(r.err);
    CHECK(r.rc == 0);
}

TEST_CASE("model shape: heads must be divisible by kv_heads", "[errors][cli]") {
    expect_rejected("kv_heads",
                    R"({"model": {"layers": 4, "hidden": 1024, "heads": 32, "kv_heads": 5, "vocab": 1000},
                        "system": "dgx-h100", "gpus": 8})",
                    {"/model/kv_heads", ": 5:", "a divisor of heads (32)"});
}

TEST_CASE("tensor parallelism must divide heads, kv_heads (or be a multiple) and ffn_hidden", "[errors][cli]") {
    expect_rejected("tp_heads", R"({"model": "llama-3-8b", "system": "dgx-h100", "gpus": 24, "parallel": {"tp": 3}})",
                    {"/parallel/tp", ": 3:", "a divisor of heads (32)"});
    expect_rejected("tp_kv_heads",
                    R"({"model": {"layers": 4, "hidden": 768, "heads": 12, "kv_heads": 4, "ffn_hidden": 3072,
                        "vocab": 1000}, "system": "dgx-h100", "gpus": 6, "parallel": {"tp": 6}})",
                    {"/parallel/tp", ": 6:", "kv_heads (4)"});
    expect_rejected("tp_ffn",
                    R"({"model": {"layers": 4, "hidden": 1024, "heads": 8, "ffn_hidden": 1004, "vocab": 1000},
                        "system": "dgx-h100", "gpus": 8, "parallel": {"tp": 8}})",
                    {"/parallel/tp", ": 8:", "a divisor of ffn_hidden (1004)"});
}

TEST_CASE("pipeline stages cannot exceed layers", "[errors][cli]") {
    expect_rejected("pp_layers", R"({"model": "gpt3-125m", "system": "dgx-h100", "gpus": 16, "parallel": {"pp": 16}})",
                    {"/parallel/pp", ": 16:", "at most layers (12)"});
}

TEST_CASE("the product of parallel sizes must equal gpus, naming the numbers", "[errors][cli]") {
    expect_rejected(
        "product_dp",
        R"({"model": "llama-3-8b", "system": "dgx-h100", "gpus": 32, "parallel": {"tp": 8, "pp": 2, "dp": 4}})",
        {"/parallel/dp", ": 4:", "8·2·1 = 16", "32"});
    expect_rejected("product_gpus",
                    R"({"model": "llama-3-8b", "system": "dgx-h100", "gpus": 12, "parallel": {"tp": 8}})",
                    {"/gpus", ": 12:", "a multiple of tp·pp·cp = 8·1·1 = 8"});
}

TEST_CASE("global batch must be a multiple of micro_batch·dp", "[errors][cli]") {
    expect_rejected("global_batch", "{" + kBase + R"(, "training": {"global_batch": 100, "micro_batch": 1}})",
                    {"/training/global_batch", ": 100:", "micro_batch·dp = 1·8 = 8"});
}

TEST_CASE("unknown model and system names suggest the closest names", "[errors][cli]") {
    expect_rejected("unknown_model", R"({"model": "llama3-8b", "system": "dgx-h100", "gpus": 8})",
                    {"/model", "\"llama3-8b\"", "known model name", "closest: llama-3-8b"});
    expect_rejected("unknown_system", R"({"model": "llama-3-8b", "system": "dgx-h10", "gpus": 8})",
                    {"/system", "\"dgx-h10\"", "known system name", "closest: dgx-h100"});
    expect_rejected("unknown_preset", R"({"model": "llama-3-8b", "system": {"preset": "dgx-a10"}, "gpus": 8})",
                    {"/system/preset", "\"dgx-a10\"", "closest: dgx-a100"});
}

TEST_CASE("malformed JSON names the file, line and column; a missing file names the file", "[errors][cli]") {
    // Line 3, column 13 is the second comma of `  "gpus": 8,,`.
    expect_rejected("malformed", "{\n  \"model\": \"llama-3-8b\",\n  \"gpus\": 8,,\n}\n",
                    {"malformed.json:3:13", "malformed JSON"});
    const Run r = run_llmsim({"memory", "--scenario", (temp_dir() / "does-not-exist.json").string()});
    INFO(r.err);
    CHECK(r.rc == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("does-not-exist.json") != std::string::npos);
    CHECK(r.err.find("cannot open") != std::string::npos);
}

TEST_CASE("bad enum values list the choices", "[errors][cli]") {
    expect_rejected("recompute_some", "{" + kBase + R"(, "training": {"recompute": "some"}})",
                    {"/training/recompute", "\"some\"", "\"none\" | \"selective\" | \"full\""});
    expect_rejected("schedule_bad", "{" + kBase + R"(, "parallel": {"schedule": "1F1B"}})",
                    {"/parallel/schedule", "\"1F1B\"", "\"gpipe\" | \"1f1b\""});
}

TEST_CASE("fp8 training on a GPU without fp8 tensor cores (A100) is rejected", "[errors][cli]") {
    expect_rejected(
        "fp8_a100",
        R"({"model": "llama-3-8b", "system": "dgx-a100-80gb", "gpus": 8, "training": {"precision": "fp8"}})",
        {"/training/precision", "\"fp8\"", "a100-sxm-80gb"});
}

TEST_CASE("expert parallelism needs a MoE model", "[errors][cli]") {
    expect_rejected("ep_dense", "{" + kBase + R"(, "parallel": {"ep": 2}})",
                    {"/parallel/ep", ": 2:", "1 for a dense model"});
}

TEST_CASE("schedule and vp must agree; training and inference are exclusive", "[errors][cli]") {
    expect_rejected("interleaved_vp1", "{" + kBase + R"(, "parallel": {"schedule": "interleaved"}})",
                    {"/parallel/vp", ": 1:", "vp > 1"});
    expect_rejected("training_and_inference", "{" + kBase + R"(, "training": {}, "inference": {}})",
                    {"/inference", "/training"});
}

TEST_CASE("a /parallel key the scenario's kind does not read is refused, not ignored", "[errors][cli]") {
    // The training framework and the overlap flags mean nothing to a serving iteration.
    expect_rejected("serving_framework",
                    "{" + kBase +
                        R"(, "parallel": {"framework": "megatron"}, "inference": {"batching": "continuous",
                        "input_len": 128, "output_len": 16, "requests": 10}})",
                    {"/parallel/framework", "no such key in a serving scenario", "training, search"});
    expect_rejected("serving_torch_compile",
                    "{" + kBase + R"(, "parallel": {"torch_compile": true}, "inference": {"batch": 4}})",
                    {"/parallel/torch_compile", "static-batching inference scenario"});
    expect_rejected("static_overlap",
                    "{" + kBase + R"(, "parallel": {"tp_comm_overlap": true}, "inference": {"batch": 4}})",
                    {"/parallel/tp_comm_overlap", "static-batching inference scenario"});
    // Keys every kind reads stay accepted.
    const fs::path ok = write_scenario(
        "serving_tp",
        "{" + kBase + R"(, "parallel": {"tp": 2}, "inference": {"batch": 4, "input_len": 64, "output_len": 8}})");
    CHECK(run_llmsim({"memory", "--scenario", ok.string()}).rc == 0);
}

TEST_CASE("flag errors name the flag: --tp 3 with 8 GPUs, --recompute some, --model typo, --tp 0", "[errors][cli]") {
    expect_flags_rejected({"memory", "--model", "llama-3-8b", "--system", "dgx-h100", "--gpus", "8", "--tp", "3"},
                          {"--gpus", ": 8:", "tp·pp·cp = 3·1·1 = 3"});
    expect_flags_rejected({"memory", "--model", "llama-3-8b", "--system", "dgx-h100", "--gpus", "24", "--tp", "3"},
                          {"--tp", ": 3:", "a divisor of heads (32)"});
    expect_flags_rejected({"memory", "--model", "llama-3-8b", "--system", "dgx-h100", "--recompute", "some"},
                          {"--recompute", "\"some\"", "\"selective\""});
    expect_flags_rejected({"flops", "--model", "llama3-8b", "--system", "dgx-h100"},
                          {"--model", "\"llama3-8b\"", "closest: llama-3-8b"});
    expect_flags_rejected({"memory", "--model", "llama-3-8b", "--system", "dgx-h100", "--tp", "0"}, {"--tp", "0"});
    // A flag on top of a scenario file: the flag is named, not the file's pointer.
    const fs::path file =
        write_scenario("flag_over_file", R"({"model": "llama-3-8b", "system": "dgx-h100", "gpus": 64})");
    expect_flags_rejected({"memory", "--scenario", file.string(), "--pp", "64"},
                          {"--pp", ": 64:", "at most layers (32)"});
}

// ---------------------------------------------------------------------------------------------
// In the library
// ---------------------------------------------------------------------------------------------
namespace {
std::vector<std::string> problems_of(const Json& j) {
    try {
        parse_scenario(j);
    } catch (const ConfigError& e) {
        return e.problems();
    }
    return {};
}
bool any_line(const std::vector<std::string>& lines, const std::string& a, const std::string& b) {
    for (const auto& l : lines)
        if (l.find(a) != std::string::npos && l.find(b) != std::string::npos) return true;
    return false;
}
}   // namespace

TEST_CASE("parse_scenario throws ConfigError listing every problem at once, one line each", "[errors][library]") {
    const Json j = Json::parse(R"({
        "model": "llama-3-8b", "system": "dgx-h100", "gpus": 8, "colour": "blue",
        "parallel": {"tp": "two", "zero": 7},
        "training": {"recompute": "some", "micro_batch": 0, "seq_lenght": 4096}
    })");
    const auto lines = problems_of(j);
    INFO([&] {
        std::string s;
        for (const auto& l : lines) s += l + "\n";
        return s;
    }());
    CHECK(lines.size() == 6);
    CHECK(any_line(lines, "/colour", "unknown key"));
    CHECK(any_line(lines, "/parallel/tp", "\"two\""));
    CHECK(any_line(lines, "/parallel/zero", "[0, 3]"));
    CHECK(any_line(lines, "/training/recompute", "\"some\""));
    CHECK(any_line(lines, "/training/micro_batch", "[1, 16777216]"));
    CHECK(any_line(lines, "/training/seq_lenght", "did you mean \"seq_len\""));
    CHECK_THROWS_AS(parse_scenario(j), ConfigError);
}

TEST_CASE("parse_scenario reports every layout problem of a well-formed scenario together", "[errors][library]") {
    const Json j = Json::parse(R"({"model": "llama-3-8b", "system": "dgx-h100", "gpus": 48,
        "parallel": {"tp": 3, "pp": 64, "dp": 1, "ep": 2}})");
    const auto lines = problems_of(j);
    CHECK(any_line(lines, "/parallel/tp", "heads (32)"));
    CHECK(any_line(lines, "/parallel/pp", "at most layers (32)"));
    CHECK(any_line(lines, "/parallel/dp", "must equal gpus"));
    CHECK(any_line(lines, "/parallel/ep", "dense model"));
}

TEST_CASE("parse_scenario: defaults without a training object (dp from gpus, global batch micro_batch·dp)",
          "[errors][library]") {
    const Scenario s = parse_scenario(Json::parse(R"({"model": "llama-3-8b", "system": "dgx-h100", "gpus": 16,
        "parallel": {"tp": 2}})"));
    CHECK(s.parallel.dp == 8);
    CHECK(s.training.global_batch == 8);
    CHECK(s.training.micro_batch == 1);
    CHECK(s.training.seq_len == 2048);
    CHECK(s.parallel.schedule == find_schedule("1f1b"));
    CHECK(s.training.grad_precision == Precision::fp32);
    const Scenario v = parse_scenario(Json::parse(R"({"model": "llama-3-8b", "system": "dgx-h100", "gpus": 16,
        "parallel": {"pp": 2, "vp": 4}, "training": {"global_batch": 64}})"));
    CHECK(v.parallel.schedule == find_schedule("interleaved"));
}

TEST_CASE("pp·vp may reach layers + 2 (embedding and loss chunks), not beyond", "[errors][library]") {
    // Llama 3.1 405B: 126 layers on pp 16 x vp 8 = 128 model chunks, the layout Megatron-Bridge runs with
    // account_for_embedding/loss_in_pipeline_split.
    const Scenario ok = parse_scenario(Json::parse(R"({"model": "llama-3.1-405b", "system": "gb200-nvl72",
        "gpus": 256, "parallel": {"tp": 4, "pp": 16, "vp": 8}, "training": {"global_batch": 64}})"));
    CHECK(ok.parallel.vp == 8);
    try {
        (void)parse_scenario(Json::parse(R"({"model": "llama-3.1-405b", "system": "gb200-nvl72",
            "gpus": 256, "parallel": {"tp": 4, "pp": 16, "vp": 9}, "training": {"global_batch": 64}})"));
        FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
        REQUIRE_FALSE(e.problems().empty());
        CHECK(e.problems()[0].find("/parallel/vp: 9") != std::string::npos);
        CHECK(e.problems()[0].find("layers + 2 (128:") != std::string::npos);
    }
}

TEST_CASE("finetune and rlhf keys that would do nothing are refused with their pointer (issue 34)", "[scenario]") {
    auto problems = [](const Json& training) {
        try {
            (void)parse_scenario(
                Json{{"model", "gpt3-1.3b"}, {"system", "dgx-h100"}, {"gpus", 8}, {"training", training}});
        } catch (const ConfigError& e) {
            std::string all;
            for (const auto& l : e.problems()) all += l + "\n";
            return all;
        }
        return std::string();
    };
    // A LoRA target named twice was counted twice (four times for q, k, v, o given twice each).
    CHECK_THAT(problems({{"finetune", {{"method", "lora"}, {"targets", {"q", "v", "q"}}}}}),
               Catch::Contains("/training/finetune/targets/2: \"q\": expected each target once") &&
                   Catch::Contains("already at /training/finetune/targets/0"));
    // gpt3-1.3b has a GeLU MLP: a gate adapter trained nothing.
    CHECK_THAT(problems({{"finetune", {{"method", "lora"}, {"targets", {"q", "gate"}}}}}),
               Catch::Contains("/training/finetune/targets/1: \"gate\": expected a projection the model has"));
    // Adapter keys without an adapter method.
    CHECK_THAT(problems({{"finetune", {{"method", "none"}, {"rank", 8}}}}),
               Catch::Contains("/training/finetune/rank: 8: expected no such key with method \"none\""));
    CHECK_THAT(problems({{"finetune", {{"rank", 8}}}}), Catch::Contains("/training/finetune/rank"));
    // A disabled PPO iteration with its models.
    CHECK_THAT(problems({{"rlhf", {{"enabled", false}, {"critic", "gpt3-125m"}}}}),
               Catch::Contains("/training/rlhf/critic") && Catch::Contains("\"enabled\": false"));
    CHECK(problems({{"finetune", {{"method", "lora"}, {"targets", {"q", "up", "down"}}}}}).empty());
    CHECK(problems({{"rlhf", {{"enabled", false}}}}).empty());
}

TEST_CASE("a search block on an inference scenario does nothing and is refused", "[errors][cli]") {
    expect_rejected("search_on_serving",
                    "{" + kBase + R"(, "inference": {"batching": "continuous", "qps": 4}, "search": {"top_k": 3}})",
                    {"/search", "no search block in an inference scenario"});
    expect_rejected("search_on_static", "{" + kBase + R"(, "inference": {"batch": 4}, "search": {}})",
                    {"/search", "no search block"});
}
