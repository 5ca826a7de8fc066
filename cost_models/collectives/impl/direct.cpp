// Direct (NCCL's peer-to-point for all-to-all and send/recv): every rank talks to every peer at once,
// one latency step; across domains the share leaving the domain rides the NICs and the rest the
// fabric. All-to-all and send/recv only.
#include <algorithm>

#include "cost_models/collectives/impl/impl.hpp"

namespace llmsim::collective_impl {

double direct_time(const SystemSpec& s, Collective c, double bytes, const GroupPlacement& g) noexcept {
    const int n = g.n;
    if (n <= 1) return 0.0;
    if (c != Collective::all_to_all && c != Collective::send_recv) return kNotApplicable;
    const int N = g.domains();
    // A send/recv talks to one peer; an all-to-all to every other rank of its domain.
    const Links l = links(s, c == Collective::send_recv ? 1 : (N == 1 ? n : std::min(g.per_domain, n)) - 1);
    if (N == 1) {
        if (s.is_torus()) return kNotApplicable;   // the torus algorithm covers a pod
        return l.base + l.a_in + busbw_factor(c, n) * bytes / l.b_in;
    }
    if (c == Collective::send_recv) return l.base + l.a_out + bytes / l.b_out;
    const int r = std::min(g.per_domain, n);
    const double in_bytes = bytes * (r - 1.0) / n;
    const double out_bytes = bytes * (n - r) / static_cast<double>(n);
    return l.base + l.a_out + (r > 1 ? in_bytes / l.b_in : 0.0) + out_bytes / l.b_out;
}

}   // namespace llmsim::collective_impl
