#include "app/search/fast_eval.hpp"

#include <algorithm>
#include <cmath>

#include "cost_models/collectives.hpp"
#include "cost_models/layer/layer.hpp"
#include "cost_models/layout.hpp"
#include "cost_models/memory.hpp"
#include "cost_models/recompute.hpp"
#include "cost_models/rlhf.hpp"
#include "cost_models/step_time.hpp"
#include "hardware_db/layout_rules.hpp"

namespace llmsim::search {

Scenario apply_candidate(const Scenario& base, const Candidate& c) {
    Scenario s = base;
    s.gpus = c.gpus;
    auto& p = s.parallel;
    p.tp = c.tp;
    p.pp = c.pp;
    p.dp = c.dp;
    p.cp = c.cp;
    p.ep = c.ep;
    p.vp = c.vp;
    p.sequence_parallel = c.sp;
    p.zero = c.zero;
    p.schedule = c.schedule;
    auto& t = s.training;
    t.micro_batch = c.micro_batch;
    t.global_batch = c.global_batch;
    t.recompute = c.recompute;
    t.recompute_num_layers = c.recompute == Recompute::full ? c.recompute_layers : 0;
    t.activation_offload_layers = c.offload_layers;
    t.offload = c.offload;
    p.tp_comm_overlap = c.overlap.tp_comm;
    p.overlap_grad_reduce = c.overlap.grad_reduce;
    p.overlap_param_gather = c.overlap.param_gather;
    return s;
}

Candidate candidate_of(const Scenario& s) {
    Candidate c;
    const auto& p = s.parallel;
    c.gpus = s.gpus;
    c.tp = p.tp;
    c.pp = p.pp;
    c.dp = p.dp;
    c.cp = p.cp;
    c.ep = p.ep;
    c.vp = p.vp;
    c.sp = p.sequence_parallel && p.tp > 1;
    c.zero = p.zero;
    c.schedule = p.schedule;
    c.micro_batch = s.training.micro_batch;
    c.global_batch = s.training.global_batch;
    c.recompute = s.training.recompute;
    c.recompute_layers = s.training.recompute == Recompute::full ? s.training.recompute_num_layers : 0;
    c.offload_layers = s.training.activation_offload_layers;
    c.offload = s.training.offload;
    c.overlap.tp_comm = p.tp_comm_overlap;
    c.overlap.grad_reduce = p.overlap_grad_reduce;
    c.overlap.param_gather = p.overlap_param_gather;
    return c;
}

const char* memory_part_name(int part) {
    static const char* names[] = {"weights", "gradients", "optimizer states", "activations", "buffers and reserve"};
    return part >= 0 && part < kMemoryParts ? names[part] : "?";
}

FastEvaluator::FastEvaluator(const Scenario& base) : base_(base) {
    // Provenance does not change a number; dropping it makes the scenario copies of cache misses cheap.
    base_.system.provenance.clear();
    base_.system.gpu.provenance.clear();
    peak_ = base.system.gpu.peak(base.training.precision);
    frag_ = base.training.fragmentation_fraction;
}

std::size_t FastEvaluator::layer_entries() const {
    std::lock_guard<std::mutex> lock(mu_);
    return layers_.size();
}

namespace {

FastEvaluator::LayerScalars scalars(const LayerCost& L, const LayerActivations& a) {
    FastEvaluator::LayerScalars s;
    s.fwd = L.fwd_s();
    s.bwd = L.bwd_s();
    s.wgrad = L.wgrad_s;
    s.compute = L.fwd_compute_s + L.bwd_compute_s + L.recompute_s;
    s.tp = L.tp_exposed_fwd_s + L.tp_exposed_bwd_s;
    s.cp = L.cp_exposed_fwd_s + L.cp_exposed_bwd_s;
    s.ep = L.ep_exposed_fwd_s + L.ep_exposed_bwd_s;
    s.zero3 = L.zero3_exposed_fwd_s + L.zero3_exposed_bwd_s;
    s.act_total = a.total;
    s.act_working = a.recompute_working;
    s.fwd_compute = L.fwd_compute_s;
    s.bwd_compute = L.bwd_compute_s + L.recompute_s;
    s.act_full = a.full;
    s.offload = L.offload_exposed_fwd_s + L.offload_exposed_bwd_s;
    s.act_offloaded = a.offloaded;
    return s;
}

FastEvaluator::EdgeScalars edge_scalars(const StageCost& st) {
    FastEvaluator::EdgeScalars e;
    e.fwd = st.fwd_s;
    e.bwd = st.bwd_s;
    e.wgrad = st.wgrad_s;
    e.compute = st.compute_s;
    e.tp = st.tp_s;
    e.pp = st.pp_s;
    return e;
}

}   // namespace

const FastEvaluator::LayerEntry& FastEvaluator::layer(int tp, int cp, int ep, std::int64_t mb, bool sp, Recompute rc,
                                                      int zero, int dp, const OverlapPolicy& overlap) {
    sp = sp && tp > 1;
    // ZeRO-2/3 layers carry their per-micro-batch data-parallel traffic: keyed by stage and dp·cp.
    const int sharded = zero >= 2 ? (zero == 3 ? -dp * cp : dp * cp) : 0;
    // The overlap policies layer_cost() reads, each only where it reads it (userbuffer overlap
    // needs SP; grad-reduce and param-gather overlap act inside a layer only with ZeRO-2/3), so
    // layouts that cannot differ share one entry.
    const bool tco = sp && overlap.tp_comm;
    const bool ogr = zero >= 2 && overlap.grad_reduce;
    const bool opg = zero >= 2 && overlap.param_gather;
    const int overlap_bits = (tco ? 1 : 0) | (ogr ? 2 : 0) | (opg ? 4 : 0);
    const auto key = std::make_tuple(tp, cp, ep, mb, sp, static_cast<int>(rc), sharded, overlap_bits);
    {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = layers_.find(key);
        if (it != layers_.end()) return *it->second;
    }
    ParallelConfig p = base_.parallel;
    p.tp = tp;
    p.cp = cp;
    p.ep = ep;
    p.pp = 1;
    p.vp = 1;
    p.dp = zero >= 2 ? dp : 1;
    p.zero = zero >= 2 ? zero : 0;
    p.sequence_parallel = sp;
    p.schedule = &default_schedule();
    p.tp_comm_overlap = tco;
    p.overlap_grad_reduce = ogr;
    p.overlap_param_gather = opg;
    TrainingConfig t = base_.training;
    t.micro_batch = mb;
    t.global_batch = mb * p.dp;
    t.recompute = rc;
    t.recompute_num_layers = 0;   // whole-model policies; blend() makes the partial ones
    t.activation_offload_layers = 0;
    t.offload = Offload::none;
    const TrainingJob job{base_.model, base_.system, p, t};
    auto entry = std::make_unique<LayerEntry>();
    ActivationQuery q = activation_query(job.model, p, t);
    entry->dense = scalars(layer_cost(job, false), layer_activations(job.model, q));
    if (has_moe_layers(job.model)) {
        q.moe_layer = true;
        entry->moe = scalars(layer_cost(job, true), layer_activations(job.model, q));
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, inserted] = layers_.emplace(key, std::move(entry));
    return *it->second;
}

FastEvaluator::LayerEntry FastEvaluator::blend(const LayerEntry& kept, const LayerEntry& recomputed, double share) {
    auto mix = [share](const LayerScalars& a, const LayerScalars& b) {
        LayerScalars r;
        for (double LayerScalars::*f :
             {&LayerScalars::fwd, &LayerScalars::bwd, &LayerScalars::wgrad, &LayerScalars::compute, &LayerScalars::tp,
              &LayerScalars::cp, &LayerScalars::ep, &LayerScalars::zero3, &LayerScalars::act_total,
              &LayerScalars::fwd_compute, &LayerScalars::bwd_compute, &LayerScalars::act_full, &LayerScalars::offload,
              &LayerScalars::act_offloaded})
            r.*f = a.*f + share * (b.*f - a.*f);
        r.act_working = share > 0 ? b.act_working : a.act_working;
        return r;
    };
    return LayerEntry{mix(kept.dense, recomputed.dense), mix(kept.moe, recomputed.moe)};
}

FastEvaluator::LayerEntry FastEvaluator::offloaded(const LayerEntry& kept, double share) const {
    const double link = base_.system.pcie_GBps * 1e9;
    const int layers = base_.model.layers;
    auto off = [&](const LayerScalars& a) {
        LayerScalars r = a;
        if (!(link > 0) || share <= 0) return r;
        const double copy_s = a.act_full / link;
        const double f = offload_exposed_s(share, copy_s, layers, a.fwd_compute);
        const double b = offload_exposed_s(share, copy_s, layers, a.bwd_compute);
        r.fwd += f;
        r.bwd += b;
        r.offload += f + b;
        r.act_offloaded = share * a.act_total;
        r.act_total -= r.act_offloaded;
        return r;
    };
    return LayerEntry{off(kept.dense), off(kept.moe)};
}

const FastEvaluator::EdgeEntry& FastEvaluator::edge(int tp, int cp, int dp, int pp, std::int64_t mb, bool sp,
                                                    const ScheduleDef& sched) {
    sp = sp && tp > 1;
    const int ppc = std::min(pp, 3);
    // The edges depend on the schedule only through whether pipeline send/recv overlap compute.
    const bool overlapped = sched.overlaps_p2p && pp > 1;
    const auto place = place_group(ppc > 1 ? 2 : 1, tp * cp * dp, std::max(1, base_.system.scaleup_domain));
    const auto key = std::make_tuple(tp, cp, mb, sp, ppc, overlapped, place.n, place.per_domain);
    {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = edges_.find(key);
        if (it != edges_.end()) return *it->second;
    }
    ParallelConfig p = base_.parallel;
    p.tp = tp;
    p.cp = cp;
    p.dp = dp;
    p.ep = 1;
    p.pp = ppc;
    p.schedule = overlapped ? &sched : &default_schedule();
    p.vp = p.schedule->uses_chunks ? 2 : 1;
    p.zero = 0;
    p.sequence_parallel = sp;
    TrainingConfig t = base_.training;
    t.micro_batch = mb;
    t.global_batch = mb * dp;
    t.offload = Offload::none;
    const StepCosts c = assemble_step_costs(TrainingJob{base_.model, base_.system, p, t}, LayerCost{}, LayerCost{});
    auto entry = std::make_unique<EdgeEntry>();
    if (ppc == 1) {
        entry->cls[kOnly] = edge_scalars(c.stages[0]);
    } else {
        entry->cls[kFirst] = edge_scalars(c.stages[0]);
        entry->cls[kLast] = edge_scalars(c.stages[ppc - 1]);
        if (ppc == 3) entry->cls[kMiddle] = edge_scalars(c.stages[1]);
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, inserted] = edges_.emplace(key, std::move(entry));
    return *it->second;
}

const FastEvaluator::StateEntry& FastEvaluator::state(int tp, int cp, int pp, int dp, int ep, int zero,
                                                      Offload offload) {
    const auto key = std::make_tuple(tp, cp, pp, dp, ep, zero, static_cast<int>(offload));
    {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = states_.find(key);
        if (it != states_.end()) return *it->second;
    }
    ParallelConfig p = base_.parallel;
    p.tp = tp;
    p.cp = cp;
    p.pp = pp;
    p.dp = dp;
    p.ep = ep;
    p.vp = 1;
    p.zero = zero;
    p.sequence_parallel = tp > 1;
    p.schedule = &default_schedule();
    TrainingConfig t = base_.training;
    // Small activations (one micro-batch, full recompute) keep the subtraction below exact.
    t.micro_batch = 1;
    t.global_batch = dp;
    t.recompute = Recompute::full;
    t.offload = offload;
    const TrainingJob job{base_.model, base_.system, p, t};
    const StepCosts c = assemble_step_costs(job, LayerCost{}, LayerCost{});
    const MemoryBreakdown mem = training_memory(job);
    MemoryBreakdown none;
    if (offload != Offload::none) {
        TrainingConfig t0 = t;
        t0.offload = Offload::none;
        none = training_memory(TrainingJob{base_.model, base_.system, p, t0});
    }
    const auto per = layers_per_stage(job.model.layers, pp);
    auto entry = std::make_unique<StateEntry>();
    entry->dp = dp;
    if (t.rlhf.enabled) {   // one sequence per rollout replica (global batch 1): the KV cache is linear in it
        TrainingConfig t1 = t;
        t1.global_batch = 1;
        entry->rollout_kv_per_seq = rlhf_rollout_kv_cache_bytes(TrainingJob{base_.model, base_.system, p, t1});
    }
    for (int st = 0; st < pp; ++st) {
        StageGroup g;
        g.first = st;
        g.count = 1;
        g.layers = per[st];
        g.moe = moe_layers_on_stage(job.model, pp, st);
        g.dense = g.layers - g.moe;
        g.cls = pp == 1 ? kOnly : st == 0 ? kFirst : st == pp - 1 ? kLast : kMiddle;
        const auto& sc = c.stages[st];
        g.dp_grad_s = sc.dp_grad_s;
        g.dp_gather_s = sc.dp_param_gather_s;
        g.optimizer_s = sc.optimizer_s;
        g.dp_sm_fraction = sc.dp_sm_fraction;
        const auto& sm = mem.stages[st];
        g.weights = sm.weights_bytes;
        g.grads = sm.gradients_bytes;
        g.optimizer = sm.optimizer_bytes;
        g.other_fixed = sm.other_bytes - frag_ * sm.activations_bytes;
        if (offload != Offload::none) {
            const auto& s0 = none.stages[st];
            g.offloaded = (s0.weights_bytes + s0.gradients_bytes + s0.optimizer_bytes) -
                          (sm.weights_bytes + sm.gradients_bytes + sm.optimizer_bytes);
        }
        auto& gs = entry->groups;
        if (!gs.empty()) {
            auto& b = gs.back();
            if (b.layers == g.layers && b.moe == g.moe && b.cls == g.cls && b.dp_grad_s == g.dp_grad_s &&
                b.dp_gather_s == g.dp_gather_s && b.optimizer_s == g.optimizer_s &&
                b.dp_sm_fraction == g.dp_sm_fraction && b.weights == g.weights && b.grads == g.grads &&
                b.optimizer == g.optimizer && b.other_fixed == g.other_fixed && b.offloaded == g.offloaded) {
                ++b.count;
                continue;
            }
        }
        gs.push_back(g);
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, inserted] = states_.emplace(key, std::move(entry));
    return *it->second;
}

const TrainingFlops& FastEvaluator::flops(std::int64_t global_batch) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = flops_.find(global_batch);
    if (it != flops_.end()) return *it->second;
    TrainingConfig t = base_.training;
    t.global_batch = global_batch;
    auto f = std::make_unique<TrainingFlops>(training_flops(base_.model, t, base_.parallel.framework));
    auto [ins, ok] = flops_.emplace(global_batch, std::move(f));
    return *ins->second;
}

