// The H100 measured on 2026-11-22 (hardware_db/profiles/h100-sxm5-80gb-2026-11-22: llmsim-probe's raw
// sweep, PyTorch's layer and decode timings from calibrate/probe/layer_truth.py) and the profile fitted
// from it (hardware_db/data/profiles/h100-sxm5-80gb-2026-11-22.json, built in).
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>

#include "app/calibration_check.hpp"
#include "calibrate/profile.hpp"
#include "calibrate/raw.hpp"
#include "cli/calibration_truth.hpp"
#include "cost_models/inference.hpp"
#include "cost_models/roofline.hpp"
#include "cost_models/step_time.hpp"
#include "hardware_db/database.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/scenario.hpp"

using namespace llmsim;

namespace {
const std::string kName = "h100-sxm5-80gb-2026-11-22";
const std::string kDir = std::string(LLMSIM_SOURCE_DIR) + "/hardware_db/profiles/" + kName;

// The training layer time `estimate` reports (layer_ops), for a scenario on the built-in profile. The
// measured layer ran alone for a few milliseconds, so the scenario says sustained_fraction 1 (the
// training-run factor; docs/calibration.md).
LayerCost estimated_layer(const std::string& model, bool with_profile) {
    Json system = {{"preset", "dgx-h100"}, {"gpu", {{"efficiency", {{"sustained_fraction", 1.0}}}}}};
    if (with_profile) system["profile"] = kName;
    const Json sc = {{"name", "one layer"},
                     {"model", model},
                     {"system", system},
                     {"gpus", 1},
                     {"parallel", {{"tp", 1}, {"pp", 1}, {"dp", 1}}},
                     {"training",
                      {{"seq_len", 8192},
                       {"micro_batch", 1},
                       {"global_batch", 1},
                       {"precision", "bf16"},
                       {"recompute", "none"},
                       {"flash_attention", true}}}};
    const Scenario s = parse_scenario(sc);
    return layer_cost(s.training_job(), false);
}

// calibrate check of a truth file of this H100 on dgx-h100, without and with the built-in profile.
app::CalibrationCheck check_h100(const app::LayerTruth& truth) {
    const Database& db = Database::builtin();
    std::map<std::string, ModelSpec> models{{"llama-3-8b", db.model("llama-3-8b")},
                                            {"llama-3-70b", db.model("llama-3-70b")}};
    Problems pr;
    const SystemSpec base = db.resolve_system(Json("dgx-h100"), "/system", pr);
    const SystemSpec cal = db.resolve_system(Json{{"preset", "dgx-h100"}, {"profile", kName}}, "/system", pr);
    REQUIRE(pr.empty());
    return app::check_against_truth(truth, models, base, cal);
}
}   // namespace

