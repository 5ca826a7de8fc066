#include "sim/search/fast_eval.hpp"

#include <algorithm>
#include <cmath>

#include "cost_models/collectives.hpp"
#include "cost_models/layout.hpp"
#include "cost_models/memory.hpp"
#include "cost_models/step_time.hpp"

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
    t.offload = c.offload;
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
    c.offload = s.training.offload;
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
    e_ = base.training.precision == Precision::fp32 ? 4.0 : 2.0;
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
    s.act_full = a.full;
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
                                                      int zero, int dp) {
    sp = sp && tp > 1;
    const int z3 = zero == 3 ? dp * cp : 0;
    const auto key = std::make_tuple(tp, cp, ep, mb, sp, static_cast<int>(rc), z3);
    {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = layers_.find(key);
        if (it != layers_.end()) return *it->second;
    }
    Scenario s = base_;
    auto& p = s.parallel;
    p.tp = tp;
    p.cp = cp;
    p.ep = ep;
    p.pp = 1;
    p.vp = 1;
    p.dp = zero == 3 ? dp : 1;
    p.zero = zero == 3 ? 3 : 0;
    p.sequence_parallel = sp;
    p.schedule = Schedule::one_f_one_b;
    s.gpus = p.world();
    s.training.micro_batch = mb;
    s.training.global_batch = mb * p.dp;
    s.training.recompute = rc;
    s.training.offload = Offload::none;
    auto entry = std::make_unique<LayerEntry>();
    ActivationQuery q = activation_query(s.parallel, s.training);
    entry->dense = scalars(layer_cost(s, false), layer_activations(s.model, q));
    if (s.model.moe.enabled()) {
        q.moe_layer = true;
        entry->moe = scalars(layer_cost(s, true), layer_activations(s.model, q));
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, inserted] = layers_.emplace(key, std::move(entry));
    return *it->second;
}

