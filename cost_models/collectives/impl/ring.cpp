// Ring (NCCL's Ring): every rank sends to its neighbour; all-reduce is a reduce-scatter then an
// all-gather around the ring, 2(n−1) steps. Across scale-up domains the ring's bandwidth is the
// slower of the domain's fabric and the r ranks' share of the NICs, and a pass around the ring
// crosses a domain boundary once per domain. Not for all-to-all or send/recv (direct), nor on a TPU
// torus (torus).
#include <algorithm>
#include <limits>

#include "cost_models/collectives/impl/impl.hpp"

namespace llmsim::collective_impl {

Links links(const SystemSpec& s) noexcept {
    Links l;
    l.base = s.collective_base_latency_us * 1e-6;
    l.a_in = s.intra_node_latency_us * 1e-6;
    l.a_out = s.inter_node_latency_us * 1e-6;
    l.b_in = s.intra_node_GBps * 1e9 * s.intra_node_efficiency;
    const double out = s.is_torus() ? (s.dcn_GBps > 0 ? s.dcn_GBps : s.inter_node_GBps) : s.inter_node_GBps;
    l.b_out = out * 1e9 * s.inter_node_efficiency;
    if (l.b_out <= 0) l.b_out = 1e-9;   // no scale-out network: effectively impossible
    return l;
}

double ring_on_link(Collective c, double bytes, int n, double base_s, double alpha_s, double bw_Bps) noexcept {
    const auto& d = collective_def(c);
    return base_s + d.latency_steps(n) * alpha_s + d.busbw_factor(n) * bytes / bw_Bps;
}

double ring_time(const SystemSpec& s, Collective c, double bytes, const GroupPlacement& g) noexcept {
    const int n = g.n;
    if (n <= 1) return 0.0;
    if (s.is_torus() || c == Collective::all_to_all || c == Collective::send_recv) return kNotApplicable;
    const Links l = links(s);
    const int N = g.domains();
    if (N == 1) return ring_on_link(c, bytes, n, l.base, l.a_in, l.b_in);
    const int r = std::min(g.per_domain, n);
    const double b_in = r > 1 ? l.b_in : std::numeric_limits<double>::infinity();
    const double b_ring = std::min(b_in, r * l.b_out);
    const auto& d = collective_def(c);
    // A pass around the ring takes n−1 steps, N of them (at most) across domain boundaries.
    const double passes = c == Collective::all_reduce ? 2.0 : 1.0;
    const double steps = d.latency_steps(n);
    const double inter_steps = passes * std::min<double>(N, n - 1);
    return l.base + (steps - inter_steps) * l.a_in + inter_steps * l.a_out + d.busbw_factor(n) * bytes / b_ring;
}

}   // namespace llmsim::collective_impl
