// Arrival traces (inference.arrivals; docs/serving.md "Traces"): a CSV of requests, each with its
// arrival time and its prompt and output lengths, that the serving simulator replays instead of drawing
// a Poisson stream. Two headers are read: llmsim's `arrival_s,input_tokens,output_tokens` (seconds) and
// the Azure LLM inference traces' `TIMESTAMP,ContextTokens,GeneratedTokens` (timestamps
// "YYYY-MM-DD HH:MM:SS[.fraction]"). Strict: a bad header, value or order is a ConfigError naming the
// file, the line, the value and what was expected; the file and its rows are bounded (limits below).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "hardware_db/specs.hpp"

namespace llmsim {

inline constexpr std::int64_t kMaxTraceBytes = std::int64_t{256} << 20;   // 256 MiB of CSV
inline constexpr std::int64_t kMaxTraceRows = 10'000'000;                 // requests (the stream's bound)

// Reads the trace at `path` (`shown` is how messages name it); arrivals from its first request's time.
[[nodiscard]] std::shared_ptr<const ArrivalTrace> read_arrival_trace(const std::string& path, const std::string& shown);

}   // namespace llmsim