const FastEvaluator::EdgeEntry& FastEvaluator::edge(int tp, int cp, int dp, int pp, std::int64_t mb, bool sp,
                                                    bool interleaved) {
    sp = sp && tp > 1;
    const int ppc = std::min(pp, 3);
    interleaved = interleaved && pp > 1;
    const auto place = place_group(ppc > 1 ? 2 : 1, tp * cp * dp, std::max(1, base_.system.scaleup_domain));
    const auto key = std::make_tuple(tp, cp, mb, sp, ppc, interleaved, place.n, place.per_domain);
    {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = edges_.find(key);
        if (it != edges_.end()) return *it->second;
    }
    Scenario s = base_;
    auto& p = s.parallel;
    p.tp = tp;
    p.cp = cp;
    p.dp = dp;
    p.ep = 1;
    p.pp = ppc;
    p.vp = interleaved ? 2 : 1;
    p.zero = 0;
    p.sequence_parallel = sp;
    p.schedule = interleaved ? Schedule::interleaved : Schedule::one_f_one_b;
    s.gpus = p.world();
    s.training.micro_batch = mb;
    s.training.global_batch = mb * dp;
    s.training.offload = Offload::none;
    const StepCosts c = assemble_step_costs(s, LayerCost{}, LayerCost{});
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
    Scenario s = base_;
    auto& p = s.parallel;
    p.tp = tp;
    p.cp = cp;
    p.pp = pp;
    p.dp = dp;
    p.ep = ep;
    p.vp = 1;
    p.zero = zero;
    p.sequence_parallel = tp > 1;
    p.schedule = Schedule::one_f_one_b;
    s.gpus = p.world();
    // Small activations (one micro-batch, full recompute) keep the subtraction below exact.
    s.training.micro_batch = 1;
    s.training.global_batch = dp;
    s.training.recompute = Recompute::full;
    s.training.offload = offload;
    const StepCosts c = assemble_step_costs(s, LayerCost{}, LayerCost{});
    const MemoryBreakdown mem = training_memory(s);
    MemoryBreakdown none;
    if (offload != Offload::none) {
        Scenario s0 = s;
        s0.training.offload = Offload::none;
        none = training_memory(s0);
    }
    const auto per = layers_per_stage(s.model.layers, pp);
    auto entry = std::make_unique<StateEntry>();
    entry->dp = dp;
    for (int st = 0; st < pp; ++st) {
        StageGroup g;
        g.first = st;
        g.count = 1;
        g.layers = per[st];
        g.moe = moe_layers_on_stage(s.model, pp, st);
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
    auto f = std::make_unique<TrainingFlops>(training_flops(base_.model, t));
    auto [ins, ok] = flops_.emplace(global_batch, std::move(f));
    return *ins->second;
}

FastMemory FastEvaluator::memory(const StateEntry& st, const LayerEntry& le, int tp, int cp, int pp, int vp,
                                 Schedule sched, bool sp, Recompute rc, std::int64_t mb,
                                 std::int64_t microbatches) const {
    const auto& m = base_.model;
    const bool spx = sp && tp > 1;
    const double tokens_local = static_cast<double>(base_.training.seq_len) / cp * mb;
    const double sp_div = spx ? tp : 1.0;
    ParallelConfig pc;
    pc.pp = pp;
    pc.vp = vp;
    pc.schedule = sched;
    const double live = sched == Schedule::gpipe ? static_cast<double>(std::max<std::int64_t>(1, microbatches)) : 1.0;
    const double h = static_cast<double>(m.hidden);
    const double emb_per = tokens_local * (8.0 + (m.dropout ? h : 0.0)) / sp_div;
    const double logits = live * tokens_local * 4.0 * (h / sp_div + static_cast<double>(m.vocab) / tp);
    FastMemory best;
    bool first = true;
    for (const auto& g : st.groups) {
        const int s = g.first;
        const double inflight = microbatches_in_flight(pc, microbatches, s);
        const double per_mb = g.dense * le.dense.act_total + g.moe * le.moe.act_total;
        double act = per_mb * inflight;
        if (rc == Recompute::full) act += std::max(g.dense ? le.dense.act_full : 0.0, g.moe ? le.moe.act_full : 0.0);
        if (s == 0) act += inflight * emb_per;
        if (s == pp - 1) act += logits;
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
            best.host_bytes_per_node = g.offloaded * base_.system.gpus_per_node;
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

FastTime FastEvaluator::time(const StateEntry& st, const LayerEntry& le, const EdgeEntry& ed, int gpus, int pp, int vp,
                             Schedule sched, std::int64_t microbatches, const TrainingFlops& fl) const {
    const auto& D = le.dense;
    const auto& E = le.moe;
    const double m = static_cast<double>(microbatches);
    double t_max = 0, sum = 0, sum_w = 0, w_max = 0;
    int critical = 0;
    double c_compute = 0, c_tp = 0, c_cp = 0, c_ep = 0, c_z3 = 0, c_pp = 0;
    const auto& p = base_.parallel;
    double dp_exposed = 0, opt = 0, gather_exposed = 0, drain = 0;
    for (const auto& g : st.groups) {
        const auto& x = ed.cls[g.cls];
        const double dn = g.dense, mo = g.moe;
        const double fwd = (dn * D.fwd + mo * E.fwd) + x.fwd;
        const double bwd = (dn * D.bwd + mo * E.bwd) + x.bwd;
        const double wg = (dn * D.wgrad + mo * E.wgrad) + x.wgrad;
        const double ts = fwd + bwd;
        if (ts > t_max) {
            t_max = ts;
            critical = g.first;
            w_max = wg;
            c_compute = (dn * D.compute + mo * E.compute) + x.compute;
            c_tp = (dn * D.tp + mo * E.tp) + x.tp;
            c_cp = dn * D.cp + mo * E.cp;
            c_ep = dn * D.ep + mo * E.ep;
            c_z3 = dn * D.zero3 + mo * E.zero3;
            c_pp = x.pp;
        }
        sum += g.count * ts;
        sum_w += g.count * wg;
        // Data-parallel reduction: the first stage of a run has the least slack.
        // (The mirror of finish_estimate(): exposed + hidden share of the SMs is largest there too.)
        const double hide = drain + (p.overlap_grad_reduce ? bwd : 0.0);
        const double exposed = std::max(0.0, g.dp_grad_s - hide);
        const double hidden_own = p.overlap_grad_reduce ? std::min(g.dp_grad_s - exposed, bwd) : 0.0;
        dp_exposed = std::max(dp_exposed, exposed + hidden_own * g.dp_sm_fraction);
        drain += g.count * bwd;
        opt = std::max(opt, g.optimizer_s);
        const double ga = p.overlap_param_gather ? std::max(0.0, g.dp_gather_s - fwd) : g.dp_gather_s;
        gather_exposed = std::max(gather_exposed, ga);
    }
    double bubble = 0;
    switch (sched) {
        case Schedule::gpipe:
        case Schedule::one_f_one_b: bubble = sum - t_max; break;
        case Schedule::interleaved: bubble = (sum - t_max) / std::max(1, vp); break;
        case Schedule::zero_bubble: bubble = std::max(0.0, (sum - 2.0 * sum_w) - (t_max - 2.0 * w_max)); break;
    }
    (void)pp;
    FastTime r;
    r.pipeline_s = m * t_max + bubble;
    r.step_time_s = r.pipeline_s + dp_exposed + gather_exposed + opt;
    r.critical_stage = critical;
    const double accounted = m * c_compute + m * c_tp + m * c_cp + m * c_ep + m * c_pp + m * c_z3 + bubble;
    r.bubble_s = bubble + (r.pipeline_s > accounted ? r.pipeline_s - accounted : 0.0);
    r.bubble_fraction = r.step_time_s > 0 ? r.bubble_s / r.step_time_s : 0.0;
    r.tokens_per_s = fl.tokens_per_step / r.step_time_s;
    r.mfu = fl.model_flops_per_step / (r.step_time_s * (peak_ * gpus));
    return r;
}

FastMemory FastEvaluator::memory(const Candidate& c) {
    const auto& st = state(c.tp, c.cp, c.pp, c.dp, c.ep, c.zero, c.offload);
    const auto& le = layer(c.tp, c.cp, c.ep, c.micro_batch, c.sp, c.recompute, c.zero, c.dp);
    ParallelConfig p;
    p.dp = c.dp;
    TrainingConfig t;
    t.micro_batch = c.micro_batch;
    t.global_batch = c.global_batch;
    return memory(st, le, c.tp, c.cp, c.pp, c.vp, c.schedule, c.sp, c.recompute, c.micro_batch, num_microbatches(p, t));
}

FastTime FastEvaluator::time(const Candidate& c) {
    const auto& st = state(c.tp, c.cp, c.pp, c.dp, c.ep, c.zero, c.offload);
    const auto& le = layer(c.tp, c.cp, c.ep, c.micro_batch, c.sp, c.recompute, c.zero, c.dp);
    const auto& ed = edge(c.tp, c.cp, c.dp, c.pp, c.micro_batch, c.sp, c.schedule == Schedule::interleaved);
    ParallelConfig p;
    p.dp = c.dp;
    TrainingConfig t;
    t.micro_batch = c.micro_batch;
    t.global_batch = c.global_batch;
    return time(st, le, ed, c.gpus, c.pp, c.vp, c.schedule, num_microbatches(p, t), flops(c.global_batch));
}

}   // namespace llmsim::search