TEST_CASE("the built-in H100 profile is the fit of the committed raw measurements") {
    const auto raw = calibrate::read_raw(kDir + "/probe-raw.json");
    CHECK(raw.gpu_name() == "NVIDIA H100 80GB HBM3");
    calibrate::CalibrateInputs in;
    in.raw = &raw;
    in.nominal = calibrate::nominal_from_system(Database::builtin().system("dgx-h100"));
    in.today = "2026-11-22";
    const Json fitted = calibrate::profile_json(calibrate::calibrate(in));
    const Json* builtin = Database::builtin().builtin_profile(kName);
    REQUIRE(builtin != nullptr);
    const Json& a = fitted.at("system").at("gpu").at("efficiency");
    const Json& b = builtin->at("system").at("gpu").at("efficiency");
    for (const char* k : {"gemm_k_half", "hbm_efficiency", "kernel_launch_us"})
        CHECK(a.at(k).get<double>() == Approx(b.at(k).get<double>()).epsilon(1e-9));
    for (const char* p : {"bf16", "fp16", "fp8", "tf32"})
        CHECK(a.at("gemm_max").at(p).get<double>() == Approx(b.at("gemm_max").at(p).get<double>()).epsilon(1e-9));
    CHECK(a.at("gemm_k_half_by").at("fp8").get<double>() ==
          Approx(b.at("gemm_k_half_by").at("fp8").get<double>()).epsilon(1e-9));
    // What the probe measured on this GPU, in the fitted constants: bf16 GEMMs at 0.75 of the dense
    // peak (Stas Bekman's H100 table: 0.80 with torch), copy/triad at 0.85 of 3.35 TB/s.
    CHECK(b.at("gemm_max").at("bf16").get<double>() == Approx(0.753).margin(0.005));
    CHECK(b.at("hbm_efficiency").get<double>() == Approx(0.851).margin(0.005));
    // FP8's own depth: its K sweep fits 275, where bf16's 34 scaled by the peak would give 69; only a
    // precision faster than 16-bit gets one (fp16 and tf32 keep the 16-bit depth).
    CHECK(b.at("gemm_k_half_by").at("fp8").get<double>() == Approx(274.8).margin(0.5));
    CHECK(b.at("gemm_k_half_by").size() == 1);
    Problems pr;
    const SystemSpec cal =
        Database::builtin().resolve_system(Json{{"preset", "dgx-h100"}, {"profile", kName}}, "/system", pr);
    REQUIRE(pr.empty());
    CHECK(gemm_k_half(cal.gpu, Precision::fp8) == Approx(274.8).margin(0.5));
    CHECK(gemm_k_half(cal.gpu, Precision::bf16) == Approx(34.46).margin(0.01));
    CHECK(gemm_k_half(cal.gpu, Precision::int8) == Approx(2 * 34.46).margin(0.05));   // no int8 fit: scaled
    CHECK(cal.gpu.provenance.at("efficiency.gemm_k_half_by.fp8").kind == "calibration");
}

TEST_CASE("estimate with the H100 profile reproduces the measured layer time within 10%") {
    const app::LayerTruth truth = cli::read_layer_truth_file(kDir + "/torch-truth.json");
    int checked = 0;
    for (const auto& l : truth.layers) {
        if (l.mode != "compiled") continue;   // elementwise work fused, as Transformer Engine fuses it
        const LayerCost cal = estimated_layer(l.model, true);
        const double predicted = cal.fwd_s() + cal.bwd_s();
        INFO(l.model << ": measured " << l.fwd_bwd_s << " s, predicted " << predicted << " s");
        CHECK(std::abs(predicted / l.fwd_bwd_s - 1.0) < 0.10);
        CHECK(std::abs(cal.fwd_s() / l.fwd_s - 1.0) < 0.10);
        // The profile moves the prediction toward the measurement (its GEMMs are slower than the preset's).
        const LayerCost unc = estimated_layer(l.model, false);
        CHECK(std::abs(predicted / l.fwd_bwd_s - 1.0) < std::abs((unc.fwd_s() + unc.bwd_s()) / l.fwd_bwd_s - 1.0));
        ++checked;
    }
    CHECK(checked == 2);   // Llama-3-8B and Llama-3-70B
}

TEST_CASE("a scenario's own keys win over the profile's, the profile's over the preset's") {
    Problems pr;
    const SystemSpec s = Database::builtin().resolve_system(
        Json{{"preset", "dgx-h100"},
             {"profile", kName},
             {"pcie_GBps", 40.0},
             {"gpu", {{"efficiency", {{"sustained_fraction", 1.0}, {"hbm_efficiency", 0.5}}}}}},
        "/system", pr);
    REQUIRE(pr.empty());
    CHECK(s.gpu.efficiency.sustained_fraction == 1.0);                       // scenario (the profile does not set it)
    CHECK(s.gpu.efficiency.hbm_efficiency == 0.5);                           // scenario over the profile's 0.851
    CHECK(s.pcie_GBps == 40.0);                                              // scenario over the profile's 55.1
    CHECK(s.gpu.gemm_max(Precision::bf16) == Approx(0.7562).margin(1e-4));   // profile over the preset's 0.80
    CHECK(s.gpu.provenance.at("efficiency.hbm_efficiency").kind == "override");
    CHECK(s.gpu.provenance.at("efficiency.gemm_max.bf16").kind == "calibration");
}