FastMemory FastEvaluator::memory(const StateEntry& st, const LayerEntry& le, int tp, int cp, int pp, int vp,
                                 const ScheduleDef& sched, bool sp, std::int64_t mb, std::int64_t microbatches) const {
    const auto& m = base_.model;
    const bool spx = sp && tp > 1;
    const double tokens_local = static_cast<double>(base_.training.seq_len) / cp * mb;
    const double sp_div = spx ? tp : 1.0;
    ParallelConfig pc;
    pc.pp = pp;
    pc.vp = vp;
    pc.schedule = &sched;
    const double live = loss_microbatches_in_flight(sched, pp, microbatches);
    const double emb_per = embedding_activation_bytes(m, tokens_local, sp_div);
    const double logits = live * loss_activation_bytes(m, tokens_local, tp, sp_div, base_.parallel.framework);
    const bool rlhf = base_.training.rlhf.enabled;
    double rollout_kv = 0;
    if (rlhf) {   // rlhf_rollout_job(): gpus / tp replicas, each ceil(global batch / replicas) sequences
        const std::int64_t replicas = static_cast<std::int64_t>(cp) * pp * st.dp;
        const std::int64_t gb = mb * microbatches * st.dp;
        const std::int64_t seqs = (gb + replicas - 1) / replicas;   // ceil: whole sequences per replica
        rollout_kv = static_cast<double>(seqs) * st.rollout_kv_per_seq;
    }
    FastMemory best;
    bool first = true;
    for (const auto& g : st.groups) {
        const int s = g.first;
        const double inflight = microbatches_in_flight(pc, microbatches, s);
        const double per_mb = g.dense * le.dense.act_total + g.moe * le.moe.act_total;
        double act = per_mb * inflight;
        if (rlhf) act *= 2.0;   // training_memory(): the critic's activations (same shape as the actor)
        act += std::max(g.dense ? le.dense.act_working : 0.0, g.moe ? le.moe.act_working : 0.0);
        if (s == 0) act += inflight * emb_per;
        if (s == pp - 1) act += logits;
        act = std::max(act, rollout_kv);   // training_memory(): RLHF rollout's KV cache
        const double other = g.other_fixed + frag_ * act;
        const double total = g.weights + g.grads + g.optimizer + act + other;
        if (first || total > best.total_bytes) {
            first = false;
            best.total_bytes = total;
            best.stage = s;
            best.parts[kWeights] = g.weights;
            best.parts[kGradients] = g.grads;
            best.parts[kOptimizer] = g.optimizer;
            best.parts[kActivations] = act;
            best.parts[kOther] = other;
            const double act_off = (g.dense * le.dense.act_offloaded + g.moe * le.moe.act_offloaded) * inflight;
            best.host_bytes_per_node = (g.offloaded + act_off) * job_gpus_per_node(base_.system, tp * cp * pp * st.dp);
        }
    }
    int dom = 0;
    for (int i = 1; i < kMemoryParts; ++i)
        if (best.parts[dom] < best.parts[i]) dom = i;
    best.dominant = dom;
    const double host_cap = base_.system.host_memory_bytes;
    best.host_fits = best.host_bytes_per_node == 0 || host_cap <= 0 || best.host_bytes_per_node <= host_cap;
    return best;
}

