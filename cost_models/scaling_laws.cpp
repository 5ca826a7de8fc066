#include "cost_models/scaling_laws.hpp"

#include <algorithm>
#include <cmath>

#include "cost_models/model_params.hpp"

namespace llmsim {

const char* to_string(ScalingFit f) {
    switch (f) {
        case ScalingFit::hoffmann: return "hoffmann";
        case ScalingFit::hoffmann_unrounded: return "hoffmann-unrounded";
        case ScalingFit::epoch: return "epoch";
        case ScalingFit::approach1: return "approach1";
    }
    return "?";
}

bool scaling_fit_from_string(const std::string& s, ScalingFit& out) {
    for (ScalingFit f :
         {ScalingFit::hoffmann, ScalingFit::hoffmann_unrounded, ScalingFit::epoch, ScalingFit::approach1})
        if (s == to_string(f)) {
            out = f;
            return true;
        }
    return false;
}

LossFit loss_fit(ScalingFit f) {
    switch (f) {
        case ScalingFit::epoch: return {1.8172, 482.01, 2085.43, 0.3478, 0.3658};
        case ScalingFit::hoffmann_unrounded: return {1.6934, 406.4, 410.7, 0.3392, 0.2849};
        case ScalingFit::hoffmann:
        case ScalingFit::approach1: break;
    }
    return {1.69, 406.4, 410.7, 0.34, 0.28};
}

double chinchilla_loss(const LossFit& f, double n, double d) {
    return f.E + f.A / std::pow(n, f.alpha) + f.B / std::pow(d, f.beta);
}

double optimal_g(const LossFit& f) { return std::pow(f.alpha * f.A / (f.beta * f.B), 1.0 / (f.alpha + f.beta)); }

const std::vector<Table3Row>& chinchilla_table3() {
    static const std::vector<Table3Row> rows{
        {400e6, 1.92e19, 8.0e9},   {1e9, 1.21e20, 20.2e9},   {10e9, 1.23e22, 205.1e9},
        {67e9, 5.76e23, 1.5e12},   {175e9, 3.85e24, 3.7e12}, {280e9, 9.90e24, 5.9e12},
        {520e9, 3.43e25, 11.0e12}, {1e12, 1.27e26, 21.2e12}, {10e12, 1.30e28, 216.2e12},
    };
    return rows;
}

double loglog_interpolate(const std::vector<double>& xs, const std::vector<double>& ys, double x) {
    const std::size_t n = xs.size();
    if (n == 0) return 0.0;
    if (n == 1) return ys[0];
    std::size_t i = 0;   // segment [i, i+1]
    if (x <= xs[0])
        i = 0;
    else if (x >= xs[n - 1])
        i = n - 2;
    else
        i = static_cast<std::size_t>(std::upper_bound(xs.begin(), xs.end(), x) - xs.begin()) - 1;
    if (x == xs[i]) return ys[i];
    if (x == xs[i + 1]) return ys[i + 1];
    const double lx0 = std::log(xs[i]), lx1 = std::log(xs[i + 1]);
    const double ly0 = std::log(ys[i]), ly1 = std::log(ys[i + 1]);
    const double t = (std::log(x) - lx0) / (lx1 - lx0);
    return std::exp(ly0 + t * (ly1 - ly0));
}

namespace {

std::vector<double> column(double Table3Row::*f) {
    std::vector<double> v;
    for (const auto& r : chinchilla_table3()) v.push_back(r.*f);
    return v;
}

ScalingPoint finish(ScalingFit f, double n, double d, double c) {
    ScalingPoint p;
    p.params = n;
    p.tokens = d;
    p.flops = c;
    p.loss = chinchilla_loss(loss_fit(f), n, d);
    return p;
}

}   // namespace

double optimal_batch_tokens(double flops) { return 0.2920 * std::pow(flops, 0.3271); }

ScalingPoint optimal_for_compute(ScalingFit f, double c) {
    if (f == ScalingFit::approach1) {
        const auto cs = column(&Table3Row::flops);
        return finish(f, loglog_interpolate(cs, column(&Table3Row::params), c),
                      loglog_interpolate(cs, column(&Table3Row::tokens), c), c);
    }
    const LossFit k = loss_fit(f);
    const double n = optimal_g(k) * std::pow(c / 6.0, k.beta / (k.alpha + k.beta));
    return finish(f, n, (c / 6.0) / n, c);
}

ScalingPoint optimal_for_params(ScalingFit f, double n) {
    if (f == ScalingFit::approach1) {
        const auto ns = column(&Table3Row::params);
        return finish(f, n, loglog_interpolate(ns, column(&Table3Row::tokens), n),
                      loglog_interpolate(ns, column(&Table3Row::flops), n));
    }
    const LossFit k = loss_fit(f);
    // N = G·(C/6)^(β/(α+β))  =>  C/6 = (N/G)^((α+β)/β).
    const double c6 = std::pow(n / optimal_g(k), (k.alpha + k.beta) / k.beta);
    return finish(f, n, c6 / n, 6.0 * c6);
}

ScalingPoint optimal_for_tokens(ScalingFit f, double d) {
    if (f == ScalingFit::approach1) {
        const auto ds = column(&Table3Row::tokens);
        return finish(f, loglog_interpolate(ds, column(&Table3Row::params), d), d,
                      loglog_interpolate(ds, column(&Table3Row::flops), d));
    }
    const LossFit k = loss_fit(f);
    // D = (C/6)/N = G⁻¹·(C/6)^(α/(α+β))  =>  C/6 = (D·G)^((α+β)/α).
    const double c6 = std::pow(d * optimal_g(k), (k.alpha + k.beta) / k.alpha);
    return finish(f, c6 / d, d, 6.0 * c6);
}

ModelSpec model_shape_for_params(double params, std::int64_t vocab, std::int64_t max_seq_len) {
    ModelSpec best;
    double best_score = 1e300;
    auto make = [&](std::int64_t h, int layers) {
        ModelSpec m;
        m.name = "chinchilla-optimal";
        m.display_name = "compute-optimal shape (llmsim plan)";
        m.source = "llmsim model_shape_for_params: Kaplan et al. 2020 aspect ratio h/L ~ 128, Llama-style blocks";
        m.layers = layers;
        m.hidden = h;
        m.head_dim = 128;
        m.heads = static_cast<int>(h / 128);
        m.kv_heads = m.heads >= 32 ? 8 : m.heads;
        m.ffn_hidden = 256 * ((8 * h / 3 + 255) / 256);
        m.vocab = vocab;
        m.mlp = MlpKind::swiglu;
        m.norm = NormKind::rmsnorm;
        m.position = PositionKind::rope;
        m.max_seq_len = max_seq_len;
        m.tied_embeddings = false;
        m.bias = false;
        m.dropout = false;
        return m;
    };
    for (std::int64_t h = 256; h <= 131072;) {
        const ModelSpec probe = make(h, 1);
        const auto pc = count_parameters(probe);
        const double outside = pc.total - pc.dense_layer;
        const double per_layer = pc.dense_layer;
        const double l_exact = (params - outside) / per_layer;
        const double l_bounded = std::min(l_exact, 1e6);   // bound before the conversion to int
        for (int layers : {static_cast<int>(std::floor(l_bounded)), static_cast<int>(std::ceil(l_bounded))}) {
            if (layers < 2) continue;
            const ModelSpec m = make(h, layers);
            const double total = count_parameters(m).total;
            const double score = std::fabs(std::log(static_cast<double>(h) / layers / 128.0)) +
                                 20.0 * std::fabs(std::log(total / params));
            if (score < best_score) {
                best_score = score;
                best = m;
            }
        }
        h += h < 2048 ? 256 : h < 4096 ? 512 : 1024;
    }
    if (best.layers == 0) best = make(256, 2);
    return best;
}

CheckpointPlan plan_checkpoints(double compute_s, int nodes, double node_mtbf_s, double write_s, double restart_s) {
    CheckpointPlan p;
    const double m = node_mtbf_s / std::max(1, nodes), d = write_s;
    p.job_mtbf_s = m;
    const double x = d / (2.0 * m);
    p.interval_s = d < 2.0 * m ? std::sqrt(2.0 * d * m) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - d : m;
    p.checkpoints = compute_s / p.interval_s;
    const double exponent = (p.interval_s + d) / m + restart_s / m;
    if (exponent > kStallExponent) {
        p.stalls = true;
        p.goodput = 0;
        p.waste_fraction = 1;
        return p;
    }
    const double segment_s = m * std::exp(restart_s / m) * std::expm1((p.interval_s + d) / m);
    p.goodput = p.interval_s / segment_s;
    p.waste_fraction = 1.0 - p.goodput;
    p.wall_s = p.checkpoints * segment_s;
    p.expected_interruptions = p.wall_s / m;
    return p;
}

}   // namespace llmsim
