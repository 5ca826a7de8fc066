#include "cost_models/step_time.hpp"

#include <algorithm>
#include <cmath>

#include "cost_models/layer/layer.hpp"
#include "cost_models/layout.hpp"
#include "cost_models/memory.hpp"
#include "cost_models/model_params.hpp"
#include "cost_models/recompute.hpp"
#include "cost_models/roofline.hpp"
#include "hardware_db/layout_rules.hpp"

namespace llmsim {

namespace {

// Groups of each parallel dimension (Megatron rank order tp -> cp -> ep -> dp -> pp).
struct Groups {
    GroupPlacement tp, cp, ep, dp_cp, expert_dp, pp;
};

Groups make_groups(const SystemSpec& sys, const ParallelConfig& p) {
    const int domain = std::max(1, sys.scaleup_domain);
    Groups g;
    g.tp = place_group(p.tp, 1, domain);
    g.cp = place_group(p.cp, p.tp, domain);
    g.ep = place_group(p.ep, p.tp * p.cp, domain);
    g.dp_cp = place_group(p.dp * p.cp, p.tp, domain);
    g.expert_dp = place_group(std::max(1, p.dp * p.cp / p.ep), p.tp * p.ep, domain);
    // Neighbouring pipeline stages are tp·cp·dp ranks apart.
    g.pp = place_group(p.pp > 1 ? 2 : 1, p.tp * p.cp * p.dp, domain);
    return g;
}

Precision gemm_precision(Precision p) { return p; }

// Transformer Engine userbuffers: GEMM chunks of a pipelined reduce-scatter overlap (initialize_ub's
// default num_splits for the "pipeline" method, used by the proj and fc2 forward GEMMs).
constexpr double kTpOverlapSplits = 4.0;

// Compute throughput a collective of this group takes while it overlaps compute.
double sm_fraction(const SystemSpec& sys, const GroupPlacement& g) {
    return g.domains() > 1 ? sys.inter_node_comm_sm_fraction : sys.intra_node_comm_sm_fraction;
}

struct Builder {
    const ModelSpec& m;
    const SystemSpec& sys;
    const ParallelConfig& p;
    const TrainingConfig& t;
    const AcceleratorSpec& a;
    Groups g;
    Precision gp;
    double e = 2.0;   // activation bytes
    double T = 0;     // tokens of one micro-batch on this GPU (before SP split)
    bool sp = false;
    bool lora = false, qlora = false;   // frozen base weights: no weight-gradient GEMMs
    std::vector<CommEvent>* comms = nullptr;
    double gemm_fwd_s = 0, gemm_bwd_s = 0;   // GEMM time of the layer being built (TP overlap)
    // Share of the layers whose recompute repeats the recorded collectives (recompute_num_layers).
    double redo_share = 1.0;
    // The layer's weight matrices in execution order, each with the compute that runs after its hook
    // fires and before the next one's (its own GEMMs and the parameter-free operators that follow it):
    // DeepSpeed ZeRO-3 gathers, prefetches and reduces per parameter (deepspeed_zero3 below).
    std::vector<Zero3Unit> units;
    Zero3Unit lead;   // operators before the layer's first weight (the previous layer's last segment)
    void attach(double f, double b, double r) {
        Zero3Unit& u = units.empty() ? lead : units.back();
        u.fwd_s += f;
        u.bwd_s += b;
        u.redo_s += r;
    }

    Builder(const TrainingJob& s, std::vector<CommEvent>* c)
        : m(s.model), sys(s.system), p(s.parallel), t(s.training), a(s.system.gpu), comms(c) {
        g = make_groups(sys, p);
        gp = gemm_precision(t.precision);
        e = training_element_bytes(t.precision);
        T = static_cast<double>(t.seq_len) / p.cp * static_cast<double>(t.micro_batch);
        sp = p.sequence_parallel && p.tp > 1;
        lora = t.finetune.method != FinetuneConfig::Method::none;
        qlora = t.finetune.method == FinetuneConfig::Method::qlora;
    }

    CollectiveCost coll(Collective c, double bytes, const GroupPlacement& gp_) const {
        return collective_time(sys, c, bytes, gp_);
    }

    // Forward GEMM plus its two backward GEMMs (data gradient and weight gradient).
    // A frozen weight (LoRA's base model) needs no weight gradient; its input gradient still flows.
    // `recompute`: the share of the forward that backward runs again (0 or 1, or op-level selective
    // recompute's share of a fused GEMM group).
    // `M_stdev`: the spread of M over the batch's members (a grouped GEMM's experts, gemm_shape_efficiency).
    void gemm(LayerCost& L, const std::string& name, double M, double N, double K, double batch, double recompute,
              bool fused_fp8_input = true, bool adapter = false, double M_stdev = 0.0) {
        const bool trainable = adapter || !lora;
        const auto f = gemm_time(a, gp, M, N, K, batch, M_stdev);
        const auto dgrad = gemm_time(a, gp, M, K, N, batch, M_stdev);
        const auto wgrad = trainable ? gemm_time(a, gp, K, N, M, batch) : KernelTime{};
        OpTime op{name, "gemm", f.time_s, dgrad.time_s + wgrad.time_s, recompute * f.time_s, f.flops, f.bytes, true};
        L.fwd_compute_s += f.time_s;
        L.bwd_compute_s += dgrad.time_s + wgrad.time_s;
        L.wgrad_s += wgrad.time_s;
        gemm_fwd_s += f.time_s;
        gemm_bwd_s += dgrad.time_s + wgrad.time_s;
        L.recompute_s += recompute * f.time_s;
        L.ops.push_back(op);
        if (!adapter) {
            Zero3Unit u;
            u.name = name;
            u.params = N * K * batch;
            u.expert = name.rfind("expert", 0) == 0;
            units.push_back(u);
            attach(f.time_s, dgrad.time_s + wgrad.time_s, recompute * f.time_s);
        }
        if (gp == Precision::fp8) {
            // Transformer Engine: a GEMM input is cast to FP8 with a transposed copy for the
            // weight-gradient GEMM. TE fuses that cast into the norm and activation kernels that
            // produce the input (LayerNormLinear, LayerNormMLP), so only an input that comes from
            // another kernel (the attention output) pays a cast_transpose pass (read 2 B, write
            // 1 + 1 B per element); in backward every output gradient does.
            const double fwd_bytes = fused_fp8_input ? 0.0 : 4.0 * M * K * batch;
            const auto cf = memory_time(a, fwd_bytes);
            const auto cb = memory_time(a, 4.0 * M * N * batch);
            const double cf_s = fwd_bytes > 0 ? cf.time_s : 0.0;
            L.fwd_compute_s += cf_s;
            L.bwd_compute_s += cb.time_s;
            L.recompute_s += recompute * cf_s;
            if (!adapter) attach(cf_s, cb.time_s, recompute * cf_s);
            L.ops.push_back(
                OpTime{name + "_fp8_cast", "memory", cf_s, cb.time_s, recompute * cf_s, 0.0, fwd_bytes, true});
        }
    }

