#include "cost_models/memory.hpp"

#include <algorithm>
#include <cmath>

#include "cost_models/layer/layer.hpp"
#include "cost_models/layout.hpp"
#include "cost_models/model_params.hpp"
#include "cost_models/recompute.hpp"
#include "cost_models/rollout.hpp"
#include "hardware_db/layout_rules.hpp"

namespace llmsim {

// ---------------------------------------------------------------------------------------------
// Activations of one layer (Korthikanti et al. 2022, Sec. 4, generalised to GQA, SwiGLU and MoE)
// ---------------------------------------------------------------------------------------------
LayerActivations layer_activations(const ModelSpec& m, const ActivationQuery& q) {
    LayerActivations a;
    const double s = static_cast<double>(q.seq_len) / q.cp;   // tokens of this CP rank
    const double b = static_cast<double>(q.micro_batch);
    const double t = q.tp;
    const double h = static_cast<double>(m.hidden);
    // The attention's widths (cost_models/layer): the query; K and V of whole heads on this TP rank
    // (replicated when tp > kv_heads), times t so that the /t below leaves one rank's share; the value
    // width (MLA: heads·v_head_dim; else the K width); the attention output; and the elements each rank
    // keeps whole (MLA: the down-projections are duplicated over TP): the Q and KV latents as their
    // norms' inputs (16-bit) and the up-projections' inputs (GEMM-input precision), and the shared RoPE key.
    const AttentionShape at = describe_layer(m, LayerShape{.tp = q.tp, .moe = q.moe_layer}).attention();
    const double qd = at.q_width;
    const double kvd = at.k_saved;
    const double vd = at.v_saved;
    const double od = at.out_width;
    const double latents = at.latents;
    const double rope_key = at.shared_key;
    const double e = q.bytes_per_element;
    const double sb = s * b;
    // Tensors outside the tensor-parallel region are split only with sequence parallelism.
    const double outside = q.sequence_parallel ? t : 1.0;
    const double mask = m.dropout ? 1.0 : 0.0;   // 1-byte dropout masks

    const double gi = q.gemm_input_bytes;
    // Attention block: QKV input (gi·h), Q (e·q), K, V (e·kv each), output-projection input (gi·q),
    // output dropout mask (h bytes).
    // The attention output: FlashAttention saves it (e·q) for its backward; the output projection saves
    // its input, the same tensor in 16-bit training, its FP8 copy (gi·q) in FP8 training.
    const double out = q.flash_attention ? e + (gi < e ? gi : 0.0) : gi;
    a.attention = sb * (gi * h + mask * h) / outside + sb * (e * qd + e * kvd + e * vd + out * od) / t +
                  sb * ((e + gi) * latents + e * rope_key);
    // Scores: softmax output (e), dropout mask (1), dropout output (e) per score: 5·a·s²·b at e = 2.
    const double scores = (2.0 * e + mask) * m.heads * s * (static_cast<double>(q.seq_len)) * b / t;
    // FlashAttention keeps only the softmax statistics (fp32 log-sum-exp per row and head).
    const double flash_stats = 4.0 * m.heads * sb / t;
    a.attention_scores = q.flash_attention ? flash_stats : scores;
    // Two norms' inputs (one with a parallel block).
    a.norms = (m.parallel_block ? 1.0 : 2.0) * e * h * sb / outside;

    auto mlp_bytes = [&](double f, double tokens, double gate) {
        // Activation-function input (gate and up for a gated MLP) and its output, the fc2 input.
        const double inner = gate > 1.0 ? (2.0 * e * f + gi * f) : (e * f + gi * f);
        return tokens * inner / t;
    };
    a.mlp = sb * (gi * h + mask * h) / outside;   // fc1 input + dropout mask
    // The MLP block's operations at their whole width (cost_models/layer).
    for (const auto& op : describe_layer(m, LayerShape{.moe = q.moe_layer})) {
        if (op.block != LayerBlock::mlp) continue;
        if (op.part == LayerPart::router) {
            a.mlp += sb * 4.0 * op.n / outside;   // fp32 router logits
        } else if (op.kind == LayerOpKind::pass && op.pass == ElementwiseKind::moe_routing) {
            a.mlp += 2.0 * (sb * op.rows) * e * op.n / outside;   // permuted input and combine output
        } else if (op.kind == LayerOpKind::pass && op.pass == ElementwiseKind::mlp_activation) {
            // Routed experts: their token copies after dispatch; shared experts: each of `batch` MLPs.
            a.mlp += op.batch * mlp_bytes(op.n / op.batch, sb * op.rows, op.k);
        }
    }

    a.full = a.attention + a.attention_scores + a.mlp + a.norms;
    switch (q.recompute) {
        case Recompute::none: a.total = a.full; break;
        case Recompute::selective:
            if (q.op_sac) {
                // torchtitan's op-level policy: the block input, the outputs of every other GEMM and
                // SDPA's output and log-sum-exp (an unfused attention is recomputed).
                const auto plan = op_sac_plan(m, q.tp, outside, q.moe_layer);
                a.total = e * h * sb / outside + e * plan.saved_elements_per_token * sb +
                          (q.flash_attention ? sb * e * od / t + flash_stats : 0.0);
                a.recompute_working = a.full;
            } else {
                // Megatron's checkpointed core attention (tensor_parallel.checkpoint over q, k, v): the
                // attention runs under no_grad, so neither the score tensors nor FlashAttention's own
                // saved output and log-sum-exp are kept; q, k and v are the checkpoint's inputs and the
                // output survives only as the output projection's saved input (its FP8 copy in FP8
                // training, the tensor itself in 16-bit).
                const double fa_saved_out = q.flash_attention ? sb * (out - gi) * od / t : 0.0;
                a.total = a.attention - fa_saved_out + a.mlp + a.norms;
            }
            break;
        case Recompute::full:   // only the layer input is kept
            a.total = e * h * sb / outside;
            a.recompute_working = a.full;
            break;
    }
    // recompute_num_layers: the layers outside the policy keep everything.
    const double share = std::clamp(q.recompute_share, 0.0, 1.0);
    if (share < 1.0) {
        a.total = share * a.total + (1.0 - share) * a.full;
        if (share <= 0.0) a.recompute_working = 0.0;
    }
    a.offloaded = std::clamp(q.offload_share, 0.0, 1.0) * a.total;
    a.total -= a.offloaded;
    return a;
}

double embedding_activation_bytes(const ModelSpec& m, double tokens_local, double sp_div) {
    // Token ids (int64) and the embedding dropout mask (Megatron).
    return tokens_local * (8.0 + (m.dropout ? static_cast<double>(m.hidden) : 0.0)) / sp_div;
}

double loss_bytes_per_logit(Framework f) {
    return f == Framework::torchtitan || f == Framework::deepspeed ? 12.0 : 4.0;
}

double loss_activation_bytes(const ModelSpec& m, double tokens_local, int tp, double sp_div, Framework f) {
    // The LM head's input and the logits the loss holds at its peak.
    return tokens_local *
           (4.0 * static_cast<double>(m.hidden) / sp_div + loss_bytes_per_logit(f) * static_cast<double>(m.vocab) / tp);
}

ActivationQuery activation_query(const ModelSpec& m, const ParallelConfig& p, const TrainingConfig& t) {
    ActivationQuery q;
    q.seq_len = t.seq_len;
    q.micro_batch = t.micro_batch;
    q.tp = p.tp;
    q.cp = p.cp;
    q.sequence_parallel = p.sequence_parallel && p.tp > 1;
    q.recompute = t.recompute;
    q.flash_attention = t.flash_attention;
    q.bytes_per_element = training_element_bytes(t.precision);
    q.gemm_input_bytes = t.precision == Precision::fp8 ? 1.0 : q.bytes_per_element;
    q.op_sac = op_level_selective(p.framework, t.recompute);
    if (t.recompute == Recompute::full) q.recompute_share = full_recompute_share(m.layers, p, t);
    q.offload_share = activation_offload_share(m.layers, t);
    return q;
}

// ---------------------------------------------------------------------------------------------
// Training memory
// ---------------------------------------------------------------------------------------------
OptimizerStateBytes optimizer_state_bytes(const TrainingConfig& t) {
    OptimizerStateBytes b;
    if (t.precision != Precision::fp32) {   // fp32 training updates the weights themselves
        switch (t.master_weights) {
            case MasterWeights::fp32: b.master = 4.0; break;
            case MasterWeights::remainder: b.master = 2.0; break;   // the low 16 bits of the fp32 value
            case MasterWeights::none: b.master = 0.0; break;
        }
    }
    const double moment = precision_bytes(t.optimizer_state_precision);
    switch (t.optimizer) {
        case Optimizer::adam: b.moments = 2.0 * moment; break;   // m and v
        case Optimizer::sgd: b.moments = moment; break;          // momentum
        case Optimizer::adafactor: b.moments = 0.0; break;       // factored second moment: O(rows + cols)
    }
    return b;
}

namespace {

// DeepSpeed ZeRO-3's gathered working set (deepspeed/runtime/zero/stage3.py, defaults in
// zero/constants.py): a parameter is gathered when its module runs and released after it; the next
// one is prefetched only while fewer than stage3_max_live_parameters (1e9) elements are gathered; a
// gradient waits, in the parameters' 16-bit type, in a bucket of reduce_bucket_size (5e8) elements (a
// larger one is reduced alone). Peak: the largest gathered pair plus the largest pending gradient.
double deepspeed_zero3_buffer_bytes(const ModelSpec& m, const ParamCounts& pc, int tp, bool moe_layer, double e) {
    constexpr double kMaxLive = 1e9, kReduceBucket = 5e8;
    const auto w = layer_weight_matrices(m, pc, tp, moe_layer);
    double live = 0, largest = 0;
    for (std::size_t k = 0; k < w.size(); ++k) {
        const double next = w[(k + 1) % w.size()];
        live = std::max(live, w[k] + (w[k] < kMaxLive && w.size() > 1 ? next : 0.0));
        largest = std::max(largest, w[k]);
    }
    return (live + std::max(largest, kReduceBucket)) * e;
}

struct ModelStates {
    double weights = 0, grads = 0, optimizer = 0, master = 0, states = 0, params = 0, offloaded = 0;
};

// Model states of one stage of `m` on one GPU under the layout (ZeRO across dp·cp).
ModelStates stage_model_states(const ModelSpec& m, const ParallelConfig& p, const TrainingConfig& t, int stage,
                               bool trainable) {
    ModelStates st;
    const StageParams sp = stage_parameters(m, count_parameters(m), p, stage);
    const double dense_params = sp.dense, expert_params = sp.expert;
    st.params = sp.total();
    const double shard_dense = static_cast<double>(p.dp) * p.cp;
    const double shard_expert = std::max(1.0, shard_dense / p.ep);
    auto sharded = [&](double bytes_per_param, bool shard) {
        return shard ? dense_params * bytes_per_param / shard_dense + expert_params * bytes_per_param / shard_expert
                     : st.params * bytes_per_param;
    };
    const double wb = training_element_bytes(t.precision);
    const int zero = zero_stage_in_step(p);
    if (!trainable) {
        st.weights = sharded(wb, zero >= 3);
        return st;
    }
    const double gb = precision_bytes(t.grad_precision);
    const OptimizerStateBytes osb = optimizer_state_bytes(t);
    const double ob = osb.total();
    const double master = osb.master;
    st.weights = sharded(wb, zero >= 3);
    st.grads = sharded(gb, zero >= 2);
    st.optimizer = sharded(ob, zero >= 1);
    st.master = sharded(master, zero >= 1);
    st.states = st.optimizer - st.master;
    if (t.offload != Offload::none) {
        st.offloaded += st.optimizer;
        st.optimizer = 0;
        st.master = 0;
        st.states = 0;
        if (t.offload == Offload::optimizer_params) {
            st.offloaded += st.weights;
            st.weights = 0;
        }
    }
    return st;
}

// One pipeline stage's memory (training_memory): what every stage shares, and the phases of a stage.
struct StageMemoryModel {
    const ModelSpec& m;
    const SystemSpec& sys;
    const ParallelConfig& p;
    const TrainingConfig& t;
    const ParamCounts pc;
    const std::vector<int> per;
    const std::int64_t mb;
    const bool lora;
    const double e;
    ActivationQuery q;
    LayerActivations dense_act, moe_act;
    double tokens_local = 0, sp_div = 1, rollout_kv = 0;

