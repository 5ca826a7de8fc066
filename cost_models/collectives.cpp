#include "cost_models/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace llmsim {

const char* to_string(Collective c) {
    switch (c) {
        case Collective::all_reduce: return "all_reduce";
        case Collective::all_gather: return "all_gather";
        case Collective::reduce_scatter: return "reduce_scatter";
        case Collective::all_to_all: return "all_to_all";
        case Collective::broadcast: return "broadcast";
        case Collective::send_recv: return "send_recv";
    }
    return "?";
}

const char* to_string(Algorithm a) {
    switch (a) {
        case Algorithm::ring: return "ring";
        case Algorithm::tree: return "tree";
        case Algorithm::hierarchical: return "hierarchical";
        case Algorithm::nvls: return "nvls";
        case Algorithm::torus: return "torus";
        case Algorithm::direct: return "direct";
    }
    return "?";
}

double busbw_factor(Collective c, int n) {
    const double nn = std::max(1, n);
    switch (c) {
        case Collective::all_reduce: return 2.0 * (nn - 1) / nn;
        case Collective::all_gather:
        case Collective::reduce_scatter:
        case Collective::all_to_all: return (nn - 1) / nn;
        case Collective::broadcast:
        case Collective::send_recv: return 1.0;
    }
    return 1.0;
}

GroupPlacement place_group(int n, int stride, int domain) {
    GroupPlacement g;
    g.n = std::max(1, n);
    stride = std::max(1, stride);
    domain = std::max(1, domain);
    g.per_domain = stride >= domain ? 1 : std::min(g.n, std::max(1, domain / stride));
    return g;
}

double ring_all_reduce_time(int n, double bytes, double alpha_s, double bw_Bps) {
    if (n <= 1) return 0.0;
    return 2.0 * (n - 1) * alpha_s + 2.0 * (n - 1) / n * bytes / bw_Bps;
}

double tree_all_reduce_time(int n, double bytes, double alpha_s, double bw_Bps) {
    if (n <= 1) return 0.0;
    return 2.0 * std::log2(static_cast<double>(n)) * alpha_s + 2.0 * bytes / bw_Bps;
}

namespace {

constexpr double kNA = -1.0;

struct Links {
    double base, a_in, a_out, b_in, b_out;
};

Links links(const SystemSpec& s) {
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

// Steps a ring collective takes (latency terms).
double ring_steps(Collective c, int n) {
    switch (c) {
        case Collective::all_reduce: return 2.0 * (n - 1);
        case Collective::broadcast:
        case Collective::all_gather:
        case Collective::reduce_scatter: return n - 1.0;
        case Collective::all_to_all:
        case Collective::send_recv: return 1.0;
    }
    return n - 1.0;
}

// TPU ICI torus: the group folds onto k axes of the torus; each axis is a bidirectional ring
// (with wraparound), so all-gather ≈ V / (k · 2W) (JAX scaling book, sharding.md).
double torus_time(const SystemSpec& s, Collective c, double bytes, int n) {
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
        case Collective::all_to_all:
            return base + hops * hop + n * bytes / (4.0 * w);   // a quarter of an all-gather of the whole array
        case Collective::broadcast: return base + hops * hop + bytes / w;
        case Collective::send_recv: return base + hop + bytes / (s.ici_link_GBps * 1e9 * s.intra_node_efficiency);
    }
    return kNA;
}

}   // namespace