    // Bandwidth-bound kernel moving `bytes` forward; its backward moves about twice as much.
    void mem(LayerCost& L, const std::string& name, double bytes, bool recompute) {
        const auto f = memory_time(a, bytes);
        const auto b = memory_time(a, 2.0 * bytes);
        L.fwd_compute_s += f.time_s;
        L.bwd_compute_s += b.time_s;
        if (recompute) L.recompute_s += f.time_s;
        attach(f.time_s, b.time_s, recompute ? f.time_s : 0.0);
        L.ops.push_back(OpTime{name, "memory", f.time_s, b.time_s, recompute ? f.time_s : 0.0, 0.0, bytes, true});
    }

    void record(const std::string& what, const std::string& dim, Collective c, double bytes, const GroupPlacement& grp,
                const CollectiveCost& cost, double calls) const {
        if (!comms || grp.n <= 1) return;
        comms->push_back(CommEvent{what, dim, c, cost.algorithm, bytes, grp.n, grp.domains(), cost.time_s, calls});
    }

    // DeepSpeed ZeRO-3: every weight matrix is gathered by its own all-gather before its module runs
    // (fetch_sub_module), the next one prefetched behind it, and its gradient reduce-scattered on its
    // own after its backward (docs/step-time-model.md, "DeepSpeed ZeRO-3").
    void deepspeed_zero3(LayerCost& L, bool full, double mb_per_step) {
        const double we = t.fp8_params ? 1.0 : e;
        // DeepSpeed reduces the gradients in the parameters' 16-bit type (average_tensor on param.grad;
        // allreduce_always_fp32 is off by default) unless the scenario states the reduction precision.
        const double gb = t.grad_precision_unstated ? e : precision_bytes(t.grad_precision);
        if (!units.empty()) {   // the norm before the first weight ends the previous layer's last segment
            units.back().fwd_s += lead.fwd_s;
            units.back().bwd_s += lead.bwd_s;
            units.back().redo_s += lead.redo_s;
            lead = Zero3Unit{};
        }
        for (auto& u : units) {
            const GroupPlacement& grp = u.expert ? g.expert_dp : g.dp_cp;
            u.gather_s = coll(Collective::all_gather, u.params * we, grp).time_s;
            u.reduce_s = coll(Collective::reduce_scatter, u.params * gb, grp).time_s;
        }
        DeepSpeedZero3 ds;
        ds.prefetch = p.overlap_param_gather;
        ds.overlap_reduce = p.overlap_grad_reduce;
        ds.recompute = full;
        const Zero3Exposure x = deepspeed_zero3_exposure(units, ds);
        L.zero3_exposed_fwd_s = x.fwd_exposed_s;
        L.zero3_exposed_bwd_s = x.bwd_exposed_s;
        L.zero3_total_s = x.fwd_total_s + x.bwd_total_s;
        const double sm = sm_fraction(sys, g.dp_cp);
        L.fwd_compute_s += (x.fwd_total_s - x.fwd_exposed_s) * sm;
        L.bwd_compute_s += std::max(0.0, x.bwd_total_s - x.bwd_exposed_s) * sm;
        if (!comms || g.dp_cp.n <= 1) return;
        for (std::size_t k = 0; k < units.size(); ++k) {
            const auto& u = units[k];
            if (u.params < ds.persistence) continue;
            const GroupPlacement& grp = u.expert ? g.expert_dp : g.dp_cp;
            record("zero-3 all-gather " + u.name + " (DeepSpeed, per parameter)", "dp", Collective::all_gather,
                   u.params * we, grp, coll(Collective::all_gather, u.params * we, grp),
                   x.unit_gathers[k] * mb_per_step);
            record("zero-3 reduce-scatter " + u.name + " gradient (DeepSpeed, per parameter)", "dp",
                   Collective::reduce_scatter, u.params * gb, grp, coll(Collective::reduce_scatter, u.params * gb, grp),
                   mb_per_step);
        }
    }

    // What a layer's recompute policy runs again (docs/step-time-model.md, "Recompute").
    struct Redo {
        bool full = false;
        bool op_sac = false;      // torchtitan's op-level selective policy
        bool passes = false;      // memory-bound passes recomputed
        bool attention = false;   // the attention core recomputed
        OpSacPlan plan;
        // The share of a GEMM's forward that backward runs again.
        double gemm(LayerPart part) const {
            if (full) return 1.0;
            if (!op_sac) return 0.0;
            switch (part) {
                case LayerPart::qkv: return plan.qkv;
                case LayerPart::attn_out: return plan.attn_out;
                case LayerPart::router: return plan.router;
                case LayerPart::fc1: return plan.fc1;
                case LayerPart::fc2: return plan.fc2;
                case LayerPart::shared_fc1: return plan.shared_fc1;
                case LayerPart::shared_fc2: return plan.shared_fc2;
                case LayerPart::none: break;
            }
            return 0.0;
        }
    };

    Redo redo_policy(bool moe_layer) const {
        Redo r;
        r.full = t.recompute == Recompute::full;
        // Selective recompute: the attention core (Megatron) or torchtitan's op-level policy, which
        // recomputes every memory-bound pass and every other GEMM but keeps SDPA's output.
        r.op_sac = op_level_selective(p.framework, t.recompute);
        const bool selective = t.recompute == Recompute::selective && !r.op_sac;
        if (r.op_sac) r.plan = op_sac_plan(m, p.tp, sp ? p.tp : 1.0, moe_layer);
        r.passes = r.full || r.op_sac;
        r.attention = r.full || selective || (r.op_sac && !t.flash_attention);
        return r;
    }

    // The attention core: FlashAttention (or the unfused kernels) over the micro-batch's heads on this rank.
    void attention(LayerCost& L, const AttentionShape& at, const Redo& redo, double& fwd_s, double& bwd_s) {
        AttentionSpec as;
        as.batch_heads = static_cast<double>(t.micro_batch) * at.heads;
        as.s_q = static_cast<double>(t.seq_len) / p.cp;
        as.s_kv = static_cast<double>(t.seq_len);
        // QKᵀ over head_dim and PV over the value dimension: the mean gives the FLOPs (MLA: 192 and 128).
        as.d = 0.5 * (at.head_qk + at.head_v);
        as.causal = true;
        as.fa2 = uses_fa2_attention(p);
        as.precision = gp;
        as.fused = t.flash_attention;
        as.dropout = m.dropout;
        const auto af = attention_time(a, as);
        as.backward = true;
        const auto ab = attention_time(a, as);
        fwd_s = af.time_s;
        bwd_s = ab.time_s;
        const double redo_s = redo.attention ? fwd_s : 0.0;
        L.ops.push_back(OpTime{t.flash_attention ? "attention (flash)" : "attention (unfused)", "attention", fwd_s,
                               bwd_s, redo_s, af.flops, af.bytes, true});
        L.fwd_compute_s += fwd_s;
        L.bwd_compute_s += bwd_s;
        L.recompute_s += redo_s;
        attach(fwd_s, bwd_s, redo_s);
    }

