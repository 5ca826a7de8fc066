// Roofline time of one kernel (docs/step-time-model.md): time = max(FLOPs / achievable FLOP/s,
// bytes / achievable bandwidth) + launch overhead; a GEMM overlaps the two imperfectly near the ridge
// and has a fixed prologue (gemm_kernel_time_s). Achievable FLOP/s of a GEMM depends on its shape (the
// library's tile, split-K and waves over the SMs, short reduction depth) and its precision; the
// constants are data in the accelerator JSON (EfficiencyModel), fitted by `llmsim calibrate fit`
// through the same formula.
#pragma once

#include "hardware_db/specs.hpp"

namespace llmsim {

struct KernelTime {
    double flops = 0;
    double bytes = 0;
    double time_s = 0;
    bool compute_bound = true;
    double compute_s = 0, memory_s = 0;   // GEMMs: the two times gemm_kernel_time_s combined
};

// Fraction of useful tile work when an M×N output is cut into tile_m×tile_n tiles (shrunk for skinny
// shapes, as GEMM libraries do) and scheduled in
// waves over `sm_count` SMs: M·N / (waves · sm_count · tile_m · tile_n).
// A batched (grouped) GEMM tiles each of its `batch` members separately and schedules all tiles
// together.
[[nodiscard]] double wave_efficiency(double m, double n, int tile_m, int tile_n, int sm_count,
                                     double batch = 1.0) noexcept;

// How a GEMM library runs a shape, and how well that fills the machine (docs/step-time-model.md §1,
// "GEMM shapes"). The library picks, among its tile shapes, the one that wastes least:
// - M at most one tile's long side (decode): the rows sit on the MMA's N side (operands swapped), tiled
//   on the power-of-two ladder 8, 16, ..., long side (the tile widths GEMM kernels are built with: 96 rows
//   run in a 128-row tile), and N with the short side;
// - otherwise tile_m×tile_n or its transpose (cuBLAS/CUTLASS ship both orientations of their large tile:
//   128×256 and 256×128 on Hopper), each shrunk to the problem (16-wide MMA granule);
// - with fewer tiles than SMs, an integer split-K s (each slice at least kGemmSplitMinK deep) puts
//   tiles·s CTAs on the SMs; the CTAs run in waves.
// `fill` is the useful share of the padded tiles, `occupancy` the share of SM slots busy over the waves
// (ctas / (waves·SMs)), `depth` the per-CTA reduction K/s over K/s + k_half (prologue/epilogue per tile).
// The choice maximises fill·occupancy·depth.
struct GemmShapeEfficiency {
    double fill = 1, occupancy = 1, depth = 1, split = 1, tiles = 0;
    int tile_m = 0, tile_n = 0;   // the tile chosen (rows × columns of the output)
    [[nodiscard]] double product() const noexcept { return fill * occupancy * depth; }
};
// `m_stdev`: the spread of m over the batch's members, as a grouped GEMM's experts each get their own count of
// the routed rows: each member pads its own rows to the tile, so the row tiles are counted in expectation
// (expected_tiles), not at the mean's. 0: every member has m rows.
[[nodiscard]] GemmShapeEfficiency gemm_shape_efficiency(double m, double n, double k, int tile_m, int tile_n,
                                                        int sm_count, double k_half, double batch = 1.0,
                                                        double m_stdev = 0.0) noexcept;
// E[ceil(X / tile)] for X ~ Normal(m, m_stdev²) and at least one tile (a member with rows has one):
// 1 + Σ_{j≥1} P(X > j·tile); ceil(m / tile) when m_stdev is 0. The per-expert rows of uniform routing are
// Binomial, near normal at the tens of rows where tiles matter; a mean exactly at a tile boundary would
// otherwise price one more row as a whole tile more for every expert (Mixtral at 641 rows per expert: +20%).
[[nodiscard]] double expected_tiles(double m, double m_stdev, double tile) noexcept;

// Shortest reduction slice a split-K GEMM gives a CTA: four 64-deep k-blocks, enough to fill a
// multi-stage load pipeline (CUTLASS sm80/sm90 mainloops keep 3-7 k-blocks in flight).
inline constexpr double kGemmSplitMinK = 256.0;
// A GEMM's own fixed time beyond the fixed time every kernel has (the launch, the first loads' DRAM
// latency and the last wave's tail: kernel_fixed_s in serving, `launches` in training): the mainloop's
// pipeline prologue and the split-K/stream-K fixup. Fitted (with kGemmOverlapP) on 2,484 measured GEMMs
// of five sources (H100 and H200 probe runs, Vidur's A100 and H100 operator profiles; bench/gemm):
// leave-one-source-out 2.0-2.5 us.
inline constexpr double kGemmFixed_s = 2.25e-6;
// Compute and memory overlap imperfectly near the ridge: the kernel time is the p-norm
// (compute^p + memory^p)^(1/p) (p -> infinity is the ideal max; p = 1 no overlap at all); a GEMM at the
// ridge takes 2^(1/p) = 1.19 times the larger of the two. Fitted with kGemmFixed_s; leave-one-source-out
// p = 3.5-4.
inline constexpr double kGemmOverlapP = 4.0;

// Time of one GEMM kernel whose tensor-core work takes `compute_s` and whose HBM traffic takes
// `memory_s`: their p-norm plus kGemmFixed_s. The one formula the cost model (gemm_time) and the
// calibrator (calibrate/fit) use.
// (`fixed_s` and `p` are parameters only for the fit that chose them, bench/gemm_regimes.)
[[nodiscard]] double gemm_kernel_time_s(double compute_s, double memory_s, double fixed_s = kGemmFixed_s,
                                        double p = kGemmOverlapP) noexcept;
// Inverse in the compute time: the compute_s for which gemm_kernel_time_s(compute_s, memory_s) = kernel_s;
// 0 when memory and the fixed time alone take kernel_s or longer.
[[nodiscard]] double gemm_compute_time_s(double kernel_s, double memory_s) noexcept;
// min(1, efficiency · sustained): the share of a peak a kernel runs at, never above the peak.
[[nodiscard]] double share_of_peak(double efficiency, double sustained) noexcept;

// The reduction depth a GEMM of precision `p` needs to hide its fixed time per output tile (pipeline
// prologue, epilogue): the accelerator's gemm_k_half is that time as depth at the dense 16-bit peak
// (bf16, else fp16), and a precision with a faster peak covers proportionally more depth in the same
// time: gemm_k_half · max(1, peak(p) / peak16). On Hopper FP8 that is 2 × 114 = 228, against 275 and 187
// fitted to this project's own cuBLASLt FP8 K sweeps (H100 2026-11-22, H200 2026-11-26; `calibrate
// fit`), where one depth for every precision priced FP8 GEMMs at K = 512 17% and 35% fast (4% and 17%
// scaled).
// Slower precisions (TF32, FP32) keep the 16-bit depth: the same sweeps fit TF32 no shallower than BF16.
// A precision's own measured depth (efficiency.gemm_k_half_by, written by `calibrate fit`) replaces it.
[[nodiscard]] double gemm_k_half(const AcceleratorSpec& a, Precision p) noexcept;
// The same rule on bare numbers (the calibration fit's per-precision geometry): k_half16 at a precision
// whose dense peak is `peak` FLOP/s, on a chip whose bf16 and fp16 peaks are these (0: none).
[[nodiscard]] double gemm_k_half_at(double k_half16, double peak, double peak_bf16, double peak_fp16) noexcept;

// Fraction of the dense peak a GEMM of this shape reaches:
// gemm_max[precision] · fill · occupancy · depth (gemm_shape_efficiency, with gemm_k_half(a, p)).
[[nodiscard]] double gemm_efficiency(const AcceleratorSpec& a, Precision p, double m, double n, double k,
                                     double batch = 1.0, double m_stdev = 0.0) noexcept;

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
    double m_stdev = 0;      // spread of m over the batch's members (gemm_shape_efficiency): routed experts
};
[[nodiscard]] KernelTime gemm_time(const AcceleratorSpec& a, const GemmSpec& g) noexcept;
[[nodiscard]] KernelTime gemm_time(const AcceleratorSpec& a, Precision p, double m, double n, double k,
                                   double batch = 1.0, double m_stdev = 0.0) noexcept;

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
// Fused attention's efficiency by length: each (sequence·head, query block) pays a fixed prologue and
// epilogue (loading Q, the softmax rescale, writing O; backward also dQ's accumulation and dK, dV's
// writes) worth the work of K½ keys, so a kernel runs at K / (K + K½) of its long-sequence rate, K the
// mean keys a query attends (half the length when causal). Fitted on this project's sweeps of SDPA
// (cuDNN and FlashAttention-2, causal GQA, 128-16,384 tokens; two H200 runs and one H100 run,
// hardware_db/profiles/*attn-sweep*): the mean of the 12 kernel×heads×run fits, forward 278, backward 819.
// Leaving one GPU out, throughput by length within 10.7-11.3% (forward) and 10.3-12.1% (backward) mean,
// against 96% and 245% for a flat rate. The efficiencies in the database (attention_fwd/bwd,
// fa2_attention_*) are quoted at kAttentionReferenceKeys (docs/hardware-db.md).
inline constexpr double kAttentionFwdHalfKeys = 278;
inline constexpr double kAttentionBwdHalfKeys = 819;
inline constexpr double kAttentionReferenceKeys = 4096;
// The factor on a fused kernel's database efficiency at `keys` mean keys per query.
[[nodiscard]] double attention_length_factor(double keys, bool backward) noexcept;
// Bytes per score element the unfused elementwise kernels move (softmax, and dropout when `dropout`):
// forward 4 (+5), backward 6 (+5).
[[nodiscard]] double unfused_attention_score_bytes(bool backward, bool dropout) noexcept;
[[nodiscard]] KernelTime attention_time(const AcceleratorSpec& a, const AttentionSpec& s) noexcept;
[[nodiscard]] KernelTime flash_attention_time(const AcceleratorSpec& a, Precision p, double batch_heads, double s_q,
                                              double s_kv, double d, bool causal, bool backward) noexcept;

}   // namespace llmsim
