// The bounds of every input llmsim accepts, in ONE table (docs/reliability.md, "Bounds"), used by the
// scenario reader, the Hugging Face reader, the model and system readers, the search and the
// command-line flags. Each bound is far beyond any real system, and small enough that every product
// llmsim forms from bounded inputs fits in a 64-bit integer (and its derived sizes in a finite
// double), so no formula downstream can overflow, divide by zero or turn negative.
//
// Products of inputs (tp·pp·cp·dp, micro_batch·dp, pp·vp·micro-batches, ...) are formed with
// checked_mul() below, the one checked-arithmetic helper, before any other use.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace llmsim::limits {

// ---- integers (inclusive upper bounds; lower bounds are 1 unless the reader says otherwise) ----
inline constexpr std::int64_t kGpus = std::int64_t{1} << 20;     // accelerators in one job (and tp, pp, cp, dp, ep, vp)
inline constexpr std::int64_t kSeqLen = std::int64_t{1} << 24;   // tokens per sequence, prompt or output length
inline constexpr std::int64_t kBatch = std::int64_t{1} << 24;    // sequences: micro_batch, global_batch, serving batch
inline constexpr std::int64_t kLayers = std::int64_t{1} << 16;   // transformer layers
inline constexpr std::int64_t kHidden = std::int64_t{1} << 20;   // model width
inline constexpr std::int64_t kHeads = std::int64_t{1} << 16;    // attention heads, KV heads
inline constexpr std::int64_t kHeadDim = std::int64_t{1} << 16;       // width of one head
inline constexpr std::int64_t kFfnHidden = std::int64_t{1} << 22;     // MLP width (dense, expert, shared expert)
inline constexpr std::int64_t kVocab = std::int64_t{1} << 24;         // vocabulary
inline constexpr std::int64_t kExperts = std::int64_t{1} << 16;       // routed or shared experts, top_k
inline constexpr std::int64_t kLoraRank = std::int64_t{1} << 16;      // LoRA rank
inline constexpr std::int64_t kQuantGroup = std::int64_t{1} << 20;    // weights per quantisation scale
inline constexpr std::int64_t kGpusPerNode = std::int64_t{1} << 20;   // devices per node / scale-up domain
inline constexpr std::int64_t kSmCount = 100000;                      // SMs (or TensorCores) per chip
inline constexpr std::int64_t kGemmTile = 4096;                       // GEMM output tile edge
inline constexpr std::int64_t kNicsPerNode = 1024;
inline constexpr std::int64_t kSearchTopK = 100000;   // layouts a search reports or confirms
inline constexpr std::int64_t kThreads = 1024;        // worker threads of one command (-j)

// ---- real numbers: every one finite; rates bounded below so that no time becomes infinite ----
inline constexpr double kMinRate = 1e-6;   // GB/s, Gbit/s, TFLOP/s: 1 kB/s, 1 MFLOP/s
inline constexpr double kMaxRate = 1e9;    // 1 EB/s, 1 ZFLOP/s per device
// Arrival rates (inference.qps, and a trace's own rate), requests/s. The slowest: one request in 10^6 s
// (11.6 days); below it a stream of even 1000 requests spans centuries and the rate is not a deployment's
// (5e-324 gave infinite latencies and 1e-300 zero ones). 0 stays "offline" (every request queued at t = 0).
inline constexpr double kMaxQps = 1e9;
inline constexpr double kMinQps = 1e-6;
inline constexpr double kMinFraction = 1e-6;                 // efficiencies and shares in (0, 1]
inline constexpr double kMaxLatencyUs = 1e9;                 // 1000 s
inline constexpr double kMaxCapacityGiB = 1 << 30;           // memory per device or node (1 EiB)
inline constexpr double kMaxBytes = 1152921504606846976.0;   // 2^60 bytes: reserves, headroom
inline constexpr double kMaxTokens = 1e18;                   // a token budget (~10^5 x any run so far)
inline constexpr double kMaxParams = 1e18;                   // published parameter counts
inline constexpr double kMaxFlops = 1e40;                    // a compute budget (Chinchilla)
inline constexpr double kMaxDesignedParams = 1e15;           // the largest model `plan` designs
inline constexpr double kMaxSlowdown = 1000.0;               // straggler factor

// ---- work the simulator and the search may do before they give up with a ConfigError ----
inline constexpr std::int64_t kSimPasses = std::int64_t{1} << 21;       // F/B/W passes of one simulated step
inline constexpr std::int64_t kSearchLayouts = std::int64_t{1} << 25;   // layouts one search may evaluate
inline constexpr std::int64_t kPlanLayouts = std::int64_t{1} << 29;     // layouts all of one plan's searches consider
inline constexpr std::int64_t kBatchRangeValues = 64;                   // global batches in an a:b range

// ---- input files: refused before reading when not a regular file or larger than this ----
inline constexpr std::int64_t kJsonFileBytes = std::int64_t{64} << 20;       // 64 MiB
inline constexpr std::int64_t kNcclTestsFileBytes = std::int64_t{1} << 30;   // 1 GiB (text logs)
inline constexpr int kJsonDepth = 64;                                        // nesting levels of a JSON document
inline constexpr std::size_t kMessageValueChars = 60;                        // a value quoted in a message

// a·b, or nullopt when it does not fit in int64 (the one checked multiplication).
inline std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    return r;
}
// The product of `factors`, or nullopt on overflow.
inline std::optional<std::int64_t> checked_product(std::initializer_list<std::int64_t> factors) {
    std::int64_t r = 1;
    for (std::int64_t f : factors) {
        const auto next = checked_mul(r, f);
        if (!next) return std::nullopt;
        r = *next;
    }
    return r;
}

}   // namespace llmsim::limits
