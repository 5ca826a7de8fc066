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

// Fraction of the dense peak a GEMM of this shape reaches:
// gemm_max[precision] · wave_efficiency · K / (K + gemm_k_half).
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
[[nodiscard]] KernelTime memory_time(const AcceleratorSpec& a, double bytes, double flops = 0.0,
                                     bool sustained = true) noexcept;

// Fused attention (FlashAttention in training and prefill, paged/flash-decoding in serving) for
// `batch_heads` = sequences · query heads on this GPU, queries `s_q`, keys `s_kv`, head dimension `d`.
// Backward: 2.5 × the forward matmul FLOPs (FlashAttention-2's count).
struct AttentionSpec {
    double batch_heads = 0, s_q = 0, s_kv = 0, d = 0;
    bool causal = true, backward = false;
    Precision precision = Precision::bf16;   // fp8 and fp32 run the bf16 kernels
    // HBM bytes of Q and O, and of K and V. Negative: FlashAttention's own traffic, 16-bit tensors per
    // query head (Q, K, V, O read/written once forward, twice backward).
    double q_o_bytes = -1, kv_bytes = -1;
    bool sustained = true;
};
[[nodiscard]] KernelTime attention_time(const AcceleratorSpec& a, const AttentionSpec& s) noexcept;
[[nodiscard]] KernelTime flash_attention_time(const AcceleratorSpec& a, Precision p, double batch_heads, double s_q,
                                              double s_kv, double d, bool causal, bool backward) noexcept;

}   // namespace llmsim
