// Typed errors thrown by the libraries; only cli/ turns them into messages and exit codes.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace llmsim {

// Bad input: every problem found, one line each, naming the JSON pointer (or flag), the value and
// what was expected. cli/ prints them on stderr and exits with code 2.
class ConfigError : public std::runtime_error {
public:
    explicit ConfigError(std::vector<std::string> problems);
    explicit ConfigError(const std::string& problem) : ConfigError(std::vector<std::string>{problem}) {}
    const std::vector<std::string>& problems() const { return problems_; }

private:
    std::vector<std::string> problems_;
};

// Closest names to `name` among `candidates` (edit distance), best first, at most `n`.
std::vector<std::string> closest_names(const std::string& name, const std::vector<std::string>& candidates,
                                       std::size_t n = 3);

}   // namespace llmsim
