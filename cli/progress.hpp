// A progress bar on stderr for work that takes more than a second, shown only when stderr is a
// terminal (never in pipes, files or tests); cleared when the work ends.
#pragma once

#include <chrono>
#include <string>

namespace llmsim::cli {

class ProgressBar {
public:
    explicit ProgressBar(std::string label);
    ~ProgressBar();
    ProgressBar(const ProgressBar&) = delete;
    ProgressBar& operator=(const ProgressBar&) = delete;
    // `fraction` of the work done (0..1); draws at most ten times a second, after the first second.
    void update(double fraction);

private:
    std::string label_;
    bool tty_ = false, shown_ = false;
    std::chrono::steady_clock::time_point start_, last_;
};

}   // namespace llmsim::cli
