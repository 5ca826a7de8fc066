#include "sim/engine.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace llmsim::sim {

namespace {

// Min-heap on (time, id): the earliest completion first, the smaller id first among equal times.
struct Later {
    template <class E>
    bool operator()(const E& a, const E& b) const {
        return a.t > b.t || (a.t == b.t && a.id > b.id);
    }
};

}   // namespace

void Engine::reset(int streams) {
    tasks_.clear();
    edges_.clear();
    succ_.clear();
    heap_.clear();
    head_.assign(static_cast<std::size_t>(streams), -1);
    tail_.assign(static_cast<std::size_t>(streams), -1);
    makespan_ = 0;
    events_ = 0;
}

int Engine::add(double dur_s, int stream, TaskTag tag) {
    const int id = static_cast<int>(tasks_.size());
    Task t;
    t.dur_s = dur_s < 0 ? 0 : dur_s;
    t.stream = stream;
    t.tag = tag;
    tasks_.push_back(t);
    auto& tail = tail_[static_cast<std::size_t>(stream)];
    if (tail >= 0)
        tasks_[static_cast<std::size_t>(tail)].next_on_stream = id;
    else
        head_[static_cast<std::size_t>(stream)] = id;
    tail = id;
    return id;
}

void Engine::depend(int pred, int succ) {
    if (pred < 0 || succ < 0 || pred == succ) return;
    edges_.emplace_back(pred, succ);
}

void Engine::try_start(int id, double now) {
    Task& t = tasks_[static_cast<std::size_t>(id)];
    if (t.waiting > 0 || head_[static_cast<std::size_t>(t.stream)] != id || t.start >= 0) return;
    t.start = std::max(now, t.ready);
    t.end = t.start + t.dur_s;
    heap_.push_back(Event{t.end, id});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
}

void Engine::run() {
    const std::size_t n = tasks_.size();
    // Successors in CSR form (counting sort of the edges by predecessor).
    count_.assign(n + 1, 0);
    for (const auto& [p, s] : edges_) {
        ++count_[static_cast<std::size_t>(p) + 1];
        ++tasks_[static_cast<std::size_t>(s)].waiting;
    }
    for (std::size_t i = 0; i < n; ++i) count_[i + 1] += count_[i];
    succ_.resize(edges_.size());
    for (std::size_t i = 0; i < n; ++i) {
        tasks_[i].succ_begin = count_[i];
        tasks_[i].succ_end = count_[i];
    }
    for (const auto& [p, s] : edges_)
        succ_[static_cast<std::size_t>(tasks_[static_cast<std::size_t>(p)].succ_end++)] = s;

    heap_.reserve(head_.size() + 1);
    for (int h : head_)
        if (h >= 0) try_start(h, 0.0);

    std::size_t done = 0;
    while (!heap_.empty()) {
        std::pop_heap(heap_.begin(), heap_.end(), Later{});
        const Event ev = heap_.back();
        heap_.pop_back();
        ++events_;
        ++done;
        Task& t = tasks_[static_cast<std::size_t>(ev.id)];
        makespan_ = std::max(makespan_, ev.t);
        // The stream moves on to its next task.
        head_[static_cast<std::size_t>(t.stream)] = t.next_on_stream;
        for (std::int32_t k = t.succ_begin; k < t.succ_end; ++k) {
            Task& s = tasks_[static_cast<std::size_t>(succ_[static_cast<std::size_t>(k)])];
            --s.waiting;
            if (ev.t > s.ready) s.ready = ev.t;
            if (s.waiting == 0) try_start(succ_[static_cast<std::size_t>(k)], ev.t);
        }
        if (t.next_on_stream >= 0) try_start(t.next_on_stream, ev.t);
    }
    if (done != n) {
        for (std::size_t i = 0; i < n; ++i)
            if (tasks_[i].start < 0)
                throw std::logic_error("simulator deadlock: task " + std::to_string(i) + " (stage " +
                                       std::to_string(tasks_[i].tag.stage) + ", kind " +
                                       std::to_string(tasks_[i].tag.kind) + ", mb " + std::to_string(tasks_[i].tag.mb) +
                                       ") never became ready");
    }
}

}   // namespace llmsim::sim
