// FLOPs of a training step (docs/flops-model.md). Model FLOPs follow Megatron-LM's
// num_floating_point_operations (GQA, SwiGLU, MoE top-k and shared experts, logits; the causal mask
// halves the attention-score term); hardware FLOPs add what recompute executes again.
#pragma once

#include "hardware_db/specs.hpp"

namespace llmsim {

// Forward FLOPs of one token through one layer, by operator (2 FLOPs per multiply-add).
struct LayerFlops {
    double qkv = 0;         // 2·h·(q + 2·kv)
    double attn_core = 0;   // QKᵀ and A·V: 4·s·q non-causal, 2·s·q causal
    double attn_out = 0;    // 2·q·h
    double mlp = 0;         // 2·γ·h·f dense; MoE: top-k routed + shared experts
    double router = 0;      // 2·h·E (MoE; not counted in model FLOPs, as in Megatron)
    double total() const { return qkv + attn_core + attn_out + mlp + router; }
};

// `seq_len`: the tokens attended to (non-causal), or the sequence whose tokens attend causally (each
// to seq_len/2 on average, Megatron's convention).
[[nodiscard]] LayerFlops layer_flops_per_token(const ModelSpec& m, double seq_len, bool moe_layer, bool causal);

// Forward FLOPs of one token at inference (docs/serving.md, "FLOPs per token"), from layer_flops_per_token:
// a prompt token of a prompt of `context` tokens (`causal`) or a generated token attending to `context`
// cached tokens. GEMMs are the linear layers (QKV, output projection, MLP with the top-k routed and
// shared experts) and the LM head; 2·N_active minus the input embedding (a lookup) and the norms.
struct InferenceTokenFlops {
    double context = 0;
    double gemm = 0;        // Σ layers (qkv + attn_out + mlp) + lm_head
    double lm_head = 0;     // 2·h·V
    double attention = 0;   // Σ layers attn_core: 4·q·context per layer (2·q·context causal)
    double router = 0;      // 2·h·E per MoE layer: executed, not model FLOPs (as in training)
    double model() const { return gemm + attention; }
    double hardware() const { return gemm + attention + router; }
};
[[nodiscard]] InferenceTokenFlops inference_token_flops(const ModelSpec& m, double context, bool causal);

struct TrainingFlops {
    double tokens_per_step = 0;
    double model_flops_per_step = 0;             // for MFU (3 × forward, causal-halved attention; LoRA: what runs)
    double model_flops_per_step_noncausal = 0;   // PaLM / Narayanan convention (full s² term)
    double hardware_flops_per_step = 0;          // for HFU: model + recompute (+ attention as executed)
    double recompute_flops_per_step = 0;
    double forward_flops_per_step = 0;
    double logits_flops_per_step = 0;   // 3 × 2·h·V per token (LoRA: 2 ×, the head is frozen)
    double model_flops_per_token = 0;
    double hardware_flops_per_token = 0;
    double six_n_flops_per_token = 0;      // 6 · active parameters (the C ≈ 6ND rule)
    double narayanan_flops_per_step = 0;   // 96·B·s·l·h²·(1 + s/6h + V/16lh), Narayanan et al. 2021 Eq. 3
};

// `framework` decides what `recompute: selective` recomputes (op_level_selective, cost_models/recompute);
// `full_share` is the share of the layers `recompute: full` recomputes (full_recompute_share: it depends on
// the pipeline layout through training.recompute_num_layers).
[[nodiscard]] TrainingFlops training_flops(const ModelSpec& m, const TrainingConfig& t,
                                           Framework framework = Framework::unspecified, double full_share = 1.0);

}   // namespace llmsim
