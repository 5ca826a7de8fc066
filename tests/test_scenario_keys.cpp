// The scenario key table (hardware_db/scenario_keys.cpp) against the readers that use it: every key is
// accepted with its example value, every object rejects an unknown sibling naming its JSON pointer,
// literal defaults are the values the reader fills in, and every key of the project contract
// (../shared/interface/scenario.md) is in the table and not marked as an llmsim addition.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "hardware_db/errors.hpp"
#include "hardware_db/scenario.hpp"
#include "hardware_db/scenario_keys.hpp"
#include "report/search_request.hpp"
#include "tests/cli_runner.hpp"

using namespace llmsim;
namespace fs = std::filesystem;

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

const fs::path& temp_dir() {
    static const fs::path dir = test::temp_dir("keys");
    return dir;
}

// A calibration profile for /system/profile (the format `llmsim calibrate fit` writes).
std::string profile_path() {
    static const std::string p = [] {
        const fs::path f = temp_dir() / "profile.json";
        std::ofstream(f) << R"({"llmsim_profile": 1, "system": {"nvls_GBps": 400}})";
        return f.string();
    }();
    return p;
}

// The smallest valid scenario around the object that holds `k`, with the keys `k` depends on.
Json context_for(const ScenarioKey& k) {
    Json j = {{"model", "llama-3-8b"}, {"system", "dgx-h100"}, {"gpus", 8}};
    const std::string& o = k.object;
    const std::string p = k.pointer();
    if (starts_with(o, "/model")) {
        j["model"] = {{"layers", 4}, {"hidden", 256}, {"heads", 4}, {"vocab", 1000}};
        if (o == "/model/moe") j["model"]["moe"] = {{"experts", 8}, {"top_k", 2}};
        if (o == "/model/mla") j["model"]["mla"] = {{"kv_lora_rank", 32}, {"qk_rope_head_dim", 16}};
    } else if (starts_with(o, "/system")) {
        j["system"] = {{"preset", "dgx-h100"}};
        if (starts_with(o, "/system/gpu")) j["system"]["gpu"] = {{"preset", "h100-sxm"}};
    } else if (starts_with(o, "/inference") || p == "/inference") {
        const bool serving = (k.kinds & kServingKind) && !(k.kinds & kInferenceKind);
        j["inference"] = {{"batching", serving ? "continuous" : "static"}};
        if (starts_with(o, "/inference/input_len") || starts_with(o, "/inference/output_len")) {
            j["inference"]["batching"] = "continuous";
            j["inference"][o.substr(std::string("/inference/").size())] = {{"mean", 100}};
        }
        if (o == "/inference/engine") j["inference"]["engine"] = {{"name", "vllm"}};
        if (o == "/inference/speculative")
            j["inference"]["speculative"] =
                k.key == "acceptance_length" ? Json{{"method", "mtp"}} : Json{{"draft_model", "llama-3.2-1b"}};
    } else if (starts_with(o, "/training")) {
        j["training"] = Json::object();
    } else if (o == "/search") {
        j["training"] = {{"global_batch", 64}};
        j["search"] = Json::object();
    }
    // Keys that need another key to be valid.
    if (p == "/parallel/vp") {
        j["parallel"] = {{"pp", 2}};
        j["training"] = {{"global_batch", 8}};   // interleaved: micro-batches a multiple of pp
    }
    if (p == "/parallel/ep") j["model"] = "mixtral-8x7b";
    // How an expert-parallel deployment balances: an MoE model with ep > 1.
    if (p == "/inference/expert_parallel" || o == "/inference/expert_parallel") {
        j["model"] = "mixtral-8x7b";
        j["parallel"] = {{"ep", 8}};
    }
    // A torus runs its collectives over ICI links: it needs their bandwidth and count.
    if (p == "/system/torus_dims") j["system"]["preset"] = "tpu-v4";
    if (p == "/parallel/torch_compile") j["parallel"]["framework"] = "torchtitan";
    if (p == "/training/recompute_num_layers") j["training"]["recompute"] = "full";
    if (p == "/inference/arrival_cv") j["inference"]["qps"] = 5;   // a rate whose gaps it spreads
    if (p == "/inference/window_s") j["inference"]["qps"] = 5;     // a stream in time to cut
    // Shared prefixes: a continuous stream, and both required counts beside the key tried.
    if (p == "/inference/shared_prefix" || o == "/inference/shared_prefix") {
        j["inference"]["batching"] = "continuous";
        if (o == "/inference/shared_prefix") j["inference"]["shared_prefix"] = {{"groups", 4}, {"tokens", 64}};
    }
    // A rate profile: a rate to shape, and the required levels beside the key tried.
    if (p == "/inference/rate_profile" || o == "/inference/rate_profile") {
        j["inference"]["qps"] = 5;
        if (o == "/inference/rate_profile") j["inference"]["rate_profile"] = {{"levels", {1, 2}}};
    }
    // Autoscaling: a stream to follow, and the required target and storage bandwidth beside the key tried.
    if (p == "/inference/autoscale" || o == "/inference/autoscale") {
        j["inference"]["qps"] = 5;
        if (o == "/inference/autoscale") j["inference"]["autoscale"] = {{"target_outstanding", 8}, {"storage_GBps", 2}};
    }
    // A request class: a stream, the required share beside the key tried, and the scenario's SLO a class's
    // own replaces.
    if (o == "/inference/classes/NAME") {
        j["inference"]["batching"] = "continuous";
        j["inference"]["classes"] = {{"NAME", {{"share", 1}}}};
        j["inference"]["slo"] = {{"ttft_p99_s", 1}};
    }
    // A disaggregation's keys other than its required pool size need that size.
    if (k.object == "/inference/disaggregation" && k.key != "prefill_gpus")
        j["inference"]["disaggregation"] = {{"prefill_gpus", 2}};
    // Adapter keys need an adapter method; a disabled PPO iteration takes no other key.
    if (k.object == "/training/finetune" && k.key != "method") j["training"]["finetune"] = {{"method", "lora"}};
    if (p == "/training/fp8_params") j["training"]["precision"] = "fp8";
    // A length's stdev needs a family that spreads (the default, fixed, refuses one).
    if ((k.object == "/inference/input_len" || k.object == "/inference/output_len") && k.key == "stdev")
        j[Json::json_pointer(k.object)] = {{"mean", 100}, {"dist", "normal"}};
    if (p == "/model/preset") j["model"] = Json::object();   // the zoo model, not the small one
    return j;
}

