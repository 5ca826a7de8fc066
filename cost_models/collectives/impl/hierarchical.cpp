// Hierarchical (two-level, as NCCL's CollNet-less multi-node rings and Megatron's hierarchical
// collectives): reduce-scatter inside each scale-up domain, the collective across domains on 1/r of
// the data, all-gather inside the domain. Inside a TPU pod the intra-domain phases ride the torus.
#include <algorithm>

#include "cost_models/collectives/impl/impl.hpp"

namespace llmsim::collective_impl {

double hierarchical_time(const SystemSpec& s, Collective c, double bytes, const GroupPlacement& g) noexcept {
    const int n = g.n;
    if (n <= 1) return 0.0;
    const int N = g.domains();
    if (N == 1) return kNotApplicable;
    const int r = std::min(g.per_domain, n);
    const Links l = links(s, r - 1);
    auto intra = [&](Collective cc, double sz) {
        if (r <= 1) return 0.0;
        if (s.is_torus()) return torus_time(s, cc, sz, r);
        return ring_on_link(cc, sz, r, l.base, l.a_in, l.b_in);
    };
    // Across domains: one rank per domain on its NIC share, under NCCL's protocols like any inter-node ring.
    auto inter = [&](Collective cc, double sz) { return ring_across_domains(s, cc, sz, N, N, 1, l.b_out); };
    switch (c) {
        case Collective::all_reduce:
            return intra(Collective::reduce_scatter, bytes) + inter(Collective::all_reduce, bytes / r) +
                   intra(Collective::all_gather, bytes);
        case Collective::all_gather:
            return inter(Collective::all_gather, bytes / r) + intra(Collective::all_gather, bytes);
        case Collective::reduce_scatter:
            return intra(Collective::reduce_scatter, bytes) + inter(Collective::reduce_scatter, bytes / r);
        case Collective::broadcast: return inter(Collective::broadcast, bytes) + intra(Collective::broadcast, bytes);
        case Collective::all_to_all:
        case Collective::send_recv: return kNotApplicable;
    }
    return kNotApplicable;
}

}   // namespace llmsim::collective_impl
