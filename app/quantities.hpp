// The scenario's outputs by contract key (../shared/interface/scenario.md), which validation and batch
// runs compare and tabulate: training from the step simulator (or the closed form), serving from the one
// serving evaluation (app/serving.hpp).
#pragma once

#include <map>
#include <string>

#include "hardware_db/specs.hpp"

namespace llmsim::app {

// step_time_s, tokens_per_s, tokens_per_s_per_gpu, mfu, hfu, bubble_fraction (training, the simulator
// unless `closed_form`); ttft_s, tpot_s, e2e_latency_s, output_tokens_per_s, output_tokens_per_s_per_gpu
// (serving); with continuous batching also the percentiles ttft_p50_s, ttft_p90_s, ttft_p99_s,
// tpot_p50_s, tpot_p90_s, tpot_p99_s, e2e_latency_p99_s and requests_per_s, and slo_capacity_qps with qps
// "max". A serving deployment that does not fit has none of them (app::serving_fit says why).
std::map<std::string, double> predicted_quantities(const Scenario& s, bool closed_form = false);

}   // namespace llmsim::app