Json example_of(const ScenarioKey& k) {
    if (k.pointer() == "/system/profile") return profile_path();
    // The example names the repository's trace, relative to the repository (the tests' base is a temp folder).
    if (k.pointer() == "/inference/arrivals")
        return std::string(LLMSIM_SOURCE_DIR) + "/" + Json::parse(k.example).get<std::string>();
    return Json::parse(k.example);
}

// Parses `j` with the reader of the object: `llmsim search`'s for /search, else parse_scenario.
void parse(const Json& j, const std::string& object) {
    if (object == "/search")
        (void)search::parse_search_request(j, temp_dir().string());
    else
        (void)parse_scenario(j, temp_dir().string());
}

std::vector<std::string> problems_of(const Json& j, const std::string& object) {
    try {
        parse(j, object);
    } catch (const ConfigError& e) {
        return e.problems();
    }
    return {};
}

}   // namespace

TEST_CASE("every key of the table is accepted with its example value", "[scenario][keys]") {
    REQUIRE(scenario_keys().size() > 150);
    for (const auto& k : scenario_keys()) {
        Json j = context_for(k);
        j[Json::json_pointer(k.pointer())] = example_of(k);
        INFO(k.pointer() << " = " << k.example << "\nscenario: " << j.dump());
        const auto problems = problems_of(j, k.object);
        std::string joined;
        for (const auto& l : problems) joined += l + "\n";
        INFO("problems:\n" << joined);
        CHECK(problems.empty());
    }
}

