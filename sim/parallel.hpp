// The searches' one way to spread independent work over threads (the serving capacity searches; the
// layout search keeps its own work-stealing pool).
#pragma once

#include <cstddef>
#include <functional>

namespace llmsim::sim {

// Runs body(i) for every i in [0, n), each once, on `threads` threads (0: every core; never more than
// n). After each index `done(k, n)` is called with k indices finished, one call at a time (a progress
// bar). When some body(i) throws, every index still runs and the exception of the smallest such i is
// rethrown: the outcome does not depend on the thread count.
void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& body,
                  const std::function<void(std::size_t, std::size_t)>& done = {});

}   // namespace llmsim::sim