    // Expert parallelism: the all-to-all before and after the experts (dispatch and combine) forward,
    // their gradients backward, the forward's again when backward recomputes the passes.
    void ep_all_to_all(LayerCost& L, double routed, const Redo& redo, double mb_per_step) const {
        if (p.ep <= 1) return;
        const double bytes = routed * static_cast<double>(m.hidden) * e / (sp ? p.tp : 1.0);
        const auto c = coll(Collective::all_to_all, bytes, g.ep);
        L.ep_exposed_fwd_s = 2.0 * c.time_s;
        L.ep_exposed_bwd_s = 2.0 * c.time_s + (redo.passes ? 2.0 * c.time_s : 0.0);
        L.ep_total_s = L.ep_exposed_fwd_s + L.ep_exposed_bwd_s;
        record("ep all-to-all (dispatch + combine)", "ep", Collective::all_to_all, bytes, g.ep, c,
               (4.0 + (redo.passes ? 2.0 * redo_share : 0.0)) * mb_per_step);
    }

    // The layer's operations (cost_models/layer), as the framework runs them: GEMMs forward and
    // backward, the memory-bound passes, the attention core, and the expert all-to-all around routing.
    void operations(LayerCost& L, const Layer& desc, const Redo& redo, double mb_per_step, double& attn_fwd_s,
                    double& attn_bwd_s) {
        // Eager PyTorch (eager_elementwise): RMSNorm, RoPE and the gated activation as one kernel per op.
        const bool eager = eager_elementwise(p);
        for (const auto& op : fuse_gemms(desc)) {
            // Routed experts: the rank's experts as one grouped GEMM over the tokens routed to them.
            const double experts_local = op.experts > 0 ? op.experts / p.ep : 1.0;
            const double rows = op.experts > 0 ? T * op.rows / experts_local : T;
            const double rows_stdev = op.experts > 0 ? routed_rows_stdev(rows, op.experts) : 0.0;
            switch (op.kind) {
                case LayerOpKind::gemm:
                    gemm(L, op.name, rows, op.n, op.k, experts_local, redo.gemm(op.part), !op.fp8_input_cast, false,
                         rows_stdev);
                    break;
                case LayerOpKind::pass:
                    mem(L, op.name, pass_bytes(op, rows * experts_local, e, eager), redo.passes);
                    if (op.pass == ElementwiseKind::moe_routing) ep_all_to_all(L, T * op.rows, redo, mb_per_step);
                    break;
                case LayerOpKind::attention: attention(L, op.attn, redo, attn_fwd_s, attn_bwd_s); break;
                case LayerOpKind::weights: break;
            }
        }
    }

    // LoRA (Hu et al. 2021): the frozen base runs forward and input-gradient GEMMs only (operations());
    // the adapters x·A·B of every target matrix are trained: 2·T·r·Σ(d_in + d_out) FLOPs forward,
    // priced as one skinny GEMM of that shape (sharded over TP like their base matrices).
    // QLoRA (Dettmers et al. 2023) dequantises each NF4 base weight to 16 bits before every use:
    // forward, backward (input gradient) and a recomputed forward each read the packed weights and
    // write the 16-bit copy.
    void lora_adapters(LayerCost& L, const Layer& desc, const Redo& redo) {
        if (!lora) return;
        const double k = lora_params_per_layer(m, t.finetune) / t.finetune.rank / p.tp;
        gemm(L, "lora_adapters", T, t.finetune.rank, k, 1.0, redo.full ? 1.0 : 0.0, true, true);
        if (!qlora) return;
        const auto pc = count_parameters(m);
        const double params = layer_params_per_tp_rank(m, pc, p.tp, desc.routed()) +
                              layer_param_sums(desc).experts / (static_cast<double>(p.tp) * p.ep);
        const double bytes = params * (weight_bytes_per_param(Precision::nf4, 64) + e);
        const double d = memory_time(a, bytes).time_s;
        L.fwd_compute_s += d;
        L.bwd_compute_s += d;
        if (redo.passes) L.recompute_s += d;
        L.ops.push_back(OpTime{"nf4_dequantize", "memory", d, d, redo.passes ? d : 0.0, 0.0, bytes, true});
    }

    // Tensor-parallel communication: 2 all-reduces (or 2 all-gathers + 2 reduce-scatters with sequence
    // parallelism) forward and backward, one around each block (its row-parallel GEMM's output); full
    // recompute repeats the forward ones, op-level selective recompute the all-gathers (it saves
    // reduce-scatter outputs) or the all-reduces.
    void tp_comm(LayerCost& L, const Redo& redo, double mb_per_step) {
        if (p.tp <= 1) return;
        const double bytes = T * static_cast<double>(m.hidden) * e;
        double fwd = 0, rs_s = 0, again = 0;
        if (sp) {
            const auto ag = coll(Collective::all_gather, bytes, g.tp);
            const auto rs = coll(Collective::reduce_scatter, bytes, g.tp);
            fwd = 2.0 * (ag.time_s + rs.time_s);
            rs_s = rs.time_s;
            again = redo.full ? fwd : redo.op_sac ? 2.0 * ag.time_s : 0.0;
            record("tp all-gather (sequence parallel)", "tp", Collective::all_gather, bytes, g.tp, ag,
                   (4.0 + (redo.passes ? 2.0 * redo_share : 0.0)) * mb_per_step);
            record("tp reduce-scatter (sequence parallel)", "tp", Collective::reduce_scatter, bytes, g.tp, rs,
                   (4.0 + (redo.full ? 2.0 * redo_share : 0.0)) * mb_per_step);
        } else {
            const auto ar = coll(Collective::all_reduce, bytes, g.tp);
            fwd = 2.0 * ar.time_s;
            again = redo.passes ? fwd : 0.0;
            record("tp all-reduce", "tp", Collective::all_reduce, bytes, g.tp, ar,
                   (4.0 + (redo.passes ? 2.0 * redo_share : 0.0)) * mb_per_step);
        }
        const double bwd = fwd + again;
        L.tp_total_s = fwd + bwd;
        if (p.tp_comm_overlap && sp) {
            // Userbuffer overlap (Transformer Engine initialize_ub defaults, which Megatron-Core and
            // NeMo use; it needs sequence parallelism): forward, the all-gathers before QKV and fc1
            // are ring exchanges (tp steps, each chunk's GEMM runs while the next chunk arrives) and
            // the reduce-scatters after the output projection and fc2 are pipelined over
            // kTpOverlapSplits GEMM chunks (each chunk's reduce-scatter runs under the next chunk's
            // GEMM), so the last chunk's reduce-scatter, 1/kTpOverlapSplits of each, is exposed.
            // Backward, the output-gradient all-gathers are ring exchanges and the QKV/fc1 input
            // gradient reduce-scatters overlap the weight-gradient GEMMs in bulk: all hideable. What
            // exceeds the layer's GEMM time stays exposed; a recomputed forward exposes its tail again.
            const double rs_tail = 2.0 * rs_s / kTpOverlapSplits;
            L.tp_exposed_fwd_s = rs_tail + std::max(0.0, fwd - rs_tail - gemm_fwd_s);
            L.tp_exposed_bwd_s = std::max(0.0, fwd - gemm_bwd_s) + L.tp_exposed_fwd_s * again / fwd;
            L.fwd_compute_s += (fwd - L.tp_exposed_fwd_s) * sm_fraction(sys, g.tp);
            L.bwd_compute_s += (bwd - L.tp_exposed_bwd_s) * sm_fraction(sys, g.tp);
        } else {
            L.tp_exposed_fwd_s = fwd;
            L.tp_exposed_bwd_s = bwd;
        }
    }

