// Input files are checked before they are read: a path that is not a regular file (a directory,
// /dev/zero, a FIFO) or is larger than the reader's documented limit (hardware_db/limits.hpp) is a
// ConfigError naming the file and the expectation, so no reader can block or grow without bound.
#pragma once

#include <cstdint>
#include <string>

namespace llmsim {

// The size of `path` in bytes after the checks above. `what` completes "expected ..." in messages
// ("a readable JSON file").
std::int64_t check_input_file(const std::string& path, std::int64_t max_bytes, const std::string& what);

// The whole content of `path`, after check_input_file (reads at most max_bytes even if it grows).
std::string read_input_file(const std::string& path, std::int64_t max_bytes, const std::string& what);

}   // namespace llmsim
