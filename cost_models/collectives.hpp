// Alpha-beta collective costs over real topologies (docs/step-time-model.md, "Communication").
// Every algorithm NCCL (or the TPU ICI) could use is costed and the cheapest is chosen per message
// size, as NCCL's tuner does; the choice is reported.
#pragma once

#include <string>

#include "hardware_db/specs.hpp"

namespace llmsim {

enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, send_recv };
enum class Algorithm { ring, tree, hierarchical, nvls, torus, direct };

const char* to_string(Collective c);
const char* to_string(Algorithm a);

// nccl-tests bus-bandwidth factor: busbw = algbw · factor (doc/PERFORMANCE.md).
double busbw_factor(Collective c, int n);

// Where a group of ranks sits: `n` ranks, `per_domain` of them on each scale-up domain (NVLink
// island / TPU pod), so the group spans ceil(n / per_domain) domains.
struct GroupPlacement {
    int n = 1;
    int per_domain = 1;
    int domains() const { return (n + per_domain - 1) / per_domain; }
};

// The group of a parallel dimension whose ranks are `stride` apart (Megatron's rank order
// tp -> cp -> ep -> dp -> pp), on a system with `domain` devices per scale-up domain.
GroupPlacement place_group(int n, int stride, int domain);

struct CollectiveCost {
    double time_s = 0;
    Algorithm algorithm = Algorithm::ring;
    double busbw_GBps = 0;   // achieved bus bandwidth (nccl-tests convention)
};

// Time of one collective of `bytes` (nccl-tests "size": the full buffer for all-reduce and
// broadcast, the gathered output for all-gather, the input for reduce-scatter, the per-rank send
// buffer for all-to-all, the message for send/recv).
CollectiveCost collective_time(const SystemSpec& s, Collective c, double bytes, const GroupPlacement& g);

// One algorithm's cost (tests, reports); a negative time means "not applicable here".
double algorithm_time(const SystemSpec& s, Collective c, Algorithm a, double bytes, const GroupPlacement& g);

// Textbook formulas (tests and drills): ring all-reduce 2(n−1)α + 2(n−1)/n · S/B; tree all-reduce
// 2·log2(n)·α + 2·S/B.
double ring_all_reduce_time(int n, double bytes, double alpha_s, double bw_Bps);
double tree_all_reduce_time(int n, double bytes, double alpha_s, double bw_Bps);

}   // namespace llmsim
