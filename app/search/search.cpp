#include "app/search/search.hpp"

#include "cost_models/layer/layer.hpp"
#include "cost_models/recompute.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "cost_models/layout.hpp"
#include "cost_models/rlhf.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/layout_rules.hpp"
#include "hardware_db/limits.hpp"

namespace llmsim::search {

const char* to_string(Objective o) {
    switch (o) {
        case Objective::time: return "time";
        case Objective::cost: return "cost";
        case Objective::per_gpu: return "per-gpu";
    }
    return "?";
}

bool objective_from_string(const std::string& s, Objective& out) {
    if (s == "time" || s == "step-time" || s == "tokens-per-s" || s == "throughput")
        out = Objective::time;
    else if (s == "cost")
        out = Objective::cost;
    else if (s == "per-gpu" || s == "tokens-per-s-per-gpu" || s == "per_gpu")
        out = Objective::per_gpu;
    else
        return false;
    return true;
}

double memory_limit(double capacity_bytes, double headroom_fraction, double headroom_bytes) {
    return capacity_bytes * (1.0 - headroom_fraction) - headroom_bytes;
}

std::vector<int> gpu_counts_up_to(int max_gpus, int min_gpus) {
    std::vector<int> out;
    for (long long p = 1; p <= max_gpus; p *= 2) {
        if (p >= min_gpus) out.push_back(static_cast<int>(p));
        if (3 * p <= max_gpus && 3 * p >= min_gpus) out.push_back(static_cast<int>(3 * p));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

double objective_value(Objective o, const Candidate& c, const FastTime& t, double tokens_per_step) {
    switch (o) {
        case Objective::time: return t.step_time_s / tokens_per_step;
        case Objective::cost:
        case Objective::per_gpu: return t.step_time_s * c.gpus / tokens_per_step;
    }
    return t.step_time_s;
}

namespace {

template <class T>
std::vector<T> divisors(T n) {
    std::vector<T> lo, hi;
    for (T d = 1; d * d <= n; ++d)
        if (n % d == 0) {
            lo.push_back(d);
            if (d != n / d) hi.push_back(n / d);
        }
    lo.insert(lo.end(), hi.rbegin(), hi.rend());
    return lo;
}

template <class T>
bool allowed(const std::vector<T>& set, T v) {
    return set.empty() || std::find(set.begin(), set.end(), v) != set.end();
}

template <class T>
bool contains(const std::vector<T>& set, T v) {
    return std::find(set.begin(), set.end(), v) != set.end();
}

bool better(const SearchEntry& a, const SearchEntry& b) {
    if (a.objective != b.objective) return a.objective < b.objective;
    return a.c < b.c;
}

// Pareto dominance on (seconds per token, bytes per GPU, GPUs) with the total order as tie-break,
// so that the front is one well-defined set whatever the order the points arrive in.
void prune_front_2d(std::vector<SearchEntry>& v) {
    auto tpt = [](const SearchEntry& e) { return 1.0 / e.time.tokens_per_s; };
    std::sort(v.begin(), v.end(), [&](const SearchEntry& a, const SearchEntry& b) {
        if (a.memory.total_bytes != b.memory.total_bytes) return a.memory.total_bytes < b.memory.total_bytes;
        const double ta = tpt(a), tb = tpt(b);
        if (ta != tb) return ta < tb;
        return a.c < b.c;
    });
    std::vector<SearchEntry> out;
    double best = 0;
    for (const auto& e : v) {
        const double t = tpt(e);
        if (out.empty() || t < best) {
            out.push_back(e);
            best = t;
        }
    }
    v.swap(out);
}

// Rejection reasons: the layout rules (hardware_db/layout_rules.hpp) first, then the search's own.
constexpr int kRules = static_cast<int>(LayoutRule::count);
constexpr int reason(LayoutRule r) { return static_cast<int>(r); }
enum Reason { kTpDomain = kRules, kTpMax, kPpRange, kInterleavedM, kHostMemory, kReasons };

struct Ctx {
    const Scenario& base;
    const SearchSpace& sp;
    const SearchOptions& opt;
    std::vector<std::string> reason_names;
    double limit = 0;
    int layers = 0;
    bool moe = false;
    bool rlhf = false;   // objective: the PPO iteration of cost_models/rlhf (estimate_rlhf)
    // Both none and full allowed: a layout too large without recompute also tries the fewest recomputed
    // layers per chunk that fit (recompute_num_layers).
    bool partial_recompute = false;
    bool activation_offload = false;   // pp-1 layouts too large without recompute also try activation offload

    Ctx(const Scenario& b, const SearchSpace& s, const SearchOptions& o) : base(b), sp(s), opt(o) {
        const auto& m = base.model;
        layers = m.layers;
        moe = has_moe_layers(m);
        rlhf = base.training.rlhf.enabled;
        auto allows = [&](Recompute r) {
            return std::find(sp.recompute.begin(), sp.recompute.end(), r) != sp.recompute.end();
        };
        partial_recompute = allows(Recompute::none) && allows(Recompute::full);
        activation_offload = sp.activation_offload && base.system.pcie_GBps > 0;
        reason_names.resize(kReasons);
        reason_names[kTpDomain] = fmt::format("tp above the scale-up domain ({})", base.system.scaleup_domain);
        reason_names[kTpMax] = fmt::format("tp above max_tp ({})", sp.max_tp);
        for (int r = 0; r < kRules; ++r) reason_names[r] = rule_summary(static_cast<LayoutRule>(r), m, base.training);
        reason_names[kPpRange] = fmt::format("pp outside min_pp..max_pp ({}..{})", sp.min_pp, sp.max_pp);
        reason_names[kInterleavedM] = "interleaved: micro-batches not a multiple of pp";
        reason_names[kHostMemory] = "out of host memory (offloaded states)";
        limit = memory_limit(base.system.gpu.hbm_capacity_bytes, sp.memory_headroom_fraction, sp.memory_headroom_bytes);
    }

    // --- the tree of choices and its leaf counts (every leaf is evaluated or rejected once) ---
    int n_sp(int tp) const { return tp > 1 && !sp.sequence_parallel ? 2 : 1; }
    bool sp_value(int tp, int i) const {
        if (tp == 1) return false;
        if (sp.sequence_parallel) return *sp.sequence_parallel;
        return i == 1;
    }
    // (schedule, vp) leaves of a pipeline of pp stages.
    std::vector<std::pair<const ScheduleDef*, int>> schedules(int pp) const {
        std::vector<std::pair<const ScheduleDef*, int>> out;
        if (pp == 1) {
            if (allowed(sp.vp, 1)) out.emplace_back(&default_schedule(), 1);
            return out;
        }
        for (const auto& s : llmsim::schedules()) {
            if (sp.schedules.empty() ? !s.searched : !contains(sp.schedules, &s)) continue;
            if (!s.uses_chunks) {
                if (allowed(sp.vp, 1)) out.emplace_back(&s, 1);
                continue;
            }
            for (int v = 2; static_cast<std::int64_t>(pp) * v <= max_pipeline_chunks(layers); ++v)
                if (allowed(sp.vp, v)) out.emplace_back(&s, v);
        }
        return out;
    }
    // Overlap policies of a layout (docs/search.md, "Overlap policies"). tp_comm_overlap and
    // overlap_param_gather never cost time in the closed form: unless fixed they are on (TP overlap
    // where it acts, tp > 1 with SP). overlap_grad_reduce can (a later stage's reduction, which the
    // earlier stages' drain would hide, takes SMs from its own backward when overlapped), but only
    // with pp > 1 and data parallelism: there, unless fixed, both values are priced and the layout
    // keeps the faster (on at a tie), so a layout is still one leaf of the tree.
    int n_overlap(int pp, int dpcp) const { return !sp.overlap_grad_reduce && pp > 1 && dpcp > 1 ? 2 : 1; }
    OverlapPolicy overlap_value(int tp, bool spv, int i) const {
        OverlapPolicy o;
        o.tp_comm = sp.tp_comm_overlap ? *sp.tp_comm_overlap : tp > 1 && spv;
        o.param_gather = sp.overlap_param_gather.value_or(true);
        o.grad_reduce = sp.overlap_grad_reduce ? *sp.overlap_grad_reduce : i == 0;
        return o;
    }
    std::int64_t n_after_mb(int tp, int pp) const {
        return static_cast<std::int64_t>(n_sp(tp)) * static_cast<std::int64_t>(sp.recompute.size()) *
               static_cast<std::int64_t>(schedules(pp).size());
    }
    std::vector<std::int64_t> micro_batches(std::int64_t per_dp) const {
        std::vector<std::int64_t> out;
        for (auto d : divisors(per_dp))
            if (allowed(sp.micro_batch, d)) out.push_back(d);
        return out;
    }
    std::int64_t n_gb_level(int dp, int tp, int pp) const {
        std::int64_t n = 0;
        const std::int64_t inner = n_after_mb(tp, pp);
        for (auto gb : sp.global_batches)
            n += (gb % dp == 0 ? static_cast<std::int64_t>(micro_batches(gb / dp).size()) : 1) * inner;
        return n;
    }
    std::vector<int> zeros(int dp, int cp) const {
        std::vector<int> out;
        for (int z = 0; z <= 3; ++z)
            if (allowed(sp.zero, z) && (z == 0 || dp * cp > 1)) out.push_back(z);
        return out;
    }
    std::vector<Offload> offloads(int zero) const {
        std::vector<Offload> out;
        for (Offload o : sp.offload)
            if (o != Offload::optimizer_params || zero == 3) out.push_back(o);
        return out;
    }
    std::int64_t n_state_level(int dp, int cp, int tp, int pp) const {
        std::int64_t n = 0;
        const std::int64_t per = n_gb_level(dp, tp, pp);
        for (int z : zeros(dp, cp)) n += static_cast<std::int64_t>(offloads(z).size()) * per;
        return n;
    }
    std::vector<int> eps(int dp, int cp) const {
        std::vector<int> out;
        if (!moe) {
            if (allowed(sp.ep, 1)) out.push_back(1);
            return out;
        }
        for (int e : divisors(dp * cp))
            if (allowed(sp.ep, e)) out.push_back(e);
        return out;
    }
    std::int64_t n_pp_level(int gpus, int tp, int cp, int pp) const {
        const int dp = gpus / (tp * cp * pp);
        return static_cast<std::int64_t>(eps(dp, cp).size()) * n_state_level(dp, cp, tp, pp);
    }
    std::int64_t n_cp_level(int gpus, int tp, int cp) const {
        std::int64_t n = 0;
        for (int pp : divisors(gpus / (tp * cp)))
            if (allowed(sp.pp, pp) && allowed(sp.dp, gpus / (tp * cp * pp))) n += n_pp_level(gpus, tp, cp, pp);
        return n;
    }
    std::int64_t n_tp_level(int gpus, int tp) const {
        std::int64_t n = 0;
        for (int cp : divisors(gpus / tp))
            if (allowed(sp.cp, cp)) n += n_cp_level(gpus, tp, cp);
        return n;
    }

    int tp_reason(int tp) const {
        const auto& m = base.model;
        if (tp > base.system.scaleup_domain && !sp.allow_cross_node_tp) return kTpDomain;
        if (sp.max_tp > 0 && tp > sp.max_tp) return kTpMax;
        if (const LayoutRules r = tp_rules(m, tp)) return reason(first_rule(r));
        return -1;
    }
};

struct Unit {
    int gpus, tp, cp, pp;
    std::int64_t leaves;
};

struct Front {
    std::vector<SearchEntry> front;     // pruned: memory ascending, time per token descending
    std::vector<SearchEntry> pending;   // not yet pruned
};

struct ThreadState {
    std::vector<SearchEntry> top;   // heap: worst on top
    std::map<int, Front> pareto;    // per GPU count
    std::int64_t reasons[kReasons] = {};
    std::vector<std::int64_t> oom;   // [stage * kMemoryParts + part]
    std::int64_t evaluated = 0;
};

void add_pareto(ThreadState& ts, const SearchEntry& e) {
    auto& f = ts.pareto[e.c.gpus];
    // Strictly dominated by the last pruned front: drop (ties go to the pending pile, where the
    // total order decides).
    if (!f.front.empty()) {
        const double mem = e.memory.total_bytes, tpt = 1.0 / e.time.tokens_per_s;
        auto it = std::upper_bound(f.front.begin(), f.front.end(), mem,
                                   [](double m, const SearchEntry& x) { return m < x.memory.total_bytes; });
        if (it != f.front.begin()) {
            const auto& q = *(it - 1);   // the fastest point with memory <= mem
            const double qt = 1.0 / q.time.tokens_per_s;
            if (qt <= tpt && (qt < tpt || q.memory.total_bytes < mem)) return;
        }
    }
    f.pending.push_back(e);
    if (f.pending.size() >= std::max<std::size_t>(256, f.front.size())) {
        f.pending.insert(f.pending.end(), f.front.begin(), f.front.end());
        prune_front_2d(f.pending);
        f.front.swap(f.pending);
        f.pending.clear();
    }
}

void add_top(ThreadState& ts, const SearchEntry& e, std::size_t k) {
    auto cmp = [](const SearchEntry& a, const SearchEntry& b) { return better(a, b); };   // max-heap of worst
    if (ts.top.size() < k) {
        ts.top.push_back(e);
        std::push_heap(ts.top.begin(), ts.top.end(), cmp);
    } else if (better(e, ts.top.front())) {
        std::pop_heap(ts.top.begin(), ts.top.end(), cmp);
        ts.top.back() = e;
        std::push_heap(ts.top.begin(), ts.top.end(), cmp);
    }
}

// RLHF: the step is one PPO iteration (estimate_rlhf: rollout, experience forwards, ppo_epochs actor
// and critic training steps) on the layout; `t` holds the actor's training step (the fast closed
// form), whose pipeline and bubble are kept. Tokens per second count the PPO batch's tokens per
// iteration; MFU counts the actor's training FLOPs of the iteration (ppo_epochs steps).
void rlhf_time(const Scenario& base, const Candidate& c, const TrainingFlops& fl, FastTime& t) {
    const Scenario s = apply_candidate(base, c);
    const RlhfEstimate r = estimate_rlhf(s.training_job());
    const double peak = base.system.gpu.peak(base.training.precision) * c.gpus;
    t.step_time_s = r.iteration_s;
    t.bubble_fraction = t.bubble_s / t.step_time_s;
    t.tokens_per_s = fl.tokens_per_step / t.step_time_s;
    t.mfu = r.ppo_epochs * fl.model_flops_per_step / (t.step_time_s * peak);
}

// One leaf of a unit below its schedule: the layout, its global and micro-batch, sequence parallelism and
// recompute, with the state, FLOPs and layer costs (per overlap policy) the evaluator cached for them.
struct Leaf {
    int gpus = 0, tp = 0, cp = 0, pp = 0, dp = 0, ep = 0, zero = 0;
    Offload off = Offload::none;
    std::int64_t gb = 0, mb = 0, m = 0;   // m: micro-batches per step
    bool spv = false;
    Recompute rc = Recompute::none;
    const FastEvaluator::StateEntry* st = nullptr;
    const TrainingFlops* fl = nullptr;
    const FastEvaluator::LayerEntry* les[2] = {};
    OverlapPolicy ovs[2] = {};
    int nov = 1;
    const FastEvaluator::EdgeEntry** edges = nullptr;   // this (mb, sp)'s two edge slots: [overlaps p2p]
};

// A leaf on one schedule (vp chunks): its memory, the levers that make a layout too large fit, its price.
class LeafPricer {
public:
    LeafPricer(const Ctx& cx, FastEvaluator& ev, ThreadState& ts, std::size_t keep, const Leaf& L,
               const ScheduleDef* sched, int vp)
        : cx_(cx), ev_(ev), ts_(ts), keep_(keep), L_(L), sched_(sched), vp_(vp) {}

    void run() {
        if (sched_->m_multiple_of_p && L_.m % L_.pp != 0) {
            ++ts_.reasons[kInterleavedM];
            return;
        }
        const FastMemory mem = memory(*L_.les[0]);
        if (mem.total_bytes > cx_.limit) {
            if (const auto lever = fitting_lever()) {
                report_leaf(lever->c.recompute, lever->c.recompute_layers, lever->c.offload_layers, true);
                keep_entry(*lever);
                return;
            }
            report_leaf(L_.rc, 0, 0, false);
            const std::size_t idx = static_cast<std::size_t>(mem.stage) * kMemoryParts + mem.dominant;
            if (ts_.oom.size() <= idx) ts_.oom.resize(idx + 1, 0);
            ++ts_.oom[idx];
            return;
        }
        report_leaf(L_.rc, 0, 0, mem.host_fits);
        if (!mem.host_fits) {
            ++ts_.reasons[kHostMemory];
            return;
        }
        keep_entry(price_layout(L_.les, L_.rc, 0, 0, mem));
    }

private:
    FastMemory memory(const FastEvaluator::LayerEntry& le) const {
        return ev_.memory(*L_.st, le, L_.tp, L_.cp, L_.pp, vp_, *sched_, L_.spv, L_.mb, L_.m);
    }
    Candidate candidate(Recompute rcv, int rl, int ol) const {
        return Candidate{L_.gpus, L_.tp, L_.pp, L_.dp, L_.cp,  L_.ep, vp_,   L_.zero,  L_.spv,
                         sched_,  rcv,   rl,    ol,    L_.off, L_.mb, L_.gb, L_.ovs[0]};
    }
    // The leaf as the hook sees it (the search's tests count leaves with it).
    void report_leaf(Recompute rcv, int rl, int ol, bool fits) const {
        if (cx_.opt.on_leaf) cx_.opt.on_leaf(candidate(rcv, rl, ol), fits);
    }
    void keep_entry(const SearchEntry& e) {
        ++ts_.evaluated;
        add_top(ts_, e, keep_);
        add_pareto(ts_, e);
    }
    // Prices a layout that fits (rl: recompute_num_layers, ol: activation_offload_layers), the cheaper
    // overlap policy kept.
    SearchEntry price_layout(const FastEvaluator::LayerEntry* const* lv, Recompute rcv, int rl, int ol,
                             const FastMemory& memv) {
        auto& edge = L_.edges[sched_->overlaps_p2p ? 1 : 0];
        if (!edge) edge = &ev_.edge(L_.tp, L_.cp, L_.dp, L_.pp, L_.mb, L_.spv, *sched_);
        SearchEntry e;
        const Candidate lc = candidate(rcv, rl, ol);
        auto price = [&](int oi) {
            FastTime t = ev_.time(*L_.st, *lv[oi], *edge, L_.gpus, vp_, *sched_, L_.m, *L_.fl, L_.ovs[oi]);
            if (cx_.rlhf) {
                Candidate ci = lc;
                ci.overlap = L_.ovs[oi];
                rlhf_time(ev_.base(), ci, *L_.fl, t);
            }
            return t;
        };
        e.time = price(0);
        int best_ov = 0;
        for (int oi = 1; oi < L_.nov; ++oi) {
            const FastTime t = price(oi);
            if (t.step_time_s < e.time.step_time_s) {
                e.time = t;
                best_ov = oi;
            }
        }
        e.memory = memv;
        e.c = lc;
        e.c.overlap = L_.ovs[best_ov];
        e.objective = objective_value(cx_.opt.objective, e.c, e.time, L_.fl->tokens_per_step);
        return e;
    }
    // A layout too large without recompute is evaluated with the cheaper of two Megatron levers, each at
    // the fewest layers that fit (memory falls and time rises with them; docs/search.md): partial
    // recompute (--recompute-num-layers, when full recompute is allowed) and, with one stage, activation
    // offload (cpu_offloading_num_layers); none when neither fits (out of memory).
    std::optional<SearchEntry> fitting_lever() {
        std::optional<SearchEntry> lever;
        auto consider = [&](const SearchEntry& e) {
            if (!lever || e.objective < lever->objective) lever = e;
        };
        if (L_.rc != Recompute::none) return lever;
        const int layers = cx_.base.model.layers;
        const FastEvaluator::LayerEntry* lv[2] = {};
        FastEvaluator::LayerEntry alt[2];
        if (cx_.partial_recompute) {
            ParallelConfig pc;
            pc.pp = L_.pp;
            pc.vp = vp_;
            pc.schedule = sched_;
            const int most = max_layers_per_chunk(layers, pc);
            FastEvaluator::LayerEntry full_les[2];
            for (int oi = 0; oi < L_.nov; ++oi)
                full_les[oi] =
                    ev_.layer(L_.tp, L_.cp, L_.ep, L_.mb, L_.spv, Recompute::full, L_.zero, L_.dp, L_.ovs[oi]);
            auto blend_at = [&](int n, int oi) {
                TrainingConfig t;
                t.recompute = Recompute::full;
                t.recompute_num_layers = n;
                return FastEvaluator::blend(*L_.les[oi], full_les[oi], full_recompute_share(layers, pc, t));
            };
            // most recomputes every layer: full recompute's own leaf.
            const int n = fewest_satisfying(most - 1, [&](int k) {
                const FastMemory mm = memory(blend_at(k, 0));
                return mm.total_bytes <= cx_.limit && mm.host_fits;
            });
            if (n > 0) {
                for (int oi = 0; oi < L_.nov; ++oi) {
                    alt[oi] = blend_at(n, oi);
                    lv[oi] = &alt[oi];
                }
                consider(price_layout(lv, Recompute::full, n, 0, memory(alt[0])));
            }
        }
        if (L_.pp == 1 && cx_.activation_offload) {
            auto off_at = [&](int k, int oi) {
                TrainingConfig t;
                t.activation_offload_layers = k;
                return ev_.offloaded(*L_.les[oi], activation_offload_share(layers, t));
            };
            // GPU memory falls and host memory rises with the layers offloaded: the fewest that fit the GPU,
            // then the host.
            const int n =
                fewest_satisfying(layers - 1, [&](int k) { return memory(off_at(k, 0)).total_bytes <= cx_.limit; });
            if (n > 0) {
                for (int oi = 0; oi < L_.nov; ++oi) {
                    alt[oi] = off_at(n, oi);
                    lv[oi] = &alt[oi];
                }
                const FastMemory mm = memory(alt[0]);
                if (mm.host_fits) consider(price_layout(lv, Recompute::none, 0, n, mm));
            }
        }
        return lever;
    }

    const Ctx& cx_;
    FastEvaluator& ev_;
    ThreadState& ts_;
    std::size_t keep_;
    const Leaf& L_;
    const ScheduleDef* sched_;
    int vp_;
};

void run_unit(const Ctx& cx, FastEvaluator& ev, const Unit& u, ThreadState& ts, std::size_t keep) {
    const int gpus = u.gpus, tp = u.tp, cp = u.cp, pp = u.pp;
    const int dp = gpus / (tp * cp * pp);
    const auto& sp = cx.sp;
    const auto scheds = cx.schedules(pp);
    const std::int64_t after_mb = cx.n_after_mb(tp, pp);
    const int nov = cx.n_overlap(pp, dp * cp);
    const int nsp = cx.n_sp(tp);
    const int nrc = static_cast<int>(sp.recompute.size());
    // Micro-batch sizes used by any global batch of this unit.
    std::vector<std::int64_t> mbs;
    for (auto gb : sp.global_batches)
        if (gb % dp == 0)
            for (auto mb : cx.micro_batches(gb / dp)) mbs.push_back(mb);
    std::sort(mbs.begin(), mbs.end());
    mbs.erase(std::unique(mbs.begin(), mbs.end()), mbs.end());
    const std::size_t nmb = mbs.size();
    std::vector<const FastEvaluator::EdgeEntry*> edges(nmb * 2 * 2, nullptr);

    for (int ep : cx.eps(dp, cp)) {
        if (const LayoutRules r = ep_rules(cx.base.model, ep, dp * cp)) {
            ts.reasons[reason(first_rule(r))] += cx.n_state_level(dp, cp, tp, pp);
            continue;
        }
        // [mb][sp][rc][zero < 2, 2, 3][overlap]
        std::vector<const FastEvaluator::LayerEntry*> layers(nmb * 2 * nrc * 3 * 2, nullptr);
        for (int zero : cx.zeros(dp, cp)) {
            if (const LayoutRules r = framework_rules(zero, pp, cx.base.parallel.framework)) {
                ts.reasons[reason(first_rule(r))] +=
                    static_cast<std::int64_t>(cx.offloads(zero).size()) * cx.n_gb_level(dp, tp, pp);
                continue;
            }
            for (Offload off : cx.offloads(zero)) {
                Leaf L;
                L.gpus = gpus, L.tp = tp, L.cp = cp, L.pp = pp, L.dp = dp, L.ep = ep, L.zero = zero, L.off = off;
                L.nov = nov;
                L.st = &ev.state(tp, cp, pp, dp, ep, zero, off);
                for (auto gb : sp.global_batches) {
                    if (const LayoutRules r = batch_rules(gb, 1, dp)) {
                        ts.reasons[reason(first_rule(r))] += after_mb;
                        continue;
                    }
                    L.gb = gb;
                    L.fl = &ev.flops(gb);
                    for (auto mb : cx.micro_batches(gb / dp)) {
                        const std::size_t mi =
                            static_cast<std::size_t>(std::lower_bound(mbs.begin(), mbs.end(), mb) - mbs.begin());
                        L.mb = mb;
                        L.m = gb / (mb * dp);
                        for (int si = 0; si < nsp; ++si) {
                            L.spv = cx.sp_value(tp, si);
                            L.edges = &edges[(mi * 2 + static_cast<std::size_t>(si)) * 2];
                            for (int ri = 0; ri < nrc; ++ri) {
                                L.rc = sp.recompute[static_cast<std::size_t>(ri)];
                                // Layer costs per overlap policy (activations, hence memory, are the same).
                                for (int oi = 0; oi < nov; ++oi) {
                                    L.ovs[oi] = cx.overlap_value(tp, L.spv, oi);
                                    auto& lp = layers[(((mi * 2 + static_cast<std::size_t>(si)) * nrc +
                                                        static_cast<std::size_t>(ri)) *
                                                           3 +
                                                       static_cast<std::size_t>(std::max(0, zero - 1))) *
                                                          2 +
                                                      static_cast<std::size_t>(oi)];
                                    if (!lp) lp = &ev.layer(tp, cp, ep, mb, L.spv, L.rc, zero, dp, L.ovs[oi]);
                                    L.les[oi] = lp;
                                }
                                for (const auto& sv : scheds)
                                    LeafPricer(cx, ev, ts, keep, L, sv.first, sv.second).run();
                            }
                        }
                    }
                }
            }
        }
    }
}

bool dominates3(const SearchEntry& a, const SearchEntry& b) {
    const double ta = 1.0 / a.time.tokens_per_s, tb = 1.0 / b.time.tokens_per_s;
    if (ta > tb || a.memory.total_bytes > b.memory.total_bytes || a.c.gpus > b.c.gpus) return false;
    if (ta < tb || a.memory.total_bytes < b.memory.total_bytes || a.c.gpus < b.c.gpus) return true;
    return a.c < b.c;
}

// The GPU counts a space searches, ascending (stated counts, or every 2^k and 3*2^k up to max_gpus).
std::vector<int> searched_gpu_counts(const SearchSpace& space) {
    std::vector<int> counts = space.gpu_counts;
    if (counts.empty() && space.max_gpus > 0) counts = gpu_counts_up_to(space.max_gpus, space.min_gpus);
    if (space.max_gpus > 0)
        counts.erase(std::remove_if(counts.begin(), counts.end(), [&](int g) { return g > space.max_gpus; }),
                     counts.end());
    std::sort(counts.begin(), counts.end());
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
    if (counts.empty()) throw ConfigError("search: no GPU count to search (--gpus or --max-gpus)");
    return counts;
}

// The serial part: the (gpus, tp, cp, pp) units, largest first, and the rules that reject whole subtrees
// (counted into `pre`). Refuses a space past the layout work limit before any layout is evaluated.
std::vector<Unit> search_units(const Ctx& cx, const std::vector<int>& counts, std::int64_t* pre) {
    const auto& space = cx.sp;
    const Scenario& base = cx.base;
    std::vector<Unit> units;
    for (int gpus : counts) {
        for (int tp : divisors(gpus)) {
            if (!allowed(space.tp, tp)) continue;
            const int r = cx.tp_reason(tp);
            if (r >= 0) {
                pre[r] += cx.n_tp_level(gpus, tp);
                continue;
            }
            for (int cp : divisors(gpus / tp)) {
                if (!allowed(space.cp, cp)) continue;
                if (const LayoutRules broken = cp_rules(base.training.seq_len, cp)) {
                    pre[reason(first_rule(broken))] += cx.n_cp_level(gpus, tp, cp);
                    continue;
                }
                for (int pp : divisors(gpus / (tp * cp))) {
                    if (!allowed(space.pp, pp) || !allowed(space.dp, gpus / (tp * cp * pp))) continue;
                    if (const LayoutRules broken = pp_rules(base.model, pp, 1)) {
                        pre[reason(first_rule(broken))] += cx.n_pp_level(gpus, tp, cp, pp);
                        continue;
                    }
                    if ((space.min_pp > 0 && pp < space.min_pp) || (space.max_pp > 0 && pp > space.max_pp)) {
                        pre[kPpRange] += cx.n_pp_level(gpus, tp, cp, pp);
                        continue;
                    }
                    units.push_back(Unit{gpus, tp, cp, pp, cx.n_pp_level(gpus, tp, cp, pp)});
                }
            }
        }
    }
    std::stable_sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) { return a.leaves > b.leaves; });
    std::int64_t total_leaves = 0;
    for (const auto& u : units) total_leaves += u.leaves;
    if (total_leaves > limits::kSearchLayouts)   // a work limit: refused before any is evaluated
        throw SearchWorkLimit(
            fmt::format("search: {} layouts to evaluate ({} GPU count{} from {} to {}, {} global batch{}): expected at "
                        "most {}; "
                        "narrow the space (--max-gpus or search.max_gpus, --global-batch-range or search.global_batch, "
                        "--tp, --pp, --micro-batch)",
                        total_leaves, counts.size(), counts.size() == 1 ? "" : "s", counts.front(), counts.back(),
                        space.global_batches.size(), space.global_batches.size() == 1 ? "" : "es",
                        limits::kSearchLayouts),
            total_leaves, limits::kSearchLayouts);
    return units;
}

// The units evaluated on `threads` threads (each its own state; units handed out largest first), progress
// reported from the calling thread when asked.
std::vector<ThreadState> evaluate_units(const Ctx& cx, FastEvaluator& ev, const std::vector<Unit>& units, int threads,
                                        std::size_t keep) {
    std::int64_t total_leaves = 0;
    for (const auto& u : units) total_leaves += u.leaves;
    std::vector<ThreadState> states(static_cast<std::size_t>(threads));
    std::atomic<std::size_t> next{0};
    std::atomic<std::int64_t> done_leaves{0};
    std::atomic<int> running{threads};
    auto worker = [&](int id) {
        auto& ts = states[static_cast<std::size_t>(id)];
        for (;;) {
            const std::size_t i = next.fetch_add(1);
            if (i >= units.size()) break;
            run_unit(cx, ev, units[i], ts, std::max<std::size_t>(1, keep));
            done_leaves.fetch_add(units[i].leaves);
        }
        running.fetch_sub(1);
    };
    std::vector<std::thread> pool;
    for (int i = 1; i < threads; ++i) pool.emplace_back(worker, i);
    if (cx.opt.progress) {
        // The calling thread reports progress; worker 0 runs on its own thread then.
        std::thread w0(worker, 0);
        while (running.load() > 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            if (total_leaves > 0)
                cx.opt.progress(static_cast<double>(done_leaves.load()) / static_cast<double>(total_leaves));
        }
        w0.join();
    } else {
        worker(0);
    }
    for (auto& t : pool) t.join();
    return states;
}

// The threads' states merged (order-independent: totals, a total order on the top-k, a set-defined
// Pareto front): the rejections into `res`, the best `keep` in order, the candidates of each GPU count's front.
std::vector<SearchEntry> merge_states(const Ctx& cx, const std::vector<ThreadState>& states, std::int64_t* pre,
                                      std::size_t keep, SearchResult& res,
                                      std::map<int, std::vector<SearchEntry>>& fronts) {
    std::vector<SearchEntry> all_top;
    std::vector<std::int64_t> oom;
    for (const auto& ts : states) {
        res.evaluated += ts.evaluated;
        for (int r = 0; r < kReasons; ++r) pre[r] += ts.reasons[r];
        if (oom.size() < ts.oom.size()) oom.resize(ts.oom.size(), 0);
        for (std::size_t i = 0; i < ts.oom.size(); ++i) oom[i] += ts.oom[i];
        all_top.insert(all_top.end(), ts.top.begin(), ts.top.end());
        for (const auto& [g, f] : ts.pareto) {
            fronts[g].insert(fronts[g].end(), f.front.begin(), f.front.end());
            fronts[g].insert(fronts[g].end(), f.pending.begin(), f.pending.end());
        }
    }
    for (int r = 0; r < kReasons; ++r)
        if (pre[r] > 0) {
            res.rejected[cx.reason_names[static_cast<std::size_t>(r)]] += pre[r];
            res.rejected_total += pre[r];
        }
    for (std::size_t i = 0; i < oom.size(); ++i)
        if (oom[i] > 0) {
            const int stage = static_cast<int>(i / kMemoryParts), part = static_cast<int>(i % kMemoryParts);
            res.rejected[fmt::format("out of memory: stage {} {}", stage, memory_part_name(part))] += oom[i];
            res.rejected_total += oom[i];
        }
    std::sort(all_top.begin(), all_top.end(), better);
    if (all_top.size() > keep) all_top.resize(keep);
    return all_top;
}

// The Pareto front over (time per token, memory, GPUs) of the per-count fronts, fastest first, thinned to
// `limit` entries (both ends and an even spread) when longer.
std::vector<SearchEntry> pareto_front(std::map<int, std::vector<SearchEntry>>& fronts, std::size_t limit) {
    std::vector<SearchEntry> union2d;
    for (auto& [g, v] : fronts) {
        prune_front_2d(v);
        union2d.insert(union2d.end(), v.begin(), v.end());
    }
    std::vector<SearchEntry> front;
    for (const auto& a : union2d) {
        bool dom = false;
        for (const auto& b : union2d)
            if (&a != &b && dominates3(b, a)) {
                dom = true;
                break;
            }
        if (!dom) front.push_back(a);
    }
    std::sort(front.begin(), front.end(), [](const SearchEntry& a, const SearchEntry& b) {
        const double ta = 1.0 / a.time.tokens_per_s, tb = 1.0 / b.time.tokens_per_s;
        if (ta != tb) return ta < tb;
        return a.c < b.c;
    });
    if (front.size() > limit && limit > 1) {
        std::vector<SearchEntry> thin;
        for (std::size_t i = 0; i < limit; ++i) thin.push_back(front[i * (front.size() - 1) / (limit - 1)]);
        front.swap(thin);
    }
    return front;
}

}   // namespace

void confirm_entry(const Scenario& base, SearchEntry& e, const std::function<double(const Scenario&)>& step_time) {
    const double t = step_time(apply_candidate(base, e.c));
    e.confirmed_step_time_s = t;
    if (!(t > 0)) return;
    // The answer reports what estimate gives for its layout: the simulated step (it was the closed form's, up
    // to 9% off the simulated step it was ranked by), and the throughput and MFU it implies.
    const double r = e.time.step_time_s / t;
    e.objective /= r;
    e.closed_form_step_time_s = e.time.step_time_s;
    e.time.step_time_s = t;
    e.time.tokens_per_s *= r;
    e.time.mfu *= r;
}

SearchResult run_search(const Scenario& base, const SearchSpace& space_in, const SearchOptions& opt) {
    const auto t0 = std::chrono::steady_clock::now();
    SearchSpace space = space_in;
    if (base.system.shards_activations_over_tp()) space.sequence_parallel = true;   // as parse_scenario
    if (base.system.gpu.peak(base.training.precision) <= 0)
        throw ConfigError(fmt::format("/training/precision: \"{}\": expected a precision {} supports",
                                      to_string(base.training.precision), base.system.gpu.name));
    if (space.global_batches.empty()) throw ConfigError("search: no global batch to search (--global-batch)");
    if (space.recompute.empty() || space.offload.empty())
        throw ConfigError("search: an empty set of recompute or offload choices");
    const std::vector<int> counts = searched_gpu_counts(space);

    Ctx cx(base, space, opt);
    SearchResult res;
    res.gpu_counts = counts;
    res.overlap_searched = !space.tp_comm_overlap || !space.overlap_grad_reduce || !space.overlap_param_gather;
    res.rlhf = cx.rlhf;
    std::int64_t pre[kReasons] = {};
    const std::vector<Unit> units = search_units(cx, counts, pre);

    int threads = opt.threads > 0 ? opt.threads : static_cast<int>(std::thread::hardware_concurrency());
    threads = std::max(1, std::min<int>(threads, std::max<std::size_t>(1, units.size())));
    res.threads = threads;
    const std::size_t keep = static_cast<std::size_t>(std::max(opt.top_k, opt.confirm));
    FastEvaluator ev(base);
    const auto t1 = std::chrono::steady_clock::now();
    const std::vector<ThreadState> states = evaluate_units(cx, ev, units, threads, keep);
    res.eval_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();

    std::map<int, std::vector<SearchEntry>> fronts;
    std::vector<SearchEntry> all_top = merge_states(cx, states, pre, keep, res, fronts);

    // Confirmation on the simulator: re-rank the best `confirm` by the simulated step time.
    // (RLHF: the simulator plays one training step, not the PPO iteration; not confirmed.)
    if (opt.confirm > 0 && opt.confirm_step_time && !all_top.empty() && !cx.rlhf) {
        const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(opt.confirm), all_top.size());
        for (std::size_t i = 0; i < n; ++i) {
            auto& e = all_top[i];
            confirm_entry(base, e, opt.confirm_step_time);
        }
        std::sort(all_top.begin(), all_top.begin() + static_cast<std::ptrdiff_t>(n), better);
        res.confirmed = true;
    }
    if (all_top.size() > static_cast<std::size_t>(opt.top_k)) all_top.resize(static_cast<std::size_t>(opt.top_k));
    res.top = std::move(all_top);
    res.pareto = pareto_front(fronts, opt.pareto_limit);
    res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
}

}   // namespace llmsim::search