TEST_CASE("calibrate check on the committed H100 measurements") {
    const app::LayerTruth truth = cli::read_layer_truth_file(kDir + "/torch-truth.json");
    const auto r = check_h100(truth);
    REQUIRE(truth.gemms.size() == 24);
    REQUIRE(truth.decode.size() == 18);
    std::map<std::string, app::CheckSummary> by_kind;
    for (const auto& s : r.summary) by_kind[s.kind] = s;
    // The GEMMs of both layers (forward, dgrad, wgrad): mean error 5.1% with the profile, 9.5% without.
    CHECK(by_kind.at("gemm").mean_abs_err_calibrated < 0.07);
    CHECK(by_kind.at("gemm").mean_abs_err_calibrated < by_kind.at("gemm").mean_abs_err_uncalibrated);
    // Decode steps at batch 1..256 (CUDA graph, fused elementwise): within 15% each.
    for (const auto& row : r.rows)
        if (row.kind == "decode") {
            INFO(row.label);
            CHECK(std::abs(row.err_calibrated()) < 0.15);
        }
}

TEST_CASE("the measured per-kernel time in a CUDA graph is the serving model's constant") {
    // 200 tiny adds in a graph: ~1 us each (launch alone); the decode chains' fitted fixed time per
    // kernel (2.8 us, docs/serving.md) is larger, as it includes each kernel's ramp and tail.
    const Json t = parse_json_file(kDir + "/torch-truth.json");
    const double tiny_us = t.at("graph_kernels").at(0).at("per_kernel_us").get<double>();
    CHECK(tiny_us == Approx(1.03).margin(0.05));
    CHECK(kGraphKernelFixed_s > tiny_us * 1e-6);
    CHECK(kGraphKernelFixed_s == Approx(2.8e-6));
    // The launch share of it is the tiny kernels' time; launched one by one, a kernel pays the
    // accelerator's back-to-back launch time instead (3.64 us in this run's probe).
    CHECK(kGraphLaunch_s == Approx(tiny_us * 1e-6).epsilon(0.05));
    AcceleratorSpec a;
    a.efficiency.kernel_launch_us = 3.64;
    CHECK(kernel_fixed_s(a, true) == Approx(2.8e-6));
    CHECK(kernel_fixed_s(a, false) == Approx((2.8 - 1.03 + 3.64) * 1e-6));
}

TEST_CASE("a layer_truth file with a bad value is refused naming its pointer") {
    Json t = parse_json_file(kDir + "/torch-truth.json");
    t["gemms"][3]["ms"] = -1;
    try {
        (void)cli::read_layer_truth(t, "x.json");
        FAIL("accepted a negative time");
    } catch (const ConfigError& e) {
        CHECK(std::string(e.what()).find("x.json#/gemms/3/ms: -1: expected a positive number") != std::string::npos);
    }
    CHECK_THROWS_AS(cli::read_layer_truth(Json::object(), "y.json"), ConfigError);
}