TEST_CASE("the bounds of the table are the ones enforced", "[scenario][keys]") {
    int checked = 0;
    for (const auto& k : scenario_keys()) {
        std::vector<Json> outside;
        if (k.type == KeyType::integer) {
            outside.push_back(Json(k.imin - 1));
            if (k.imax < INT64_MAX) outside.push_back(Json(k.imax + 1));
        } else if (k.type == KeyType::number) {
            outside.push_back(Json(k.min_inclusive ? k.min - std::max(1e-9, std::abs(k.min) * 1e-6) : k.min));
            if (k.max < 1e300) outside.push_back(Json(k.max * (1 + 1e-6)));
        } else if (k.type == KeyType::choice) {
            outside.push_back(Json("zz_not_a_choice"));
        }
        for (const auto& v : outside) {
            Json j = context_for(k);
            j[Json::json_pointer(k.pointer())] = v;
            const auto problems = problems_of(j, k.object);
            INFO(k.pointer() << " = " << v.dump() << "\nscenario: " << j.dump());
            bool named = false;
            for (const auto& l : problems) named = named || starts_with(l, k.pointer() + ": ");
            CHECK(named);
            ++checked;
        }
    }
    CHECK(checked > 200);
}

TEST_CASE("every object of the table rejects an unknown sibling naming its JSON pointer", "[scenario][keys]") {
    std::set<std::string> seen;
    for (const auto& k : scenario_keys()) {
        if (!seen.insert(k.object).second) continue;
        Json j = context_for(k);
        j[Json::json_pointer(k.pointer())] = example_of(k);
        const std::string unknown = k.object + "/zz_unknown";
        j[Json::json_pointer(unknown)] = 1;
        const auto problems = problems_of(j, k.object);
        INFO(unknown << "\nscenario: " << j.dump());
        bool named = false;
        for (const auto& l : problems) named = named || starts_with(l, unknown + ": unknown key \"zz_unknown\"");
        CHECK(named);
    }
    CHECK(seen.size() == scenario_objects().size());
}

TEST_CASE("literal defaults are the values the reader fills in", "[scenario][keys]") {
    // Objects whose resolved values are all echoed by to_json(Scenario).
    const std::set<std::string> echoed{
        "", "/parallel", "/training", "/training/rlhf", "/inference", "/inference/speculative", "/model", "/model/moe"};
    int checked = 0;
    for (const auto& k : scenario_keys()) {
        if (k.default_json.empty() || !echoed.count(k.object)) continue;
        Json j = context_for(k);
        if (k.object == "/training/rlhf") j["training"]["rlhf"] = Json::object();
        INFO(k.pointer() << " default " << k.default_json << "\nscenario: " << j.dump());
        const Json echo = to_json(parse_scenario(j));
        const Json::json_pointer ptr(k.pointer());
        REQUIRE(echo.contains(ptr));
        CHECK(echo[ptr] == Json::parse(k.default_json));
        ++checked;
    }
    CHECK(checked >= 40);
}

TEST_CASE("a key the reader reads but the table lacks is a programming error", "[scenario][keys]") {
    Problems pr;
    const Json obj = {{"tp", 2}};
    KeyReader r(obj, "/parallel", pr, "/parallel");
    CHECK(r.int_key("tp") == 2);
    CHECK_THROWS_AS(r.spec("not_in_table"), std::logic_error);
    r.get("not_in_table");
    CHECK_THROWS_AS(r.finish(), std::logic_error);
    // A documented key the reader did not read (it does not apply) is refused, naming the reference.
    Problems pr2;
    const Json spec = {{"method", "mtp"}, {"acceptance_length", 2}, {"draft_model", "llama-3.2-1b"}};
    Json j = {{"model", "llama-3-8b"}, {"system", "dgx-h100"}, {"gpus", 1}, {"inference", {{"speculative", spec}}}};
    const auto problems = problems_of(j, "");
    REQUIRE(problems.size() == 1);
    CHECK(problems[0] ==
          "/inference/speculative/draft_model: \"llama-3.2-1b\": expected it only where it applies "
          "(docs/scenario-reference.md: /inference/speculative/draft_model)");
}

