#include "cli/flag_checks.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace llmsim::cli {

namespace {
// The value as typed, quoted and cut for a message.
std::string typed_text(const std::string& s) {
    std::string v = s.size() > 40 ? s.substr(0, 37) + "..." : s;
    for (auto& c : v)
        if (static_cast<unsigned char>(c) < 0x20) c = '?';
    return "'" + v + "'";
}
}   // namespace

std::optional<std::int64_t> parse_int(const std::string& text) {
    const char* b = text.data();
    const char* e = b + text.size();
    if (b != e && *b == '+') {
        ++b;
        if (b != e && *b == '-') return std::nullopt;
    }
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || end != e || b == e) return std::nullopt;
    return v;
}

std::optional<double> parse_number(const std::string& text) {
    if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
    return v;
}

std::string int_range_text(std::int64_t lo, std::int64_t hi) { return fmt::format("{}..{}", lo, hi); }

CLI::Validator int_in(std::int64_t lo, std::int64_t hi) {
    const std::string expected = "an integer in " + int_range_text(lo, hi);
    return CLI::Validator(
        [lo, hi, expected](std::string& s) -> std::string {
            const auto v = parse_int(s);
            if (!v) {
                // A whole number too large for 64 bits is out of range, not "not an integer".
                const bool digits = !s.empty() && s.find_first_not_of("+-0123456789") == std::string::npos;
                return fmt::format("{}{}: expected {}", typed_text(s), digits ? "" : " is not an integer", expected);
            }
            if (*v < lo || *v > hi) return fmt::format("{}: expected {}", s, expected);
            return {};
        },
        "INT in " + int_range_text(lo, hi), "int_in");
}

CLI::Validator number_in(double lo, double hi, bool lo_inclusive) {
    const std::string expected = fmt::format("a number in {}{:g}, {:g}]", lo_inclusive ? "[" : "(", lo, hi);
    return CLI::Validator(
        [lo, hi, lo_inclusive, expected](std::string& s) -> std::string {
            const auto v = parse_number(s);
            if (!v) return fmt::format("{} is not a finite number: expected {}", typed_text(s), expected);
            if ((lo_inclusive ? *v < lo : *v <= lo) || *v > hi) return fmt::format("{}: expected {}", s, expected);
            return {};
        },
        fmt::format("NUMBER in {}{:g}, {:g}]", lo_inclusive ? "[" : "(", lo, hi), "number_in");
}

CLI::Validator true_or_false() {
    return CLI::Validator(
        [](std::string& s) -> std::string {
            if (s == "true" || s == "false") return {};
            return fmt::format("{}: expected true or false", typed_text(s));
        },
        "true|false", "true_or_false");
}

}   // namespace llmsim::cli
