// The raw measurements written by llmsim-probe (calibrate/probe/), read into plain structs.
// Format: docs/calibration.md ("Raw format"); top-level key "llmsim_probe": 1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/fit.hpp"

namespace llmsim::calibrate {

struct RawGpu {
    int index = 0;
    std::string name;
    int sm_count = 0;
    std::string compute_capability;
    double memory_bytes = 0;
    std::string pci_bus_id;
};

struct RawNcclRow {
    std::int64_t size_bytes = 0;
    std::int64_t count = 0;
    double time_us = 0;
    double algbw_GBps = 0;
    double busbw_GBps = 0;
};

struct RawNcclSweep {
    std::string collective;
    int ranks = 0;
    int nodes = 1;
    int gpus_per_node = 0;
    std::string dtype;
    std::vector<RawNcclRow> rows;
};

struct RawGemm {
    GemmPoint point;   // precision, m, n, k, batch, time_us, label
    double tflops = 0;
};

struct RawMeasurements {
    int format_version = 1;
    std::string probe_version;
    std::string command;
    std::string host;
    std::string date;
    // versions
    std::string cuda_runtime, cuda_driver, driver, nccl_version, cublaslt;
    std::vector<RawGpu> gpus;
    // world
    std::string mode;   // "single-process" | "multi-process"
    int world_size = 1;
    int nodes = 1;
    std::vector<std::string> hosts;
    std::vector<std::string> notes;
    // measurements
    std::vector<BandwidthPoint> hbm;   // kernel copy|triad, bytes = one array, GBps
    std::vector<double> launch_samples_us;
    std::optional<double> launch_median_us;
    std::vector<RawGemm> peak;   // best large square GEMM per precision
    std::vector<RawGemm> gemm;
    std::vector<BandwidthPoint> pcie;   // kernel h2d|d2h
    std::vector<RawNcclSweep> nccl;
    std::string source_file;

    std::string gpu_name() const { return gpus.empty() ? std::string() : gpus.front().name; }
};

// Reads a probe file; a missing file, invalid JSON or a value of the wrong type is a ConfigError
// naming the JSON pointer. Unknown keys are tolerated (newer probes may measure more).
RawMeasurements read_raw(const std::string& path);
RawMeasurements parse_raw(const nlohmann::json& j, const std::string& origin);

}   // namespace llmsim::calibrate
