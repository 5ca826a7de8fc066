#include "cli/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace llmsim::cli {

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)),
      tty_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

ProgressBar::~ProgressBar() {
    if (shown_) std::fprintf(stderr, "\r%*s\r", static_cast<int>(label_.size()) + 48, "");
}

void ProgressBar::update(double fraction) {
    if (!tty_) return;
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    if (elapsed < 1.0 || (shown_ && now - last_ < std::chrono::milliseconds(100))) return;
    last_ = now;
    const double f = std::clamp(fraction, 0.0, 1.0);
    const int width = 30, fill = static_cast<int>(f * width);
    std::fprintf(stderr, "\r%s [%s%s] %3.0f%%  %.1f s", label_.c_str(),
                 std::string(static_cast<std::size_t>(fill), '#').c_str(),
                 std::string(static_cast<std::size_t>(width - fill), ' ').c_str(), 100.0 * f, elapsed);
    std::fflush(stderr);
    shown_ = true;
}

}   // namespace llmsim::cli