FastTime FastEvaluator::time(const StateEntry& st, const LayerEntry& le, const EdgeEntry& ed, int gpus, int vp,
                             const ScheduleDef& sched, std::int64_t microbatches, const TrainingFlops& fl,
                             const OverlapPolicy& overlap) const {
    const auto& D = le.dense;
    const auto& E = le.moe;
    // The same closed form as estimate_step() (closed_form_pipeline, step_tail), over runs of
    // identical stages instead of every stage.
    constexpr std::size_t kInline = 16;
    StageRun inline_runs[kInline];
    std::vector<StageRun> heap_runs;
    StageRun* runs = inline_runs;
    if (st.groups.size() > kInline) {
        heap_runs.resize(st.groups.size());
        runs = heap_runs.data();
    }
    std::size_t n = 0;
    for (const auto& g : st.groups) {
        const auto& x = ed.cls[g.cls];
        const double dn = g.dense, mo = g.moe;
        StageRun& r = runs[n++];
        r.first = g.first;
        r.count = g.count;
        r.fwd_s = (dn * D.fwd + mo * E.fwd) + x.fwd;
        r.bwd_s = (dn * D.bwd + mo * E.bwd) + x.bwd;
        r.wgrad_s = (dn * D.wgrad + mo * E.wgrad) + x.wgrad;
        r.work_s = (dn * D.compute + mo * E.compute) + x.compute + (dn * D.tp + mo * E.tp) + x.tp +
                   (dn * D.cp + mo * E.cp) + (dn * D.ep + mo * E.ep) + x.pp + (dn * D.zero3 + mo * E.zero3) +
                   (dn * D.offload + mo * E.offload);
        r.dp_grad_s = g.dp_grad_s;
        r.dp_sm_fraction = g.dp_sm_fraction;
        r.dp_param_gather_s = g.dp_gather_s;
        r.optimizer_s = g.optimizer_s;
    }
    const std::span<const StageRun> all(runs, n);
    const PipelinePlay play = closed_form_pipeline(sched, vp, microbatches, all);
    const StepTail tail = step_tail(overlap.grad_reduce, overlap.param_gather, all);
    FastTime r;
    r.pipeline_s = play.pipeline_s;
    r.step_time_s = r.pipeline_s + tail.dp_exposed_s + tail.gather_exposed_s + tail.optimizer_s;
    r.critical_stage = play.critical_stage;
    r.bubble_s = play.reported_bubble_s;
    r.bubble_fraction = r.step_time_s > 0 ? r.bubble_s / r.step_time_s : 0.0;
    r.tokens_per_s = fl.tokens_per_step / r.step_time_s;
    r.mfu = fl.model_flops_per_step / (r.step_time_s * (peak_ * gpus));
    return r;
}

