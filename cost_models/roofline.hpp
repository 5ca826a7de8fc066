// Roofline time of one kernel (docs/step-time-model.md): time = max(FLOPs / achievable FLOP/s,
// bytes / achievable bandwidth) + launch overhead. Achievable FLOP/s of a GEMM depends on its shape
// (wave and tile quantization over the SMs, short reduction depth) and its precision; the constants
// are data in the accelerator JSON (EfficiencyModel), fitted by `llmsim calibrate fit`.
#pragma once

#include "hardware_db/specs.hpp"

namespace llmsim {

struct KernelTime {
    double flops = 0;
    double bytes = 0;
    double time_s = 0;
    bool compute_bound = true;
};

// Fraction of useful tile work when an M×N output is cut into tile_m×tile_n tiles (shrunk for skinny
// shapes, as GEMM libraries do) and scheduled in
// waves over `sm_count` SMs: M·N / (waves · sm_count · tile_m · tile_n).
// A batched (grouped) GEMM tiles each of its `batch` members separately and schedules all tiles
// together.
[[nodiscard]] double wave_efficiency(double m, double n, int tile_m, int tile_n, int sm_count,
                                     double batch = 1.0) noexcept;

// How well a GEMM's shape fills the machine: `fill` (useful share of the padded output tiles),
// `occupancy` (share of SM slots busy over the waves), `depth` (K per tile over K + k_half, the
// prologue/epilogue per tile) and `split` (SMs sharing one tile's reduction). Shapes with at most one
// tile's long side of rows (decode) put the rows on the MMA's 8-granular N side; shapes with fewer tiles
// than SMs are split along K over all SMs (stream-K/split-K).
struct GemmShapeEfficiency {
    double fill = 1, occupancy = 1, depth = 1, split = 1, tiles = 0;
};
[[nodiscard]] GemmShapeEfficiency gemm_shape_efficiency(double m, double n, double k, int tile_m, int tile_n,
                                                        int sm_count, double k_half, double batch = 1.0) noexcept;

// min(1, efficiency · sustained): the share of a peak a kernel runs at, never above the peak.
[[nodiscard]] double share_of_peak(double efficiency, double sustained) noexcept;

// Fraction of the dense peak a GEMM of this shape reaches:
// gemm_max[precision] · fill · occupancy · depth (gemm_shape_efficiency).
[[nodiscard]] double gemm_efficiency(const AcceleratorSpec& a, Precision p, double m, double n, double k,
                                     double batch = 1.0) noexcept;

// C[M×N] = A[M×K]·B[K×N], or `batch` independent GEMMs of that shape scheduled together
// (grouped/batched), as training and serving run them.
struct GemmSpec {
    double m = 0, n = 0, k = 0;
    double batch = 1;
    Precision precision = Precision::bf16;   // the tensor-core math
    // Bytes per element of A (m×k), B (k×n) and C (m×n). 0: A and B at the math precision, C in
    // 16-bit (32-bit for fp32/tf32 math). Serving passes the weight storage precision (with its
    // group scales) for B.
    double a_bytes = 0, b_bytes = 0, c_bytes = 0;
    double launches = 1;     // kernel launches it takes
    bool sustained = true;   // inside a training step: scale by the accelerator's sustained_fraction
};
[[nodiscard]] KernelTime gemm_time(const AcceleratorSpec& a, const GemmSpec& g) noexcept;
[[nodiscard]] KernelTime gemm_time(const AcceleratorSpec& a, Precision p, double m, double n, double k,
                                   double batch = 1.0) noexcept;

// A bandwidth-bound kernel (elementwise, norm, softmax, optimizer) moving `bytes` through HBM.
// `sustained`: inside a training step (scaled by the accelerator's sustained_fraction).
// `launches`: kernels it takes (each pays kernel_launch_us).
[[nodiscard]] KernelTime memory_time(const AcceleratorSpec& a, double bytes, double flops = 0.0, bool sustained = true,
                                     double launches = 1.0) noexcept;

// Attention for `batch_heads` = sequences · query heads on this GPU, queries `s_q`, keys `s_kv`, head
// dimension `d`.
// Fused (FlashAttention in training and prefill, paged/flash-decoding in serving): one kernel, the
// scores never leave the SMs; causal masking skips half the blocks; backward 2.5 × the forward matmul
// FLOPs (FlashAttention-2's count).
// Unfused (`fused = false`, Megatron-LM before FlashAttention): the score matrix goes through HBM in
// 16-bit. Forward: S = QKᵀ (batched GEMM, writes s_q·s_kv scores), fused scale+mask+softmax (reads S,
// writes P: 2 + 2 B per score), dropout (reads P, writes its output and a 1-byte mask: 2 + 2 + 1 B),
// O = P·V (batched GEMM, reads P). The full matrix is computed, masked or not. Backward: dP = dO·Vᵀ and
// dV = Pᵀ·dO, dropout backward (reads dP and the mask, writes: 2 + 1 + 2 B), softmax backward (reads
// the gradient and P, writes dS: 2 + 2 + 2 B), dQ = dS·K and dK = dSᵀ·Q — four GEMMs of the forward's
// two shapes.
struct AttentionSpec {
    double batch_heads = 0, s_q = 0, s_kv = 0, d = 0;
    bool causal = true, backward = false;
    Precision precision = Precision::bf16;   // fp8 and fp32 run the bf16 kernels
    // HBM bytes of Q and O, and of K and V. Negative: FlashAttention's own traffic, 16-bit tensors per
    // query head (Q, K, V, O read/written once forward, twice backward). Fused only.
    double q_o_bytes = -1, kv_bytes = -1;
    bool sustained = true;
    bool fused = true;
    bool dropout = false;   // unfused: attention dropout over the scores
    bool fa2 = false;       // fused: the FlashAttention-2 kernels (uses_fa2_attention), not the chip's best
    double launches = 1;    // kernel launches it takes
};
// Bytes per score element the unfused elementwise kernels move (softmax, and dropout when `dropout`):
// forward 4 (+5), backward 6 (+5).
[[nodiscard]] double unfused_attention_score_bytes(bool backward, bool dropout) noexcept;
[[nodiscard]] KernelTime attention_time(const AcceleratorSpec& a, const AttentionSpec& s) noexcept;
[[nodiscard]] KernelTime flash_attention_time(const AcceleratorSpec& a, Precision p, double batch_heads, double s_q,
                                              double s_kv, double d, bool causal, bool backward) noexcept;

}   // namespace llmsim