    StageMemoryModel(const ModelSpec& model, const SystemSpec& system, const ParallelConfig& parallel,
                     const TrainingConfig& training)
        : m(model),
          sys(system),
          p(parallel),
          t(training),
          pc(count_parameters(model)),
          per(layers_per_stage(model.layers, parallel.pp)),
          mb(num_microbatches(parallel, training)),
          lora(training.finetune.method != FinetuneConfig::Method::none),
          e(training_element_bytes(training.precision)),
          q(activation_query(model, parallel, training)) {
        dense_act = layer_activations(m, q);
        q.moe_layer = true;
        moe_act = layer_activations(m, q);
        tokens_local = static_cast<double>(t.seq_len) / p.cp * t.micro_batch;
        sp_div = q.sequence_parallel ? p.tp : 1.0;
        rollout_kv = t.rlhf.enabled ? rlhf_rollout_kv_cache_bytes(TrainingJob{m, sys, p, t}) : 0.0;
    }

    // Weights, gradients, optimizer states (LoRA: the frozen base, QLoRA's NF4 weights, the adapters;
    // RLHF: the critic, the frozen reference and reward models).
    void states(MemoryBreakdown& d, int s, int dense) const {
        // Model states.
        ModelStates st;
        double adapter_grads = 0;
        if (lora) {
            st = stage_model_states(m, p, t, s, false);   // frozen base
            double wbytes = st.weights;
            if (t.finetune.method == FinetuneConfig::Method::qlora) {
                // Base linear layers in NF4 with double quantisation (Dettmers et al. 2023); the
                // embedding and LM head stay 16-bit (bitsandbytes quantises nn.Linear layers only and
                // Hugging Face keeps the output head unquantised).
                const double wb = training_element_bytes(t.precision);
                const double shard = zero_stage_in_step(p) >= 3 ? static_cast<double>(p.dp) * p.cp : 1.0;
                const double embed_bytes = embedding_params_on_stage(m, pc, p, s) * wb / shard;
                wbytes = (wbytes - embed_bytes) / wb * weight_bytes_per_param(Precision::nf4, 64) + embed_bytes;
                // One dequantised layer.
                d.other_bytes +=
                    (dense ? layer_params_per_tp_rank(m, pc, p.tp, false)
                           : layer_params_per_tp_rank(m, pc, p.tp, true) + pc.expert_params_per_layer / p.tp) *
                    2.0;
            }
            st.weights = wbytes;
            const double adapters = per[s] * lora_params_per_layer(m, t.finetune) / p.tp;
            // fp32 adapter weights 4 + grads 4 + the optimizer's states (no separate master: Adam 8).
            TrainingConfig adapter_training = t;
            adapter_training.precision = Precision::fp32;
            d.adapter_bytes = adapters * (8.0 + optimizer_state_bytes(adapter_training).total());
            adapter_grads = adapters * 4.0;
        } else {
            st = stage_model_states(m, p, t, s, true);
        }
        d.params_on_gpu = st.params;
        d.weights_bytes = st.weights;
        // The adapters' fp32 gradients are gradients; their fp32 weights (the trained copy, as a master is) and
        // Adam's states are optimizer states (the gradients row read 0 under LoRA).
        d.gradients_bytes = st.grads + adapter_grads;
        d.optimizer_bytes = st.optimizer + d.adapter_bytes - adapter_grads;
        d.master_weights_bytes = st.master;
        d.optimizer_states_bytes = st.states;
        d.offloaded_bytes_per_gpu = st.offloaded;

        // RLHF: critic trained alongside, reference and reward frozen (ZeRO-3 shards them too).
        if (t.rlhf.enabled) {
            const ModelSpec critic = t.rlhf.critic.value_or(m);
            const ModelSpec reference = t.rlhf.reference.value_or(m);
            const ModelSpec reward = t.rlhf.reward.value_or(critic);
            const auto cs = stage_model_states(critic, p, t, std::min(s, critic.layers - 1), true);
            d.weights_bytes += cs.weights;
            d.gradients_bytes += cs.grads;
            d.optimizer_bytes += cs.optimizer;
            d.offloaded_bytes_per_gpu += cs.offloaded;
            d.frozen_models_bytes =
                stage_model_states(reference, p, t, std::min(s, reference.layers - 1), false).weights +
                stage_model_states(reward, p, t, std::min(s, reward.layers - 1), false).weights;
            d.weights_bytes += d.frozen_models_bytes;
        }
    }

