#include "app/search/plan.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cost_models/model_params.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/limits.hpp"

namespace llmsim::search {

std::int64_t default_global_batch(std::int64_t seq_len, double flops) {
    const double seqs =
        std::pow(2.0, std::round(std::log2(optimal_batch_tokens(flops) / static_cast<double>(seq_len))));
    return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::min(seqs, 0x1p40)), 1, limits::kBatch);
}

namespace {

struct Trial {
    ScalingPoint pt;
    ModelSpec model;
    SearchResult res;
    double seconds = INFINITY;   // training time at the best layout's throughput
    std::int64_t global_batch = 0;
};

}   // namespace

double max_plan_flops(ScalingFit fit) { return optimal_for_params(fit, limits::kMaxDesignedParams).flops; }

PlanResult plan(const PlanRequest& request) {
    const PlanRequest& q = request;
    // A work limit: the largest budget plan designs a model for is that of a compute-optimal model of
    // limits::kMaxDesignedParams parameters; a budget beyond is refused, never a runaway bisection.
    const double c_max = max_plan_flops(q.fit);
    auto too_large = [&] {
        return ConfigError(fmt::format(
            "budget: {:g}: expected a budget whose compute-optimal model has at most {:g} parameters (a {} budget of "
            "at most {:.3g} FLOPs on {} GPUs of {})",
            q.budget_value, limits::kMaxDesignedParams, to_string(q.fit), c_max, q.gpus, q.system.name));
    };
    if (q.budget == PlanRequest::Budget::compute_flops && q.budget_value > c_max) throw too_large();
    // The least budget: that of the smallest model plan designs (its embeddings at this vocabulary dominate);
    // a smaller compute-optimal model would be reported at parameters it does not have (--compute 1 said
    // "N = 0" and designed 18.1M).
    const ModelSpec smallest = model_shape_for_params(1.0, q.vocab, std::max<std::int64_t>(8192, q.seq_len));
    const double c_min = optimal_for_params(q.fit, count_parameters(smallest).total).flops;
    auto too_small = [&](double flops) {
        return ConfigError(fmt::format(
            "budget: {:g}: expected a budget whose compute-optimal model has at least the {:.3g} parameters of the "
            "smallest model plan designs at vocab {} (under {}, at least {:.3g} FLOPs; this one reaches {:.3g})",
            q.budget_value, count_parameters(smallest).total, q.vocab, to_string(q.fit), c_min, flops));
    };
    if (q.budget == PlanRequest::Budget::compute_flops && q.budget_value < c_min) throw too_small(q.budget_value);
    PlanResult out;
    Scenario base;
    base.system = q.system;
    base.gpus = q.gpus;
    base.training.seq_len = q.seq_len;
    base.training.precision = q.precision;
    SearchSpace space;
    space.gpu_counts = {q.gpus};
    space.memory_headroom_fraction = q.memory_headroom_fraction;
    SearchOptions opt = q.options;
    opt.top_k = 1;

    std::int64_t considered = 0;   // layouts the searches considered: a work limit over all trials
    auto trial = [&](double flops) {
        if (flops < c_min) throw too_small(flops);
        Trial t;
        t.pt = optimal_for_compute(q.fit, flops);
        t.model = model_shape_for_params(t.pt.params, q.vocab, std::max<std::int64_t>(8192, q.seq_len));
        base.model = t.model;
        // The batch is the budget's own unless given: a larger budget trains with a larger batch, which also
        // keeps more GPUs busy (2M tokens on 16,384 H100s left the plan at 24% MFU where 16M gives 45%).
        t.global_batch = q.global_batch > 0 ? q.global_batch : default_global_batch(q.seq_len, t.pt.flops);
        space.global_batches = {t.global_batch};
        try {
            t.res = run_search(base, space, opt);
        } catch (const SearchWorkLimit& e) {   // said in plan's words: it has no search flags
            throw ConfigError(fmt::format(
                "budget: {:g}: expected a budget whose plan searches at most {} layouts per model (its model of "
                "{:.3g} parameters on {} GPUs has {}): a smaller budget or fewer GPUs",
                q.budget_value, e.limit, t.pt.params, q.gpus, e.layouts));
        }
        considered += t.res.considered();
        if (considered > limits::kPlanLayouts)
            throw ConfigError(fmt::format(
                "budget: {:g}: expected a budget whose plan considers at most {} layouts (its searches of models up to "
                "{:.3g} parameters on {} GPUs considered {}): a smaller budget or fewer GPUs",
                q.budget_value, limits::kPlanLayouts, t.pt.params, q.gpus, considered));
        if (!t.res.top.empty()) t.seconds = t.pt.tokens / t.res.top.front().time.tokens_per_s;
        return t;
    };

    Trial best;
    if (q.budget == PlanRequest::Budget::compute_flops) {
        best = trial(q.budget_value);
    } else {
        const double budget_s =
            q.budget == PlanRequest::Budget::gpu_hours ? q.budget_value * 3600.0 / q.gpus : q.budget_value * 86400.0;
        // Bracket from a 40%-MFU guess (model FLOPs ≈ 6·N·D), then bisect in log C; keep the largest C
        // whose time fits.
        double best_c = 0;
        auto consider = [&](double c, Trial&& t) {
            const bool fits = t.seconds <= budget_s;
            if (fits && c > best_c) {
                best_c = c;
                best = std::move(t);
            }
            return fits;
        };
        double lo = std::min(0.4 * q.system.gpu.peak(q.precision) * q.gpus * budget_s, c_max), hi = lo;
        int it = 1;
        if (consider(lo, trial(lo))) {
            for (; it < 40; ++it) {
                if (hi >= c_max) throw too_large();   // the budget trains even the largest design
                hi = std::min(2 * hi, c_max);
                if (!consider(hi, trial(hi))) break;
                lo = hi;
            }
        } else {
            for (; it < 40; ++it) {
                lo /= 2;
                if (consider(lo, trial(lo))) break;
                hi = lo;
            }
        }
        for (int k = 0; k < 14 && best_c > 0 && hi > lo; ++k, ++it) {
            const double mid = std::sqrt(lo * hi);
            Trial t = trial(mid);
            const double secs = t.seconds;
            if (consider(mid, std::move(t)))
                lo = mid;
            else
                hi = mid;
            if (secs <= budget_s && secs > 0.995 * budget_s) break;
        }
        if (best_c == 0) best = trial(lo);
        out.iterations = it;
    }
    out.chinchilla = best.pt;
    out.global_batch = best.global_batch;
    out.model = best.model;
    out.search = std::move(best.res);
    base.model = out.model;
    base.training.global_batch = out.global_batch;
    out.base = base;
    // The plan's layout confirmed on the simulator, as search confirms its answer: days, GPU-hours and cost
    // from the step estimate gives for it (the closed form's read up to 9% longer).
    if (!out.search.top.empty() && q.options.confirm_step_time) {
        confirm_entry(base, out.search.top.front(), q.options.confirm_step_time);
        out.search.confirmed = true;
    }
    if (!out.search.top.empty()) {
        out.tokens_per_s = out.search.top.front().time.tokens_per_s;
        out.train_s = out.chinchilla.tokens / out.tokens_per_s;
        out.gpu_hours = out.train_s / 3600.0 * q.gpus;
    }
    return out;
}

}   // namespace llmsim::search
