// Measured GEMMs against llmsim's GEMM time, per M regime and per data source (bench/gemm/README.md).
// Header-only: used by the bench program (bench/gemm_regimes.cpp) and the test that pins the errors
// (tests/test_gemm_regimes.cpp).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cost_models/inference.hpp"
#include "cost_models/roofline.hpp"
#include "hardware_db/database.hpp"

namespace llmsim::gemm_regimes {

// One row of bench/gemm/measured-gemms.csv.
struct MeasuredGemm {
    std::string source, accelerator, precision, label;
    double m = 0, n = 0, k = 0, batch = 1;
    double time_s = 0;
    bool stream = false;   // "stream": back-to-back launches between CUDA events (kernel + the gap to the
                           // next queued kernel); "kernel": the kernels' own time (profiler)
};

inline std::vector<MeasuredGemm> read_measured(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot open");
    std::string line;
    std::getline(in, line);
    if (line != "source,accelerator,precision,label,m,n,k,batch,time_us,timing")
        throw std::runtime_error(path + ":1: unexpected header");
    std::vector<MeasuredGemm> rows;
    int no = 1;
    while (std::getline(in, line)) {
        ++no;
        std::vector<std::string> f;
        std::stringstream ss(line);
        std::string cell;
        while (std::getline(ss, cell, ',')) f.push_back(cell);
        if (f.size() != 10) throw std::runtime_error(path + ":" + std::to_string(no) + ": expected 10 fields");
        MeasuredGemm g;
        g.source = f[0];
        g.accelerator = f[1];
        g.precision = f[2];
        g.label = f[3];
        try {
            g.m = std::stod(f[4]);
            g.n = std::stod(f[5]);
            g.k = std::stod(f[6]);
            g.batch = std::stod(f[7]);
            g.time_s = std::stod(f[8]) * 1e-6;
        } catch (const std::exception&) {
            throw std::runtime_error(path + ":" + std::to_string(no) + ": a number is not a number");
        }
        if (f[9] != "stream" && f[9] != "kernel")
            throw std::runtime_error(path + ":" + std::to_string(no) + ": timing must be stream or kernel");
        g.stream = f[9] == "stream";
        if (!(g.m > 0 && g.n > 0 && g.k > 0 && g.batch > 0 && g.time_s > 0))
            throw std::runtime_error(path + ":" + std::to_string(no) + ": sizes and time must be > 0");
        rows.push_back(g);
    }
    return rows;
}

inline Precision precision_of(const std::string& p) {
    if (p == "bf16") return Precision::bf16;
    if (p == "fp16") return Precision::fp16;
    if (p == "fp8") return Precision::fp8;
    if (p == "tf32") return Precision::tf32;
    throw std::runtime_error("unknown precision " + p);
}

// cuBLASLt's heuristic picks kernels at M = 2 and 4 that run 2x slower than at M = 1 and 8 on the
// probe's GPUs (the library's choice, not the hardware's): those probe rows are listed, not scored.
inline bool excluded(const MeasuredGemm& g) { return g.stream && (g.m == 2 || g.m == 4); }

inline const std::array<const char*, 4>& regime_names() {
    static const std::array<const char*, 4> names = {"M 1-16", "M 17-256", "M 257-4095", "M >= 4096"};
    return names;
}
inline int regime(double m) { return m <= 16 ? 0 : m <= 256 ? 1 : m < 4096 ? 2 : 3; }

// The model's time of one measured row, as it was measured. Every kernel pays the per-kernel fixed time
// serving adds (kGraphKernelFixed_s: the launch from a queue, the first loads' DRAM latency, the last
// wave's tail); a kernel-only timing has no launch in it. A back-to-back stream of launches cannot go
// faster than the host issues them: the run's smallest GEMM (128³) measures that interval.
struct Predictor {
    std::map<std::string, AcceleratorSpec> accelerators;
    std::map<std::string, double> issue_floor_s;   // source + precision -> the 128³ GEMM's time