TEST_CASE("the built-in H200 profile is the fit of the committed raw measurements (2026-11-26)") {
    const std::string name = "h200-sxm-141gb-2026-11-26";
    const auto raw =
        calibrate::read_raw(std::string(LLMSIM_SOURCE_DIR) + "/hardware_db/profiles/" + name + "/probe-raw.json");
    CHECK(raw.gpu_name() == "NVIDIA H200");
    CHECK(calibrate::guess_system_preset(raw.gpu_name()) == "hgx-h200");
    calibrate::CalibrateInputs in;
    in.raw = &raw;
    in.nominal = calibrate::nominal_from_system(Database::builtin().system("hgx-h200"));
    in.today = "2026-11-26";
    const Json fitted = calibrate::profile_json(calibrate::calibrate(in));
    const Json* builtin = Database::builtin().builtin_profile(name);
    REQUIRE(builtin != nullptr);
    CHECK(builtin->at("measured_on").at("gpu") == "NVIDIA H200");
    const Json& a = fitted.at("system").at("gpu").at("efficiency");
    const Json& b = builtin->at("system").at("gpu").at("efficiency");
    for (const char* k : {"gemm_k_half", "hbm_efficiency", "kernel_launch_us"})
        CHECK(a.at(k).get<double>() == Approx(b.at(k).get<double>()).epsilon(1e-9));
    for (const char* p : {"bf16", "fp16", "fp8", "tf32"})
        CHECK(a.at("gemm_max").at(p).get<double>() == Approx(b.at("gemm_max").at(p).get<double>()).epsilon(1e-9));
    // bf16 GEMMs at 0.74 of the dense peak, copy/triad at 0.84 of 4.8 TB/s.
    CHECK(b.at("gemm_max").at("bf16").get<double>() == Approx(0.736).margin(0.005));
    CHECK(b.at("hbm_efficiency").get<double>() == Approx(0.845).margin(0.005));
    // calibrate check on its own truth file, on the H200's system: the profile brings GEMMs and layers
    // closer to PyTorch (docs/calibration.md: 9.5% -> 3.7%, 10.6% -> 5.4%).
    const app::LayerTruth truth = cli::read_layer_truth_file(std::string(LLMSIM_SOURCE_DIR) + "/hardware_db/profiles/" +
                                                             name + "/torch-truth.json");
    Problems pr;
    const SystemSpec base = Database::builtin().resolve_system(Json("hgx-h200"), "", pr);
    const SystemSpec cal = Database::builtin().resolve_system(Json{{"preset", "hgx-h200"}, {"profile", name}}, "", pr);
    REQUIRE(pr.empty());
    std::map<std::string, ModelSpec> models;
    for (const auto& g : truth.gemms) models.emplace(g.model, Database::builtin().model(g.model));
    for (const auto& l : truth.layers) models.emplace(l.model, Database::builtin().model(l.model));
    for (const auto& d : truth.decode) models.emplace(d.model, Database::builtin().model(d.model));
    const auto r = app::check_against_truth(truth, models, base, cal);
    for (const auto& s : r.summary) {
        INFO(s.kind);
        if (s.kind == "gemm" || s.kind == "layer") CHECK(s.mean_abs_err_calibrated < 0.6 * s.mean_abs_err_uncalibrated);
        CHECK(s.mean_abs_err_calibrated < 0.10);
    }
}

TEST_CASE("calibrate check prices each truth layer as it ran: eager PyTorch ops or torch.compile's fused ones") {
    const app::LayerTruth truth = cli::read_layer_truth_file(kDir + "/torch-truth.json");
    const auto r = check_h100(truth);
    std::map<std::string, double> predicted;
    for (const auto& row : r.rows)
        if (row.kind == "layer") predicted[row.label] = row.uncalibrated_s;
    // The eager layer pays its RMSNorm, RoPE and SwiGLU as separate kernels with fp32 intermediates; the
    // compiled one fuses them (measured: 7.58 against 6.91 ms forward for 8B, 24.8 against 23.0 for 70B).
    for (const char* model : {"llama-3-8b", "llama-3-70b"}) {
        INFO(model);
        const double eager = predicted.at(fmt::format("{} layer fwd (eager, 8192 tokens)", model));
        const double compiled = predicted.at(fmt::format("{} layer fwd (compiled, 8192 tokens)", model));
        CHECK(eager > 1.05 * compiled);
    }
    // Priced so, the layers read within 6% calibrated (the eager rows read 11-15% fast when they were
    // priced as the fused layer).
    for (const auto& s : r.summary)
        if (s.kind == "layer") CHECK(s.mean_abs_err_calibrated < 0.06);
    // A mode layer_truth.py does not write is refused, naming its pointer.
    Json t = parse_json_file(kDir + "/torch-truth.json");
    t["layers"][1]["mode"] = "jit";
    try {
        (void)cli::read_layer_truth(t, "x.json");
        FAIL("accepted an unknown mode");
    } catch (const ConfigError& e) {
        CHECK(std::string(e.what()).find("x.json#/layers/1/mode: \"jit\": expected \"eager\" or \"compiled\"") !=
              std::string::npos);
    }
}