    // Context parallelism: ring exchange of K and V (backward also dK, dV), overlapped with the
    // attention blocks it feeds.
    void cp_comm(LayerCost& L, const AttentionShape& at, const Redo& redo, double attn_fwd_s, double attn_bwd_s,
                 double mb_per_step) {
        if (p.cp <= 1) return;
        const double chunk = T * at.kv_elements * e;   // K and V of the rank's heads
        const auto c = coll(Collective::send_recv, chunk, g.cp);
        const double fwd = (p.cp - 1) * c.time_s;
        const double bwd = 2.0 * fwd + (redo.attention ? fwd : 0.0);
        L.cp_total_s = fwd + bwd;
        const double hide_f = attn_fwd_s * (p.cp - 1.0) / p.cp;
        const double hide_b = attn_bwd_s * (p.cp - 1.0) / p.cp;
        L.cp_exposed_fwd_s = std::max(0.0, fwd - hide_f);
        L.cp_exposed_bwd_s = std::max(0.0, bwd - hide_b);
        L.fwd_compute_s += (fwd - L.cp_exposed_fwd_s) * sm_fraction(sys, g.cp);
        L.bwd_compute_s += (bwd - L.cp_exposed_bwd_s) * sm_fraction(sys, g.cp);
        record("cp ring attention K/V exchange", "cp", Collective::send_recv, chunk, g.cp, c,
               (p.cp - 1) * (3.0 + (redo.attention ? redo_share : 0.0)) * mb_per_step);
    }

    // Sharded data parallelism inside the micro-batch loop (docs/step-time-model.md, "ZeRO-2/3 under
    // gradient accumulation"). ZeRO-2 and ZeRO-3 keep only a 1/dp shard of the gradients, so every
    // micro-batch's backward reduce-scatters this layer's gradients (DeepSpeed stage 2 reduces its
    // gradient buckets in every backward; FSDP without no_sync does the same; no_sync keeps a full
    // gradient buffer and saves nothing). ZeRO-3 / FSDP FULL_SHARD also all-gathers the layer's
    // parameters in every forward and, resharded after forward, again in backward; a recomputed forward
    // (full, or op-level selective) gathers a third time (DeepSpeed's pre-forward hook fetches again)
    // except under torchtitan, which wraps each block in its checkpoint wrapper before fully_shard: the
    // recompute runs inside the unit's backward on the parameters its pre-backward hook gathered.
    // Prefetch is one layer ahead (FSDP BACKWARD_PRE and limit_all_gathers, DeepSpeed's prefetch
    // bucket), so a layer's traffic hides only behind the neighbouring layer's compute; what exceeds it
    // is exposed.
    void sharded_dp(LayerCost& L, const Layer& desc, const Redo& redo, double mb_per_step) {
        const int zero = zero_stage_in_step(p);   // torchtitan with pipeline stages: ZeRO-1's traffic
        if (zero == 3 && p.framework == Framework::deepspeed && !lora && g.dp_cp.n > 1) {
            deepspeed_zero3(L, redo.full, mb_per_step);
            return;
        }
        if (zero < 2 || g.dp_cp.n <= 1) return;
        const auto pc = count_parameters(m);
        const double tp = p.tp;
        const double params = layer_params_per_tp_rank(m, pc, p.tp, desc.routed());
        const double we = t.fp8_params ? 1.0 : e;   // FP8 parameters are gathered in FP8
        const double wbytes = params * we;
        // LoRA: only the adapters (fp32) have gradients.
        const double gbytes =
            lora ? lora_params_per_layer(m, t.finetune) / tp * 4.0 : params * precision_bytes(t.grad_precision);
        const double gathers_bwd = 1.0 + (redo.passes && p.framework != Framework::torchtitan ? 1.0 : 0.0);
        const auto rs = coll(Collective::reduce_scatter, gbytes, g.dp_cp);
        double gather = 0, reduce = rs.time_s;
        CollectiveCost ag;
        if (zero == 3) {
            ag = coll(Collective::all_gather, wbytes, g.dp_cp);
            gather = ag.time_s;
        }
        const double ep_params = layer_param_sums(desc).experts / (tp * p.ep);
        if (ep_params > 0 && g.expert_dp.n > 1) {
            if (zero == 3) gather += coll(Collective::all_gather, ep_params * we, g.expert_dp).time_s;
            if (!lora)
                reduce +=
                    coll(Collective::reduce_scatter, ep_params * precision_bytes(t.grad_precision), g.expert_dp).time_s;
        }
        const double fwd = gather;
        const double bwd_gather = gathers_bwd * gather;
        L.zero3_total_s = fwd + bwd_gather + reduce;
        // Each kind hides when its overlap policy is on; what exceeds the compute it overlaps
        // is exposed, and the hidden part takes its share of the SMs.
        const double fwd_hidden_max = p.overlap_param_gather ? fwd : 0.0;
        const double bwd_hidden_max =
            (p.overlap_param_gather ? bwd_gather : 0.0) + (p.overlap_grad_reduce ? reduce : 0.0);
        const double fwd_over = std::max(0.0, fwd_hidden_max - L.fwd_compute_s);
        const double bwd_over = std::max(0.0, bwd_hidden_max - (L.bwd_compute_s + L.recompute_s));
        L.zero3_exposed_fwd_s = (fwd - fwd_hidden_max) + fwd_over;
        L.zero3_exposed_bwd_s = (bwd_gather + reduce - bwd_hidden_max) + bwd_over;
        L.fwd_compute_s += (fwd_hidden_max - fwd_over) * sm_fraction(sys, g.dp_cp);
        L.bwd_compute_s += (bwd_hidden_max - bwd_over) * sm_fraction(sys, g.dp_cp);
        if (zero == 3)
            record("zero-3 parameter all-gather (per micro-batch)", "dp", Collective::all_gather, wbytes, g.dp_cp, ag,
                   (2.0 + (gathers_bwd - 1.0) * redo_share) * mb_per_step);
        record("zero-2/3 gradient reduce-scatter (per micro-batch)", "dp", Collective::reduce_scatter, gbytes, g.dp_cp,
               rs, mb_per_step);
    }

