// Cooperative interruption of long computations, for a library caller that can be interrupted (the
// Python module on Ctrl-C; the CLI installs nothing: a signal ends the process). The caller installs a
// check for what it runs on its own thread (InterruptScope); each serving iteration (ReplicaScheduler::begin) calls
// poll_interrupt(), which asks the check every kInterruptPollPeriod calls and throws Interrupted when it
// says stop. Threads the library starts run without a check. With none installed a poll is a
// thread-local load and a compare (an iteration is ~0.25 us).
#pragma once

namespace llmsim::sim {

// Thrown by poll_interrupt(). Deliberately not a std::exception (as boost::thread_interrupted): the
// handlers that turn a failed case or row into a message (catch (const std::exception&)) let it pass.
struct Interrupted {};

// Returns true to stop the computation; `context` is the caller's.
using InterruptCheck = bool (*)(void* context);

inline constexpr unsigned kInterruptPollPeriod = 4096;

// Installs `check` on this thread for its lifetime (the previous one comes back after).
class InterruptScope {
public:
    InterruptScope(InterruptCheck check, void* context) noexcept;
    ~InterruptScope();
    InterruptScope(const InterruptScope&) = delete;
    InterruptScope& operator=(const InterruptScope&) = delete;

private:
    InterruptCheck previous_check_;
    void* previous_context_;
};

// Asks this thread's check every kInterruptPollPeriod calls; throws Interrupted when it says stop.
void poll_interrupt();
// Asks this thread's check now (progress callbacks between cases or rows); throws Interrupted when it
// says stop.
void check_interrupt();
// Asks this thread's check now, without throwing (a callback that must not throw: the search's
// progress, called while its workers run).
bool interrupt_requested();

}   // namespace llmsim::sim
