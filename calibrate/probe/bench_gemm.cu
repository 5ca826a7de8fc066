// GEMM sweep through cuBLASLt at bf16, fp16, fp8 (sm_89+) and tf32: transformer-shaped (M,N,K),
// a K sweep for the k_half fit, skinny (decode) and small shapes, attention-shaped batched GEMMs,
// and the largest square GEMM of each precision as the achievable peak.
// Layout "TN" (the fast path for every precision, and the one cuBLASLt requires for fp8):
// D[m×n] = op(A)·B with A stored k×m (lda = k), B stored k×n (ldb = k), D stored m×n (ldd = m).
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cstring>

#include "probe.hpp"

namespace probe {

namespace {

#define PROBE_LT(call)                                                           \
    do {                                                                         \
        cublasStatus_t probe_s_ = (call);                                        \
        if (probe_s_ != CUBLAS_STATUS_SUCCESS)                                   \
            throw ::probe::Error(std::string(#call) + " failed: cublasStatus " + \
                                 std::to_string(static_cast<int>(probe_s_)));    \
    } while (0)

struct Prec {
    const char* name;
    cudaDataType_t ab;   // A and B
    cudaDataType_t cd;   // C and D
    cublasComputeType_t compute;
    size_t ab_bytes, cd_bytes;
    int min_cc;   // 10*major + minor
};

const Prec kPrecisions[] = {
    {"bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2, 80},
    {"fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2, 70},
    {"fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 2, 89},
    {"tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 80},
};

struct Shape {
    long long m, n, k, batch;
    std::string label;
};

std::vector<Shape> shapes(bool quick) {
    std::vector<Shape> s;
    // K sweep at a full-wave output (k_half): 8192 x 8192 x K.
    const std::vector<long long> ks =
        quick ? std::vector<long long>{512, 1024, 2048, 4096, 8192}
              : std::vector<long long>{256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384};
    for (long long k : ks) s.push_back({8192, 8192, k, 1, "ksweep"});
    // Transformer layers (tokens T = 8192): Llama-3 8B (h 4096, kv 1024, ffn 14336) and 70B (h 8192, kv 1024, ffn 28672).
    struct Model {
        const char* name;
        long long h, kv, ffn;
    };
    const Model models[] = {{"8b", 4096, 1024, 14336}, {"70b", 8192, 1024, 28672}};
    const long long T = 8192;
    for (const auto& m : models) {
        if (quick && std::strcmp(m.name, "8b") == 0) continue;
        const std::string p = std::string(m.name) + "-";
        s.push_back({T, m.h + 2 * m.kv, m.h, 1, p + "qkv"});
        s.push_back({T, m.h, m.h, 1, p + "attn-out"});
        s.push_back({T, 2 * m.ffn, m.h, 1, p + "gate-up"});
        s.push_back({T, m.h, m.ffn, 1, p + "down"});
        if (!quick) {
            s.push_back({m.h, m.h, T, 1, p + "wgrad-attn-out"});        // weight gradient: K = tokens
            s.push_back({T, m.h, 2 * m.ffn, 1, p + "dgrad-gate-up"});   // activation gradient
        }
    }
    // Skinny (decode) and small shapes.
    for (long long m : quick ? std::vector<long long>{1, 64} : std::vector<long long>{1, 8, 32, 128, 512})
        s.push_back({m, 8192, 8192, 1, "decode"});
    // A decode step's GEMMs of one Llama-3 layer at batch (= M) 1..256: M tokens x out features x in features.
    if (!quick) {
        for (const auto& m : models) {
            const std::string p = std::string(m.name) + "-decode-";
            for (long long b : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
                s.push_back({b, m.h + 2 * m.kv, m.h, 1, p + "qkv"});
                s.push_back({b, m.h, m.h, 1, p + "attn-out"});
                s.push_back({b, 2 * m.ffn, m.h, 1, p + "gate-up"});
                s.push_back({b, m.h, m.ffn, 1, p + "down"});
            }
        }
    }
    for (long long n : quick ? std::vector<long long>{256, 1024} : std::vector<long long>{128, 256, 512, 1024, 2048})
        s.push_back({n, n, n, 1, "small"});
    // Squares.
    for (long long n : quick ? std::vector<long long>{4096} : std::vector<long long>{4096, 8192})
        s.push_back({n, n, n, 1, "square"});
    // Attention (batch 4 x 16 heads, seq 2048, head_dim 128): scores Q·K^T and context P·V.
    s.push_back({2048, 2048, 128, 64, "attn-qk"});
    s.push_back({2048, 128, 2048, 64, "attn-pv"});
    return s;
}

// Standard-normal values (as torch.randn gives), one per element, from a counter-based hash: tensor
// cores draw more power on random bits than on patterned ones, and H100s lower their clocks with it,
// so patterned operands overstate GEMM throughput (the first H100 run measured 4-29% faster GEMMs
// than PyTorch on randn data at the same shapes; docs/calibration.md).
__device__ inline unsigned long long splitmix64(unsigned long long x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

__device__ inline float normal_at(size_t i, unsigned long long seed) {
    const unsigned long long h = splitmix64(i * 0x2545F4914F6CDD1Dull + seed);
    const float u1 = (static_cast<float>(h >> 40) + 1.0f) * (1.0f / 16777217.0f);   // (0, 1]
    const float u2 = static_cast<float>(h & 0xFFFFFFull) * (1.0f / 16777216.0f);
    return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

// kind 0: bf16, 3: fp16, 1: fp8 e4m3, 2: fp32; n elements.
__global__ void fill_normal(unsigned char* p, size_t n, int kind, unsigned long long seed) {
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        const float v = normal_at(i, seed);
        if (kind == 0) {
            reinterpret_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16(v);
        } else if (kind == 3) {
            reinterpret_cast<__half*>(p)[i] = __float2half(v);
        } else if (kind == 1) {
            reinterpret_cast<__nv_fp8_e4m3*>(p)[i] = __nv_fp8_e4m3(v);
        } else {
            reinterpret_cast<float*>(p)[i] = v;
        }
    }
}

class Lt {
public:
    Lt() {
        PROBE_LT(cublasLtCreate(&h_));
        ws_bytes_ = size_t(64) << 20;
        PROBE_CUDA(cudaMalloc(&ws_, ws_bytes_));
        PROBE_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    }
    ~Lt() {
        cudaStreamDestroy(stream_);
        cudaFree(ws_);
        cublasLtDestroy(h_);
    }
    Lt(const Lt&) = delete;
    Lt& operator=(const Lt&) = delete;

    // Median time (us) of one GEMM; throws when cuBLASLt has no algorithm for it.
    // A, B, D point at buffers of a_cap, b_cap, d_cap bytes; when one GEMM's operands are small enough to
    // stay in L2 between calls, successive calls rotate over several copies of them in those buffers
    // (as in a model, where each layer's weights are read from HBM once per step). `copies` returns
    // how many were used.
    double time_gemm(const Prec& p, const Shape& s, unsigned char* A, unsigned char* B, unsigned char* D, size_t a_cap,
                     size_t b_cap, size_t d_cap, size_t l2_bytes, const Reps& reps, int& copies) {
        cublasLtMatmulDesc_t op = nullptr;
        cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
        cublasLtMatmulPreference_t pref = nullptr;
        auto cleanup = [&] {
            if (pref) cublasLtMatmulPreferenceDestroy(pref);
            if (ld) cublasLtMatrixLayoutDestroy(ld);
            if (lb) cublasLtMatrixLayoutDestroy(lb);
            if (la) cublasLtMatrixLayoutDestroy(la);
            if (op) cublasLtMatmulDescDestroy(op);
        };
        try {
            PROBE_LT(cublasLtMatmulDescCreate(&op, p.compute, CUDA_R_32F));
            const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
            PROBE_LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
            PROBE_LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
            PROBE_LT(cublasLtMatrixLayoutCreate(&la, p.ab, s.k, s.m, s.k));
            PROBE_LT(cublasLtMatrixLayoutCreate(&lb, p.ab, s.k, s.n, s.k));
            PROBE_LT(cublasLtMatrixLayoutCreate(&ld, p.cd, s.m, s.n, s.m));
            if (s.batch > 1) {
                const int32_t b = static_cast<int32_t>(s.batch);
                const int64_t sa = s.k * s.m, sb = s.k * s.n, sd = s.m * s.n;
                PROBE_LT(cublasLtMatrixLayoutSetAttribute(la, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof b));
                PROBE_LT(cublasLtMatrixLayoutSetAttribute(lb, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof b));
                PROBE_LT(cublasLtMatrixLayoutSetAttribute(ld, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof b));
                PROBE_LT(
                    cublasLtMatrixLayoutSetAttribute(la, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sa, sizeof sa));
                PROBE_LT(
                    cublasLtMatrixLayoutSetAttribute(lb, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sb, sizeof sb));
                PROBE_LT(
                    cublasLtMatrixLayoutSetAttribute(ld, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sd, sizeof sd));
            }
            PROBE_LT(cublasLtMatmulPreferenceCreate(&pref));
            PROBE_LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes_,
                                                          sizeof ws_bytes_));
            cublasLtMatmulHeuristicResult_t heur{};
            int found = 0;
            PROBE_LT(cublasLtMatmulAlgoGetHeuristic(h_, op, la, lb, ld, ld, pref, 1, &heur, &found));
            if (found == 0) throw Error("no cuBLASLt algorithm");
            const float alpha = 1.0f, beta = 0.0f;
            auto round_up = [](size_t x) { return (x + 255) / 256 * 256; };
            const size_t a_b = round_up(static_cast<size_t>(s.m * s.k * s.batch) * p.ab_bytes);
            const size_t b_b = round_up(static_cast<size_t>(s.k * s.n * s.batch) * p.ab_bytes);
            const size_t d_b = round_up(static_cast<size_t>(s.m * s.n * s.batch) * p.cd_bytes);
            const size_t footprint = a_b + b_b + d_b;
            size_t fit = std::min({a_cap / a_b, b_cap / b_b, d_cap / d_b, size_t(64)});
            size_t want = (3 * l2_bytes + footprint - 1) / footprint;   // three L2s' worth between reuses
            copies = static_cast<int>(std::max<size_t>(1, std::min(fit, want)));
            int next = 0;
            auto run = [&] {
                const size_t c = static_cast<size_t>(next);
                next = (next + 1) % copies;
                cublasLtMatmul(h_, op, &alpha, A + c * a_b, la, B + c * b_b, lb, &beta, D + c * d_b, ld, D + c * d_b,
                               ld, &heur.algo, ws_, ws_bytes_, stream_);
            };
            // One checked call first: a failing GEMM must not be timed.
            PROBE_LT(
                cublasLtMatmul(h_, op, &alpha, A, la, B, lb, &beta, D, ld, D, ld, &heur.algo, ws_, ws_bytes_, stream_));
            PROBE_CUDA(cudaStreamSynchronize(stream_));
            const double est = median(time_events(stream_, Reps{1, 3}, 1, run));
            const double t = median(time_events(stream_, reps, inner_for(est, 300.0, 100), run));
            PROBE_CUDA(cudaGetLastError());
            cleanup();
            return t;
        } catch (...) {
            cleanup();
            throw;
        }
    }

private:
    cublasLtHandle_t h_ = nullptr;
    void* ws_ = nullptr;
    size_t ws_bytes_ = 0;
    cudaStream_t stream_ = nullptr;
};

}   // namespace

void bench_gemm(Json& peak, Json& gemm, int device, const Options& o, Notes& notes) {
    PROBE_CUDA(cudaSetDevice(device));
    cudaDeviceProp prop;
    PROBE_CUDA(cudaGetDeviceProperties(&prop, device));
    const int cc = prop.major * 10 + prop.minor;
    const Reps reps = reps_for(o.quick);
    const auto list = shapes(o.quick);
    // One set of buffers big enough for every shape at 4 bytes per element.
    size_t max_a = 0, max_b = 0, max_d = 0;
    for (const auto& s : list) {
        max_a = std::max<size_t>(max_a, static_cast<size_t>(s.m * s.k * s.batch));
        max_b = std::max<size_t>(max_b, static_cast<size_t>(s.k * s.n * s.batch));
        max_d = std::max<size_t>(max_d, static_cast<size_t>(s.m * s.n * s.batch));
    }
    size_t free_b = 0, total_b = 0;
    PROBE_CUDA(cudaMemGetInfo(&free_b, &total_b));
    const size_t need = 4 * (max_a + max_b + max_d);
    if (need > free_b * 9 / 10)
        throw Error("GEMM buffers need " + std::to_string(need >> 20) + " MiB, only " + std::to_string(free_b >> 20) +
                    " MiB free");
    unsigned char *A = nullptr, *B = nullptr, *D = nullptr;
    PROBE_CUDA(cudaMalloc(&A, 4 * max_a));
    PROBE_CUDA(cudaMalloc(&B, 4 * max_b));
    PROBE_CUDA(cudaMalloc(&D, 4 * max_d));
    struct Free {
        unsigned char *a, *b, *d;
        ~Free() {
            cudaFree(a);
            cudaFree(b);
            cudaFree(d);
        }
    } guard{A, B, D};
    Lt lt;
    peak.begin_array();
    gemm.begin_array();
    for (const auto& p : kPrecisions) {
        if (cc < p.min_cc) {
            notes.add(std::string("gemm ") + p.name + ": needs compute capability " + std::to_string(p.min_cc / 10) +
                      "." + std::to_string(p.min_cc % 10) + ", this GPU is " + std::to_string(prop.major) + "." +
                      std::to_string(prop.minor) + "; skipped");
            continue;
        }
        const int kind = p.ab_bytes == 1 ? 1 : (p.ab_bytes == 4 ? 2 : (p.ab == CUDA_R_16F ? 3 : 0));
        // Every operand copy the rotation may use is filled: 4·max bytes hold 4/ab_bytes times the elements.
        fill_normal<<<prop.multiProcessorCount * 8, 256>>>(A, 4 * max_a / p.ab_bytes, kind, 1);
        fill_normal<<<prop.multiProcessorCount * 8, 256>>>(B, 4 * max_b / p.ab_bytes, kind, 2);
        PROBE_CUDA(cudaGetLastError());
        PROBE_CUDA(cudaDeviceSynchronize());
        std::fprintf(stderr, "llmsim-probe: gemm %s: %zu shapes\n", p.name, list.size());
        double best_tflops = 0;
        Shape best{};
        double best_t = 0;
        int failures = 0;
        for (const auto& s : list) {
            double t = 0;
            int copies = 1;
            try {
                t = lt.time_gemm(p, s, A, B, D, 4 * max_a, 4 * max_b, 4 * max_d, static_cast<size_t>(prop.l2CacheSize),
                                 reps, copies);
            } catch (const Error& e) {
                cudaGetLastError();
                if (++failures <= 3)
                    notes.add(std::string("gemm ") + p.name + " " + std::to_string(s.m) + "x" + std::to_string(s.n) +
                              "x" + std::to_string(s.k) + " (" + s.label + "): " + e.what());
                continue;
            }
            const double flops = 2.0 * s.batch * static_cast<double>(s.m) * s.n * s.k;
            const double tflops = flops / (t * 1e-6) / 1e12;
            gemm.begin_object()
                .kv("precision", p.name)
                .kv("m", s.m)
                .kv("n", s.n)
                .kv("k", s.k)
                .kv("batch", s.batch)
                .kv("label", s.label)
                .kv("time_us", t)
                .kv("tflops", tflops)
                .kv("reps", reps.reps)
                .kv("rotated_copies", copies)
                .end_object();
            if (s.batch == 1 && s.m == s.n && s.m >= 4096 && tflops > best_tflops) {
                best_tflops = tflops;
                best = s;
                best_t = t;
            }
        }
        if (failures > 3)
            notes.add(std::string("gemm ") + p.name + ": " + std::to_string(failures) + " shapes failed in all");
        if (best_tflops > 0)
            peak.begin_object()
                .kv("precision", p.name)
                .kv("m", best.m)
                .kv("n", best.n)
                .kv("k", best.k)
                .kv("batch", 1)
                .kv("time_us", best_t)
                .kv("tflops", best_tflops)
                .end_object();
    }
    peak.end_array();
    gemm.end_array();
}

}   // namespace probe
