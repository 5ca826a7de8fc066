#include "cost_models/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace llmsim {

namespace {
// GEMM libraries pick smaller tiles for skinny shapes: a tile dimension never exceeds the problem
// rounded up to a power of two, down to the 16-wide MMA granule.
int effective_tile(double extent, int tile) noexcept {
    int t = 16;
    while (t < tile && t < extent) t *= 2;
    return std::min(t, tile);
}
}   // namespace

double wave_efficiency(double m, double n, int tile_m, int tile_n, int sm_count, double batch) noexcept {
    if (m <= 0 || n <= 0) return 1.0;
    batch = std::max(1.0, batch);
    tile_m = effective_tile(m, tile_m);
    tile_n = effective_tile(n, tile_n);
    const double tiles = batch * std::ceil(m / tile_m) * std::ceil(n / tile_n);
    const double sms = std::max(1, sm_count);
    const double waves = std::ceil(tiles / sms);
    return batch * m * n / (waves * sms * tile_m * tile_n);
}

namespace {
// The smallest power of two from `lo` that holds `extent`, at most `hi`.
int ladder_tile(double extent, int lo, int hi) noexcept {
    int t = lo;
    while (t < hi && t < extent) t *= 2;
    return std::min(t, hi);
}

// One tile shape's efficiency with the best integer split-K.
GemmShapeEfficiency tiled(double m, double n, double k, int tm, int tn, double sms, double k_half, double batch,
                          double m_stdev) noexcept {
    GemmShapeEfficiency r;
    r.tile_m = tm;
    r.tile_n = tn;
    const double rows = expected_tiles(m, m_stdev, tm), cols = std::ceil(n / tn);
    r.tiles = batch * rows * cols;
    r.fill = m * n / (rows * tm * cols * tn);
    // Split-K only while the CTAs fit one wave (s ≤ SMs/tiles), each slice at least kGemmSplitMinK deep.
    const double max_split = std::max(1.0, std::min(std::floor(sms / r.tiles), std::floor(k / kGemmSplitMinK)));
    double best = -1;
    for (double s = 1; s <= max_split; s += 1) {
        const double ctas = r.tiles * s;
        const double occupancy = ctas / (std::ceil(ctas / sms) * sms);
        const double depth = (k / s) / (k / s + k_half);
        if (occupancy * depth > best * (1 + 1e-12)) {
            best = occupancy * depth;
            r.split = s;
            r.occupancy = occupancy;
            r.depth = depth;
        }
    }
    return r;
}
}   // namespace

double expected_tiles(double m, double m_stdev, double tile) noexcept {
    if (!(m > 0) || !(tile > 0)) return 0.0;
    // No spread, or counts too large for a tile to matter (and for whole-number steps in a double).
    if (!(m_stdev > 0) || m / tile > 1e12) return std::ceil(m / tile);
    // Tile boundaries more than 7σ below the mean are always crossed, those above never.
    const double lo = std::max(1.0, std::floor((m - 7.0 * m_stdev) / tile));
    const double hi = std::ceil((m + 7.0 * m_stdev) / tile);
    // Spread over many tiles: the share of the last tile used is uniform, half a tile padded on average (the
    // periodic remainder decays as exp(-2π²σ²/tile²), below 1e-30 once 14σ spans 64 tiles).
    if (hi - lo > 64) return std::max(1.0, m / tile + 0.5);
    double tiles = lo;   // the first tile and the lo − 1 boundaries below the window
    for (double b = lo; b <= hi; b += 1) tiles += 0.5 * std::erfc((b * tile - m) / (m_stdev * std::sqrt(2.0)));
    return tiles;
}

