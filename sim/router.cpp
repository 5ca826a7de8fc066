#include "sim/router.hpp"

#include <algorithm>
#include <stdexcept>

namespace llmsim::sim {

namespace {

std::size_t round_robin(const std::vector<ReplicaLoad>& load, std::size_t arrival, std::uint64_t /*draw*/) {
    return arrival % load.size();
}

// The first replica with the least of `key` (ties: the lowest index, as a scan of a list does).
template <typename Key>
std::size_t least(const std::vector<ReplicaLoad>& load, Key key) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < load.size(); ++i)
        if (key(load[i]) < key(load[best])) best = i;
    return best;
}

std::size_t least_requests(const std::vector<ReplicaLoad>& load, std::size_t /*arrival*/, std::uint64_t /*draw*/) {
    return least(load, [](const ReplicaLoad& l) { return l.requests; });
}

std::size_t least_tokens(const std::vector<ReplicaLoad>& load, std::size_t /*arrival*/, std::uint64_t /*draw*/) {
    return least(load, [](const ReplicaLoad& l) { return l.tokens; });
}

// Two distinct replicas drawn uniformly (the draw's high and low 32 bits), the one with fewer unfinished
// requests (the first drawn on a tie).
std::size_t power_of_two(const std::vector<ReplicaLoad>& load, std::size_t /*arrival*/, std::uint64_t draw) {
    const std::size_t n = load.size();
    if (n < 2) return 0;
    const std::size_t a = static_cast<std::size_t>(draw >> 32U) % n;
    std::size_t b = static_cast<std::size_t>(draw & 0xFFFFFFFFU) % (n - 1);
    if (b >= a) ++b;
    return load[b].requests < load[a].requests ? b : a;
}

// SGLang's cache-aware policy: the fewest unfinished requests while the load is uneven; else the replica
// whose routed prompts match most of this one (the fewest requests among equals), when more than the
// threshold matches; else the replica with the smallest tree of routed prompts, taken here as the fewest
// unfinished tokens (the tree is trimmed to its recent prompts).
std::size_t cache_aware(const std::vector<ReplicaLoad>& load, std::size_t /*arrival*/, std::uint64_t /*draw*/) {
    const std::size_t fewest = least(load, [](const ReplicaLoad& l) { return l.requests; });
    std::int64_t most = 0;
    for (const auto& l : load) most = std::max(most, l.requests);
    const auto min = load[fewest].requests;
    if (most - min > kCacheAwareBalanceAbs &&
        static_cast<double>(most) > kCacheAwareBalanceRel * static_cast<double>(min))
        return fewest;
    std::size_t best = 0;
    for (std::size_t i = 1; i < load.size(); ++i)
        if (load[i].match > load[best].match ||
            (load[i].match == load[best].match && load[i].requests < load[best].requests))
            best = i;
    if (load[best].match > kCacheAwareThreshold) return best;
    return least(load, [](const ReplicaLoad& l) { return l.tokens; });
}

const std::vector<RouterDef> kRouters = {
    {RouterPolicy::round_robin,
     "in turn, whatever the replicas hold (TensorRT-LLM's and vLLM's data-parallel front ends, Kubernetes "
     "services, MLPerf harnesses)",
     round_robin, false},
    {RouterPolicy::least_requests,
     "to the replica with the fewest unfinished requests (Envoy and llm-d least-request, SGLang router's "
     "shortest queue)",
     least_requests, true},
    {RouterPolicy::least_tokens,
     "to the replica with the fewest unfinished tokens, prompts plus those generated so far (KV-cache-load "
     "aware routing, llm-d's KV utilisation scorer)",
     least_tokens, true},
    {RouterPolicy::power_of_two,
     "the fewer unfinished requests of two replicas drawn at random (Mitzenmacher 2001; Ray Serve's "
     "default)",
     power_of_two, true},
    {RouterPolicy::cache_aware,
     "to the replica its shared prefix was routed to when more than half the prompt matches there, unless the "
     "unfinished requests are uneven; else the fewest unfinished tokens (SGLang's cache-aware router)",
     cache_aware, true, true},
};

}   // namespace

const std::vector<RouterDef>& routers() { return kRouters; }

const RouterDef& router(RouterPolicy p) {
    for (const auto& r : kRouters)
        if (r.policy == p) return r;
    throw std::logic_error("sim/router: a policy without a row in kRouters");
}

}   // namespace llmsim::sim
