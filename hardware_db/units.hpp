// Units: the one place binary and decimal multiples are written down. Names carry units elsewhere
// (_bytes, _s, _GBps = 1e9 bytes/s); these constants convert at the edges (JSON keys in GiB, reports).
#pragma once

namespace llmsim {

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * kKiB;
inline constexpr double kGiB = 1024.0 * kMiB;
inline constexpr double kGB = 1e9;   // decimal, as bandwidths (_GBps) and datasheets count

}   // namespace llmsim
