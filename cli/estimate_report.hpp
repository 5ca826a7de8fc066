// The result of `llmsim estimate` as text, formatted from the library's structs (app/estimate.hpp,
// app/serving.hpp); its JSON is report/estimate.hpp's (one definition for the CLI, `run` rows and the
// Python module).
#pragma once

#include <string>

#include "hardware_db/specs.hpp"
#include "report/estimate.hpp"

namespace llmsim::cli {

using report::Estimate;
using report::estimate_json;
using report::run_estimate;

std::string estimate_text(const Scenario& s, const Estimate& e);

// "how sure: the 19 published runs of training on h100-sxm measured 84-118% of llmsim's step time:
// 10.17-14.28 s" (wrapped); or that there are none to say how sure.
// The replicas of a serving deployment in words: "4 replicas of tp 2 pp 1" and, when a router other than
// round robin spreads the requests, ", least-tokens routing".
std::string replicas_text(const Scenario& s, std::int64_t replicas);
// What a capacity's rate is, in words: "Poisson rate", "mean rate of bursty arrivals (Gamma gaps, cv 2)" or
// "mean rate of the trace FILE (its times scaled)".
std::string capacity_rate_text(const InferenceConfig& in);
// The SLO's targets in words: "p99 TTFT 2 s / TPOT 200 ms" (a missing one as "-"), or with a 90th
// percentile stated, each stated target ("TTFT p90 400 ms, TPOT p90 40 ms").
std::string slo_text(const ServingSlo& slo);
// The SLO a stream is judged on, "SLO p99 TTFT 500 ms / TPOT 30 ms", or, where request classes state
// their own, "each class's SLO (chat: p99 TTFT 500 ms / TPOT 30 ms; summary: p99 TTFT 4 s / TPOT 30 ms)".
std::string stream_slo_text(const InferenceConfig& in);
// The stream's shared prefixes in words, to follow its lengths: " (512 shared prefixes of 4096 tokens,
// Zipf 1)"; empty without them.
std::string shared_prefix_text(const InferenceConfig& in);
// A rate profile's slices (ServingResult::windows) as a table: rate, TTFT and TPOT p99 and, with an SLO, the
// share of requests within it; at most 48 rows (the slices of the longest TTFT p99); empty without a profile.
std::string windows_text(const InferenceConfig& in, const std::vector<sim::ServingWindow>& windows);
// The request classes of a stream (inference.classes): each class's share, requests, lengths, latencies and
// whether it meets its own SLO; "" without classes.
std::string classes_text(const InferenceConfig& in, const sim::ServingResult& r);
// The arrival process in words: "Poisson", "Gamma gaps, cv 2", "evenly spaced".
std::string arrival_process_text(const InferenceConfig& in);
// Whether a header names the arrival shape: a generated stream other than a constant-rate Poisson one (a
// trace's own times, and Poisson, go unsaid).
bool arrival_shape_worth_naming(const InferenceConfig& in);
std::string published_range_text(const std::optional<app::PublishedRange>& r, const char* what, const char* unit);

}   // namespace llmsim::cli
