// Alpha-beta collective costs over real topologies (docs/step-time-model.md, "Communication").
//
// Two registries, each the only place its entries exist (cost_models/collectives/registry.cpp):
//   - the collectives (all-reduce, all-gather, ...): their names as nccl-tests prints them, their
//     nccl-tests bus-bandwidth factor and their latency steps — used by the model and by the
//     nccl-tests fits in calibrate/;
//   - the algorithms (ring, tree, hierarchical, NVLS, torus, direct), one file each
//     (cost_models/collectives/impl/*.cpp): a time function that also says when it does not apply.
// collective_time() prices every algorithm and keeps the cheapest, as NCCL's tuner does; the choice is
// reported. Adding an algorithm is one file plus one table entry (docs/architecture.md).
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>

#include "hardware_db/specs.hpp"

namespace llmsim {

enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, send_recv };

struct CollectiveDef {
    Collective id;
    std::string_view name;                        // "all_reduce"
    std::array<std::string_view, 3> nccl_names;   // nccl-tests binary names it covers (empty: none)
    // nccl-tests bus-bandwidth factor: busbw = algbw · factor (nccl-tests doc/PERFORMANCE.md).
    double (*busbw_factor)(int n) noexcept;
    // Point-to-point steps one call takes on a ring of n ranks (its latency terms).
    double (*latency_steps)(int n) noexcept;
};

// Every collective, in enum order.
[[nodiscard]] std::span<const CollectiveDef> collectives();
[[nodiscard]] const CollectiveDef& collective_def(Collective c) noexcept;
// The collective an nccl-tests binary (or its name without "_perf") measures, or nullptr.
[[nodiscard]] const CollectiveDef* find_collective_nccl(std::string_view nccl_name);
[[nodiscard]] const char* to_string(Collective c);
[[nodiscard]] double busbw_factor(Collective c, int n) noexcept;

// Where a group of ranks sits: `n` ranks, `per_domain` of them on each scale-up domain (NVLink
// island / TPU pod), so the group spans ceil(n / per_domain) domains.
struct GroupPlacement {
    int n = 1;
    int per_domain = 1;
    int domains() const { return (n + per_domain - 1) / per_domain; }
};

// The group of a parallel dimension whose ranks are `stride` apart (Megatron's rank order
// tp -> cp -> ep -> dp -> pp), on a system with `domain` devices per scale-up domain.
[[nodiscard]] GroupPlacement place_group(int n, int stride, int domain) noexcept;

struct AlgorithmDef {
    std::string_view name;       // "ring", "tree", ...
    std::string_view contract;   // one line: what it is and where it applies
    // Seconds for one collective of `bytes` over the group, or a negative value when the algorithm
    // does not apply (wrong collective, topology or placement).
    double (*time_s)(const SystemSpec& s, Collective c, double bytes, const GroupPlacement& g) noexcept;
};

// Every algorithm, in the order the picker tries them (ties go to the earlier).
[[nodiscard]] std::span<const AlgorithmDef> algorithms();
[[nodiscard]] const AlgorithmDef* find_algorithm(std::string_view name);

struct CollectiveCost {
    double time_s = 0;
    const AlgorithmDef* algorithm = nullptr;   // nullptr: nothing to do (one rank or no bytes)
    double busbw_GBps = 0;                     // achieved bus bandwidth (nccl-tests convention)
    std::string_view algorithm_name() const { return algorithm ? algorithm->name : std::string_view("none"); }
};

// Time of one collective of `bytes` (nccl-tests "size": the full buffer for all-reduce and
// broadcast, the gathered output for all-gather, the input for reduce-scatter, the per-rank send
// buffer for all-to-all, the message for send/recv), with the cheapest applicable algorithm.
[[nodiscard]] CollectiveCost collective_time(const SystemSpec& s, Collective c, double bytes,
                                             const GroupPlacement& g) noexcept;

// One algorithm's cost (tests, reports, `llmsim calc`); negative when it does not apply.
[[nodiscard]] double algorithm_time(const SystemSpec& s, Collective c, const AlgorithmDef& a, double bytes,
                                    const GroupPlacement& g) noexcept;

// Expert parallelism's dispatch (or combine) from one rank of group `g`: `tokens` tokens, each to its `top_k`
// experts spread evenly over the group's ranks, `token_bytes` per copy (docs/serving.md "Expert
// parallelism"). DeepEP's two kernels: per_domain (its normal, high-throughput kernels, which prefills run)
// sends a token over the network once per remote scale-up domain holding one of its experts and forwards it
// over the fabric there; per_expert (its low-latency kernels, which decode steps run) sends every copy
// straight to its expert's GPU. Within one domain both are the fabric's all-to-all of every copy.
enum class ExpertAllToAll { per_domain, per_expert };
[[nodiscard]] double expert_all_to_all_time(const SystemSpec& s, const GroupPlacement& g, double tokens, double top_k,
                                            double token_bytes, ExpertAllToAll mode) noexcept;

// Closed forms on one uniform link (tests and drills): ring all-reduce 2(n−1)α + 2(n−1)/n · S/B;
// NCCL's pipelined (double binary) tree all-reduce 2·log2(n)·α + 2·S/B.
[[nodiscard]] double ring_all_reduce_time(int n, double bytes, double alpha_s, double bw_Bps) noexcept;
[[nodiscard]] double tree_all_reduce_time(int n, double bytes, double alpha_s, double bw_Bps) noexcept;

}   // namespace llmsim
