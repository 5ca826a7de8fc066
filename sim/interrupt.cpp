#include "sim/interrupt.hpp"

namespace llmsim::sim {

namespace {

struct InterruptState {
    InterruptCheck check = nullptr;
    void* context = nullptr;
    unsigned polls = 0;
};
thread_local InterruptState tl_state;

}   // namespace

InterruptScope::InterruptScope(InterruptCheck check, void* context) noexcept
    : previous_check_(tl_state.check), previous_context_(tl_state.context) {
    tl_state.check = check;
    tl_state.context = context;
}

InterruptScope::~InterruptScope() {
    tl_state.check = previous_check_;
    tl_state.context = previous_context_;
}

void poll_interrupt() {
    InterruptState& s = tl_state;
    if (s.check == nullptr || ++s.polls % kInterruptPollPeriod != 0) return;
    if (s.check(s.context)) throw Interrupted{};
}

bool interrupt_requested() {
    const InterruptState& s = tl_state;
    return s.check != nullptr && s.check(s.context);
}

void check_interrupt() {
    if (interrupt_requested()) throw Interrupted{};
}

}   // namespace llmsim::sim
