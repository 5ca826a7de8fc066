#include "hardware_db/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <span>
#include <string>

#include <fmt/format.h>

#include "hardware_db/errors.hpp"
#include "hardware_db/json_reader.hpp"

namespace llmsim {

namespace {

bool decimal_syntax(std::string_view s) {
    std::size_t i = 0;
    const auto digits_from = [&](std::size_t from) {
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
        return i - from;
    };
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    std::size_t digits = digits_from(i);
    if (i < s.size() && s[i] == '.') {
        ++i;
        digits += digits_from(i);
    }
    if (digits == 0) return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        if (digits_from(i) == 0) return false;
    }
    return i == s.size();
}

struct Unit {
    std::string_view name;
    double factor;
};
constexpr Unit kByteUnits[] = {{"b", 1},      {"kb", 1e3},         {"mb", 1e6},        {"gb", 1e9},
                               {"tb", 1e12},  {"pb", 1e15},        {"kib", kKiB},      {"mib", kMiB},
                               {"gib", kGiB}, {"tib", kGiB* kKiB}, {"pib", kGiB* kMiB}};
constexpr Unit kCountUnits[] = {{"k", 1e3}, {"m", 1e6}, {"b", 1e9}, {"g", 1e9}, {"t", 1e12}, {"p", 1e15}};

// What a reader of a quantity expects: "a size in [0, 1e+18] bytes (350GB, 3.5e11, 326GiB, 70MB)".
std::string quantity_expected(QuantityKind kind, double lo, double hi) {
    return kind == QuantityKind::bytes
               ? fmt::format("a size in [{:g}, {:g}] bytes (350GB, 3.5e11, 326GiB, 70MB)", lo, hi)
               : fmt::format("a count in [{:g}, {:g}] (175B, 1.75e11, 1.4T, 8k)", lo, hi);
}

}   // namespace

std::optional<double> parse_decimal(std::string_view text) {
    if (!decimal_syntax(text)) return std::nullopt;
    // from_chars reads no leading '+' (the syntax above allows one).
    if (text.front() == '+') text.remove_prefix(1);
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
    return v;
}

std::optional<double> parse_quantity(std::string_view text, QuantityKind kind) {
    // The unit: the trailing letters (an exponent is followed by digits: "3.5e11" has none).
    std::size_t cut = text.size();
    while (cut > 0 && std::isalpha(static_cast<unsigned char>(text[cut - 1]))) --cut;
    std::string unit(text.substr(cut));
    for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    double factor = unit.empty() ? 1.0 : -1.0;
    const auto units =
        kind == QuantityKind::bytes ? std::span<const Unit>(kByteUnits) : std::span<const Unit>(kCountUnits);
    for (const Unit& u : units)
        if (u.name == unit) factor = u.factor;
    const auto v = parse_decimal(text.substr(0, cut));
    if (!v || factor < 0 || !std::isfinite(*v * factor)) return std::nullopt;
    return *v * factor;
}

double quantity_in(std::string_view text, std::string_view what, QuantityKind kind, double lo, double hi) {
    const auto v = parse_quantity(text, kind);
    if (v && *v >= lo && *v <= hi) return *v;
    throw ConfigError(
        fmt::format("{}: {}: expected {}", what, json_brief(Json(std::string(text))), quantity_expected(kind, lo, hi)));
}

}   // namespace llmsim
