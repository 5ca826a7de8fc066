#include "cost_models/layout.hpp"

#include <algorithm>

namespace llmsim {

std::vector<int> layers_per_stage(int layers, int pp) {
    pp = std::max(1, pp);
    std::vector<int> out(pp, layers / pp);
    int rem = layers % pp;
    std::vector<int> order;
    for (int s = 1; s + 1 < pp; ++s) order.push_back(s);
    if (pp > 1) order.push_back(pp - 1);
    order.push_back(0);
    for (int i = 0; rem > 0; ++i, --rem) out[order[i % order.size()]] += 1;
    return out;
}

int moe_layers_on_stage(const ModelSpec& m, int pp, int stage) {
    const auto per = layers_per_stage(m.layers, pp);
    int first = 0;
    for (int s = 0; s < stage; ++s) first += per[s];
    const int last = first + per[stage];                                // exclusive
    const int moe_first = std::max(first, m.layers - m.moe_layers());   // the MoE layers follow the dense ones
    return std::max(0, last - moe_first);
}

double microbatches_in_flight(const ParallelConfig& p, std::int64_t m, int stage) {
    const int v = p.schedule->uses_chunks ? std::max(1, p.vp) : 1;
    return p.schedule->in_flight(p.pp, v, std::max<std::int64_t>(1, m), stage);
}

std::int64_t num_microbatches(const ParallelConfig& p, const TrainingConfig& t) {
    const std::int64_t denom = std::max<std::int64_t>(1, t.micro_batch * p.dp);
    return std::max<std::int64_t>(1, t.global_batch / denom);
}

}   // namespace llmsim
