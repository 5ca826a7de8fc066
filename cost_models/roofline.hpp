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
double wave_efficiency(double m, double n, int tile_m, int tile_n, int sm_count, double batch = 1.0);

// Fraction of the dense peak a GEMM of this shape reaches:
// gemm_max[precision] · wave_efficiency · K / (K + gemm_k_half).
double gemm_efficiency(const AcceleratorSpec& a, Precision p, double m, double n, double k, double batch = 1.0);

// C[M×N] = A[M×K]·B[K×N], `batch` independent GEMMs of that shape (grouped/batched).
KernelTime gemm_time(const AcceleratorSpec& a, Precision p, double m, double n, double k, double batch = 1.0);

// A bandwidth-bound kernel (elementwise, norm, softmax, optimizer) moving `bytes` through HBM.
KernelTime memory_time(const AcceleratorSpec& a, double bytes, double flops = 0.0);

// FlashAttention forward (or backward: 2.5 × the forward matmul FLOPs, FlashAttention-2's count)
// for `batch_heads` = batch · heads of this GPU, queries `s_q`, keys `s_kv`, head dimension `d`.
KernelTime flash_attention_time(const AcceleratorSpec& a, Precision p, double batch_heads, double s_q, double s_kv,
                                double d, bool causal, bool backward);

}   // namespace llmsim