GemmShapeEfficiency gemm_shape_efficiency(double m, double n, double k, int tile_m, int tile_n, int sm_count,
                                          double k_half, double batch, double m_stdev) noexcept {
    if (m <= 0 || n <= 0 || k <= 0) return {};
    batch = std::max(1.0, batch);
    const double sms = std::max(1, sm_count);
    const int long_side = std::max(tile_m, tile_n), short_side = std::min(tile_m, tile_n);
    if (m <= long_side) {
        // Skinny GEMM (decode): the library swaps the operands so the m rows sit on the MMA's N side
        // (mma.sync n8; Hopper wgmma N = 8..256) in a tile of the power-of-two ladder, and tiles n with
        // the short tile side.
        return tiled(m, n, k, ladder_tile(m, 8, long_side), effective_tile(n, short_side), sms, k_half, batch, m_stdev);
    }
    GemmShapeEfficiency best;
    double best_e = -1;
    for (const auto& [tm, tn] : {std::pair{tile_m, tile_n}, std::pair{tile_n, tile_m}}) {
        const auto r = tiled(m, n, k, effective_tile(m, tm), effective_tile(n, tn), sms, k_half, batch, m_stdev);
        if (r.product() > best_e * (1 + 1e-12)) {
            best_e = r.product();
            best = r;
        }
    }
    return best;
}

double gemm_kernel_time_s(double compute_s, double memory_s, double fixed_s, double p) noexcept {
    const double c = std::max(0.0, compute_s), m = std::max(0.0, memory_s);
    const double hi = std::max(c, m);
    if (hi <= 0) return fixed_s;
    const double lo = std::min(c, m) / hi;
    return hi * std::pow(1.0 + std::pow(lo, p), 1.0 / p) + fixed_s;
}

double gemm_compute_time_s(double kernel_s, double memory_s) noexcept {
    const double t = kernel_s - kGemmFixed_s, m = std::max(0.0, memory_s);
    if (t <= m) return 0.0;
    return std::pow(std::pow(t, kGemmOverlapP) - std::pow(m, kGemmOverlapP), 1.0 / kGemmOverlapP);
}

double gemm_k_half_at(double k_half16, double peak, double peak_bf16, double peak_fp16) noexcept {
    const double peak16 = peak_bf16 > 0 ? peak_bf16 : peak_fp16;
    const double ratio = peak16 > 0 && peak > 0 ? peak / peak16 : 1.0;
    return k_half16 * std::max(1.0, ratio);
}

double gemm_k_half(const AcceleratorSpec& a, Precision p) noexcept {
    if (const double own = a.efficiency.gemm_k_half_by[static_cast<int>(p)]; own > 0) return own;
    return gemm_k_half_at(a.efficiency.gemm_k_half, a.peak(p), a.peak(Precision::bf16), a.peak(Precision::fp16));
}

double gemm_efficiency(const AcceleratorSpec& a, Precision p, double m, double n, double k, double batch,
                       double m_stdev) noexcept {
    const auto& e = a.efficiency;
    const auto s =
        gemm_shape_efficiency(m, n, k, e.gemm_tile_m, e.gemm_tile_n, a.sm_count, gemm_k_half(a, p), batch, m_stdev);
    return a.gemm_max(p) * s.product();
}

// The share of a peak (FLOP/s or HBM bandwidth) a kernel runs at: its efficiency times the sustained
// (busy) fraction, which a fit may put above 1 (docs/calibration.md), never above the peak itself
// (HFU reached 110% from in-range efficiencies: 0.84 x 1.5 = 1.26 of the peak).
double share_of_peak(double efficiency, double sustained) noexcept { return std::min(1.0, efficiency * sustained); }

static double bytes_of(Precision p) noexcept { return precision_bytes(p == Precision::tf32 ? Precision::fp32 : p); }