    explicit Predictor(const std::vector<MeasuredGemm>& rows) {
        for (const auto& g : rows) {
            if (!accelerators.count(g.accelerator))
                accelerators.emplace(g.accelerator, Database::builtin().accelerator(g.accelerator));
            if (g.stream && g.m == 128 && g.n == 128 && g.k == 128 && g.batch == 1)
                issue_floor_s[g.source + "/" + g.precision] = g.time_s;
        }
    }
    // The GEMM kernel (gemm_time, isolated, no launch).
    [[nodiscard]] KernelTime kernel(const MeasuredGemm& g) const {
        GemmSpec s;
        s.m = g.m;
        s.n = g.n;
        s.k = g.k;
        s.batch = g.batch;
        s.precision = precision_of(g.precision);
        s.launches = 0;
        s.sustained = false;
        return gemm_time(accelerators.at(g.accelerator), s);
    }
    // Measured-comparable time around a kernel time.
    [[nodiscard]] double as_measured(const MeasuredGemm& g, double kernel_s) const {
        double t = kernel_s + (g.stream ? kGraphKernelFixed_s : kGraphKernelFixed_s - kGraphLaunch_s);
        if (g.stream) {
            const auto it = issue_floor_s.find(g.source + "/" + g.precision);
            if (it != issue_floor_s.end()) t = std::max(t, it->second);
        }
        return t;
    }
    [[nodiscard]] double predict(const MeasuredGemm& g) const { return as_measured(g, kernel(g).time_s); }
};

struct Cell {
    int n = 0;
    double sum_abs = 0, sum = 0;
    void add(double err) {
        ++n;
        sum_abs += std::fabs(err);
        sum += err;
    }
    [[nodiscard]] double mean_abs() const { return n ? sum_abs / n : 0; }
    [[nodiscard]] double bias() const { return n ? sum / n : 0; }
};

// Errors (predicted / measured − 1) per source and regime; `all` per source over every regime.
struct Table {
    std::map<std::string, std::array<Cell, 4>> cells;
    std::map<std::string, Cell> all;
};

template <class Predict>
Table tabulate(const std::vector<MeasuredGemm>& rows, Predict&& predict) {
    Table t;
    for (const auto& g : rows) {
        if (excluded(g)) continue;
        const double err = predict(g) / g.time_s - 1.0;
        t.cells[g.source][static_cast<std::size_t>(regime(g.m))].add(err);
        t.all[g.source].add(err);
    }
    return t;
}

// The fitted constants' objective: mean over the (source, regime) cells of the mean |log(pred/meas)|,
// so that no source or regime outweighs another by its row count.
template <class Predict>
double balanced_log_error(const std::vector<MeasuredGemm>& rows, const std::vector<std::string>& sources,
                          Predict&& predict) {
    std::map<std::pair<std::string, int>, Cell> cells;
    for (const auto& g : rows) {
        if (excluded(g) || std::find(sources.begin(), sources.end(), g.source) == sources.end()) continue;
        cells[{g.source, regime(g.m)}].add(std::log(predict(g) / g.time_s));
    }
    double s = 0;
    for (const auto& [key, c] : cells) s += c.mean_abs();
    return cells.empty() ? 0 : s / static_cast<double>(cells.size());
}

// kGemmFixed_s and kGemmOverlapP by grid search on `sources` (fixed 0..5 us by 0.25, p from a list).
struct Constants {
    double fixed_s = kGemmFixed_s, p = kGemmOverlapP, objective = 0;
};
inline Constants fit_constants(const std::vector<MeasuredGemm>& rows, const Predictor& pr,
                               const std::vector<std::string>& sources) {
    std::vector<KernelTime> kt;
    kt.reserve(rows.size());
    for (const auto& g : rows) kt.push_back(pr.kernel(g));
    std::map<const MeasuredGemm*, const KernelTime*> of;
    for (std::size_t i = 0; i < rows.size(); ++i) of[&rows[i]] = &kt[i];
    Constants best;
    best.objective = -1;
    for (int f = 0; f <= 20; ++f)
        for (double p : {1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 8.0}) {
            const double fixed = f * 0.25e-6;
            const double obj = balanced_log_error(rows, sources, [&](const MeasuredGemm& g) {
                const KernelTime& k = *of.at(&g);
                return pr.as_measured(g, gemm_kernel_time_s(k.compute_s, k.memory_s, fixed, p));
            });
            if (best.objective < 0 || obj < best.objective - 1e-12) best = {fixed, p, obj};
        }
    return best;
}

}   // namespace llmsim::gemm_regimes
