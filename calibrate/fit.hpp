// Least-squares fits of llmsim's cost-model parameters to measurements (Eigen). Every fit is
// linear in its parameters, minimises the *relative* error (rows weighted by 1/y, so a 10 us
// point counts as much as a 10 ms one) and is made robust by iterated MAD rejection:
//   fit -> r_i = (y_i - ŷ_i)/y_i -> reject |r_i - median(r)| > 3 · 1.4826 · MAD(r) -> refit,
// until the kept set no longer changes (at most 10 rounds; never fewer than max(p+2, N/2) points).
// Units: bytes, microseconds, FLOP/s, GB/s (1e9 B/s).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmsim::calibrate {

// ------------------------------------------------------------------------------------------------
// Generic robust weighted least squares
// ------------------------------------------------------------------------------------------------

struct RobustOptions {
    double mad_k = 3.0;   // rejection threshold in robust standard deviations (1.4826·MAD)
    int max_iterations = 10;
    double min_threshold = 1e-3;   // never reject points within 0.1% of the fit (rounding, exact data)
    bool reject = true;
};

struct LinearFit {
    std::vector<double> coef;           // parameters, in the order of the design-matrix columns
    std::vector<double> predicted;      // ŷ_i for every point (rejected ones too)
    std::vector<double> residual;       // y_i - ŷ_i
    std::vector<double> rel_residual;   // (y_i - ŷ_i) / y_i
    std::vector<bool> rejected;         // outliers left out of the final fit
    double r2 = 0;                      // weighted (1/y²) R² over the kept points
    double rms_rel = 0;                 // RMS relative residual over the kept points
    double threshold = 0;               // final rejection threshold on |r - median(r)|
    int iterations = 0;
    int kept() const;
    int outliers() const { return static_cast<int>(rejected.size()) - kept(); }
};

// Fits y ≈ X·c minimising Σ ((y_i - X_i·c)/y_i)² over the kept points. X is row-major
// (one row per point); y must be > 0. Throws std::invalid_argument on shape errors or when
// there are fewer points than parameters.
LinearFit robust_relative_lsq(const std::vector<std::vector<double>>& X, const std::vector<double>& y,
                              const RobustOptions& opt = {});

double median(std::vector<double> v);

// ------------------------------------------------------------------------------------------------
// Model helpers (the cost model's own equations)
// ------------------------------------------------------------------------------------------------

// Collective time (us) = base + steps·latency + S·factor/(busbw·1e3).
double collective_model_time_us(double size_bytes, double factor, int steps, double base_latency_us, double latency_us,
                                double busbw_GBps);

// ------------------------------------------------------------------------------------------------
// Alpha-beta fit of one collective sweep
// ------------------------------------------------------------------------------------------------

struct CollectivePoint {
    double size_bytes = 0;
    double time_us = 0;
};

struct AlphaBetaFit {
    std::string collective;
    int ranks = 0;
    double factor = 0;   // nccl-tests bus factor for (collective, ranks)
    int steps = 0;       // ring latency steps
    std::vector<CollectivePoint> points;
    LinearFit fit;         // t = a + b·S
    double alpha_us = 0;   // a (>= 0: see alpha_clamped)
    // The unconstrained fit put a < 0 (a latency below zero: the small sizes are under the timer's or the
    // fit's resolution); a is then 0 and b refitted through the origin. alpha_fitted_us keeps the first a.
    bool alpha_clamped = false;
    double alpha_fitted_us = 0;
    double beta_us_per_byte = 0;          // b
    double busbw_GBps = 0;                // factor / (b·1e3)
    double max_measured_busbw_GBps = 0;   // S·factor/(t·1e3) at the best point, for comparison
};

// Fits t = alpha + S·factor/(busbw·1e3) over the points with S > 0; a negative alpha is clamped to 0
// and the bandwidth refitted with it (alpha_clamped). Throws std::invalid_argument with fewer than 3
// usable points or an unknown collective.
AlphaBetaFit fit_alpha_beta(const std::string& collective, int ranks, const std::vector<CollectivePoint>& points,
                            const RobustOptions& opt = {});

// ------------------------------------------------------------------------------------------------
// GEMM efficiency: gemm_max and k_half per precision
// ------------------------------------------------------------------------------------------------

struct GemmPoint {
    std::string precision;   // bf16, fp16, fp8, tf32, ...
    std::int64_t m = 0, n = 0, k = 0, batch = 1;
    double time_us = 0;
    std::string label;
};

struct GemmGeometry {
    double peak_flops = 0;   // dense peak of this precision, FLOP/s
    int sm_count = 0;
    int tile_m = 128, tile_n = 128;
    double hbm_GBps = 0;            // for the ridge point and the memory time
    double hbm_efficiency = 0.85;   // the preset's (the memory time of a GEMM near the ridge)
    double k_half = 64;             // the preset's: the tile choice the first round assumes
    double element_bytes = 2;       // operand size (A, B, C) used for the arithmetic intensity
};

struct GemmFit {
    std::string precision;
    GemmGeometry geometry;
    double ridge_flop_per_byte = 0;        // peak / (hbm_GBps·1e9)
    std::vector<GemmPoint> points;         // compute-bound points used in the fit
    std::vector<GemmPoint> memory_bound;   // left out: intensity below the ridge
    LinearFit fit;                         // y = 1/gemm_max + (k_half/gemm_max)·(split/K)
    double gemm_max = 0;
    double k_half = 0;
};

// The cost model's time (s) of one GEMM kernel on the geometry with these constants: gemm_time
// (cost_models/roofline) of an accelerator made of the geometry, isolated (sustained 1) and without the
// per-kernel fixed time (no launch). The formula fit_gemm inverts.
double gemm_model_time_s(const std::string& precision, std::int64_t m, std::int64_t n, std::int64_t k,
                         std::int64_t batch, const GemmGeometry& g, double gemm_max, double k_half);

// Arithmetic intensity (FLOP/byte) of a GEMM reading A, B and writing C once.
double gemm_intensity(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, double element_bytes);

// Inverts gemm_model_time_s over the compute-bound points (intensity above the ridge). Each measured
// time (less the per-kernel fixed time every kernel pays, kGraphKernelFixed_s: the probe times kernels
// launched back to back) gives the compute time through gemm_compute_time_s (the overlap with the
// memory time and kGemmFixed_s taken out); with the shape's fill·occupancy and split-K s
// (gemm_shape_efficiency), y = peak·fill·occupancy·compute/(2·batch·MNK) = 1/gemm_max +
// (k_half/gemm_max)·(s/K), linear least squares. The tile and split choice depends on k_half: three
// rounds, starting from the geometry's. Throws std::invalid_argument with fewer than 3 compute-bound points.
GemmFit fit_gemm(const std::string& precision, const std::vector<GemmPoint>& points, const GemmGeometry& g,
                 const RobustOptions& opt = {});

// ------------------------------------------------------------------------------------------------
// HBM and launch
// ------------------------------------------------------------------------------------------------

struct BandwidthPoint {
    std::string kernel;   // copy, triad, read, write (HBM); h2d, d2h (PCIe)
    double bytes = 0;     // size of one array / transfer
    double GBps = 0;
};

struct BandwidthFit {
    std::vector<BandwidthPoint> used;   // the largest-size point of each kernel
    double best_GBps = 0;               // median of those
    double nominal_GBps = 0;
    double efficiency = 0;   // best / nominal (0 when nominal is unknown)
};

// Median over kernels of the bandwidth at each kernel's largest size.
BandwidthFit fit_best_bandwidth(const std::vector<BandwidthPoint>& points, double nominal_GBps);

}   // namespace llmsim::calibrate
