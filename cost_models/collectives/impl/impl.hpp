// Shared pieces of the collective algorithms (one file each in this folder) and their declarations
// for the registry (cost_models/collectives/registry.cpp).
#pragma once

#include "cost_models/collectives.hpp"

namespace llmsim::collective_impl {

inline constexpr double kNotApplicable = -1.0;

// The system's links as the alpha-beta model sees them (seconds, bytes/s).
struct Links {
    double base;    // fixed cost of launching one collective
    double a_in;    // per-step latency on the scale-up fabric
    double a_out;   // per-step latency on the scale-out network
    double b_in;    // achievable bandwidth per device on the scale-up fabric
    double b_out;   // achievable bandwidth per device on the scale-out network (or TPU DCN)
};
// `peers`: how many other devices of its scale-up domain each rank exchanges with (a switchless mesh gives a
// rank one link per peer, SystemSpec::scaleup_mesh_links; a switch, or peers < 0, the whole fabric).
Links links(const SystemSpec& s, int peers = -1) noexcept;

// A ring collective of `bytes` among `n` ranks on one link kind.
double ring_on_link(Collective c, double bytes, int n, double base_s, double alpha_s, double bw_Bps) noexcept;

// A ring collective of `bytes` among `n` ranks spread over `domains` > 1 scale-up domains (`per_domain`
// ranks each) at ring bandwidth `bw_Bps`, priced under each of NCCL's protocols (LL, LL128, Simple)
// with NCCL's own latency and bandwidth model (src/graph/tuning.cc), the cheapest kept as NCCL's tuner
// keeps it. The system's latencies are NCCL's LL figures; the other protocols scale them by NCCL's table.
double ring_across_domains(const SystemSpec& s, Collective c, double bytes, int n, int domains, int per_domain,
                           double bw_Bps) noexcept;

// TPU ICI torus: the group folds onto k axes of the torus; each axis is a bidirectional ring.
double torus_time(const SystemSpec& s, Collective c, double bytes, int n) noexcept;

double ring_time(const SystemSpec& s, Collective c, double bytes, const GroupPlacement& g) noexcept;
double tree_time(const SystemSpec& s, Collective c, double bytes, const GroupPlacement& g) noexcept;
double hierarchical_time(const SystemSpec& s, Collective c, double bytes, const GroupPlacement& g) noexcept;
double nvls_time(const SystemSpec& s, Collective c, double bytes, const GroupPlacement& g) noexcept;
double torus_algorithm_time(const SystemSpec& s, Collective c, double bytes, const GroupPlacement& g) noexcept;
double direct_time(const SystemSpec& s, Collective c, double bytes, const GroupPlacement& g) noexcept;

}   // namespace llmsim::collective_impl
