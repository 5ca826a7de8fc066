// Runs the built `llmsim` binary (LLMSIM_BINARY) from a test and captures exit code, stdout and
// stderr separately (shared by the CLI tests).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace llmsim::test {

struct Run {
    int rc = -1;
    std::string out, err;
};

// A per-process scratch folder for `tag`.
inline std::filesystem::path temp_dir(const std::string& tag) {
    auto d = std::filesystem::temp_directory_path() / ("llmsim-test-" + tag + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
}

inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Single-quoted for /bin/sh.
inline std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

inline Run run_llmsim(const std::vector<std::string>& args, const std::string& tag = "cli") {
    const auto dir = temp_dir(tag);
    const auto out = dir / "stdout.txt", err = dir / "stderr.txt";
    std::string cmd = shell_quote(LLMSIM_BINARY);
    for (const auto& a : args) cmd += ' ' + shell_quote(a);
    cmd += " >" + shell_quote(out.string()) + " 2>" + shell_quote(err.string());
    const int status = std::system(cmd.c_str());
    Run r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

}   // namespace llmsim::test