FastEvaluator::LayerEntry FastEvaluator::candidate_layer(const Candidate& c, int zero) {
    const auto& le = layer(c.tp, c.cp, c.ep, c.micro_batch, c.sp, c.recompute, zero, c.dp, c.overlap);
    if (c.offload_layers > 0) {
        TrainingConfig t;
        t.activation_offload_layers = c.offload_layers;
        return offloaded(le, activation_offload_share(base_.model.layers, t));
    }
    if (c.recompute != Recompute::full || c.recompute_layers <= 0) return le;
    ParallelConfig p;
    p.pp = c.pp;
    p.vp = c.vp;
    p.schedule = c.schedule;
    TrainingConfig t;
    t.recompute = Recompute::full;
    t.recompute_num_layers = c.recompute_layers;
    const double share = full_recompute_share(base_.model.layers, p, t);
    return blend(layer(c.tp, c.cp, c.ep, c.micro_batch, c.sp, Recompute::none, zero, c.dp, c.overlap), le, share);
}

FastMemory FastEvaluator::memory(const Candidate& c) {
    const int zero = zero_stage_in_step(c.zero, c.pp, base_.parallel.framework);
    const auto& st = state(c.tp, c.cp, c.pp, c.dp, c.ep, zero, c.offload);
    const auto le = candidate_layer(c, zero);
    ParallelConfig p;
    p.dp = c.dp;
    TrainingConfig t;
    t.micro_batch = c.micro_batch;
    t.global_batch = c.global_batch;
    return memory(st, le, c.tp, c.cp, c.pp, c.vp, *c.schedule, c.sp, c.micro_batch, num_microbatches(p, t));
}

FastTime FastEvaluator::time(const Candidate& c) {
    const int zero = zero_stage_in_step(c.zero, c.pp, base_.parallel.framework);
    const auto& st = state(c.tp, c.cp, c.pp, c.dp, c.ep, zero, c.offload);
    const auto le = candidate_layer(c, zero);
    const auto& ed = edge(c.tp, c.cp, c.dp, c.pp, c.micro_batch, c.sp, *c.schedule);
    ParallelConfig p;
    p.dp = c.dp;
    TrainingConfig t;
    t.micro_batch = c.micro_batch;
    t.global_batch = c.global_batch;
    return time(st, le, ed, c.gpus, c.vp, *c.schedule, num_microbatches(p, t), flops(c.global_batch), c.overlap);
}

}   // namespace llmsim::search
