// `llmsim calibrate check`: llmsim's predictions against what a GPU measured with PyTorch
// (calibrate/probe/layer_truth.py): each GEMM of a Llama layer, the layer's forward and backward, and a
// decode step at batch 1..256, priced on a system without and with a calibration profile. Kernels in
// those measurements run in isolation (a few milliseconds each), so the predictions use the
// isolated-kernel model: sustained_fraction, the training-run factor, is set to 1 (docs/calibration.md).
#pragma once

#include <string>
#include <vector>

#include <map>

#include "hardware_db/specs.hpp"

namespace llmsim::app {

struct CheckRow {
    std::string kind;    // "gemm" | "layer" | "decode"
    std::string label;   // e.g. "llama-3-8b mlp_fc1 fwd 8192x28672x4096"
    double measured_s = 0;
    double uncalibrated_s = 0;
    double calibrated_s = 0;
    double err_uncalibrated() const { return uncalibrated_s / measured_s - 1.0; }
    double err_calibrated() const { return calibrated_s / measured_s - 1.0; }
};

struct CheckSummary {
    std::string kind;
    int rows = 0;
    double mean_abs_err_uncalibrated = 0, mean_abs_err_calibrated = 0;
    double max_abs_err_uncalibrated = 0, max_abs_err_calibrated = 0;
};

struct CalibrationCheck {
    std::string gpu, date, truth_file;
    std::vector<CheckRow> rows;
    std::vector<CheckSummary> summary;   // per kind
};

// What layer_truth.py measured (cli/calibration_truth reads the JSON strictly).
struct LayerTruth {
    std::string gpu, date, file;
    struct Gemm {
        std::string model, op, pass;
        double m = 0, n = 0, k = 0, measured_s = 0;
        std::string pointer;   // in the truth file ("/gemms/3")
    };
    struct Layer {
        std::string model, mode;   // mode: "eager" or "compiled" (torch.compile)
        int seq_len = 0, micro_batch = 0;
        double fwd_s = 0, fwd_bwd_s = 0;
        std::string pointer;
        [[nodiscard]] bool compiled() const noexcept { return mode == "compiled"; }
    };
    struct Decode {
        std::string model;
        int layers = 0;
        double batch = 0, context = 0, step_s = 0;   // context: cached tokens before the step
        std::string pointer;
    };
    std::vector<Gemm> gemms;
    std::vector<Layer> layers;
    std::vector<Decode> decode;   // compiled (fused elementwise), replayed from a CUDA graph
};

// `models` holds every model the truth names; `base` and `calibrated` are the system without and with
// the profile.
CalibrationCheck check_against_truth(const LayerTruth& truth, const std::map<std::string, ModelSpec>& models,
                                     const SystemSpec& base, const SystemSpec& calibrated);

}   // namespace llmsim::app
