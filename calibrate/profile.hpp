// From measurements (probe raw file and/or nccl-tests logs) to a calibration profile: runs the fits
// of calibrate/fit.hpp, maps them onto the system keys llmsim's cost model reads, and writes the
// profile JSON that hardware_db applies as a system override
//   "system": {"preset": "dgx-h100", "profile": "h100-measured.json"}.
// See docs/calibration.md for the equations and the mapping rules.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/fit.hpp"
#include "calibrate/nccl_tests.hpp"
#include "calibrate/raw.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim::calibrate {

// The preset's nominal numbers the fits are expressed against.
struct Nominal {
    std::string preset;   // system preset name, e.g. "dgx-h100"
    std::string gpu_display_name;
    int gpus_per_node = 8;
    double intra_node_GBps = 0;   // per device, per direction
    double inter_node_GBps = 0;   // per device share of the NICs
    double intra_node_latency_us = 0;
    double intra_node_efficiency = 0.8;
    double inter_node_latency_us = 0;
    double collective_base_latency_us = 8.4;
    double pcie_GBps = 0;
    std::map<std::string, double> peak_flops;   // precision name -> dense FLOP/s
    int sm_count = 0;
    int tile_m = 128, tile_n = 128;
    double hbm_GBps = 0;
    double hbm_efficiency = 0.85;   // the preset's (GEMM memory time in the GEMM fit)
    double gemm_k_half = 64;        // the preset's (the GEMM fit's first tile choice)
};

Nominal nominal_from_system(const SystemSpec& s);

// System preset for a GPU name: H100 -> dgx-h100 (PCIe: h100-pcie-8x), H200 -> hgx-h200, A100 ->
// dgx-a100-80gb (40GB: dgx-a100-40gb), H800, B200, V100 -> their DGX; "" if none.
std::string guess_system_preset(const std::string& gpu_name);

// One collective sweep, from the probe or from an nccl-tests log, placed in a tier.
struct NcclDataset {
    std::string collective;
    int ranks = 0;
    int nodes = 0;
    int gpus_per_node = 0;
    std::string tier;            // "intra_node" | "inter_node"
    bool tier_assumed = false;   // node count guessed from gpus_per_node of the preset
    std::string source;          // file (and line) the points come from
    std::string gpu;
    std::string nccl_version;
    std::vector<CollectivePoint> points;
};

struct CollectiveResult {
    NcclDataset data;
    std::optional<AlphaBetaFit> fit;
    std::string error;      // why it could not be fitted
    std::string used_for;   // system keys derived from it ("" if none)
};

struct Calibration {
    Nominal nominal;
    nlohmann::json measured_on = nlohmann::json::object();
    std::vector<CollectiveResult> collectives;
    std::vector<GemmFit> gemm;
    std::optional<BandwidthFit> hbm;
    std::optional<BandwidthFit> pcie;
    std::vector<double> launch_samples_us;
    std::optional<double> kernel_launch_us;
    // Fitted system keys as dotted paths ("intra_node_efficiency", "gpu.efficiency.gemm_max.bf16"),
    // in the order they were derived, with their provenance text.
    std::vector<std::pair<std::string, nlohmann::json>> keys;
    std::map<std::string, std::string> provenance;
    std::vector<std::string> notes;   // what could not be fitted and why, clamps, assumptions
};

struct CalibrateInputs {
    const RawMeasurements* raw = nullptr;   // may be null (nccl-tests logs only)
    std::vector<NcclTestsRun> logs;
    Nominal nominal;
    std::string command;   // the llmsim command line, for measured_on
    std::string today;     // YYYY-MM-DD, for provenance when the raw file has no date
    RobustOptions robust;
};

// Runs every fit the inputs allow and derives the system keys. Never throws for a fit that cannot
// be made: it is recorded in `notes` (and the CollectiveResult's error) instead.
Calibration calibrate(const CalibrateInputs& in);

// {"llmsim_profile": 1, "measured_on": {...}, "system": {...}, "provenance": {...}, "fits": [...]}
nlohmann::json profile_json(const Calibration& c);

// The human report: fitted vs measured for every fit, then the derived keys.
std::string report_text(const Calibration& c);

// Writes JSON (2-space indent) to `path`; an unwritable path is a ConfigError.
void write_json_file(const std::string& path, const nlohmann::json& j);

}   // namespace llmsim::calibrate