    LayerCost layer(bool moe_layer, double mb_per_step) {
        LayerCost L;
        gemm_fwd_s = gemm_bwd_s = 0;
        units.clear();
        lead = Zero3Unit{};
        const Layer desc = describe_layer(m, LayerShape{.tp = p.tp, .sp_div = sp ? p.tp : 1.0, .moe = moe_layer});
        const Redo redo = redo_policy(moe_layer);
        double attn_fwd_s = 0, attn_bwd_s = 0;
        operations(L, desc, redo, mb_per_step, attn_fwd_s, attn_bwd_s);
        lora_adapters(L, desc, redo);
        tp_comm(L, redo, mb_per_step);
        cp_comm(L, desc.attention(), redo, attn_fwd_s, attn_bwd_s, mb_per_step);
        sharded_dp(L, desc, redo, mb_per_step);
        return L;
    }
};

double optimizer_bytes_per_param(const TrainingConfig& t) {
    // The optimizer step reads and writes what it keeps (optimizer_state_bytes: the master copy and the
    // moments), reads the gradients twice (the update and the global norm for clipping) and rewrites
    // the weights: the 16-bit copy written from an fp32 master, the 16-bit weights read and written with
    // remainders or without a master, the fp32 weights themselves in fp32 training. Adafactor's factored
    // statistics: 4 bytes per parameter.
    const OptimizerStateBytes kept = optimizer_state_bytes(t);
    const double grad = precision_bytes(t.grad_precision);
    double weights = 0;
    if (t.precision == Precision::fp32)
        weights = 8.0;
    else
        weights = t.master_weights == MasterWeights::fp32 ? 2.0 : 4.0;
    const double factored = t.optimizer == Optimizer::adafactor ? 4.0 : 0.0;
    return 2.0 * kept.total() + weights + 2.0 * grad + factored;
}

// a + w·(b − a) for every time of a layer; the operators are b's, their recompute scaled by w.
LayerCost blend_layers(const LayerCost& a, const LayerCost& b, double w) {
    LayerCost L = b;
    for (double LayerCost::*f :
         {&LayerCost::fwd_compute_s, &LayerCost::bwd_compute_s, &LayerCost::recompute_s, &LayerCost::wgrad_s,
          &LayerCost::tp_exposed_fwd_s, &LayerCost::tp_exposed_bwd_s, &LayerCost::cp_exposed_fwd_s,
          &LayerCost::cp_exposed_bwd_s, &LayerCost::ep_exposed_fwd_s, &LayerCost::ep_exposed_bwd_s,
          &LayerCost::zero3_exposed_fwd_s, &LayerCost::zero3_exposed_bwd_s, &LayerCost::offload_exposed_fwd_s,
          &LayerCost::offload_exposed_bwd_s, &LayerCost::tp_total_s, &LayerCost::cp_total_s, &LayerCost::ep_total_s,
          &LayerCost::zero3_total_s, &LayerCost::offload_total_s})
        L.*f = a.*f + w * (b.*f - a.*f);
    for (auto& op : L.ops) op.recompute_s *= w;
    return L;
}

}   // namespace

Zero3Exposure deepspeed_zero3_exposure(std::span<const Zero3Unit> units, const DeepSpeedZero3& ds) {
    Zero3Exposure x;
    const std::size_t n = units.size();
    if (n == 0) return x;
    x.unit_gathers.assign(n, 0.0);
    auto gathered = [&](std::size_t k) { return units[k].params >= ds.persistence; };
    auto gather = [&](std::size_t k) { return gathered(k) ? units[k].gather_s : 0.0; };
    auto reduce = [&](std::size_t k) { return gathered(k) ? units[k].reduce_s : 0.0; };
    auto prev = [&](std::size_t k) { return (k + n - 1) % n; };
    // Forward (and the checkpointed forward): the pre-forward hook of unit k-1 fetches it and, while
    // fewer than max_live elements are gathered, prefetches unit k, which then runs behind k-1's segment.
    auto forward = [&](bool redo) {
        double exposed = 0;
        for (std::size_t k = 0; k < n; ++k) {
            const std::size_t j = prev(k);
            const double seg = redo ? units[j].redo_s : units[j].fwd_s;
            const bool ahead = ds.prefetch && units[j].params < ds.max_live;
            exposed += ahead ? std::max(0.0, gather(k) - seg) : gather(k);
            x.fwd_total_s += redo ? 0.0 : gather(k);
            x.bwd_total_s += redo ? gather(k) : 0.0;
            x.gathers += gathered(k) ? 1.0 : 0.0;
            x.unit_gathers[k] += gathered(k) ? 1.0 : 0.0;
        }
        return exposed;
    };
    x.fwd_exposed_s = forward(false);
    if (ds.recompute) x.bwd_exposed_s += forward(true);
    // Backward, last unit first. After the checkpointed forward a unit is released unless its backward
    // follows within max_reuse elements: the units after it are used twice in between (recomputed
    // forward, then backward), so only the layer's last weight is kept at the defaults.
    std::vector<double> after(n, 0.0);
    for (std::size_t k = n - 1; k > 0; --k) after[k - 1] = after[k] + units[k].params;
    auto regathered = [&](std::size_t k) { return !(ds.recompute && 2.0 * after[k] < ds.max_reuse); };
    for (std::size_t u = n; u-- > 0;) {
        const std::size_t next = prev(u);       // the unit whose backward comes after u's
        const std::size_t done = (u + 1) % n;   // the unit whose backward came before u's
        const double g = regathered(next) ? gather(next) : 0.0;
        const double r = reduce(done);
        const bool ahead = ds.prefetch && units[u].params < ds.max_live;
        const double hide = (ahead ? g : 0.0) + (ds.overlap_reduce ? r : 0.0);
        x.bwd_exposed_s += std::max(0.0, hide - units[u].bwd_s) + (ahead ? 0.0 : g) + (ds.overlap_reduce ? 0.0 : r);
        x.bwd_total_s += g + r;
        x.gathers += g > 0 ? 1.0 : 0.0;
        x.unit_gathers[next] += g > 0 ? 1.0 : 0.0;
        x.reduces += gathered(done) ? 1.0 : 0.0;
    }
    return x;
}

double offload_exposed_s(double share, double copy_s, int layers, double compute_s) {
    const double behind = layers > 0 ? (layers - 1.0) / layers : 0.0;
    return std::max(0.0, share * copy_s - behind * compute_s);
}

LayerCost layer_cost(const TrainingJob& s, bool moe_layer, std::vector<CommEvent>* comms) {
    const auto& t = s.training;
    const double mb = static_cast<double>(num_microbatches(s.parallel, t));
    const double layers = moe_layer ? s.model.moe_layers() : s.model.dense_mlp_layers();
    const double mb_per_step = mb * layers / s.parallel.pp;
    Builder b(s, comms);
    // recompute_num_layers: the representative layer is the layer-weighted mean of a recomputed layer
    // and one that keeps its activations (each priced whole, its own overlaps included).
    const double share = t.recompute == Recompute::full ? full_recompute_share(s.model.layers, s.parallel, t) : 1.0;
    b.redo_share = share;
    LayerCost L = b.layer(moe_layer, mb_per_step);
    if (share < 1.0) {
        TrainingConfig kept = t;
        kept.recompute = Recompute::none;
        kept.recompute_num_layers = 0;
        Builder b0(TrainingJob{s.model, s.system, s.parallel, kept}, nullptr);
        L = blend_layers(b0.layer(moe_layer, mb_per_step), L, share);
    }
    // Activation offload (Megatron-Core cpu_offloading_num_layers = N of L layers, pp 1; Transformer
    // Engine's offload handlers): the N layers' activations are copied to the host one after another on
    // a copy stream, layer i's copy starting after layer i's forward and due several layers later, so the
    // copies run behind the forward of the L − 1 later layers; the reloads run behind the backward the
    // same way. A layer's activations are whole (no recompute with offload). Per layer (the mean over
    // the L layers): exposed = max(0, (N/L)·copy − (L−1)/L · the layer's compute).
    const double offload = activation_offload_share(s.model.layers, t);
    if (offload > 0.0 && s.system.pcie_GBps > 0) {
        ActivationQuery q = activation_query(s.model, s.parallel, t);
        q.moe_layer = moe_layer;
        const double copy_s = layer_activations(s.model, q).full / (s.system.pcie_GBps * 1e9);
        L.offload_exposed_fwd_s = offload_exposed_s(offload, copy_s, s.model.layers, L.fwd_compute_s);
        L.offload_exposed_bwd_s = offload_exposed_s(offload, copy_s, s.model.layers, L.bwd_compute_s + L.recompute_s);
        L.offload_total_s = offload * 2.0 * copy_s;
    }
    return L;
}

StepCosts step_costs(const TrainingJob& s) {
    std::vector<CommEvent> comms;
    const LayerCost dense = layer_cost(s, false, &comms);
    const LayerCost moe = has_moe_layers(s.model) ? layer_cost(s, true, &comms) : LayerCost{};
    return assemble_step_costs(s, dense, moe, &comms);
}

namespace {

// The pieces of a pipeline stage's cost besides its transformer layers (assemble_step_costs).
struct StageAssembly {
    const TrainingJob& s;
    Builder& b;
    const ParamCounts pc;
    double mb = 1;
    CollectiveCost p2p{};

