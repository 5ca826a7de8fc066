// llmsim estimate --qps-sweep LIST: the latency–throughput curve of one serving deployment. Each rate
// is the single estimate with --qps at that rate (the same scenario, seed and request count, through the
// same flag overlay and simulate_serving), so a row equals `estimate --qps RATE` number for number. The
// capacity knee is the largest swept rate before the first that misses the SLO (without an SLO: before
// the first whose achieved requests/s falls below 95% of the offered rate). docs/serving.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "cli/estimate_report.hpp"

namespace llmsim::cli {

// Most rates one sweep simulates.
inline constexpr std::size_t kMaxSweepRates = 64;
// Without an SLO, a rate is within capacity while the achieved requests/s is at least this share of it.
inline constexpr double kSweepCapacityShare = 0.95;

// "1,2,4,8": finite rates > 0, increasing, at most kMaxSweepRates; ConfigError naming --qps-sweep.
std::vector<double> parse_qps_sweep(const std::string& text);

struct SweepPoint {
    double qps = 0;
    sim::ServingResult result;
    Json row;              // the single estimate's contract keys at this rate, plus qps and knee
    bool within = false;   // meets the SLO (or, without one, achieved >= 95% of offered)
};
struct QpsSweep {
    Scenario scenario;   // at the first rate
    std::vector<SweepPoint> points;
    std::optional<std::size_t> knee;   // index into points
};

// Throws ConfigError (naming --qps-sweep, another flag or the file's pointer) for a training scenario,
// static batching, a deployment that does not fit, or a rate the scenario reader refuses.
QpsSweep run_qps_sweep(const ScenarioFlags& flags, const std::vector<double>& rates);

Json qps_sweep_json(const QpsSweep& sweep);
std::string qps_sweep_text(const QpsSweep& sweep);

}   // namespace llmsim::cli

namespace llmsim::cli::plot {
// estimate --qps-sweep --plot: p50 and p99 TTFT and TPOT against the offered rate (log-log).
std::string qps_sweep_chart(const QpsSweep& sweep);
}   // namespace llmsim::cli::plot
