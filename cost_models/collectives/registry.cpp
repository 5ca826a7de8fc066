// The collective and algorithm registries (cost_models/collectives.hpp) and the picker.
// To add an algorithm: write cost_models/collectives/impl/NAME.cpp (declare it in impl/impl.hpp) and
// add one entry to kAlgorithms below. Nothing else names an algorithm.
#include <algorithm>
#include <cmath>
#include <limits>

#include "cost_models/collectives/impl/impl.hpp"

namespace llmsim {

namespace {

namespace ci = collective_impl;

double all_reduce_factor(int n) noexcept { return 2.0 * (n - 1.0) / n; }
double gather_factor(int n) noexcept { return (n - 1.0) / n; }
double one(int) noexcept { return 1.0; }
double all_reduce_steps(int n) noexcept { return 2.0 * (n - 1); }
double ring_pass_steps(int n) noexcept { return n - 1.0; }

// id, name, nccl-tests names, busbw factor (nccl-tests doc/PERFORMANCE.md), latency steps. All-to-all
// and send/recv post every peer at once (one step); a broadcast or reduce is a pipelined chain.
constexpr CollectiveDef kCollectives[] = {
    {Collective::all_reduce, "all_reduce", {"all_reduce"}, all_reduce_factor, all_reduce_steps},
    {Collective::all_gather, "all_gather", {"all_gather", "gather", "hypercube"}, gather_factor, ring_pass_steps},
    {Collective::reduce_scatter, "reduce_scatter", {"reduce_scatter", "scatter"}, gather_factor, ring_pass_steps},
    {Collective::all_to_all, "all_to_all", {"alltoall"}, gather_factor, one},
    {Collective::broadcast, "broadcast", {"broadcast", "reduce"}, one, ring_pass_steps},
    {Collective::send_recv, "send_recv", {"sendrecv"}, one, one},
};
static_assert(static_cast<int>(Collective::send_recv) + 1 == std::size(kCollectives),
              "every Collective has exactly one registry entry, in enum order");

// The order the picker tries them in (ties go to the earlier).
constexpr AlgorithmDef kAlgorithms[] = {
    {"nvls", "NVLink SHARP in-switch all-reduce inside one NVSwitch domain", ci::nvls_time},
    {"ring", "NCCL ring; across domains limited by the slower of fabric and NIC share", ci::ring_time},
    {"tree", "NCCL pipelined double binary tree, all-reduce only", ci::tree_time},
    {"hierarchical", "reduce-scatter in each domain, collective across domains on 1/r, all-gather",
     ci::hierarchical_time},
    {"torus", "TPU ICI torus inside one pod: bidirectional rings on k axes", ci::torus_algorithm_time},
    {"direct", "all peers at once: all-to-all and send/recv", ci::direct_time},
};

}   // namespace

std::span<const CollectiveDef> collectives() { return kCollectives; }

const CollectiveDef& collective_def(Collective c) noexcept { return kCollectives[static_cast<int>(c)]; }

const CollectiveDef* find_collective_nccl(std::string_view nccl_name) {
    if (const auto p = nccl_name.find("_perf"); p != std::string_view::npos) nccl_name = nccl_name.substr(0, p);
    for (const auto& d : kCollectives)
        if (!nccl_name.empty() && std::find(d.nccl_names.begin(), d.nccl_names.end(), nccl_name) != d.nccl_names.end())
            return &d;
    return nullptr;
}

const char* to_string(Collective c) { return collective_def(c).name.data(); }

double busbw_factor(Collective c, int n) noexcept { return collective_def(c).busbw_factor(std::max(1, n)); }

std::span<const AlgorithmDef> algorithms() { return kAlgorithms; }

const AlgorithmDef* find_algorithm(std::string_view name) {
    for (const auto& a : kAlgorithms)
        if (a.name == name) return &a;
    return nullptr;
}

GroupPlacement place_group(int n, int stride, int domain) noexcept {
    GroupPlacement g;
    g.n = std::max(1, n);
    stride = std::max(1, stride);
    domain = std::max(1, domain);
    g.per_domain = stride >= domain ? 1 : std::min(g.n, std::max(1, domain / stride));
    return g;
}

double ring_all_reduce_time(int n, double bytes, double alpha_s, double bw_Bps) noexcept {
    if (n <= 1) return 0.0;
    return 2.0 * (n - 1) * alpha_s + 2.0 * (n - 1) / n * bytes / bw_Bps;
}

double algorithm_time(const SystemSpec& s, Collective c, const AlgorithmDef& a, double bytes,
                      const GroupPlacement& g) noexcept {
    if (g.n <= 1) return 0.0;
    return a.time_s(s, c, bytes, g);
}

CollectiveCost collective_time(const SystemSpec& s, Collective c, double bytes, const GroupPlacement& g) noexcept {
    CollectiveCost best;
    if (g.n <= 1 || bytes <= 0) return best;
    best.time_s = std::numeric_limits<double>::infinity();
    for (const auto& a : kAlgorithms) {
        const double t = a.time_s(s, c, bytes, g);
        if (t >= 0 && t < best.time_s) {
            best.time_s = t;
            best.algorithm = &a;
        }
    }
    if (!std::isfinite(best.time_s)) best.time_s = 0.0;
    best.busbw_GBps = best.time_s > 0 ? bytes / best.time_s * busbw_factor(c, g.n) / 1e9 : 0.0;
    return best;
}

}   // namespace llmsim
