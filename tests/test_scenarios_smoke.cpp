// Every example scenario (scenarios/*.json) runs through the binary (`llmsim memory` and
// `llmsim flops`, --json: exit 0, valid JSON); every case of validation/training.json and
// inference.json parses through parse_scenario and gets a memory estimate.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cost_models/flops.hpp"
#include "cost_models/memory.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/scenario.hpp"

#include "tests/cli_runner.hpp"

using namespace llmsim;
namespace fs = std::filesystem;

namespace {

using test::Run;

Run run_llmsim(const std::vector<std::string>& args) { return test::run_llmsim(args, "smoke"); }

std::vector<fs::path> scenario_files() {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(fs::path(LLMSIM_SOURCE_DIR) / "scenarios"))
        if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
}

bool finite_positive(double x) { return std::isfinite(x) && x > 0; }

}   // namespace

TEST_CASE("every scenarios/*.json runs through `llmsim memory` and `llmsim flops` with valid JSON", "[smoke][cli]") {
    const auto files = scenario_files();
    REQUIRE_FALSE(files.empty());
    for (const auto& f : files) {
        INFO("scenario " << f.filename().string());
        const Json j = parse_json_file(f.string());
        const bool inference = j.contains("inference");
        REQUIRE_NOTHROW(load_scenario_file(f.string()));

        const Run mem = run_llmsim({"memory", "--scenario", f.string(), "--json"});
        INFO("memory stderr: " << mem.err);
        CHECK(mem.rc == 0);
        Json mj;
        REQUIRE_NOTHROW(mj = Json::parse(mem.out));
        REQUIRE(mj.contains("memory"));
        CHECK(mj["memory"]["total_bytes"].get<double>() > 0);
        CHECK(mj["memory"]["capacity_bytes"].get<double>() > 0);
        CHECK(mj["memory"]["fits"].is_boolean());
        CHECK(mj.contains("scenario"));

        // The text form runs too.
        CHECK(run_llmsim({"memory", "--scenario", f.string()}).rc == 0);

        if (inference) continue;   // `flops` is a training quantity
        const Run fl = run_llmsim({"flops", "--scenario", f.string(), "--json"});
        INFO("flops stderr: " << fl.err);
        CHECK(fl.rc == 0);
        Json fj;
        REQUIRE_NOTHROW(fj = Json::parse(fl.out));
        REQUIRE(fj.contains("flops"));
        CHECK(fj["flops"]["model_flops_per_step"].get<double>() > 0);
        CHECK(fj["flops"]["hardware_flops_per_step"].get<double>() >=
              fj["flops"]["model_flops_per_step"].get<double>());
    }
}

TEST_CASE("the example GPT-3 175B scenario: Megatron's layout fits 80 GB with selective recompute", "[smoke]") {
    const Scenario s = load_scenario_file(std::string(LLMSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-a100-1024.json");
    CHECK(s.parallel.dp == 16);
    const auto m = training_memory(s.training_job());
    CHECK(m.fits);
    // 174.6B / (tp 8 · pp 8) = 2.73B params on a middle stage GPU; 6 + 12/16 bytes each (ZeRO-1).
    CHECK(m.weights_bytes + m.gradients_bytes + m.optimizer_bytes == Approx(m.params_on_gpu * (6.0 + 12.0 / 16)));
}

namespace {
void each_case(const std::string& file, bool inference) {
    const Json doc = parse_json_file(std::string(LLMSIM_VALIDATION_DIR) + "/" + file);
    REQUIRE(doc.contains("cases"));
    REQUIRE(doc["cases"].size() > 0);
    for (const auto& c : doc["cases"]) {
        const std::string id = c.value("id", std::string("?"));
        INFO(file << " case " << id);
        Scenario s;
        try {
            s = parse_scenario(c.at("scenario"));
        } catch (const ConfigError& e) {
            FAIL_CHECK("does not parse: " << e.what());
            continue;
        }
        CHECK(s.is_inference == inference);
        CHECK(s.parallel.world() == s.gpus);
        if (inference) {
            const auto m = inference_memory(s.model, s.system, s.parallel, s.inference);
            CHECK(finite_positive(m.weights_bytes));
            CHECK(finite_positive(m.kv_cache_bytes));
            CHECK(finite_positive(m.total_bytes));
            CHECK(m.total_bytes > m.weights_bytes);
        } else {
            const auto m = training_memory(s.training_job());
            CHECK(finite_positive(m.weights_bytes));
            CHECK(finite_positive(m.activations_bytes));
            CHECK(finite_positive(m.total_bytes));
            CHECK(m.total_bytes == Approx(m.weights_bytes + m.gradients_bytes + m.optimizer_bytes +
                                          m.activations_bytes + m.other_bytes));
            CHECK(m.stages.size() == static_cast<std::size_t>(s.parallel.pp));
            const auto f = training_flops(s.model, s.training);
            CHECK(finite_positive(f.model_flops_per_step));
            CHECK(f.hardware_flops_per_step >= f.model_flops_per_step);
        }
    }
}
}   // namespace

TEST_CASE("every case of validation/training.json parses and gets a memory and FLOPs estimate", "[smoke][validation]") {
    each_case("training.json", false);
}

TEST_CASE("every case of validation/inference.json parses and gets a memory estimate", "[smoke][validation]") {
    each_case("inference.json", true);
}

TEST_CASE("every case of validation/serving.json parses and gets a memory estimate", "[smoke][validation]") {
    each_case("serving.json", true);
}
