// Memory per GPU (docs/memory-model.md): model states with ZeRO, activations after Korthikanti et al.
// 2022, in-flight micro-batches per schedule, buffers and the runtime reserve; fine-tuning (LoRA,
// QLoRA, RLHF) and inference (weights, KV cache, max batch).
#pragma once

#include <string>
#include <vector>

#include "hardware_db/specs.hpp"

namespace llmsim {

// Activation bytes of ONE transformer layer for one micro-batch, per GPU.
struct ActivationQuery {
    std::int64_t seq_len = 2048;
    std::int64_t micro_batch = 1;
    int tp = 1;
    int cp = 1;
    bool sequence_parallel = false;
    Recompute recompute = Recompute::none;
    bool flash_attention = true;
    bool moe_layer = false;
    double bytes_per_element = 2.0;   // 16-bit activations
    // Bytes of a saved GEMM input: FP8 training (Transformer Engine) keeps the FP8 copy it cast for
    // the forward GEMM, not the 16-bit tensor.
    double gemm_input_bytes = 2.0;
    // `recompute: selective` as torchtitan's op-level policy (op_level_selective, cost_models/recompute).
    bool op_sac = false;
    // Share of the layers under the recompute policy (the rest keep everything: recompute_num_layers)
    // and share whose activations are offloaded to host memory (cost_models/recompute): `total` is the
    // layer-weighted mean over the model's layers.
    double recompute_share = 1.0;
    double offload_share = 0.0;
};

struct LayerActivations {
    double attention = 0;          // QKV input, Q, K, V, attention output, dropout mask
    double attention_scores = 0;   // softmax input/output and dropout (the 5·a·s²·b term)
    double mlp = 0;                // MLP input, intermediate tensors, dropout mask (MoE: routed tokens)
    double norms = 0;              // inputs of the layer norms
    double total = 0;              // what is kept for backward under the recompute policy
    double full = 0;               // what a layer holds without any recompute (working set in backward)
    // Held besides `total` while backward recomputes one layer's forward (full recompute and op-level
    // selective recompute rebuild the whole layer's activations; none and attention-core recompute: 0).
    double recompute_working = 0;
    double offloaded = 0;   // kept in host memory instead (activation offload), layer-weighted mean
};

[[nodiscard]] LayerActivations layer_activations(const ModelSpec& m, const ActivationQuery& q);

// Per micro-batch, on the first stage besides its layers: token ids and the embedding dropout mask.
// `tokens_local` = seq_len / cp · micro_batch; `sp_div` = tp with sequence parallelism, else 1.
[[nodiscard]] double embedding_activation_bytes(const ModelSpec& m, double tokens_local, double sp_div);
// Bytes per logit (token × vocabulary entry on this rank) live at the loss's peak, all layers' activations
// still held: 4 for Megatron-Core's vocab-parallel cross-entropy (one fp32 copy, exp and gradient in
// place) and llm-foundry (flash-attn's fused cross-entropy, gradient in place); 12 for torchtitan and
// DeepSpeed with Hugging Face modules, whose F.cross_entropy(logits.float()) keeps the fp32 log-softmax
// and, in its backward, the nll gradient and the input gradient beside it (4 + 4 + 4).
[[nodiscard]] double loss_bytes_per_logit(Framework f);
// Per live micro-batch, on the last stage: the LM head's input and the logits of the loss.
[[nodiscard]] double loss_activation_bytes(const ModelSpec& m, double tokens_local, int tp, double sp_div, Framework f);

// Bytes per trained parameter the optimizer keeps (docs/memory-model.md): the master copy of the weights
// (fp32 4, 16-bit remainders 2, none or fp32 training 0) and the moments (Adam's m and v, SGD's momentum)
// at training.optimizer_state_precision. One definition: memory stores them, the step time reads and
// writes them (optimizer_bytes_per_param, cost_models/step_time).
struct OptimizerStateBytes {
    double master = 0, moments = 0;
    double total() const { return master + moments; }
};
[[nodiscard]] OptimizerStateBytes optimizer_state_bytes(const TrainingConfig& t);

// The query of a dense layer under a training layout (set moe_layer for a MoE layer).
[[nodiscard]] ActivationQuery activation_query(const ModelSpec& m, const ParallelConfig& p, const TrainingConfig& t);

struct StageMemory {
    int stage = 0;
    int layers = 0;
    double weights_bytes = 0;
    double gradients_bytes = 0;
    double optimizer_bytes = 0;
    double activations_bytes = 0;
    double other_bytes = 0;
    double total_bytes = 0;
    double microbatches_in_flight = 0;
};

struct MemoryBreakdown {
    // The contract's keys (most loaded GPU).
    double weights_bytes = 0;
    double gradients_bytes = 0;
    double optimizer_bytes = 0;
    double activations_bytes = 0;
    double other_bytes = 0;
    double total_bytes = 0;
    double capacity_bytes = 0;
    bool fits = false;
    // Finer detail.
    int stage = 0;                       // the most loaded pipeline stage
    double params_on_gpu = 0;            // parameters held by that GPU before ZeRO sharding
    double master_weights_bytes = 0;     // fp32 master copy (part of optimizer_bytes)
    double optimizer_states_bytes = 0;   // Adam m and v (part of optimizer_bytes)
    double activations_per_layer_bytes = 0;
    double activations_offloaded_bytes = 0;   // in host memory (training.activation_offload_layers)
    double layers_on_stage = 0;
    double microbatches_in_flight = 0;
    double recompute_working_bytes = 0;   // one layer re-materialised during backward (full recompute)
    double embedding_activations_bytes = 0;
    double logits_bytes = 0;             // LM head output and loss (last stage)
    double zero3_gather_bytes = 0;       // gathered parameters (current + prefetched layer)
    double fp8_weight_cache_bytes = 0;   // FP8 copies of weights (Transformer Engine)
    double adapter_bytes = 0;            // LoRA adapters with their gradients and Adam states
    double frozen_models_bytes = 0;      // RLHF reference and reward models
    double rollout_kv_cache_bytes = 0;   // RLHF: the rollout's KV cache (activations_bytes holds the larger)
    double reserve_bytes = 0;            // CUDA context, library workspaces
    double fragmentation_bytes = 0;
    double headroom_bytes = 0;   // capacity − total (negative when it does not fit)
    // Offload to host memory.
    double offloaded_bytes_per_gpu = 0;
    double host_bytes_per_node = 0;
    double host_capacity_bytes = 0;
    bool host_fits = true;
    std::string dominant;   // the largest component
    std::vector<StageMemory> stages;
    // Levers the scenario left unstated that this layout is priced with (resolve_memory_levers).
    std::vector<std::string> assumed_levers;
};

[[nodiscard]] MemoryBreakdown training_memory(const ModelSpec& m, const SystemSpec& sys, const ParallelConfig& p,
                                              const TrainingConfig& t);
[[nodiscard]] MemoryBreakdown training_memory(const TrainingJob& job);

// Unstated memory levers (docs/memory-model.md, "Unstated memory levers"). A training scenario that leaves
// training.master_weights or training.grad_precision unstated and does not fit with the defaults (fp32
// master weights and fp32 main gradients, Megatron-LM's) is given, in this order and only as far as
// needed to fit, the levers NVIDIA's recipes run with: 16-bit master-weight remainders (Apex
// DistributedFusedAdam's store_param_remainders, NeMo 1.x's default for bf16 models; bit-exact), then
// bf16 gradient accumulation and reduction (grad_reduce_in_fp32 = False in the NeMo 2.0 and
// Megatron-Bridge performance recipes). If that does not fit either, the defaults stay. Records what it
// turned on in the training config (assumed_*); a stated value is never changed. One call per scenario,
// after every flag is applied; the search resolves its base scenario the same way.
void resolve_memory_levers(Scenario& s);
// The levers resolve_memory_levers turned on, as "key: value" for the reports (empty: none).
[[nodiscard]] std::vector<std::string> assumed_memory_levers(const TrainingConfig& t);

struct InferenceMemory {
    double weights_bytes = 0;         // a speculative draft model's included
    double draft_weights_bytes = 0;   // of weights_bytes, the draft model's (speculative with draft_model)
    double kv_cache_bytes = 0;        // for the scenario's batch
    double kv_bytes_per_token = 0;    // per GPU
    double activations_bytes = 0;     // transient peak (prefill)
    double other_bytes = 0;           // runtime reserve
    double total_bytes = 0;
    double capacity_bytes = 0;
    bool fits = false;
    std::int64_t max_batch = 0;   // largest batch of input_len + output_len tokens that fits
};

// Bytes per weight at a storage precision, including group scales (int4/int8: one fp16 scale per
// group; nf4: QLoRA's double-quantised scales, 4.127 bits per parameter).
[[nodiscard]] double weight_bytes_per_param(Precision p, int group_size);

// KV cache per GPU of an RLHF job's rollout (inference_memory() on rlhf_rollout_job, cost_models/rollout):
// each replica's share of the global batch, prompt + response tokens, all layers over tp GPUs.
[[nodiscard]] double rlhf_rollout_kv_cache_bytes(const TrainingJob& s);

[[nodiscard]] InferenceMemory inference_memory(const ModelSpec& m, const SystemSpec& sys, const ParallelConfig& p,
                                               const InferenceConfig& in);

// LoRA adapter parameters of one layer (all TP ranks): rank · Σ (d_in + d_out) over the target
// matrices (Hu et al. 2021).
[[nodiscard]] double lora_params_per_layer(const ModelSpec& m, const FinetuneConfig& ft);

// GPUs of a job of `world` GPUs that share one node's host (CPU optimizer, offloaded states): a
// whole node, or the whole job when it is smaller than a node.
[[nodiscard]] int job_gpus_per_node(const SystemSpec& sys, int world);

}   // namespace llmsim