    // Activations of the micro-batches in flight, the recomputed layer's working set, the embedding's
    // and the loss's; RLHF's rollout KV cache when it is larger.
    void activations(MemoryBreakdown& d, int s, int dense, int moe) const {
        // Activations.
        d.microbatches_in_flight = microbatches_in_flight(p, mb, s);
        const double per_mb = dense * dense_act.total + moe * moe_act.total;
        d.activations_per_layer_bytes = per[s] > 0 ? per_mb / per[s] : 0.0;
        double act = per_mb * d.microbatches_in_flight;
        // Activation offload: the offloaded layers' activations wait in host memory (Megatron-Core
        // offloads only with pp 1, where one micro-batch is in flight).
        d.activations_offloaded_bytes =
            (dense * dense_act.offloaded + moe * moe_act.offloaded) * d.microbatches_in_flight;
        d.offloaded_bytes_per_gpu += d.activations_offloaded_bytes;
        if (t.rlhf.enabled) act *= 2.0;   // the critic's activations (same shape as the actor)
        d.recompute_working_bytes =
            std::max(dense ? dense_act.recompute_working : 0.0, moe ? moe_act.recompute_working : 0.0);
        if (s == 0) {
            d.embedding_activations_bytes =
                d.microbatches_in_flight * embedding_activation_bytes(m, tokens_local, sp_div);
        }
        if (s == p.pp - 1) {
            d.logits_bytes = loss_microbatches_in_flight(*p.schedule, p.pp, mb) *
                             loss_activation_bytes(m, tokens_local, p.tp, sp_div, p.framework);
        }
        d.activations_bytes = act + d.recompute_working_bytes + d.embedding_activations_bytes + d.logits_bytes;
        // RLHF rollout (DeepSpeed-Chat's hybrid engine): generation runs between the training steps,
        // with the training activations freed and the rollout batch's KV cache live beside the same
        // model states; the dynamic part of the peak is the larger of the two.
        d.rollout_kv_cache_bytes = rollout_kv;
        d.activations_bytes = std::max(d.activations_bytes, rollout_kv);
    }

