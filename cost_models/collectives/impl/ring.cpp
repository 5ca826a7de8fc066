// Ring (NCCL's Ring): every rank sends to its neighbour; all-reduce is a reduce-scatter then an
// all-gather around the ring, 2(n−1) steps. Across scale-up domains the ring's bandwidth is the
// slower of the domain's fabric and the r ranks' share of the NICs, and a pass around the ring
// crosses a domain boundary once per domain. Not for all-to-all or send/recv (direct), nor on a TPU
// torus (torus).
#include <algorithm>
#include <limits>

#include "cost_models/collectives/impl/impl.hpp"

namespace llmsim::collective_impl {

Links links(const SystemSpec& s, int peers) noexcept {
    Links l;
    l.base = s.collective_base_latency_us * 1e-6;
    l.a_in = s.intra_node_latency_us * 1e-6;
    l.a_out = s.inter_node_latency_us * 1e-6;
    l.b_in = s.intra_node_GBps * 1e9 * s.intra_node_efficiency;
    // A mesh: k - 1 peers drive k - 1 of the links (a ring over k devices of a full mesh runs k - 1 edge-disjoint
    // rings, one per outgoing link).
    const int mesh = s.scaleup_mesh_links;
    if (mesh > 0 && peers >= 0) l.b_in *= std::clamp(peers, 1, mesh) / static_cast<double>(mesh);
    const double out = s.is_torus() ? (s.dcn_GBps > 0 ? s.dcn_GBps : s.inter_node_GBps) : s.inter_node_GBps;
    l.b_out = out * 1e9 * s.inter_node_efficiency;
    if (l.b_out <= 0) l.b_out = 1e-9;   // no scale-out network: effectively impossible
    return l;
}

double ring_on_link(Collective c, double bytes, int n, double base_s, double alpha_s, double bw_Bps) noexcept {
    const auto& d = collective_def(c);
    return base_s + d.latency_steps(n) * alpha_s + d.busbw_factor(n) * bytes / bw_Bps;
}

namespace {

// NCCL 2.19 src/graph/tuning.cc (v2.19.3-1), ring rows: baseLat {LL 6.6, LL128 14.0, Simple 8.4} us;
// hwLat NVLink {0.6, 1.9, 3.4}, network {2.7, 4.0, 14.0} us per step; the system files hold the LL
// NVLink hop (0.6), the network hop (5.0, NCCL's Tree/LL figure the model has always used) and the
// Simple base (8.4), so each protocol is the system's figure times NCCL's ratio to it.
struct Protocol {
    double base, hop_in, hop_out;   // multipliers of the system's base, intra and inter latencies
    double net_overhead;            // per-step floor on intra-domain hops of an inter-node ring, us
    bool ll, ll128;
};
constexpr Protocol kLL{6.6 / 8.4, 1.0, 2.7 / 5.0, 1.0, true, false};
constexpr Protocol kLL128{14.0 / 8.4, 1.9 / 0.6, 4.0 / 5.0, 1.0, false, true};
constexpr Protocol kSimple{1.0, 3.4 / 0.6, 14.0 / 5.0, 3.0, false, false};
// "Inter-node rings still have to launch nsteps * net overhead": getNetOverhead() is 1 us (x3 for
// Simple) on Intel hosts and the default, 2 us on AMD hosts (not distinguished here).
constexpr double kNetOverheadUs = 1.0;
// LL bandwidth: NCCL caps LL rings at a quarter of the ring's bus bandwidth across nodes, and at
// llMaxBws (Ampere/Hopper, four or more nodes: 19.0 GB/s; two nodes: 22.5).
constexpr double kLLMaxBwManyNodes = 19.0e9, kLLMaxBwTwoNodes = 22.5e9;
// LL128: 120 of 128 bytes carry data (busBw x 0.92), 0.7 when one rank per node sends and receives
// through the same NIC; enabled by NCCL only where the scale-up fabric is NVLink.
constexpr double kLL128Efficiency = 0.92, kLL128OneRankPerNode = 0.7;

}   // namespace

double ring_across_domains(const SystemSpec& s, Collective c, double bytes, int n, int domains, int per_domain,
                           double bw_Bps) noexcept {
    const Links l = links(s);
    const auto& d = collective_def(c);
    const double passes = c == Collective::all_reduce ? 2.0 : 1.0;
    const double steps = d.latency_steps(n);
    // A pass around the ring crosses a domain boundary once per domain.
    const double inter_steps = passes * std::min<double>(domains, n - 1);
    const bool nvlink = !s.is_torus() && s.intra_node_latency_us < 1.0;   // NCCL's NVLink row (PCI: 1.0)
    double best = -1;
    for (const Protocol& p : {kLL, kLL128, kSimple}) {
        double bw = bw_Bps;
        if (p.ll) bw = std::min(bw_Bps / 4.0, domains > 2 ? kLLMaxBwManyNodes : kLLMaxBwTwoNodes);
        if (p.ll128) {
            if (!nvlink) continue;
            bw = bw_Bps * (per_domain < 2 ? kLL128OneRankPerNode : kLL128Efficiency);
        }
        const double hop_in = std::max(l.a_in * p.hop_in, p.net_overhead * kNetOverheadUs * 1e-6);
        const double t = l.base * p.base + (steps - inter_steps) * hop_in + inter_steps * l.a_out * p.hop_out +
                         d.busbw_factor(n) * bytes / bw;
        if (best < 0 || t < best) best = t;
    }
    return best;
}

double ring_time(const SystemSpec& s, Collective c, double bytes, const GroupPlacement& g) noexcept {
    const int n = g.n;
    if (n <= 1) return 0.0;
    if (s.is_torus() || c == Collective::all_to_all || c == Collective::send_recv) return kNotApplicable;
    const int N = g.domains();
    const Links l = links(s, (N == 1 ? n : std::min(g.per_domain, n)) - 1);
    if (N == 1) return ring_on_link(c, bytes, n, l.base, l.a_in, l.b_in);
    const int r = std::min(g.per_domain, n);
    const double b_in = r > 1 ? l.b_in : std::numeric_limits<double>::infinity();
    // Each of the ring's channels leaves a domain through one NIC: the r ranks' channels spread over
    // their r NIC shares (NCCL builds one ring per NIC; nccl-tests across DGX nodes reach the node's
    // NICs together), up to the fabric inside the domain.
    const double b_ring = std::min(b_in, r * l.b_out);
    return ring_across_domains(s, c, bytes, n, N, r, b_ring);
}

}   // namespace llmsim::collective_impl
