// Units: the one place binary and decimal multiples are written down. Names carry units elsewhere
// (_bytes, _s, _GBps = 1e9 bytes/s); these constants convert at the edges (JSON keys in GiB, reports),
// and the readers below turn what a person types ("350GB", "1.5GiB", "70B") into numbers.
#pragma once

#include <optional>
#include <string_view>

namespace llmsim {

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * kKiB;
inline constexpr double kGiB = 1024.0 * kMiB;
inline constexpr double kGB = 1e9;   // decimal, as bandwidths (_GBps) and datasheets count

// A finite decimal number as a person types it: [+-] digits [. digits] [e [+-] digits], or [+-] . digits
// [...]. nullopt for anything else: hexadecimal ("0x10", "0x1p3"), "inf", "nan", spaces, an overflow.
[[nodiscard]] std::optional<double> parse_decimal(std::string_view text);

// A size or a count with an optional unit, case-insensitive:
// - bytes: "350GB", "3.5e11", "326GiB", "70MB": B, kB, MB, GB, TB, PB (powers of 1000), KiB, MiB, GiB,
//   TiB, PiB (powers of 1024);
// - count: "175B", "1.4T", "8k", "5.76e23": k, M, B or G, T, P (powers of 1000).
enum class QuantityKind { bytes, count };
// Its value; nullopt when `text` is not a decimal number with one of `kind`'s units (or none).
[[nodiscard]] std::optional<double> parse_quantity(std::string_view text, QuantityKind kind);
// Its value, which must lie in [lo, hi]; otherwise a ConfigError naming `what` (a flag or a JSON
// pointer), the text (json_brief) and what was expected: "a size in [0, 1e+18] bytes (350GB, ...)".
[[nodiscard]] double quantity_in(std::string_view text, std::string_view what, QuantityKind kind, double lo, double hi);

}   // namespace llmsim
