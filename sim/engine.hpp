// A small deterministic discrete-event engine (docs/simulator.md).
//
// Tasks have a duration, a stream and dependencies. Streams are in-order queues (like CUDA streams):
// tasks run on their stream in the order they were added. A task starts at the first instant when
// every dependency has finished AND the task before it on its stream has finished. Completions are
// processed in (time, task id) order, so equal-time events are broken deterministically by id.
// No globals, no std::function, no strings: an Engine is a reusable value whose vectors keep their
// capacity across reset() calls (the search simulates many layouts with one Engine).
#pragma once

#include <cstdint>
#include <vector>

namespace llmsim::sim {

// What a task is, for reports and traces only; the engine never looks at it.
struct TaskTag {
    std::uint8_t kind = 0;    // caller-defined (see step_sim.hpp TaskKind)
    std::int32_t piece = 0;   // piece of a split task (gradient buckets)
    std::int32_t index = 0;   // model chunk (interleaved) or bucket index
    std::int32_t stage = 0;
    std::int32_t mb = -1;   // micro-batch, -1 when none
};

struct Task {
    double dur_s = 0, start = -1, end = -1;   // seconds
    std::int32_t stream = 0;
    std::int32_t next_on_stream = -1;
    std::int32_t succ_begin = 0, succ_end = 0;   // CSR range into the successor array
    std::int32_t waiting = 0;                    // dependencies not yet finished
    double ready = 0;                            // latest finish among finished dependencies (s)
    TaskTag tag;
};

class Engine {
public:
    // Clears every task and sets the number of streams (capacity is kept).
    void reset(int streams);
    // Appends a task to the end of `stream`; returns its id (ids are dense, 0..n−1).
    int add(double dur_s, int stream, TaskTag tag);
    // `succ` may not start before `pred` has finished.
    void depend(int pred, int succ);
    // Plays the graph. Throws std::logic_error naming a stuck task if the graph deadlocks (a cycle
    // through dependencies and stream order).
    void run();

    int size() const { return static_cast<int>(tasks_.size()); }
    int streams() const { return static_cast<int>(head_.size()); }
    const Task& task(int id) const { return tasks_[static_cast<std::size_t>(id)]; }
    const std::vector<Task>& tasks() const { return tasks_; }
    double makespan() const { return makespan_; }
    std::int64_t events() const { return events_; }
    // Dependencies as (pred, succ) pairs, for checks and tests.
    const std::vector<std::pair<std::int32_t, std::int32_t>>& edges() const { return edges_; }

private:
    void try_start(int id, double now);

    std::vector<Task> tasks_;
    std::vector<std::pair<std::int32_t, std::int32_t>> edges_;
    std::vector<std::int32_t> succ_;
    std::vector<std::int32_t> head_;    // first task of each stream not yet started
    std::vector<std::int32_t> tail_;    // last task added to each stream
    std::vector<std::int32_t> count_;   // scratch for the CSR build
    struct Event {
        double t;
        std::int32_t id;
    };
    std::vector<Event> heap_;
    double makespan_ = 0;
    std::int64_t events_ = 0;
};

}   // namespace llmsim::sim
