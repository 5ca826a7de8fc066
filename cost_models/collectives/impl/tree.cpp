// Tree (NCCL's double binary tree, all-reduce only): a pipelined reduce up and broadcast down the
// tree, 2·log2(n) latency steps and 2·S/B on the bandwidth term (the pipelining hides the depth;
// the textbook unpipelined tree moves the whole buffer log2(n) times). Across domains the tree runs
// inside each domain (r−1 steps) and between domains (log2 N steps).
#include <algorithm>
#include <cmath>
#include <limits>

#include "cost_models/collectives/impl/impl.hpp"

namespace llmsim {

double tree_all_reduce_time(int n, double bytes, double alpha_s, double bw_Bps) noexcept {
    if (n <= 1) return 0.0;
    return 2.0 * std::log2(static_cast<double>(n)) * alpha_s + 2.0 * bytes / bw_Bps;
}

namespace collective_impl {

double tree_time(const SystemSpec& s, Collective c, double bytes, const GroupPlacement& g) noexcept {
    const int n = g.n;
    if (n <= 1) return 0.0;
    if (c != Collective::all_reduce || s.is_torus()) return kNotApplicable;
    const int N = g.domains();
    const Links l = links(s, (N == 1 ? n : std::min(g.per_domain, n)) - 1);
    if (N == 1) return l.base + tree_all_reduce_time(n, bytes, l.a_in, l.b_in);
    const int r = std::min(g.per_domain, n);
    const double b_in = r > 1 ? l.b_in : std::numeric_limits<double>::infinity();
    const double b_ring = std::min(b_in, r * l.b_out);
    const double lat = l.base + 2.0 * ((r - 1) * l.a_in + std::log2(static_cast<double>(N)) * l.a_out);
    return lat + 2.0 * bytes / b_ring;
}

}   // namespace collective_impl
}   // namespace llmsim