KernelTime gemm_time(const AcceleratorSpec& a, const GemmSpec& g) noexcept {
    KernelTime t;
    t.flops = 2.0 * g.m * g.n * g.k * g.batch;
    const double in_b = bytes_of(g.precision);
    const double out_b = g.precision == Precision::fp32 || g.precision == Precision::tf32 ? 4.0 : 2.0;
    const double ab = g.a_bytes > 0 ? g.a_bytes : in_b, bb = g.b_bytes > 0 ? g.b_bytes : in_b;
    const double cb = g.c_bytes > 0 ? g.c_bytes : out_b;
    t.bytes = g.batch * (g.m * g.k * ab + g.k * g.n * bb + g.m * g.n * cb);
    const Precision p = a.peak(g.precision) > 0 ? g.precision : a.half_precision();
    const double eff = gemm_efficiency(a, p, g.m, g.n, g.k, g.batch, g.m_stdev);
    const double sustained = g.sustained ? a.efficiency.sustained_fraction : 1.0;
    t.compute_s = t.flops / (a.peak(p) * share_of_peak(std::max(eff, 1e-6), sustained));
    t.memory_s = t.bytes / (a.hbm_GBps * 1e9 * share_of_peak(a.efficiency.hbm_efficiency, sustained));
    t.compute_bound = t.compute_s >= t.memory_s;
    t.time_s = gemm_kernel_time_s(t.compute_s, t.memory_s) + g.launches * a.efficiency.kernel_launch_us * 1e-6;
    return t;
}

KernelTime gemm_time(const AcceleratorSpec& a, Precision p, double m, double n, double k, double batch,
                     double m_stdev) noexcept {
    GemmSpec g;
    g.m = m;
    g.n = n;
    g.k = k;
    g.batch = batch;
    g.precision = p;
    g.m_stdev = m_stdev;
    return gemm_time(a, g);
}

KernelTime memory_time(const AcceleratorSpec& a, double bytes, double flops, bool sustained, double launches) noexcept {
    KernelTime t;
    t.flops = flops;
    t.bytes = bytes;
    t.compute_bound = false;
    t.time_s = bytes / (a.hbm_GBps * 1e9 *
                        share_of_peak(a.efficiency.hbm_efficiency, sustained ? a.efficiency.sustained_fraction : 1.0)) +
               launches * a.efficiency.kernel_launch_us * 1e-6;
    return t;
}

double unfused_attention_score_bytes(bool backward, bool dropout) noexcept {
    const double softmax = backward ? 6.0 : 4.0;
    return softmax + (dropout ? 5.0 : 0.0);
}

namespace {
// The precision attention's matrix products run at: FP8 training and serving attend in 16 bits (the FP8
// recipes quantise the GEMMs, not attention), and a chip without the asked precision uses its 16-bit one;
// FP32 training attends in FP32 (FlashAttention has no FP32 kernels; the math path runs FP32 matmuls).
// FP32 was priced at the 16-bit tensor-core peak while MFU divided by the FP32 peak: 127.8% MFU for
// Llama-3-8B at 128K tokens on A100s.
Precision attention_math_precision(const AcceleratorSpec& a, Precision p) noexcept {
    if (p == Precision::fp32 && a.peak(Precision::fp32) > 0) return Precision::fp32;
    return p == Precision::fp8 || p == Precision::fp32 || !(a.peak(p) > 0) ? a.half_precision() : p;
}

KernelTime unfused_attention_time(const AcceleratorSpec& a, const AttentionSpec& s) noexcept {
    const Precision ap = attention_math_precision(a, s.precision);
    GemmSpec qk;   // S = QKᵀ (and dP = dO·Vᵀ: the same shape)
    qk.m = s.s_q;
    qk.n = s.s_kv;
    qk.k = s.d;
    qk.batch = s.batch_heads;
    qk.precision = ap;
    qk.sustained = s.sustained;
    GemmSpec pv = qk;   // O = P·V (and dQ = dS·K; dV, dK have its transpose's FLOPs and bytes)
    pv.n = s.d;
    pv.k = s.s_kv;
    const double gemms = s.backward ? 2.0 : 1.0;
    const KernelTime tq = gemm_time(a, qk), tv = gemm_time(a, pv);
    const double scores = s.batch_heads * s.s_q * s.s_kv;
    const double launches = s.backward ? 2.0 : (s.dropout ? 2.0 : 1.0);   // one kernel per elementwise pass
    const double elem_bytes = scores * unfused_attention_score_bytes(s.backward, s.dropout);
    const KernelTime te = memory_time(a, elem_bytes, 0.0, s.sustained);
    KernelTime t;
    t.flops = gemms * (tq.flops + tv.flops);
    t.bytes = gemms * (tq.bytes + tv.bytes) + elem_bytes;
    t.time_s = gemms * (tq.time_s + tv.time_s) + te.time_s + (launches - 1.0) * a.efficiency.kernel_launch_us * 1e-6;
    const double compute_s = gemms * ((tq.compute_bound ? tq.time_s : 0.0) + (tv.compute_bound ? tv.time_s : 0.0));
    t.compute_bound = compute_s >= t.time_s - compute_s;
    return t;
}
}   // namespace