double algorithm_time(const SystemSpec& s, Collective c, Algorithm a, double bytes, const GroupPlacement& g) {
    const int n = g.n;
    if (n <= 1) return 0.0;
    const Links l = links(s);
    const int r = std::min(g.per_domain, n);
    const int N = g.domains();
    const double factor = busbw_factor(c, n);

    if (N == 1) {   // inside one scale-up domain
        if (s.is_torus()) return a == Algorithm::torus ? torus_time(s, c, bytes, n) : kNA;
        switch (a) {
            case Algorithm::ring: return l.base + ring_steps(c, n) * l.a_in + factor * bytes / l.b_in;
            case Algorithm::tree:
                if (c != Collective::all_reduce) return kNA;
                return l.base + tree_all_reduce_time(n, bytes, l.a_in, l.b_in);
            case Algorithm::nvls:
                if (c != Collective::all_reduce || !s.nvls || s.nvls_GBps <= 0) return kNA;
                return l.base + 2.0 * l.a_in + factor * bytes / (s.nvls_GBps * 1e9);
            case Algorithm::direct:
                if (c != Collective::all_to_all && c != Collective::send_recv) return kNA;
                return l.base + l.a_in + factor * bytes / l.b_in;
            default: return kNA;
        }
    }

    // Across domains: r ranks per domain, each with its own share of the scale-out NICs.
    const double b_in = r > 1 ? l.b_in : std::numeric_limits<double>::infinity();
    const double b_ring = std::min(b_in, r * l.b_out);
    // Inside a TPU pod the intra-domain phases ride the torus.
    auto intra = [&](Collective cc, double sz) {
        if (r <= 1) return 0.0;
        if (s.is_torus()) return torus_time(s, cc, sz, r);
        return l.base + ring_steps(cc, r) * l.a_in + busbw_factor(cc, r) * sz / l.b_in;
    };
    auto inter_ring = [&](Collective cc, double sz) {
        return l.base + ring_steps(cc, N) * l.a_out + busbw_factor(cc, N) * sz / l.b_out;
    };
    switch (a) {
        case Algorithm::ring: {
            if (c == Collective::all_to_all || c == Collective::send_recv || s.is_torus()) return kNA;
            // A pass around the ring takes n−1 steps, N of them (at most) across domain boundaries.
            const double passes = c == Collective::all_reduce ? 2.0 : 1.0;
            const double steps = ring_steps(c, n);
            const double inter_steps = passes * std::min<double>(N, n - 1);
            return l.base + (steps - inter_steps) * l.a_in + inter_steps * l.a_out + factor * bytes / b_ring;
        }
        case Algorithm::tree: {
            if (c != Collective::all_reduce || s.is_torus()) return kNA;
            const double lat = l.base + 2.0 * ((r - 1) * l.a_in + std::log2(static_cast<double>(N)) * l.a_out);
            return lat + 2.0 * bytes / b_ring;
        }
        case Algorithm::hierarchical: {
            // Reduce-scatter inside the domain, the collective across domains on 1/r of the data,
            // all-gather inside the domain.
            switch (c) {
                case Collective::all_reduce:
                    return intra(Collective::reduce_scatter, bytes) + inter_ring(Collective::all_reduce, bytes / r) +
                           intra(Collective::all_gather, bytes);
                case Collective::all_gather:
                    return inter_ring(Collective::all_gather, bytes / r) + intra(Collective::all_gather, bytes);
                case Collective::reduce_scatter:
                    return intra(Collective::reduce_scatter, bytes) + inter_ring(Collective::reduce_scatter, bytes / r);
                case Collective::broadcast:
                    return inter_ring(Collective::broadcast, bytes) + intra(Collective::broadcast, bytes);
                default: return kNA;
            }
        }
        case Algorithm::direct: {
            if (c == Collective::all_to_all) {
                const double in_bytes = bytes * (r - 1.0) / n;
                const double out_bytes = bytes * (n - r) / static_cast<double>(n);
                return l.base + l.a_out + (r > 1 ? in_bytes / l.b_in : 0.0) + out_bytes / l.b_out;
            }
            if (c == Collective::send_recv) return l.base + l.a_out + bytes / l.b_out;
            return kNA;
        }
        default: return kNA;
    }
}

CollectiveCost collective_time(const SystemSpec& s, Collective c, double bytes, const GroupPlacement& g) {
    CollectiveCost best;
    if (g.n <= 1 || bytes <= 0) return best;
    best.time_s = std::numeric_limits<double>::infinity();
    for (Algorithm a : {Algorithm::nvls, Algorithm::ring, Algorithm::tree, Algorithm::hierarchical, Algorithm::torus,
                        Algorithm::direct}) {
        const double t = algorithm_time(s, c, a, bytes, g);
        if (t >= 0 && t < best.time_s) {
            best.time_s = t;
            best.algorithm = a;
        }
    }
    if (!std::isfinite(best.time_s)) best.time_s = 0.0;
    best.busbw_GBps = best.time_s > 0 ? bytes / best.time_s * busbw_factor(c, g.n) / 1e9 : 0.0;
    return best;
}

}   // namespace llmsim
