// One description of a transformer layer (docs/architecture.md, "The layer description").
//
// A layer is the model's norm, an attention block, a residual add, the second norm (none with a
// parallel block), an MLP block and a residual add. The attention block and the MLP block are each of
// a kind from the tables in cost_models/layer/registry.cpp (one file per kind in impl/: multi-head and
// grouped-query attention, multi-head latent attention; the dense MLP, routed experts with shared
// experts). describe_layer() lists the layer's operations on one tensor-parallel rank in the order its
// forward runs them — GEMMs with their shapes, the attention core with its kernel's shape, the
// memory-bound passes with their elements — and every statistic of a layer loops over that list: the
// parameters (model_params), the FLOPs (flops), the activations (memory), the recompute plan
// (recompute), the training step (step_time) and the serving iteration (inference). Nothing outside
// this folder asks which kind of attention or MLP a model has.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hardware_db/specs.hpp"

namespace llmsim {

enum class LayerOpKind : std::uint8_t {
    gemm,        // out[rows × n] = in[rows × k] · W[k × n]
    attention,   // the attention core (QKᵀ, softmax, PV): `attn`
    pass,        // a memory-bound pass over `n` elements per row (`pass` says which)
    weights,     // parameters no GEMM of the forward runs over as such (Transformer-XL's position projection)
};

// The block an operation belongs to (the parameter breakdown).
enum class LayerBlock : std::uint8_t { layer, attention, mlp };

// The FLOP group of a GEMM (LayerFlops, the recompute plan's shares): the QKV side of the attention
// (MLA: its down- and up-projections), the output projection, the MoE router, the first and second
// GEMMs of the (routed or dense) MLP and of the shared experts.
enum class LayerPart : std::uint8_t { none, qkv, attn_out, router, fc1, fc2, shared_fc1, shared_fc2 };

// How one tensor-parallel rank holds an operation's weights (or a pass's elements): its 1/tp share
// (column- or row-parallel), whole K/V heads (kv_heads_per_tp_rank: a head is never split), whole on
// every rank (MLA's down-projections), or — for passes — outside the tensor-parallel region, split over
// the ranks only with sequence parallelism.
enum class Shard : std::uint8_t { split, kv_heads, whole, sequence };

// Memory-bound passes (their bytes: pass_bytes).
enum class ElementwiseKind : std::uint8_t {
    layer_norm,       // LayerNorm over `n` elements
    rms_norm,         // RMSNorm over `n` elements
    rope,             // rotary embedding of the `n` q and k elements
    residual,         // dropout (its mask when the model has dropout) and residual add over `n`
    mlp_activation,   // the activation between fc1 and fc2: `n` FFN elements, `gate` 2 gated, 1 not
    moe_routing,      // token dispatch and combine around the experts (`rows` = top_k copies of `n`)
};

// Which tokens of a serving iteration a GEMM runs over: all of them; the prefill chunks' whole context
// (MLA's K and V, up-projected from the cached latents); the decode tokens only (MLA's absorbed
// up-projections, one small GEMM per head).
enum class ServingRows : std::uint8_t { tokens, prefill_context, decode_tokens };

// The attention core of a layer on one TP rank.
struct AttentionShape {
    double heads = 0;                     // query heads on this rank
    double head_qk = 0, head_v = 0;       // per head: the QKᵀ and PV widths (training, prefill)
    double q_width = 0, out_width = 0;    // all heads: query width, attention-output width (FLOPs)
    double k_saved = 0, v_saved = 0;      // K and V a layer saves for backward (times tp: one rank's share after /tp)
    double latents = 0, shared_key = 0;   // elements per token every rank keeps whole (MLA: latents, RoPE key)
    double kv_elements = 0;               // K and V elements per context token the kernel reads (this rank)
    bool kv_16bit = false;                // read at 16 bits (MLA's up-projected K/V), not the cache's precision
    double cache_elements = 0;            // KV-cache elements per token (this rank): the one rule for KV bytes
    double decode_qk = 0, decode_v = 0;   // head widths a decode kernel attends with (MLA: in the latent space)
    double decode_reads = 1;              // cache reads per token by a per-query-head decode kernel
};

struct LayerOp {
    LayerOpKind kind = LayerOpKind::gemm;
    const char* name = "";
    LayerBlock block = LayerBlock::layer;
    LayerPart part = LayerPart::none;
    Shard shard = Shard::split;
    // GEMM: n × k weight on this rank, `rows` rows per token of the layer (routed experts: top_k).
    // Pass: `n` elements per row on this rank; mlp_activation: `k` = gate.
    double n = 0, k = 0, rows = 1;
    double batch = 1;     // independent GEMMs of the shape run as one grouped kernel (MLA's per-head ones)
    double experts = 0;   // > 0: one GEMM per routed expert (grouped), the weights sharded by ep
    // Consecutive GEMMs with the same tag share their input and run as one (N concatenated): Megatron's
    // fused QKV and fc1 (gate and up). nullptr: the GEMM runs alone (its name is its group's).
    const char* fused = nullptr;
    bool row_parallel = false;     // its output is summed over the TP ranks (all-reduce or reduce-scatter)
    bool fp8_input_cast = false;   // FP8 training casts its input in a pass of its own (not fused upstream)
    ServingRows serving = ServingRows::tokens;
    ElementwiseKind pass = ElementwiseKind::residual;
    double div = 1;   // pass: its n elements are split `div` ways (sequence parallelism outside the TP region)
    // Parameters of the layer (all TP ranks, weights and biases), those one token activates (routed
    // experts: top_k of them), and with Shard::kv_heads those one TP rank holds.
    double params = 0, active_params = 0, params_local = 0;
    AttentionShape attn;
    [[nodiscard]] const char* group() const noexcept { return fused ? fused : name; }
    // GEMM: forward FLOPs per token of the layer on this rank (2 per multiply-add).
    [[nodiscard]] double flops_per_token() const noexcept { return 2.0 * n * k * rows; }
};

// What the description is for: one TP rank of `tp` (`sp_div`: tp with sequence parallelism, else 1),
// a layer with a MoE MLP (`moe`: the model's MoE layers; a dense model's are dense) and the serving
// form of the operations (`serving`: MLA's decode absorbs its up-projections).
struct LayerShape {
    int tp = 1;
    double sp_div = 1.0;
    bool moe = false;
    bool serving = false;
};

struct AttentionKindDef;
struct MlpKindDef;

inline constexpr int kMaxLayerOps = 32;
struct Layer {
    const AttentionKindDef* attention_kind = nullptr;
    const MlpKindDef* mlp_kind = nullptr;
    LayerOp ops[kMaxLayerOps];
    int count = 0;
    void add(const LayerOp& op);
    [[nodiscard]] const LayerOp* begin() const noexcept { return ops; }
    [[nodiscard]] const LayerOp* end() const noexcept { return ops + count; }
    // The attention core (every layer has one).
    [[nodiscard]] const AttentionShape& attention() const noexcept;
    // The layer holds routed experts.
    [[nodiscard]] bool routed() const noexcept;
    // Its routed experts and the experts each token goes to (both 0 without routed experts): what expert
    // parallelism's share of the experts and its all-to-alls are priced from.
    struct Routing {
        double experts = 0, top_k = 0;
    };
    [[nodiscard]] Routing routing() const noexcept;
};

// The spread of the rows each of `experts` gets when `rows` per expert is their mean: every routed row picks
// one of them, so an expert's count is Binomial, σ² = rows·(1 − 1/experts) (uniform routing; real routers
// skew more). The grouped GEMM pads each expert's rows to its tile (roofline expected_tiles).
[[nodiscard]] double routed_rows_stdev(double rows, double experts) noexcept;

[[nodiscard]] Layer describe_layer(const ModelSpec& m, const LayerShape& s);

// The model's MoE layers differ from its dense layers (their MLP blocks are of different kinds): the one
// question the rest of the code asks about a model's layer kinds (StepCosts' dense and MoE layer).
[[nodiscard]] bool has_moe_layers(const ModelSpec& m) noexcept;

// The layer as frameworks run it: each run of consecutive GEMMs with the same `fused` tag becomes one
// GEMM named by the tag, N (and the parameters) summed. (The recompute plan counts the GEMMs unfused,
// as torchtitan's models call them.)
[[nodiscard]] Layer fuse_gemms(const Layer& l);

// The FFN width of the layer's MLP (its routed experts' in a MoE layer) on this rank: fc2's input.
[[nodiscard]] double ffn_width(const Layer& l) noexcept;

// What a block kind says of itself to a reader (`model show`, the drills), in the words of its own keys.
// The numbers are the description's; `num` and `count` format a number (a count: "12.9M") as the caller
// prints them.
struct NumberText {
    std::string (*num)(double);
    std::string (*count)(double);
};
struct KindFormula {
    std::string label, symbolic, substituted, note;
    double value = 0;
};
struct AttentionText {
    std::string summary;               // `model show`'s line for the kind ("": the model's shape says it all)
    std::string given;                 // the symbols its parameter formulas use beyond the model's shape
    std::vector<KindFormula> params;   // the steps to the attention's parameters per layer (value: parameters)
    std::string cache_given;           // the symbols of its KV-cache formula
    KindFormula cache;                 // KV-cache bytes per token over the layers (value: left to the caller)
};

// The block-kind tables (registry.cpp): the first entry whose `applies` holds describes the block.
struct AttentionKindDef {
    const char* name;
    const char* contract;
    bool (*applies)(const ModelSpec&) noexcept;
    void (*describe)(const ModelSpec&, const LayerShape&, Layer&);
    // `kv_bytes`: the cache's bytes per element.
    AttentionText (*text)(const ModelSpec&, double kv_bytes, NumberText num);
};
struct MlpKindDef {
    const char* name;
    const char* contract;
    bool (*applies)(const ModelSpec&, bool moe_layer) noexcept;
    void (*describe)(const ModelSpec&, const LayerShape&, Layer&);
    std::string (*summary)(const ModelSpec&);   // `model show`'s line for the kind; nullptr: none
};
[[nodiscard]] std::span<const AttentionKindDef> attention_kinds() noexcept;
[[nodiscard]] std::span<const MlpKindDef> mlp_kinds() noexcept;
[[nodiscard]] const AttentionKindDef& attention_kind(const ModelSpec& m) noexcept;
[[nodiscard]] const MlpKindDef& mlp_kind(const ModelSpec& m, bool moe_layer) noexcept;

// Bytes a pass moves forward for `rows` rows (tokens) at `e` bytes per element; `eager`: eager
// PyTorch's one kernel per op (layer_bytes.hpp).
[[nodiscard]] double pass_bytes(const LayerOp& op, double rows, double e, bool eager) noexcept;

// Parameters of a layer, from its operations.
struct LayerParamSums {
    double attention = 0, norms = 0, mlp = 0, mlp_active = 0;
    double experts = 0;                        // routed experts (sharded by ep)
    double kv_heads = 0, kv_heads_local = 0;   // the K/V projections: all heads, one TP rank's whole heads
    double whole = 0;                          // kept whole on every TP rank
    [[nodiscard]] double total() const noexcept { return attention + norms + mlp; }
};
[[nodiscard]] LayerParamSums layer_param_sums(const Layer& l) noexcept;

}   // namespace llmsim