double attention_length_factor(double keys, bool backward) noexcept {
    const double half = backward ? kAttentionBwdHalfKeys : kAttentionFwdHalfKeys;
    const double k = std::max(keys, 1.0);
    return (k / (k + half)) / (kAttentionReferenceKeys / (kAttentionReferenceKeys + half));
}

KernelTime attention_time(const AcceleratorSpec& a, const AttentionSpec& s) noexcept {
    if (!s.fused) return unfused_attention_time(a, s);
    KernelTime t;
    // Forward: S = QKᵀ and O = PV, 2 FLOPs per MAC each; causal masking skips half the blocks
    // (exactly half when queries and keys are the same tokens).
    double fwd = 4.0 * s.batch_heads * s.s_q * s.s_kv * s.d;
    if (s.causal) fwd *= 0.5;
    t.flops = s.backward ? 2.5 * fwd : fwd;
    const double passes = s.backward ? 2.0 : 1.0;
    const double e = 2.0;   // Q, K, V, O in 16-bit
    const double q_o = s.q_o_bytes >= 0 ? s.q_o_bytes : s.batch_heads * s.d * e * 2.0 * s.s_q * passes;
    const double kv = s.kv_bytes >= 0 ? s.kv_bytes : s.batch_heads * s.d * e * 2.0 * s.s_kv * passes;
    t.bytes = q_o + kv;
    const Precision ap = attention_math_precision(a, s.precision);
    double eff = s.backward ? a.efficiency.attention_bwd : a.efficiency.attention_fwd;
    if (s.fa2) {
        const double fa2 = s.backward ? a.efficiency.fa2_attention_bwd : a.efficiency.fa2_attention_fwd;
        if (fa2 > 0) eff = fa2;
    }
    eff *= attention_length_factor(s.causal ? 0.5 * s.s_kv : s.s_kv, s.backward);
    // Short sequences cannot fill the machine: one (batch·head, 128-query block) per SM at a time.
    const double blocks = s.batch_heads * std::ceil(s.s_q / 128.0);
    const double sms = std::max(1, a.sm_count);
    const double fill = blocks / (std::ceil(blocks / sms) * sms);
    const double sustained = s.sustained ? a.efficiency.sustained_fraction : 1.0;
    const double compute = t.flops / (a.peak(ap) * share_of_peak(eff * std::max(fill, 1e-3), sustained));
    const double memory = t.bytes / (a.hbm_GBps * 1e9 * share_of_peak(a.efficiency.hbm_efficiency, sustained));
    t.compute_bound = compute >= memory;
    t.time_s = std::max(compute, memory) + s.launches * a.efficiency.kernel_launch_us * 1e-6;
    return t;
}

KernelTime flash_attention_time(const AcceleratorSpec& a, Precision p, double batch_heads, double s_q, double s_kv,
                                double d, bool causal, bool backward) noexcept {
    AttentionSpec s;
    s.batch_heads = batch_heads;
    s.s_q = s_q;
    s.s_kv = s_kv;
    s.d = d;
    s.causal = causal;
    s.backward = backward;
    s.precision = p;
    return attention_time(a, s);
}

}   // namespace llmsim