    StageAssembly(const TrainingJob& job, Builder& builder, double microbatches)
        : s(job), b(builder), pc(count_parameters(job.model)), mb(microbatches) {}

    // Per micro-batch, the stage's layers.
    static void layers(StageCost& sc, const LayerCost& D, const LayerCost& E) {
        const int dense = sc.layers - sc.moe_layers;
        auto sum = [&](auto f) { return dense * f(D) + sc.moe_layers * f(E); };
        sc.fwd_s = sum([](const LayerCost& L) { return L.fwd_s(); });
        sc.bwd_s = sum([](const LayerCost& L) { return L.bwd_s(); });
        sc.wgrad_s = sum([](const LayerCost& L) { return L.wgrad_s; });
        sc.compute_s = sum([](const LayerCost& L) { return L.fwd_compute_s + L.bwd_compute_s + L.recompute_s; });
        sc.tp_s = sum([](const LayerCost& L) { return L.tp_exposed_fwd_s + L.tp_exposed_bwd_s; });
        sc.cp_s = sum([](const LayerCost& L) { return L.cp_exposed_fwd_s + L.cp_exposed_bwd_s; });
        sc.ep_s = sum([](const LayerCost& L) { return L.ep_exposed_fwd_s + L.ep_exposed_bwd_s; });
        sc.zero3_s = sum([](const LayerCost& L) { return L.zero3_exposed_fwd_s + L.zero3_exposed_bwd_s; });
        sc.offload_s = sum([](const LayerCost& L) { return L.offload_exposed_fwd_s + L.offload_exposed_bwd_s; });
    }

    // Embedding on the first stage, LM head and loss on the last.
    void ends(StageCost& sc) const {
        const auto& m = s.model;
        const auto& p = s.parallel;
        const auto& a = s.system.gpu;
        const double e = b.e, h = static_cast<double>(m.hidden);
        const double outside = b.sp ? p.tp : 1.0;
        const double vocab_local = static_cast<double>(m.vocab) / p.tp;
        if (sc.stage == 0) {
            const auto f = memory_time(a, b.T * h * e / outside * 2.0);
            const auto bw = memory_time(a, b.T * h * e / outside * 3.0);
            sc.fwd_s += f.time_s;
            sc.bwd_s += bw.time_s;
            sc.compute_s += f.time_s + bw.time_s;
        }
        if (sc.stage == p.pp - 1) {
            const auto fwd = gemm_time(a, b.gp, b.T, vocab_local, h);
            const auto dgrad = gemm_time(a, b.gp, b.T, h, vocab_local);
            const auto wgrad = b.lora ? KernelTime{} : gemm_time(a, b.gp, h, vocab_local, b.T);   // LoRA: frozen
            // Cross-entropy in fp32 over the logits: read, softmax, write gradient.
            const auto ce = memory_time(a, b.T * vocab_local * (e + 4.0 * 3.0));
            const auto norm = memory_time(a, 2.0 * e * b.T * h / outside);
            double tp_ar = 0;
            if (p.tp > 1) {   // vocab-parallel loss: all-reduce of max and sum per token (fp32)
                tp_ar = 2.0 * collective_time(s.system, Collective::all_reduce, b.T * 4.0, b.g.tp).time_s;
            }
            sc.fwd_s += fwd.time_s + ce.time_s + norm.time_s + tp_ar;
            sc.bwd_s += dgrad.time_s + wgrad.time_s + norm.time_s * 2.0;
            sc.wgrad_s += wgrad.time_s;
            sc.compute_s += fwd.time_s + ce.time_s + dgrad.time_s + wgrad.time_s + 3.0 * norm.time_s;
            sc.tp_s += tp_ar;
        }
    }

    // Pipeline transfers not overlapped with compute (1F1B, GPipe): one send forward and one backward per
    // micro-batch on every stage boundary.
    void pipeline(StageCost& sc, bool overlapped) const {
        const int pp = s.parallel.pp;
        if (pp <= 1) return;
        sc.p2p_s = p2p.time_s;
        if (overlapped) return;
        const int st = sc.stage;
        const double sends = (st > 0 ? 1.0 : 0.0) + (st < pp - 1 ? 1.0 : 0.0);
        sc.pp_s = sends * p2p.time_s;
        sc.fwd_s += (st < pp - 1 ? p2p.time_s : 0.0);
        sc.bwd_s += (st > 0 ? p2p.time_s : 0.0);
    }