TEST_CASE("every key of the scenario contract is in the table", "[scenario][keys]") {
    // ../shared/interface/scenario.md, every key it names (input and serving sections).
    const char* contract[] = {
        "/name", "/model", "/system", "/gpus", "/parallel", "/training", "/inference",
        // model object
        "/model/layers", "/model/hidden", "/model/heads", "/model/kv_heads", "/model/head_dim", "/model/ffn_hidden",
        "/model/vocab", "/model/mlp", "/model/tied_embeddings", "/model/moe", "/model/moe/experts", "/model/moe/top_k",
        "/model/moe/expert_ffn_hidden", "/model/moe/shared_experts", "/model/moe/dense_layers",
        // system object
        "/system/gpu", "/system/gpus_per_node", "/system/preset", "/system/inter_node_GBps", "/system/intra_node_GBps",
        // parallel
        "/parallel/tp", "/parallel/pp", "/parallel/dp", "/parallel/cp", "/parallel/ep", "/parallel/vp",
        "/parallel/sequence_parallel", "/parallel/zero", "/parallel/schedule",
        // training
        "/training/seq_len", "/training/micro_batch", "/training/global_batch", "/training/precision",
        "/training/recompute", "/training/flash_attention", "/training/optimizer", "/training/offload",
        // inference and serving
        "/inference/batch", "/inference/input_len", "/inference/output_len", "/inference/weight_precision",
        "/inference/kv_precision", "/inference/batching", "/inference/requests", "/inference/qps",
        "/inference/max_batch", "/inference/max_batch_tokens", "/inference/prefix_cache_hit", "/inference/speculative",
        "/inference/slo", "/inference/seed", "/inference/input_len/mean", "/inference/input_len/dist",
        "/inference/input_len/stdev", "/inference/input_len/min", "/inference/input_len/max",
        "/inference/output_len/mean", "/inference/output_len/dist", "/inference/output_len/stdev",
        "/inference/output_len/min", "/inference/output_len/max", "/inference/speculative/draft_model",
        "/inference/speculative/tokens", "/inference/speculative/acceptance", "/inference/speculative/method",
        "/inference/speculative/acceptance_length", "/inference/slo/ttft_p99_s", "/inference/slo/tpot_p99_s"};
    for (const std::string p : contract) {
        INFO(p);
        const auto slash = p.rfind('/');
        const ScenarioKey* k = nullptr;
        CHECK_NOTHROW(k = &scenario_key(p.substr(0, slash), p.substr(slash + 1)));
        if (k) CHECK(k->contract);
    }
    // The contract's choices are the table's.
    CHECK(scenario_key("/training", "recompute").choices == std::vector<std::string>{"none", "selective", "full"});
    CHECK(scenario_key("/training", "precision").choices == std::vector<std::string>{"fp32", "fp16", "bf16", "fp8"});
    CHECK(scenario_key("/training", "offload").choices ==
          std::vector<std::string>{"none", "optimizer", "optimizer+params"});
    CHECK(scenario_key("/parallel", "schedule").choices ==
          std::vector<std::string>{"gpipe", "1f1b", "interleaved", "zero-bubble"});
    CHECK(scenario_key("/model", "mlp").choices == std::vector<std::string>{"gelu", "swiglu"});
    CHECK(scenario_key("/inference", "batching").choices == std::vector<std::string>{"static", "continuous"});
    CHECK(scenario_key("/inference/input_len", "dist").choices ==
          std::vector<std::string>{"fixed", "normal", "uniform", "exponential", "lognormal"});
    CHECK(scenario_key("/inference/speculative", "method").choices ==
          std::vector<std::string>{"draft", "mtp", "eagle", "ngram"});
    CHECK(scenario_key("/parallel", "zero").imin == 0);
    CHECK(scenario_key("/parallel", "zero").imax == 3);
    CHECK(scenario_key("/inference", "requests").default_json == "1000");
}

TEST_CASE("the reference lists every key once, with its bounds", "[scenario][keys]") {
    const std::string md = scenario_reference_markdown();
    for (const auto& k : scenario_keys()) {
        INFO(k.pointer());
        CHECK(md.find("| `" + k.key + "`") != std::string::npos);
    }
    CHECK(
        md.find(
            "| `tp` | integer |  | `1` | `[1, 1048576]` | training, inference, serving, search | tensor parallel |") !=
        std::string::npos);
    const Json j = scenario_reference_json();
    REQUIRE(j["keys"].size() == scenario_keys().size());
    CHECK(j["keys"][0]["pointer"] == "/name");
}
