// The block kinds of a layer (one file each in this folder) and their declarations for the tables in
// cost_models/layer/registry.cpp.
#pragma once

#include "cost_models/layer/layer.hpp"

namespace llmsim::layer_impl {

// Attention blocks: the operations from the block's input (after the first norm) to the output
// projection, the attention core among them.
namespace mha {   // multi-head and grouped-query attention (MQA is kv_heads = 1)
bool applies(const ModelSpec& m) noexcept;
void describe(const ModelSpec& m, const LayerShape& s, Layer& l);
AttentionText text(const ModelSpec& m, double kv_bytes, NumberText num);
}   // namespace mha
namespace mla {   // multi-head latent attention (DeepSeek-V2/V3, Kimi K2)
bool applies(const ModelSpec& m) noexcept;
void describe(const ModelSpec& m, const LayerShape& s, Layer& l);
AttentionText text(const ModelSpec& m, double kv_bytes, NumberText num);
}   // namespace mla

// MLP blocks: the operations from the block's input (after the second norm) to its output.
namespace dense_mlp {   // fc1 (gate and up when gated), activation, fc2
bool applies(const ModelSpec& m, bool moe_layer) noexcept;
void describe(const ModelSpec& m, const LayerShape& s, Layer& l);
}   // namespace dense_mlp
namespace moe {   // router, dispatch/combine, routed experts, shared experts
bool applies(const ModelSpec& m, bool moe_layer) noexcept;
void describe(const ModelSpec& m, const LayerShape& s, Layer& l);
std::string summary(const ModelSpec& m);
}   // namespace moe

// MLPs of FFN width `f` as GEMMs and their activation: fc1 (gate and up, fused, when the model's MLP is
// gated), the activation, fc2. `copies`: MLPs whose parameters it holds (routed experts: all of them),
// `active`: those a token runs, `side_by_side`: copies run as one MLP of their summed width (shared
// experts); `rows`, `experts`: as LayerOp's (routed experts: top_k rows, grouped over the experts).
struct MlpGemms {
    const char* gate;   // the gate (or the ungated fc1) GEMM's name
    const char* up;     // the up GEMM's name (gated MLPs)
    const char* fc1;    // the fused fc1's name
    const char* act;
    const char* fc2;
    LayerPart part1, part2;
};
struct MlpCopies {
    double copies = 1, active = 1, side_by_side = 1, rows = 1, experts = 0;
};
void add_mlp(const ModelSpec& m, const LayerShape& s, Layer& l, const MlpGemms& names, double f, const MlpCopies& c);

}   // namespace llmsim::layer_impl
