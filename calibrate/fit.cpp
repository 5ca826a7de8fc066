#include "calibrate/fit.hpp"

#include "cost_models/inference.hpp"
#include "cost_models/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <Eigen/Dense>

#include "calibrate/nccl_tests.hpp"

namespace llmsim::calibrate {

int LinearFit::kept() const { return static_cast<int>(std::count(rejected.begin(), rejected.end(), false)); }

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

namespace {

// Weighted least squares on the kept rows: minimise Σ ((y - X c)/y)². Columns are scaled to unit
// norm before the QR so that sizes of 1e9 bytes and intercepts of 1 coexist.
Eigen::VectorXd solve_relative(const std::vector<std::vector<double>>& X, const std::vector<double>& y,
                               const std::vector<bool>& rejected) {
    const int p = static_cast<int>(X.front().size());
    int n = 0;
    for (bool r : rejected) n += r ? 0 : 1;
    Eigen::MatrixXd A(n, p);
    Eigen::VectorXd b = Eigen::VectorXd::Ones(n);
    int row = 0;
    for (std::size_t i = 0; i < X.size(); ++i) {
        if (rejected[i]) continue;
        for (int j = 0; j < p; ++j) A(row, j) = X[i][j] / y[i];
        ++row;
    }
    Eigen::VectorXd scale(p);
    for (int j = 0; j < p; ++j) {
        double s = A.col(j).norm();
        scale(j) = s > 0 ? s : 1.0;
        A.col(j) /= scale(j);
    }
    Eigen::VectorXd c = A.colPivHouseholderQr().solve(b);
    for (int j = 0; j < p; ++j) c(j) /= scale(j);
    return c;
}

}   // namespace

LinearFit robust_relative_lsq(const std::vector<std::vector<double>>& X, const std::vector<double>& y,
                              const RobustOptions& opt) {
    if (X.size() != y.size()) throw std::invalid_argument("robust_relative_lsq: X and y differ in length");
    if (X.empty()) throw std::invalid_argument("robust_relative_lsq: no points");
    const std::size_t p = X.front().size();
    for (const auto& row : X)
        if (row.size() != p) throw std::invalid_argument("robust_relative_lsq: ragged design matrix");
    for (double v : y)
        if (!(v > 0) || !std::isfinite(v)) throw std::invalid_argument("robust_relative_lsq: y must be positive");
    const std::size_t N = y.size();
    if (N < p) throw std::invalid_argument("robust_relative_lsq: fewer points than parameters");
    const std::size_t min_kept = std::max<std::size_t>(std::min(N, p + 2), (N + 1) / 2);

    LinearFit f;
    f.rejected.assign(N, false);
    Eigen::VectorXd c;
    auto evaluate = [&](const Eigen::VectorXd& coef) {
        f.predicted.assign(N, 0);
        f.residual.assign(N, 0);
        f.rel_residual.assign(N, 0);
        for (std::size_t i = 0; i < N; ++i) {
            double yh = 0;
            for (std::size_t j = 0; j < p; ++j) yh += X[i][j] * coef(static_cast<int>(j));
            f.predicted[i] = yh;
            f.residual[i] = y[i] - yh;
            f.rel_residual[i] = (y[i] - yh) / y[i];
        }
    };
    for (int it = 0; it < std::max(1, opt.max_iterations); ++it) {
        f.iterations = it + 1;
        c = solve_relative(X, y, f.rejected);
        evaluate(c);
        if (!opt.reject) break;
        std::vector<double> kept_r;
        for (std::size_t i = 0; i < N; ++i)
            if (!f.rejected[i]) kept_r.push_back(f.rel_residual[i]);
        const double med = median(kept_r);
        std::vector<double> dev;
        dev.reserve(kept_r.size());
        for (double r : kept_r) dev.push_back(std::fabs(r - med));
        const double mad = median(dev);
        f.threshold = std::max(opt.mad_k * 1.4826 * mad, opt.min_threshold);
        std::vector<bool> next(N, false);
        // Rank the candidates so that, if too many exceed the threshold, the worst go first.
        std::vector<std::pair<double, std::size_t>> over;
        for (std::size_t i = 0; i < N; ++i) {
            double d = std::fabs(f.rel_residual[i] - med);
            if (d > f.threshold) over.emplace_back(d, i);
        }
        std::sort(over.begin(), over.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        const std::size_t max_reject = N - min_kept;
        for (std::size_t k = 0; k < over.size() && k < max_reject; ++k) next[over[k].second] = true;
        if (next == f.rejected) break;
        f.rejected = next;
        if (it + 1 == opt.max_iterations) {
            c = solve_relative(X, y, f.rejected);
            evaluate(c);
        }
    }
    f.coef.assign(c.data(), c.data() + c.size());
    // Weighted R² (weights 1/y²) and RMS relative residual over the kept points.
    double sw = 0, swy = 0;
    for (std::size_t i = 0; i < N; ++i) {
        if (f.rejected[i]) continue;
        double w = 1.0 / (y[i] * y[i]);
        sw += w;
        swy += w * y[i];
    }
    const double ybar = swy / sw;
    double ss_res = 0, ss_tot = 0, rr = 0;
    int k = 0;
    for (std::size_t i = 0; i < N; ++i) {
        if (f.rejected[i]) continue;
        double w = 1.0 / (y[i] * y[i]);
        ss_res += w * f.residual[i] * f.residual[i];
        ss_tot += w * (y[i] - ybar) * (y[i] - ybar);
        rr += f.rel_residual[i] * f.rel_residual[i];
        ++k;
    }
    f.r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : (ss_res == 0 ? 1.0 : 0.0);
    f.rms_rel = k > 0 ? std::sqrt(rr / k) : 0;
    // Degenerate points (extreme magnitudes, a singular system) give no fit, never nan or inf.
    bool finite = std::isfinite(f.r2) && std::isfinite(f.rms_rel);
    for (double v : f.coef) finite = finite && std::isfinite(v);
    for (double v : f.predicted) finite = finite && std::isfinite(v);
    if (!finite) throw std::invalid_argument("robust_relative_lsq: degenerate points (the fit is not finite)");
    return f;
}

// ------------------------------------------------------------------------------------------------
// Model helpers
// ------------------------------------------------------------------------------------------------

namespace {
Precision math_precision(const std::string& precision) {
    const auto p = precision_from_string(precision);
    if (!p) throw std::invalid_argument("gemm: unknown precision '" + precision + "'");
    return *p;
}

AcceleratorSpec geometry_accelerator(Precision p, const GemmGeometry& g, double gemm_max, double k_half) {
    AcceleratorSpec a;
    a.peak_flops[static_cast<int>(p)] = g.peak_flops;
    a.sm_count = g.sm_count;
    a.hbm_GBps = g.hbm_GBps;
    a.efficiency.gemm_max[static_cast<int>(p)] = gemm_max;
    a.efficiency.gemm_tile_m = g.tile_m;
    a.efficiency.gemm_tile_n = g.tile_n;
    a.efficiency.gemm_k_half = k_half;
    a.efficiency.hbm_efficiency = g.hbm_efficiency;
    a.efficiency.sustained_fraction = 1.0;
    return a;
}

KernelTime model_kernel(Precision p, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                        const GemmGeometry& g, double gemm_max, double k_half) {
    GemmSpec s;
    s.m = static_cast<double>(m);
    s.n = static_cast<double>(n);
    s.k = static_cast<double>(k);
    s.batch = static_cast<double>(batch);
    s.precision = p;
    s.launches = 0;
    s.sustained = false;
    return gemm_time(geometry_accelerator(p, g, gemm_max, k_half), s);
}
}   // namespace

double gemm_model_time_s(const std::string& precision, std::int64_t m, std::int64_t n, std::int64_t k,
                         std::int64_t batch, const GemmGeometry& g, double gemm_max, double k_half) {
    return model_kernel(math_precision(precision), m, n, k, batch, g, gemm_max, k_half).time_s;
}

double collective_model_time_us(double size_bytes, double factor, int steps, double base_latency_us, double latency_us,
                                double busbw_GBps) {
    return base_latency_us + steps * latency_us + size_bytes * factor / (busbw_GBps * 1e3);
}

// ------------------------------------------------------------------------------------------------
// Alpha-beta
// ------------------------------------------------------------------------------------------------

AlphaBetaFit fit_alpha_beta(const std::string& collective, int ranks, const std::vector<CollectivePoint>& points,
                            const RobustOptions& opt) {
    AlphaBetaFit r;
    r.collective = collective;
    r.ranks = ranks;
    auto factor = nccl_bus_factor(collective, ranks);
    auto steps = nccl_ring_steps(collective, ranks);
    if (!factor || !steps)
        throw std::invalid_argument("fit_alpha_beta: no bus factor for collective '" + collective + "' on " +
                                    std::to_string(ranks) + " ranks");
    if (ranks < 2 || !(*factor > 0))
        throw std::invalid_argument("fit_alpha_beta: " + collective + " on " + std::to_string(ranks) +
                                    " rank(s) moves no data between GPUs");
    r.factor = *factor;
    r.steps = *steps;
    std::vector<double> sizes;
    for (const auto& p : points)
        if (p.size_bytes > 0 && p.time_us > 0 && std::isfinite(p.size_bytes) && std::isfinite(p.time_us)) {
            r.points.push_back(p);
            sizes.push_back(p.size_bytes);
        }
    std::sort(sizes.begin(), sizes.end());
    if (r.points.size() < 3 || std::unique(sizes.begin(), sizes.end()) - sizes.begin() < 2)
        throw std::invalid_argument(
            "fit_alpha_beta: fewer than 3 points with size > 0, or fewer than 2 distinct "
            "sizes, for " +
            collective);
    std::vector<std::vector<double>> X;
    std::vector<double> y;
    for (const auto& p : r.points) {
        X.push_back({1.0, p.size_bytes});
        y.push_back(p.time_us);
        r.max_measured_busbw_GBps = std::max(r.max_measured_busbw_GBps, p.size_bytes * r.factor / (p.time_us * 1e3));
    }
    r.fit = robust_relative_lsq(X, y, opt);
    r.alpha_us = r.fit.coef[0];
    r.beta_us_per_byte = r.fit.coef[1];
    r.alpha_fitted_us = r.alpha_us;
    if (r.alpha_us < 0 && std::isfinite(r.alpha_us)) {
        // No latency is negative: refit the bandwidth with alpha = 0 (through the origin).
        for (auto& row : X) row.erase(row.begin());
        r.fit = robust_relative_lsq(X, y, opt);
        r.alpha_clamped = true;
        r.alpha_us = 0;
        r.beta_us_per_byte = r.fit.coef[0];
    }
    // t[us] = S[B]·factor/(busbw[GB/s]·1e3)  =>  busbw = factor/(b·1e3)
    r.busbw_GBps = r.beta_us_per_byte > 0 ? r.factor / (r.beta_us_per_byte * 1e3) : 0;
    if (!(r.busbw_GBps > 0) || !std::isfinite(r.busbw_GBps) || !std::isfinite(r.alpha_us))
        throw std::invalid_argument("fit_alpha_beta: " + collective +
                                    ": the time does not grow with the size (no bandwidth to fit)");
    return r;
}

// ------------------------------------------------------------------------------------------------
// GEMM
// ------------------------------------------------------------------------------------------------

double gemm_intensity(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, double element_bytes) {
    const double flops = 2.0 * batch * static_cast<double>(m) * n * k;
    const double bytes =
        element_bytes * batch * (static_cast<double>(m) * k + static_cast<double>(k) * n + static_cast<double>(m) * n);
    return flops / bytes;
}

GemmFit fit_gemm(const std::string& precision, const std::vector<GemmPoint>& points, const GemmGeometry& g,
                 const RobustOptions& opt) {
    if (!(g.peak_flops > 0) || g.sm_count <= 0 || g.tile_m <= 0 || g.tile_n <= 0)
        throw std::invalid_argument("fit_gemm: " + precision + ": peak FLOP/s, SM count and tile sizes are required");
    GemmFit r;
    r.precision = precision;
    r.geometry = g;
    r.ridge_flop_per_byte = g.hbm_GBps > 0 ? g.peak_flops / (g.hbm_GBps * 1e9) : 0;
    for (const auto& p : points) {
        if (p.precision != precision || p.m <= 0 || p.n <= 0 || p.k <= 0 || p.batch <= 0 || !(p.time_us > 0)) continue;
        if (gemm_intensity(p.m, p.n, p.k, p.batch, g.element_bytes) > r.ridge_flop_per_byte)
            r.points.push_back(p);
        else
            r.memory_bound.push_back(p);
    }
    if (r.points.size() < 3)
        throw std::invalid_argument("fit_gemm: " + precision + ": fewer than 3 compute-bound GEMMs (" +
                                    std::to_string(r.memory_bound.size()) + " below the ridge)");
    const Precision math = math_precision(precision);
    // The kernel's time: the measurement less the fixed time every kernel pays (launched back to back).
    auto kernel_s = [](const GemmPoint& p) { return p.time_us * 1e-6 - kGraphKernelFixed_s; };
    double k_half = std::max(0.0, g.k_half);
    for (int round = 0; round < 3; ++round) {
        std::vector<std::vector<double>> X;
        std::vector<double> y;
        std::vector<GemmPoint> used;
        for (const auto& p : r.points) {
            const auto s =
                gemm_shape_efficiency(static_cast<double>(p.m), static_cast<double>(p.n), static_cast<double>(p.k),
                                      g.tile_m, g.tile_n, g.sm_count, k_half, static_cast<double>(p.batch));
            // The memory time does not depend on gemm_max: any positive value gives it.
            const double memory_s = model_kernel(math, p.m, p.n, p.k, p.batch, g, 1.0, k_half).memory_s;
            const double compute_s = gemm_compute_time_s(kernel_s(p), memory_s);
            if (!(compute_s > 0)) continue;
            const double flops = 2.0 * p.batch * static_cast<double>(p.m) * p.n * p.k;
            X.push_back({1.0, s.split / static_cast<double>(p.k)});
            y.push_back(g.peak_flops * s.fill * s.occupancy * compute_s / flops);
            used.push_back(p);
        }
        if (used.size() < 3)
            throw std::invalid_argument("fit_gemm: " + precision +
                                        ": fewer than 3 compute-bound GEMMs longer than the model's fixed time");
        r.fit = robust_relative_lsq(X, y, opt);
        const double c0 = r.fit.coef[0], c1 = r.fit.coef[1];
        r.gemm_max = c0 > 0 ? 1.0 / c0 : 0;
        r.k_half = c0 > 0 ? c1 / c0 : 0;
        if (!std::isfinite(r.gemm_max) || !std::isfinite(r.k_half))
            throw std::invalid_argument("fit_gemm: " + precision + ": degenerate points (the fit is not finite)");
        if (round == 2 || !(r.k_half >= 0)) {
            r.points = std::move(used);
            break;
        }
        k_half = r.k_half;
    }
    return r;
}

// ------------------------------------------------------------------------------------------------
// Bandwidth
// ------------------------------------------------------------------------------------------------

BandwidthFit fit_best_bandwidth(const std::vector<BandwidthPoint>& points, double nominal_GBps) {
    BandwidthFit r;
    r.nominal_GBps = nominal_GBps;
    std::map<std::string, double> largest;
    for (const auto& p : points)
        if (p.GBps > 0 && std::isfinite(p.GBps)) largest[p.kernel] = std::max(largest[p.kernel], p.bytes);
    std::vector<double> bw;
    for (const auto& p : points) {
        if (p.GBps > 0 && std::isfinite(p.GBps) && p.bytes == largest[p.kernel]) {
            r.used.push_back(p);
            bw.push_back(p.GBps);
        }
    }
    r.best_GBps = median(bw);
    r.efficiency = nominal_GBps > 0 ? r.best_GBps / nominal_GBps : 0;
    return r;
}

}   // namespace llmsim::calibrate
