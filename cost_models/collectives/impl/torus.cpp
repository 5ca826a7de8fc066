// TPU ICI torus: the group folds onto k axes of the torus; each axis is a bidirectional ring (with
// wraparound), so all-gather ≈ V / (k · 2W) (JAX scaling book, sharding.md). Inside one pod only;
// across pods the hierarchical algorithm runs the torus inside and the DCN between.
#include <cmath>

#include "cost_models/collectives/impl/impl.hpp"

namespace llmsim::collective_impl {

double torus_time(const SystemSpec& s, Collective c, double bytes, int n) noexcept {
    if (n <= 1) return 0.0;
    int k = 1;
    double covered = 1;
    for (std::size_t i = 0; i < s.torus_dims.size(); ++i) {
        covered *= s.torus_dims[i];
        k = static_cast<int>(i) + 1;
        if (covered >= n) break;
    }
    const double per_axis = std::pow(static_cast<double>(n), 1.0 / k);
    const double dirs = s.torus_wraparound ? 2.0 : 1.0;
    const double w = s.ici_link_GBps * 1e9 * s.intra_node_efficiency * dirs * k;
    const double hop = s.intra_node_latency_us * 1e-6;
    const double hops = k * (s.torus_wraparound ? per_axis / 2.0 : per_axis - 1.0);
    const double base = s.collective_base_latency_us * 1e-6;
    const double frac = (n - 1.0) / n;
    switch (c) {
        case Collective::all_gather:
        case Collective::reduce_scatter: return base + hops * hop + frac * bytes / w;
        case Collective::all_reduce: return base + 2.0 * hops * hop + 2.0 * frac * bytes / w;
        case Collective::all_to_all:   // a quarter of an all-gather of the whole array
            return base + hops * hop + n * bytes / (4.0 * w);
        case Collective::broadcast: return base + hops * hop + bytes / w;
        case Collective::send_recv: return base + hop + bytes / (s.ici_link_GBps * 1e9 * s.intra_node_efficiency);
    }
    return kNotApplicable;
}

double torus_algorithm_time(const SystemSpec& s, Collective c, double bytes, const GroupPlacement& g) noexcept {
    if (g.n <= 1) return 0.0;
    if (!s.is_torus() || g.domains() > 1) return kNotApplicable;
    return torus_time(s, c, bytes, g.n);
}

}   // namespace llmsim::collective_impl
