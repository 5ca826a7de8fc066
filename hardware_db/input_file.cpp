#include "hardware_db/input_file.hpp"

#include <sys/stat.h>

#include <fstream>

#include <fmt/format.h>

#include "hardware_db/errors.hpp"

namespace llmsim {

namespace {
const char* kind_of(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}
}   // namespace

std::int64_t check_input_file(const std::string& path, std::int64_t max_bytes, const std::string& what) {
    struct stat st {};
    if (path.empty() || ::stat(path.c_str(), &st) != 0)
        throw ConfigError(fmt::format("{}: cannot open file: expected {}", path, what));
    if (!S_ISREG(st.st_mode))
        throw ConfigError(fmt::format("{}: {}: expected {} (a regular file)", path, kind_of(st.st_mode), what));
    if (st.st_size > max_bytes)
        throw ConfigError(fmt::format("{}: {} bytes: expected {} of at most {} bytes", path,
                                      static_cast<std::int64_t>(st.st_size), what, max_bytes));
    return static_cast<std::int64_t>(st.st_size);
}

std::string read_input_file(const std::string& path, std::int64_t max_bytes, const std::string& what) {
    const std::int64_t size = check_input_file(path, max_bytes, what);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ConfigError(fmt::format("{}: cannot open file: expected {}", path, what));
    std::string text;
    text.resize(static_cast<std::size_t>(size));
    in.read(text.data(), size);
    text.resize(static_cast<std::size_t>(in.gcount()));   // a file that grew is read up to its checked size
    return text;
}

}   // namespace llmsim
