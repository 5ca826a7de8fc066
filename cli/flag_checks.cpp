#include "cli/flag_checks.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include <fmt/format.h>

#include "hardware_db/units.hpp"

namespace llmsim::cli {

namespace {
// The value as typed, quoted and cut for a message.
std::string typed_text(const std::string& s) {
    std::string v = s.size() > 40 ? s.substr(0, 37) + "..." : s;
    for (auto& c : v)
        if (static_cast<unsigned char>(c) < 0x20) c = '?';
    return "'" + v + "'";
}

// An optional sign (a minus only when `sign_allowed`), then digits without a leading zero.
bool decimal_integer(const std::string& s, bool sign_allowed) {
    std::size_t i = 0;
    if (i < s.size() && (s[i] == '+' || (sign_allowed && s[i] == '-'))) ++i;
    if (i == s.size()) return false;
    if (s[i] == '0' && i + 1 < s.size()) return false;   // no leading zero: not octal, not hex
    return s.find_first_not_of("0123456789", i) == std::string::npos;
}

}   // namespace

std::optional<std::int64_t> parse_int(const std::string& text) {
    const char* b = text.data();
    const char* e = b + text.size();
    if (b != e && *b == '+') {
        ++b;
        if (b != e && *b == '-') return std::nullopt;
    }
    // Decimal only: a leading zero ("010") is refused rather than read as 10 here and as octal 8 elsewhere.
    const char* digits = b != e && *b == '-' ? b + 1 : b;
    if (e - digits > 1 && *digits == '0') return std::nullopt;
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || end != e || b == e) return std::nullopt;
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
                if (digits && !decimal_integer(s, true))   // "010": not read as octal, nor as 10
                    return fmt::format("{} has a leading 0 (octal is not read): expected {}", typed_text(s), expected);
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
            const auto v = parse_decimal(s);
            if (!v) return fmt::format("{} is not a finite number: expected {}", typed_text(s), expected);
            if ((lo_inclusive ? *v < lo : *v <= lo) || *v > hi) return fmt::format("{}: expected {}", s, expected);
            return {};
        },
        fmt::format("NUMBER in {}{:g}, {:g}]", lo_inclusive ? "[" : "(", lo, hi), "number_in");
}

namespace {

void require_plain_values_of(CLI::App& app) {
    for (CLI::Option* o : app.get_options()) {
        if (o->get_items_expected_max() == 0) continue;   // a flag without a value (--json)
        const std::string type = o->get_type_name();
        const std::string base = type.substr(0, type.find(':'));
        // What the option's own checks accept ("INT in [1 - 65536]"), for the message.
        const std::string checks = type.find(':') == std::string::npos ? "" : type.substr(type.find(':') + 1);
        // int_in and number_in read decimal text only and say so with their range.
        // (int_in says "INT in 1..1048576"; CLI::Range says "INT in [1 - 65536]" and reads octal and hex.)
        if ((checks.rfind("INT in ", 0) == 0 && checks.find("..") != std::string::npos) ||
            checks.rfind("NUMBER in ", 0) == 0)
            continue;
        const std::string also = checks.empty() ? "" : ", " + checks;
        o->transform(CLI::Validator(
            [base, also](std::string& s) -> std::string {
                if (base == "INT" || base == "UINT") {
                    const bool is_unsigned = base == "UINT";
                    if (s.empty()) return "empty value: expected an integer" + also;
                    if (!decimal_integer(s, !is_unsigned))
                        return fmt::format(
                            "{} is not a decimal integer (octal and hexadecimal are not read): "
                            "expected digits without a leading 0{}{}",
                            typed_text(s), is_unsigned ? " or a sign" : "", also);
                    // Past 64 bits CLI11 would saturate (99999999999999999999 read as 2^63 - 1): out of range.
                    bool fits = false;
                    const char* end = s.data() + s.size();
                    const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
                    if (is_unsigned) {
                        std::uint64_t u = 0;
                        const auto r = std::from_chars(begin, end, u);
                        fits = r.ec == std::errc() && r.ptr == end;
                    } else {
                        std::int64_t i = 0;
                        const auto r = std::from_chars(begin, end, i);
                        fits = r.ec == std::errc() && r.ptr == end;
                    }
                    if (!fits)
                        return fmt::format("{}: out of range: expected an integer in [{}, {}]{}", typed_text(s),
                                           is_unsigned ? "0" : "-9223372036854775808",
                                           is_unsigned ? "18446744073709551615" : "9223372036854775807", also);
                    return {};
                }
                if (base == "FLOAT") {
                    if (s.empty()) return "empty value: expected a number" + also;
                    if (!parse_decimal(s))
                        return fmt::format(
                            "{} is not a finite decimal number: expected digits, a point and an "
                            "exponent such as 0.5 or 1e-3{}",
                            typed_text(s), also);
                    return {};
                }
                if (s.empty()) return "empty value: expected a non-empty value";
                return {};
            },
            "", "plain_value"));
    }
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) require_plain_values_of(*sub);
}

}   // namespace

void require_plain_values(CLI::App& app) { require_plain_values_of(app); }

CLI::Validator true_or_false() {
    return CLI::Validator(
        [](std::string& s) -> std::string {
            if (s == "true" || s == "false") return {};
            return fmt::format("{}: expected true or false", typed_text(s));
        },
        "true|false", "true_or_false");
}

}   // namespace llmsim::cli
