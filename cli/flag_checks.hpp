// Validators for numeric and boolean flags. CLI11's own messages print ranges that contain the
// rejected value ("Value 0 not in range 0 to 1.79769e+308") or say "Could not convert"; these name the
// value and what was expected, and take their bounds from hardware_db/limits.hpp:
//   --gpus: 'abc' is not an integer: expected an integer in 1..1048576
//   --gpus: 0: expected an integer in 1..1048576
// (CLI11 prefixes the flag.) They run before CLI11 converts the text, so a conversion cannot fail.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace llmsim::cli {

// An integer in [lo, hi] (decimal, optional sign, nothing else).
CLI::Validator int_in(std::int64_t lo, std::int64_t hi);
// A finite number in [lo, hi] ((lo, hi] when !lo_inclusive).
CLI::Validator number_in(double lo, double hi, bool lo_inclusive = true);
// "true" or "false".
CLI::Validator true_or_false();

// The same checks for text read outside CLI11 (lists like --gpus 64,128): nullopt when `text` is not
// an integer. Numbers: parse_decimal (hardware_db/units.hpp).
std::optional<std::int64_t> parse_int(const std::string& text);
// "1..1048576"
std::string int_range_text(std::int64_t lo, std::int64_t hi);

// For every option of `app` and its subcommands that takes a value, a check that runs before any other
// (and before CLI11 converts the text): no value is empty, an integer is decimal digits with an optional
// sign and no leading zero ("010" is not read as octal 8, "0x10" not as 16, an unsigned "-1" not as
// 2^64 - 1), and a number is a finite decimal ("0x1p3", "inf" and "nan" are refused). Called once, after
// every subcommand has registered its options (cli/app.cpp).
void require_plain_values(CLI::App& app);

}   // namespace llmsim::cli