    // ZeRO-3's gathered layers, Transformer Engine's FP8 weight copies, the runtime reserve and
    // fragmentation.
    void buffers(MemoryBreakdown& d, int s, int moe) const {
        // Buffers.
        if (zero_stage_in_step(p) == 3) {
            const double layer_params =
                moe ? layer_params_per_tp_rank(m, pc, p.tp, true) + pc.expert_params_per_layer / (p.tp * p.ep)
                    : layer_params_per_tp_rank(m, pc, p.tp, false);
            // Current and prefetched layer gathered in 16-bit, and that layer's unreduced gradient as the
            // weight-gradient GEMMs write it (16-bit; it is reduce-scattered before any fp32
            // accumulation, which happens on the shard): 3·e bytes per parameter of one layer. DeepSpeed's
            // estimator counts 4 B (16-bit parameters and gradients) of the largest module; PyTorch FSDP
            // gathers one unit (a layer) and prefetches the next.
            d.zero3_gather_bytes = layer_params * 3.0 * e;
            if (p.framework == Framework::deepspeed && !lora)
                d.zero3_gather_bytes = deepspeed_zero3_buffer_bytes(m, pc, p.tp, moe > 0, e);
        }
        if (t.precision == Precision::fp8) {
            // Transformer Engine caches an FP8 copy of the weights of its own Linear modules (the
            // transformer layers' projections and MLPs); the embedding and the output layer are not TE
            // modules and run in 16-bit (Megatron-Core's VocabParallelEmbedding, ColumnParallelLinear).
            const double layer_weights =
                d.params_on_gpu - embedding_params_on_stage(m, pc, p, s) - (s == p.pp - 1 ? pc.final_norm : 0.0);
            const double shard3 = zero_stage_in_step(p) == 3 ? static_cast<double>(p.dp) * p.cp : 1.0;
            d.fp8_weight_cache_bytes = layer_weights * 1.0 / shard3;
            // FP8 parameters (--fp8-param-gather): the weight itself is the FP8 tensor (1 byte instead of e);
            // the other FP8 copy (Hopper's transpose, MXFP8's column-wise copy) stays as the cache above.
            if (t.fp8_params) d.weights_bytes -= layer_weights * (e - 1.0) / shard3;
        }
        d.reserve_bytes = t.runtime_reserve_bytes;
        d.fragmentation_bytes = t.fragmentation_fraction * (d.activations_bytes + d.zero3_gather_bytes);
        d.other_bytes += d.zero3_gather_bytes + d.fp8_weight_cache_bytes + d.reserve_bytes + d.fragmentation_bytes;
    }
};

}   // namespace

MemoryBreakdown training_memory(const ModelSpec& m, const SystemSpec& sys, const ParallelConfig& p,
                                const TrainingConfig& t) {
    MemoryBreakdown best;
    const StageMemoryModel model(m, sys, p, t);
    const auto& per = model.per;
    for (int s = 0; s < p.pp; ++s) {
        StageMemory sm;
        MemoryBreakdown d;
        sm.stage = s;
        sm.layers = per[s];
        d.stage = s;
        d.layers_on_stage = per[s];
        const int moe = moe_layers_on_stage(m, p.pp, s);
        const int dense = per[s] - moe;
        model.states(d, s, dense);
        model.activations(d, s, dense, moe);
        model.buffers(d, s, moe);

        d.total_bytes = d.weights_bytes + d.gradients_bytes + d.optimizer_bytes + d.activations_bytes + d.other_bytes;
        sm.weights_bytes = d.weights_bytes;
        sm.gradients_bytes = d.gradients_bytes;
        sm.optimizer_bytes = d.optimizer_bytes;
        sm.activations_bytes = d.activations_bytes;
        sm.other_bytes = d.other_bytes;
        sm.total_bytes = d.total_bytes;
        sm.microbatches_in_flight = d.microbatches_in_flight;
        best.stages.push_back(sm);
        if (s == 0 || d.total_bytes > best.total_bytes) {
            auto stages = std::move(best.stages);
            best = d;
            best.stages = std::move(stages);
        }
    }

    best.capacity_bytes = sys.gpu.hbm_capacity_bytes;
    best.headroom_bytes = best.capacity_bytes - best.total_bytes;
    best.fits = best.total_bytes <= best.capacity_bytes;
    // Host memory for offload: every GPU of the job on a node offloads its share.
    const double host = best.offloaded_bytes_per_gpu * job_gpus_per_node(sys, p.world());
    best.host_bytes_per_node = host;
    best.host_capacity_bytes = sys.host_memory_bytes;
    best.host_fits = host == 0 || sys.host_memory_bytes <= 0 || host <= sys.host_memory_bytes;
    if (!best.host_fits) best.fits = false;

    const std::pair<double, const char*> parts[] = {{best.weights_bytes, "weights"},
                                                    {best.gradients_bytes, "gradients"},
                                                    {best.optimizer_bytes, "optimizer states"},
                                                    {best.activations_bytes, "activations"},
                                                    {best.other_bytes, "buffers and reserve"}};
    const auto* top = std::max_element(std::begin(parts), std::end(parts),
                                       [](const auto& a, const auto& b) { return a.first < b.first; });
    best.dominant = top->second;
    best.assumed_levers = assumed_memory_levers(t);
    return best;
}

MemoryBreakdown training_memory(const TrainingJob& job) {
    return training_memory(job.model, job.system, job.parallel, job.training);
}

std::vector<std::string> assumed_memory_levers(const TrainingConfig& t) {
    std::vector<std::string> out;
    if (t.assumed_master_remainders) out.emplace_back("training.master_weights: remainder");
    if (t.assumed_bf16_grads) out.emplace_back("training.grad_precision: bf16");
    return out;
}

void resolve_memory_levers(Scenario& s) {
    TrainingConfig& t = s.training;
    // From the defaults each time, so that a second call (after a layout change) decides afresh.
    if (t.assumed_master_remainders) t.master_weights = MasterWeights::fp32;
    if (t.assumed_bf16_grads) t.grad_precision = Precision::fp32;
    t.assumed_master_remainders = t.assumed_bf16_grads = false;
    if (s.is_inference || (!t.master_weights_unstated && !t.grad_precision_unstated)) return;
    // Only 16-bit weights (bf16 training, or FP8 training's bf16 weights) have the two levers.
    if (t.precision != Precision::bf16 && t.precision != Precision::fp8) return;
    auto fits = [&](const TrainingConfig& x) {
        return training_memory(TrainingJob{s.model, s.system, s.parallel, x}).fits;
    };
    if (fits(t)) return;
    TrainingConfig trial = t;
    // 1. Master-weight remainders: bit-exact (the bf16 weight is the fp32 master's high half).
    if (t.master_weights_unstated && t.master_weights == MasterWeights::fp32) {
        trial.master_weights = MasterWeights::remainder;
        trial.assumed_master_remainders = true;
        if (!optimizer_precision_violations(trial).empty()) {
            trial.master_weights = t.master_weights;
            trial.assumed_master_remainders = false;
        } else if (fits(trial)) {
            t = trial;
            return;
        }
    }
    // 2. bf16 gradient accumulation and reduction.
    if (t.grad_precision_unstated && t.grad_precision == Precision::fp32) {
        trial.grad_precision = Precision::bf16;
        trial.assumed_bf16_grads = true;
        if (fits(trial)) t = trial;
    }
}

// ---------------------------------------------------------------------------------------------
// Inference memory
// ---------------------------------------------------------------------------------------------
double weight_bytes_per_param(Precision p, int group_size) {
    const double g = std::max(1, group_size);
    switch (p) {
        case Precision::int4:
        case Precision::fp4: return 0.5 + 2.0 / g;   // fp16 scale per group
        case Precision::int8: return 1.0 + 2.0 / g;
        case Precision::nf4: return (4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0;   // QLoRA double quant
        default: return precision_bytes(p);
    }
}

namespace {

// The routed experts' weights (of layer `l`) held over an expert-parallel group, as a multiple of one
// copy of each.
double expert_copies(const Layer& l, const ParallelConfig& p, const InferenceConfig& in) {
    const double e = l.routing().experts;
    return e > 0 ? in.expert_parallel.expert_slots(e, p.ep) / e : 1.0;
}

}   // namespace

InferenceMemory inference_memory(const ModelSpec& m, const SystemSpec& sys, const ParallelConfig& p,
                                 const InferenceConfig& in) {
    InferenceMemory r;
    const auto pc = count_parameters(m);
    const auto per = layers_per_stage(m.layers, p.pp);
    const int max_layers = *std::max_element(per.begin(), per.end());
    // Transformer weights at the weight precision; embeddings and LM head stay 16-bit (32-bit with FP32 weights).
    // Every layer counted as the model's MoE layer (the routed experts split by tp and, with expert
    // parallelism, over the ep replicas of a group; a dense model's is dense).
    const Layer desc = describe_layer(m, LayerShape{.moe = true});
    const double layer_params = layer_params_per_tp_rank(m, pc, p.tp, true) + layer_param_sums(desc).experts *
                                                                                  expert_copies(desc, p, in) /
                                                                                  (p.tp * std::max(1, p.ep));
    const double wpp = weight_bytes_per_param(in.weight_precision, in.quant_group_size);
    double weights = max_layers * layer_params * wpp;
    // (FP32 weights keep them in FP32: Llama-3-8B's read 27.96 GiB for 29.9)
    const double embed_bytes =
        (pc.embedding + pc.position + pc.output) * (in.weight_precision == Precision::fp32 ? 4.0 : 2.0) / p.tp;
    weights += p.pp == 1 ? embed_bytes : embed_bytes / 2.0;   // first stage embedding, last stage head
    r.weights_bytes = weights;
    r.kv_bytes_per_token = max_layers * kv_cache_elements_per_token_layer(m, p.tp) * precision_bytes(in.kv_precision);
    // A speculative draft model sits beside the target: its weights, and its K/V for every token the
    // target holds (a 405B draft on one H100 "fit" a static batch of 409).
    if (in.speculative.enabled && in.speculative.draft_model) {
        InferenceConfig draft_in = in;
        draft_in.speculative = {};
        const auto dm = inference_memory(*in.speculative.draft_model, sys, p, draft_in);
        r.draft_weights_bytes = dm.weights_bytes;
        r.weights_bytes += dm.weights_bytes;
        r.kv_bytes_per_token += dm.kv_bytes_per_token;
    }
    const double tokens_per_seq = static_cast<double>(in.input_len + in.output_len);
    // Prefill working set per sequence: residual, QKV, MLP intermediate (per TP shard), 16-bit,
    // plus fp32 logits of the last position.
    // (the MLP's: fc1's outputs and fc2's input per token, the routed experts' top_k copies)
    double mlp = 0;
    for (const auto& op : desc) {
        if (op.part == LayerPart::fc1) mlp += op.n * op.rows;
        if (op.part == LayerPart::fc2) mlp += op.k * op.rows;
    }
    const double act_per_seq =
        in.input_len * 2.0 * (2.0 * m.hidden + (m.q_dim() + 2.0 * m.kv_dim()) / p.tp + mlp / p.tp) +
        4.0 * m.vocab / p.tp;
    r.other_bytes = 1.0 * kGiB;   // CUDA context and runtime workspaces
    r.capacity_bytes = sys.gpu.hbm_capacity_bytes;
    auto total_for = [&](double b) {
        return r.weights_bytes + b * tokens_per_seq * r.kv_bytes_per_token + b * act_per_seq + r.other_bytes;
    };
    const double b = static_cast<double>(in.batch);
    r.kv_cache_bytes = b * tokens_per_seq * r.kv_bytes_per_token;
    r.activations_bytes = b * act_per_seq;
    r.total_bytes = total_for(b);
    r.fits = r.total_bytes <= r.capacity_bytes;
    const double free_bytes = r.capacity_bytes - r.weights_bytes - r.other_bytes;
    const double per_seq = tokens_per_seq * r.kv_bytes_per_token + act_per_seq;
    r.max_batch = free_bytes > 0 ? static_cast<std::int64_t>(std::floor(free_bytes / per_seq)) : 0;
    return r;
}

double rlhf_rollout_kv_cache_bytes(const TrainingJob& s) {
    const RolloutJob rj = rlhf_rollout_job(s);
    return inference_memory(s.model, s.system, rj.parallel, rj.inference).kv_cache_bytes;
}

double lora_params_per_layer(const ModelSpec& m, const FinetuneConfig& ft) {
    const double h = static_cast<double>(m.hidden), qd = static_cast<double>(m.q_dim()),
                 kvd = static_cast<double>(m.kv_dim()), f = static_cast<double>(m.ffn_hidden);
    double sum = 0;
    for (const auto& tgt : ft.targets) {
        if (tgt == "q")
            sum += h + qd;
        else if (tgt == "k" || tgt == "v")
            sum += h + kvd;
        else if (tgt == "o")
            sum += qd + h;
        else if ((tgt == "gate" && m.mlp == MlpKind::swiglu) || tgt == "up")
            sum += h + f;
        else if (tgt == "down")
            sum += f + h;
    }
    return sum * ft.rank;
}

int job_gpus_per_node(const SystemSpec& sys, int world) { return std::max(1, std::min(sys.gpus_per_node, world)); }

}   // namespace llmsim
