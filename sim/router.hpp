// Routers: which replica of a deployment an arriving request joins (docs/serving.md "Routing"). One
// function per policy, one row each in the registry (sim/router.cpp kRouters), chosen by
// InferenceConfig::router. A router sees each replica's load as it stands when the request arrives (the
// iterations that ended by then applied); round robin sees nothing, so its replicas are independent
// given the stream and one of them can be simulated alone (ServingOptions::sample_replica).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "hardware_db/specs.hpp"

namespace llmsim::sim {

// What a router may know of a replica: the requests routed to it and not finished, and their tokens
// (prompt plus those generated so far: the KV cache they hold or will take).
struct ReplicaLoad {
    std::int64_t requests = 0;
    double tokens = 0;
    // For a router that reads prefixes: the share of the arriving request's prompt that the prompts routed
    // to this replica before share with it (its shared prefix over its prompt, if its group went there).
    double match = 0;
};

// The replica for the `arrival`-th request of the stream (counted from 0), given every replica's load and
// a uniformly random 64-bit draw (the simulator's seeded stream).
using RouteFn = std::size_t (*)(const std::vector<ReplicaLoad>& load, std::size_t arrival, std::uint64_t draw);

struct RouterDef {
    RouterPolicy policy;
    std::string_view contract;   // one line: what it does, and where it is used
    RouteFn route;
    bool uses_load;                // false: the choice depends on the arrival's index alone (replicas independent)
    bool reads_prefixes = false;   // fills ReplicaLoad::match from where each shared prefix was routed
};

// SGLang's cache-aware router (sgl-model-gateway, policies CacheAwareConfig defaults): the load is uneven
// when the most unfinished requests exceed the fewest by more than kCacheAwareBalanceAbs and by more than
// kCacheAwareBalanceRel times; a prompt goes by its prefix when more than kCacheAwareThreshold of it matches.
inline constexpr std::int64_t kCacheAwareBalanceAbs = 32;
inline constexpr double kCacheAwareBalanceRel = 1.1;
inline constexpr double kCacheAwareThreshold = 0.5;

// Every policy, one row each (a policy without a row is a test failure, tests/test_serving.cpp).
const std::vector<RouterDef>& routers();
const RouterDef& router(RouterPolicy p);

}   // namespace llmsim::sim