    // End-of-step data-parallel gradient reduction. ZeRO-2/3 reduce-scatter the transformer layers'
    // gradients per layer and micro-batch (layer_cost); the stage's remaining parameters (embedding, LM
    // head, final norm) are reduce-scattered once per micro-batch too, at the end of its backward: the
    // first m−1 overlap the next micro-batch's forward (their SM share on the inter-node DP group is ~2%
    // and is not charged), the last one is the step's tail here, as ZeRO-1's. ZeRO-1 and ZeRO-2 gather the
    // updated parameters after the optimizer. LoRA adapters are fp32: 4-byte gradients and weights.
    void data_parallel(StageCost& sc, double dense_params, double expert_params) const {
        const auto& m = s.model;
        const auto& p = s.parallel;
        const auto& t = s.training;
        const int st = sc.stage;
        const double gbytes = b.lora ? 4.0 : precision_bytes(t.grad_precision);
        const double wbytes = b.lora ? 4.0 : b.e;
        // torchtitan with pipeline stages runs a named ZeRO-2/3 as ZeRO-1 (zero_stage_in_step).
        const int zero = zero_stage_in_step(p);
        const bool fsdp_pp = zero != p.zero;
        const Collective gc = zero >= 1 ? Collective::reduce_scatter : Collective::all_reduce;
        const int dense = sc.layers - sc.moe_layers;
        const double layer_params = dense * layer_params_per_tp_rank(m, pc, p.tp, false) +
                                    sc.moe_layers * layer_params_per_tp_rank(m, pc, p.tp, true);
        const double reduced = zero >= 2 ? (b.lora ? 0.0 : std::max(0.0, dense_params - layer_params)) : dense_params;
        const double times = zero >= 2 ? mb : 1.0;   // calls per step
        double dp = 0;
        if (b.g.dp_cp.n > 1 && reduced > 0) {
            const auto cc = collective_time(s.system, gc, reduced * gbytes, b.g.dp_cp);
            dp += cc.time_s;
            if (st == 0)
                b.record(zero >= 2   ? "dp reduce-scatter gradients (embedding, head; per micro-batch)"
                         : fsdp_pp   ? "dp reduce-scatter gradients (FSDP with pipeline stages: last micro-batch)"
                         : zero == 1 ? "dp reduce-scatter gradients"
                                     : "dp all-reduce gradients",
                         "dp", gc, reduced * gbytes, b.g.dp_cp, cc, times);
        }
        if (zero < 2 && expert_params > 0 && b.g.expert_dp.n > 1)
            dp += collective_time(s.system, gc, expert_params * gbytes, b.g.expert_dp).time_s;
        sc.dp_grad_s = dp;
        sc.dp_sm_fraction = sm_fraction(s.system, b.g.dp_cp);
        if ((zero == 1 || zero == 2) && b.g.dp_cp.n > 1) {
            // FP8 parameters: the layers' weights are gathered in FP8 (--fp8-param-gather).
            const double gather_bytes = !b.lora && t.fp8_params ? std::max(0.0, dense_params - layer_params) * wbytes +
                                                                      std::min(dense_params, layer_params) * 1.0
                                                                : dense_params * wbytes;
            const auto ag = collective_time(s.system, Collective::all_gather, gather_bytes, b.g.dp_cp);
            sc.dp_param_gather_s = ag.time_s;
            if (st == 0)
                b.record(fsdp_pp ? "dp all-gather parameters (FSDP with pipeline stages: kept for the step)"
                                 : "dp all-gather parameters (distributed optimizer)",
                         "dp", Collective::all_gather, gather_bytes, b.g.dp_cp, ag, 1);
        }
    }

    // Optimizer step over this GPU's shard of the parameters.
    void optimizer(StageCost& sc, double dense_params, double expert_params) const {
        const auto& p = s.parallel;
        const auto& t = s.training;
        const double wbytes = b.lora ? 4.0 : b.e;
        const double shard = zero_stage_in_step(p) >= 1 ? static_cast<double>(p.dp) * p.cp : 1.0;
        const double local = dense_params / shard + expert_params / std::max(1.0, shard / p.ep);
        if (t.offload == Offload::none) {
            TrainingConfig states = t;   // LoRA: fp32 adapters, no separate master copy
            if (b.lora) states.precision = states.grad_precision = Precision::fp32;
            sc.optimizer_s = memory_time(s.system.gpu, local * optimizer_bytes_per_param(states)).time_s;
        } else {
            // CPU optimizer (ZeRO-Offload): gradients go down during backward (hidden), the host runs
            // Adam for the job's GPUs on the node (the whole node, or fewer for a smaller job) at its
            // DRAM bandwidth (STREAM reaches ~65% of the theoretical figure; fp32 master, m, v read and
            // written, gradient read: 28 bytes per parameter), then the updated 16-bit weights come
            // back up over each GPU's PCIe link.
            // (host_memory_GBps > 0 with offload: the scenario reader's check.)
            const double host_bw = s.system.host_memory_GBps * 1e9 * 0.65;
            const double cpu_s = local * job_gpus_per_node(s.system, p.world()) * 28.0 / host_bw;
            sc.optimizer_s = cpu_s + local * wbytes / (s.system.pcie_GBps * 1e9);
        }
    }

