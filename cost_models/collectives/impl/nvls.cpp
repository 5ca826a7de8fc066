// NVLS (NVLink SHARP, NVSwitch in-switch reduction): all-reduce inside one scale-up domain at the
// switch's achievable busbw (system nvls_GBps), two fabric latencies (up to the switch and back).
#include "cost_models/collectives/impl/impl.hpp"

namespace llmsim::collective_impl {

double nvls_time(const SystemSpec& s, Collective c, double bytes, const GroupPlacement& g) noexcept {
    const int n = g.n;
    if (n <= 1) return 0.0;
    if (g.domains() > 1 || s.is_torus() || c != Collective::all_reduce || !s.nvls || s.nvls_GBps <= 0)
        return kNotApplicable;
    const Links l = links(s);
    return l.base + 2.0 * l.a_in + busbw_factor(c, n) * bytes / (s.nvls_GBps * 1e9);
}

}   // namespace llmsim::collective_impl
