#include "sim/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace llmsim::sim {

void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& body,
                  const std::function<void(std::size_t, std::size_t)>& done) {
    if (n == 0) return;
    std::vector<std::exception_ptr> errors(n);
    std::atomic<std::size_t> next{0};
    std::size_t finished = 0;
    std::mutex m;
    auto worker = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < n;) {
            try {
                body(i);
            } catch (...) {
                errors[i] = std::current_exception();
            }
            if (done) {
                const std::lock_guard<std::mutex> lock(m);
                done(++finished, n);
            }
        }
    };
    const std::size_t cores =
        threads > 0 ? static_cast<std::size_t>(threads) : std::max<std::size_t>(1, std::thread::hardware_concurrency());
    const std::size_t count = std::min(cores, n);
    std::vector<std::thread> pool;
    pool.reserve(count - 1);
    for (std::size_t t = 1; t < count; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    for (const auto& e : errors)
        if (e) std::rethrow_exception(e);
}

}   // namespace llmsim::sim