    // The parameters a stage's data-parallel reduction and optimizer handle: the stage's (before ZeRO),
    // dense and expert, or with LoRA only the adapters (fp32).
    void parameters(StageCost& sc, double& dense_params, double& expert_params) const {
        const StageParams sp = stage_parameters(s.model, pc, s.parallel, sc.stage);
        dense_params = sp.dense;
        expert_params = sp.expert;
        sc.params = sp.total();
        if (b.lora) {
            dense_params = sc.layers * lora_params_per_layer(s.model, s.training.finetune) / s.parallel.tp;
            expert_params = 0;
        }
    }
};

}   // namespace

StepCosts assemble_step_costs(const TrainingJob& s, const LayerCost& dense_cost, const LayerCost& moe_cost,
                              std::vector<CommEvent>* comms) {
    StepCosts c;
    const auto& m = s.model;
    const auto& p = s.parallel;
    c.microbatches = num_microbatches(p, s.training);
    const double mb = static_cast<double>(c.microbatches);
    Builder b(s, comms);
    c.dense_layer = dense_cost;
    c.moe_layer = moe_cost;
    StageAssembly stages(s, b, mb);

    // Pipeline send/recv of one micro-batch's activations (split across the TP ranks).
    const double p2p_bytes = b.T * static_cast<double>(m.hidden) * b.e / p.tp;
    auto& p2p = stages.p2p;
    if (p.pp > 1) p2p = collective_time(s.system, Collective::send_recv, p2p_bytes, b.g.pp);
    if (p.pp > 1 && p.tp > 1 && !b.sp) {
        // Narayanan et al. 2021 Sec. 4.1 scatter/gather: each TP rank sends 1/tp of the activation
        // and the receiving stage all-gathers it over NVLink before use.
        p2p.time_s +=
            collective_time(s.system, Collective::all_gather, b.T * static_cast<double>(m.hidden) * b.e, b.g.tp).time_s;
    }
    c.pp_p2p_overlapped = p.schedule->overlaps_p2p;
    if (p.pp > 1)
        b.record("pp send/recv (activations, gradients)", "pp", Collective::send_recv, p2p_bytes, b.g.pp, p2p,
                 2.0 * mb * p.vp);

    const auto per = layers_per_stage(m.layers, p.pp);
    for (int st = 0; st < p.pp; ++st) {
        StageCost sc;
        sc.stage = st;
        sc.layers = per[st];
        sc.moe_layers = moe_layers_on_stage(m, p.pp, st);
        StageAssembly::layers(sc, c.dense_layer, c.moe_layer);
        stages.ends(sc);
        stages.pipeline(sc, c.pp_p2p_overlapped);
        double dense_params = 0, expert_params = 0;
        stages.parameters(sc, dense_params, expert_params);
        stages.data_parallel(sc, dense_params, expert_params);
        stages.optimizer(sc, dense_params, expert_params);
        c.stages.push_back(sc);
    }
    // The collectives a step runs: a dense layer's recorded for a model with no dense layer (every layer MoE)
    // run 0 times and are left out.
    if (comms)
        for (const auto& ev : *comms)
            if (ev.calls_per_step > 0) c.comms.push_back(ev);
    return c;
}

const char* dominant_cost(const StepBreakdown& b) {
    const std::pair<double, const char*> parts[] = {{b.compute, "compute"},
                                                    {b.tp_comm, "tensor-parallel communication"},
                                                    {b.cp_comm, "context-parallel communication"},
                                                    {b.ep_comm, "expert-parallel all-to-all"},
                                                    {b.pp_comm, "pipeline send/recv"},
                                                    {b.dp_comm, "data-parallel communication"},
                                                    {b.bubble, "pipeline bubble"},
                                                    {b.optimizer, "optimizer step"},
                                                    {b.offload, "activation offload (host link)"}};
    return std::max_element(std::begin(parts), std::end(parts),
                            [](const auto& x, const auto& y) { return x.first < y.first; })
        ->second;
}

void finish_estimate(const TrainingJob& s, StepEstimate& e, double pipeline_s, double bubble_s, int critical) {
    const auto& p = s.parallel;
    const auto& C = e.costs;
    const double m = static_cast<double>(C.microbatches);
    e.microbatches = C.microbatches;
    e.pipeline_time_s = pipeline_s;
    e.critical_stage = critical;

    const StepTail tail = step_tail(p.overlap_grad_reduce, p.overlap_param_gather, stage_runs(C));
    const double dp_exposed = tail.dp_exposed_s, gather_exposed = tail.gather_exposed_s, opt = tail.optimizer_s;
    e.step_time_s = pipeline_s + dp_exposed + gather_exposed + opt;

    const auto& cs = C.stages[critical];
    auto& b = e.breakdown;
    b.compute = m * cs.compute_s;
    b.tp_comm = m * cs.tp_s;
    b.cp_comm = m * cs.cp_s;
    b.ep_comm = m * cs.ep_s;
    b.pp_comm = m * cs.pp_s;
    b.dp_comm = m * cs.zero3_s + dp_exposed + gather_exposed;
    b.offload = m * cs.offload_s;
    b.optimizer = opt;
    b.bubble = bubble_s;
    b.bubble = reported_bubble_s(pipeline_s, bubble_s, C.microbatches, stage_work_s(cs));
    b.exposed_comm = b.tp_comm + b.cp_comm + b.ep_comm + b.pp_comm + b.dp_comm;
    e.bubble_fraction = e.step_time_s > 0 ? b.bubble / e.step_time_s : 0.0;
    e.dominant = dominant_cost(b);

    e.flops = training_flops(s.model, s.training, s.parallel.framework,
                             full_recompute_share(s.model.layers, s.parallel, s.training));
    e.tokens_per_step = e.flops.tokens_per_step;
    e.model_flops_per_step = e.flops.model_flops_per_step;
    e.hardware_flops_per_step = e.flops.hardware_flops_per_step;
    e.tokens_per_s = e.tokens_per_step / e.step_time_s;
    e.tokens_per_s_per_gpu = e.tokens_per_s / s.gpus();
    const double peak = s.system.gpu.peak(s.training.precision) * s.gpus();
    e.mfu = e.model_flops_per_step / (e.step_time_s * peak);
    e.hfu = e.hardware_flops_per_step / (e.step_time_s * peak);
    e.achieved_tflops_per_gpu = e.model_flops_per_step / e.step_time_s / s.gpus() / 1e12;
    if (s.training.token_budget) {
        e.token_budget = *s.training.token_budget;
        const double secs = e.token_budget / e.tokens_per_s;
        e.train_days = secs / 86400.0;
        e.gpu_hours = secs / 3600.0 * s.gpus();
    }
}

double exposed_param_gather_s(bool overlap, double gather_s, double first_forward_s) {
    return overlap ? std::max(0.0, gather_s - first_forward_s) : gather_s;
}

double stage_work_s(const StageCost& st) {
    return st.compute_s + st.tp_s + st.cp_s + st.ep_s + st.pp_s + st.zero3_s + st.offload_s;
}

double reported_bubble_s(double pipeline_s, double bubble_s, std::int64_t microbatches, double critical_work_s) {
    // Whatever the schedule adds beyond the critical stage's work (uneven stages) is bubble too.
    // (Differences at rounding level are not bubble.)
    const double extra = pipeline_s - (static_cast<double>(microbatches) * critical_work_s + bubble_s);
    return bubble_s + (extra > 1e-12 * pipeline_s ? extra : 0.0);
}

std::vector<StageRun> stage_runs(const StepCosts& costs) {
    std::vector<StageRun> runs;
    runs.reserve(costs.stages.size());
    for (const auto& st : costs.stages) {
        StageRun r;
        r.first = st.stage;
        r.fwd_s = st.fwd_s;
        r.bwd_s = st.bwd_s;
        r.wgrad_s = st.wgrad_s;
        r.work_s = stage_work_s(st);
        r.dp_grad_s = st.dp_grad_s;
        r.dp_sm_fraction = st.dp_sm_fraction;
        r.dp_param_gather_s = st.dp_param_gather_s;
        r.optimizer_s = st.optimizer_s;
        runs.push_back(r);
    }
    return runs;
}

PipelinePlay closed_form_pipeline(const ScheduleDef& schedule, int vp, std::int64_t microbatches,
                                  std::span<const StageRun> runs) {
    PipelineTimes t;
    t.chunks = schedule.uses_chunks ? std::max(1, vp) : 1;
    t.microbatches = microbatches;
    t.stages = 0;
    double work_max = 0;
    PipelinePlay r;
    for (const auto& g : runs) {
        const double ts = g.fwd_s + g.bwd_s;
        if (ts > t.max_stage_s) {
            t.max_stage_s = ts;
            t.wgrad_of_max_stage_s = g.wgrad_s;
            r.critical_stage = g.first;
            work_max = g.work_s;
        }
        t.sum_stage_s += g.count * ts;
        t.sum_wgrad_s += g.count * g.wgrad_s;
        t.stages += g.count;
    }
    r.bubble_s = schedule.bubble_s(t);
    r.pipeline_s = static_cast<double>(microbatches) * t.max_stage_s + r.bubble_s;
    r.reported_bubble_s = reported_bubble_s(r.pipeline_s, r.bubble_s, microbatches, work_max);
    return r;
}

StepTail step_tail(bool overlap_grad_reduce, bool overlap_param_gather, std::span<const StageRun> runs) {
    StepTail t;
    double drain_before = 0;
    for (const auto& g : runs) {
        // The first stage of a run has the least slack, so the run's exposure is the first's.
        const double hide = drain_before + (overlap_grad_reduce ? g.bwd_s : 0.0);
        const double exposed = std::max(0.0, g.dp_grad_s - hide);
        // The hidden part slows the backward it overlaps (its kernels share the SMs).
        const double hidden_own = overlap_grad_reduce ? std::min(g.dp_grad_s - exposed, g.bwd_s) : 0.0;
        t.dp_exposed_s = std::max(t.dp_exposed_s, exposed + hidden_own * g.dp_sm_fraction);
        drain_before += g.count * g.bwd_s;
        t.optimizer_s = std::max(t.optimizer_s, g.optimizer_s);
        t.gather_exposed_s =
            std::max(t.gather_exposed_s, exposed_param_gather_s(overlap_param_gather, g.dp_param_gather_s, g.fwd_s));
    }
    return t;
}

StepEstimate estimate_step(const TrainingJob& s, const StepCosts& costs) {
    StepEstimate e;
    e.costs = costs;
    const auto& p = s.parallel;
    const auto runs = stage_runs(costs);
    const PipelinePlay play = closed_form_pipeline(*p.schedule, p.vp, costs.microbatches, runs);
    e.memory = training_memory(s);
    finish_estimate(s, e, play.pipeline_s, play.bubble_s, play.critical_stage);
    return e;
}

StepEstimate estimate_step(const TrainingJob& s) { return estimate_step(s, step_costs(s)); }

}   // namespace llmsim
