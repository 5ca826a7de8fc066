// A calibration profile is a system override: applying one changes `estimate` the way its numbers
// say, and its provenance is marked.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include "calibrate/profile.hpp"
#include "calibrate/raw.hpp"
#include "cost_models/collectives.hpp"
#include "cost_models/step_time.hpp"
#include "hardware_db/database.hpp"
#include "hardware_db/scenario.hpp"

using namespace llmsim;

namespace {

std::string write_temp(const Json& j, const std::string& name) {
    const std::string path = std::string("/tmp/llmsim_test_") + name + ".json";
    std::ofstream(path) << j.dump(2);
    return path;
}

Json scenario_json(const Json& system) {
    return {{"model", "llama-3-8b"},
            {"system", system},
            {"gpus", 16},
            {"parallel", {{"tp", 8}, {"dp", 2}, {"sequence_parallel", true}, {"zero", 1}}},
            {"training", {{"seq_len", 4096}, {"micro_batch", 1}, {"global_batch", 32}, {"precision", "bf16"}}}};
}

}   // namespace

TEST_CASE("a profile with slower GEMMs and NVLink slows the step accordingly", "[calibrate][profile]") {
    const double base = estimate_step(parse_scenario(scenario_json("dgx-h100")).training_job()).step_time_s;
    // Half the GEMM efficiency: compute-dominated step gets markedly slower.
    const Json slow_gemm = {{"llmsim_profile", 1},
                            {"measured_on", {{"gpu", "test"}}},
                            {"system", {{"gpu", {{"efficiency", {{"gemm_max", {{"bf16", 0.4}}}}}}}}},
                            {"provenance", {{"gpu.efficiency.gemm_max.bf16", "synthetic test fit"}}}};
    const auto p1 = write_temp(slow_gemm, "slow_gemm");
    const auto s1 = parse_scenario(scenario_json({{"preset", "dgx-h100"}, {"profile", p1}}));
    CHECK(s1.system.gpu.gemm_max(Precision::bf16) == Approx(0.4));
    CHECK(s1.system.gpu.provenance.at("efficiency.gemm_max.bf16").kind == "calibration");
    const double t1 = estimate_step(s1.training_job()).step_time_s;
    CHECK(t1 > 1.3 * base);
    // Slower NVLink: exposed tensor-parallel communication grows; nothing else may get faster.
    const Json slow_link = {{"llmsim_profile", 1}, {"system", {{"intra_node_efficiency", 0.2}, {"nvls", false}}}};
    const auto p2 = write_temp(slow_link, "slow_link");
    const auto s2 = parse_scenario(scenario_json({{"preset", "dgx-h100"}, {"profile", p2}}));
    CHECK(s2.system.intra_node_efficiency == Approx(0.2));
    CHECK(s2.system.provenance.at("intra_node_efficiency").kind == "calibration");
    const auto e0 = estimate_step(parse_scenario(scenario_json("dgx-h100")).training_job());
    const auto e2 = estimate_step(s2.training_job());
    // TP communication scales as one of its calls does on the two systems.
    const double bytes = 4096.0 * 4096 * 2;   // tokens x hidden x 2 bytes
    const auto g = place_group(8, 1, 8);
    const double call0 =
        collective_time(parse_scenario(scenario_json("dgx-h100")).system, Collective::reduce_scatter, bytes, g).time_s;
    const double call2 = collective_time(s2.system, Collective::reduce_scatter, bytes, g).time_s;
    CHECK(call2 / call0 > 3.0);
    CHECK(e2.breakdown.tp_comm / e0.breakdown.tp_comm == Approx(call2 / call0).epsilon(0.03));
    CHECK(e2.step_time_s > e0.step_time_s);
    // A faster-than-nominal measurement speeds it up.
    const Json fast_gemm = {{"llmsim_profile", 1},
                            {"system", {{"gpu", {{"efficiency", {{"gemm_max", {{"bf16", 0.95}}}}}}}}}};
    const auto p3 = write_temp(fast_gemm, "fast_gemm");
    CHECK(estimate_step(parse_scenario(scenario_json({{"preset", "dgx-h100"}, {"profile", p3}})).training_job())
              .step_time_s < base);
    std::remove(p1.c_str());
    std::remove(p2.c_str());
    std::remove(p3.c_str());
}

TEST_CASE("a profile fitted from the probe's raw file round-trips into the system", "[calibrate][profile]") {
    const auto raw = calibrate::read_raw(std::string(LLMSIM_TEST_DATA_DIR) + "/calibrate/raw_small.json");
    calibrate::CalibrateInputs in;
    in.raw = &raw;
    in.nominal = calibrate::nominal_from_system(Database::builtin().system("dgx-h100"));
    in.today = "2026-11-22";
    const auto cal = calibrate::calibrate(in);
    const Json prof = calibrate::profile_json(cal);
    REQUIRE(prof.contains("system"));
    const auto path = write_temp(prof, "roundtrip");
    Problems pr;
    const auto sys = Database::builtin().resolve_system(Json{{"preset", "dgx-h100"}, {"profile", path}}, "/system", pr);
    REQUIRE(pr.empty());
    // Every fitted key lands in the resolved system with calibration provenance.
    for (const auto& [key, value] : cal.keys) {
        if (key == "gpu.efficiency.gemm_max.bf16") {
            CHECK(sys.gpu.gemm_max(Precision::bf16) == Approx(value.get<double>()));
            CHECK(sys.gpu.provenance.at("efficiency.gemm_max.bf16").kind == "calibration");
        }
        if (key == "intra_node_efficiency") CHECK(sys.intra_node_efficiency == Approx(value.get<double>()));
        if (key == "gpu.efficiency.hbm_efficiency")
            CHECK(sys.gpu.efficiency.hbm_efficiency == Approx(value.get<double>()));
    }
    CHECK(sys.profile == path);
    std::remove(path.c_str());
}
