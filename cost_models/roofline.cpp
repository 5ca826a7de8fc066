#include "cost_models/roofline.hpp"

#include <algorithm>
#include <cmath>

namespace llmsim {

namespace {
// GEMM libraries pick smaller tiles for skinny shapes: a tile dimension never exceeds the problem
// rounded up to a power of two, down to the 16-wide MMA granule.
int effective_tile(double extent, int tile) {
    int t = 16;
    while (t < tile && t < extent) t *= 2;
    return std::min(t, tile);
}
}   // namespace

double wave_efficiency(double m, double n, int tile_m, int tile_n, int sm_count, double batch) {
    if (m <= 0 || n <= 0) return 1.0;
    batch = std::max(1.0, batch);
    tile_m = effective_tile(m, tile_m);
    tile_n = effective_tile(n, tile_n);
    const double tiles = batch * std::ceil(m / tile_m) * std::ceil(n / tile_n);
    const double sms = std::max(1, sm_count);
    const double waves = std::ceil(tiles / sms);
    return batch * m * n / (waves * sms * tile_m * tile_n);
}

double gemm_efficiency(const AcceleratorSpec& a, Precision p, double m, double n, double k, double batch) {
    const auto& e = a.efficiency;
    const double wave = wave_efficiency(m, n, e.gemm_tile_m, e.gemm_tile_n, a.sm_count, batch);
    const double depth = k / (k + e.gemm_k_half);
    return a.gemm_max(p) * wave * depth;
}

static double bytes_of(Precision p) { return precision_bytes(p == Precision::tf32 ? Precision::fp32 : p); }

KernelTime gemm_time(const AcceleratorSpec& a, Precision p, double m, double n, double k, double batch) {
    KernelTime t;
    t.flops = 2.0 * m * n * k * batch;
    // Inputs at the GEMM precision, output in 16-bit (fp8 GEMMs write bf16), fp32 stays fp32.
    const double in_b = bytes_of(p);
    const double out_b = p == Precision::fp32 || p == Precision::tf32 ? 4.0 : 2.0;
    t.bytes = batch * ((m * k + k * n) * in_b + m * n * out_b);
    const double peak = a.peak(p) > 0 ? a.peak(p) : a.peak(Precision::bf16);
    const double eff = gemm_efficiency(a, p, m, n, k, batch);
    const double compute = t.flops / (peak * std::max(eff, 1e-6));
    const double memory = t.bytes / (a.hbm_GBps * 1e9 * a.efficiency.hbm_efficiency);
    t.compute_bound = compute >= memory;
    t.time_s = std::max(compute, memory) / a.efficiency.sustained_fraction + a.efficiency.kernel_launch_us * 1e-6;
    return t;
}

KernelTime memory_time(const AcceleratorSpec& a, double bytes, double flops) {
    KernelTime t;
    t.flops = flops;
    t.bytes = bytes;
    t.compute_bound = false;
    t.time_s = bytes / (a.hbm_GBps * 1e9 * a.efficiency.hbm_efficiency) / a.efficiency.sustained_fraction +
               a.efficiency.kernel_launch_us * 1e-6;
    return t;
}

KernelTime flash_attention_time(const AcceleratorSpec& a, Precision p, double batch_heads, double s_q, double s_kv,
                                double d, bool causal, bool backward) {
    KernelTime t;
    // Forward: S = QKᵀ and O = PV, 2 FLOPs per MAC each; causal masking skips half the blocks
    // (exactly half when queries and keys are the same tokens).
    double fwd = 4.0 * batch_heads * s_q * s_kv * d;
    if (causal) fwd *= 0.5;
    t.flops = backward ? 2.5 * fwd : fwd;
    const double e = 2.0;   // Q, K, V, O in 16-bit
    t.bytes = batch_heads * d * e * (backward ? (2.0 * s_q + 2.0 * s_kv) * 2.0 : (2.0 * s_q + 2.0 * s_kv));
    const Precision ap = (p == Precision::fp8 || p == Precision::fp32) ? Precision::bf16 : p;
    const double eff = backward ? a.efficiency.attention_bwd : a.efficiency.attention_fwd;
    // Short sequences cannot fill the machine: one (batch·head, 128-query block) per SM at a time.
    const double blocks = batch_heads * std::ceil(s_q / 128.0);
    const double sms = std::max(1, a.sm_count);
    const double fill = blocks / (std::ceil(blocks / sms) * sms);
    const double compute = t.flops / (a.peak(ap) * eff * std::max(fill, 1e-3));
    const double memory = t.bytes / (a.hbm_GBps * 1e9 * a.efficiency.hbm_efficiency);
    t.compute_bound = compute >= memory;
    t.time_s = std::max(compute, memory) / a.efficiency.sustained_fraction + a.efficiency.kernel_launch_us * 1e-6;
    return t;
}

}   // namespace llmsim
