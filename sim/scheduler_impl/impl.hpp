// The serving scheduling policies, one file each (sim/scheduler.hpp); declared here for the registry.
#pragma once

#include "sim/scheduler.hpp"

namespace llmsim::sim::scheduler_impl {
namespace inflight {
Held compose(ReplicaScheduler& s, IterationBatch& b, double now);
}
namespace prefill_first {
Held compose(ReplicaScheduler& s, IterationBatch& b, double now);
}
}   // namespace llmsim::sim::scheduler_impl
