#include "hardware_db/arrivals.hpp"

#include <charconv>
#include <cmath>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "hardware_db/errors.hpp"
#include "hardware_db/input_file.hpp"
#include "hardware_db/limits.hpp"

namespace llmsim {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

// Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar (H. Hinnant, "chrono-Compatible
// Low-Level Date Algorithms", days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool read_uint(std::string_view s, std::int64_t& out) {
    if (s.empty() || s.size() > 18) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;   // decimal digits only: no sign, no 0x, no exponent
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// "YYYY-MM-DD HH:MM:SS[.fraction][Z|+HH:MM]" (Azure's traces; a 'T' separator too) in UTC seconds since 1970.
bool read_timestamp(std::string_view s, double& out) {
    if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':')
        return false;
    std::int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
    if (!read_uint(s.substr(0, 4), y) || !read_uint(s.substr(5, 2), mo) || !read_uint(s.substr(8, 2), d) ||
        !read_uint(s.substr(11, 2), h) || !read_uint(s.substr(14, 2), mi) || !read_uint(s.substr(17, 2), se))
        return false;
    // A calendar date (February 29 in leap years only) and a time of day; second 60 only as a leap second,
    // 23:59:60 (Feb 30 was read as Mar 2, and an error then blamed the next, valid row).
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    constexpr std::int64_t kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (mo < 1 || mo > 12 || d < 1 || d > kDays[mo - 1] + (mo == 2 && leap ? 1 : 0) || h > 23 || mi > 59 ||
        se > (h == 23 && mi == 59 ? 60 : 59))
        return false;
    // A UTC offset (+HH:MM, -HH:MM) or Z may follow: the time is taken in UTC.
    double offset_s = 0;
    if (s.size() > 19 && (s.back() == 'Z' || s.back() == 'z')) {
        s.remove_suffix(1);
    } else if (s.size() >= 25 && (s[s.size() - 6] == '+' || s[s.size() - 6] == '-') && s[s.size() - 3] == ':') {
        std::int64_t oh = 0, om = 0;
        if (!read_uint(s.substr(s.size() - 5, 2), oh) || !read_uint(s.substr(s.size() - 2, 2), om) || oh > 23 ||
            om > 59)
            return false;
        offset_s = (s[s.size() - 6] == '+' ? 1.0 : -1.0) * static_cast<double>(oh * 3600 + om * 60);
        s.remove_suffix(6);
    }
    double frac = 0;
    if (s.size() > 19) {
        if (s[19] != '.' || s.size() == 20 || s.size() > 30) return false;
        double scale = 0.1;
        for (char c : s.substr(20)) {
            if (c < '0' || c > '9') return false;
            frac += scale * (c - '0');
            scale *= 0.1;
        }
    }
    out = static_cast<double>(days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d))) * 86400.0 +
          static_cast<double>(h * 3600 + mi * 60 + se) + frac - offset_s;
    return true;
}

bool read_seconds(std::string_view s, double& out) {
    if (s.empty() || s.size() > 32) return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')) return false;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return r.ec == std::errc() && r.ptr == s.data() + s.size() && std::isfinite(out) && out >= 0 && out <= 1e9;
}

}   // namespace

std::shared_ptr<const ArrivalTrace> read_arrival_trace(const std::string& path, const std::string& shown) {
    const std::string what =
        "an arrival trace (CSV: arrival_s,input_tokens,output_tokens or Azure's "
        "TIMESTAMP,ContextTokens,GeneratedTokens)";
    const std::string text = read_input_file(path, kMaxTraceBytes, what);
    auto trace = std::make_shared<ArrivalTrace>();
    trace->path = shown;
    // A UTF-8 byte-order mark (as spreadsheet programs write CSV) is not part of the header.
    std::size_t pos = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
    std::int64_t line_no = 0;
    bool azure = false, header = false;
    double first = 0, last = 0;
    auto fail = [&](std::string_view value, const std::string& expected) {
        throw ConfigError(
            fmt::format("{}:{}: \"{}\": expected {}", shown, line_no, std::string(value.substr(0, 64)), expected));
    };
    while (pos < text.size()) {
        const std::size_t end = std::min(text.find('\n', pos), text.size());
        const std::string_view line = trim(std::string_view(text).substr(pos, end - pos));
        pos = end + 1;
        ++line_no;
        if (line.empty()) continue;
        std::vector<std::string_view> f;
        for (std::size_t from = 0;;) {
            const std::size_t comma = line.find(',', from);
            f.push_back(trim(line.substr(from, comma == std::string_view::npos ? line.npos : comma - from)));
            if (comma == std::string_view::npos || f.size() > 3) break;
            from = comma + 1;
        }
        if (f.size() != 3)
            fail(line, header ? "three comma-separated fields: an arrival, the prompt's and the output's tokens"
                              : "a header: arrival_s,input_tokens,output_tokens or TIMESTAMP,ContextTokens,"
                                "GeneratedTokens");
        if (!header) {
            if (f[0] == "arrival_s" && f[1] == "input_tokens" && f[2] == "output_tokens") {
                azure = false;
            } else if (f[0] == "TIMESTAMP" && f[1] == "ContextTokens" && f[2] == "GeneratedTokens") {
                azure = true;
            } else {
                fail(line, "a header: arrival_s,input_tokens,output_tokens or TIMESTAMP,ContextTokens,GeneratedTokens");
            }
            header = true;
            continue;
        }
        double t = 0;
        if (azure ? !read_timestamp(f[0], t) : !read_seconds(f[0], t))
            fail(f[0], azure ? "a timestamp YYYY-MM-DD HH:MM:SS[.fraction] of a calendar date" : "seconds in [0, 1e9]");
        std::int64_t in = 0, out = 0;
        if (!read_uint(f[1], in) || in < 1 || in > limits::kSeqLen)
            fail(f[1], fmt::format("prompt tokens, an integer in [1, {}]", limits::kSeqLen));
        if (!read_uint(f[2], out) || out < 1 || out > limits::kSeqLen)
            fail(f[2], fmt::format("output tokens, an integer in [1, {}]", limits::kSeqLen));
        if (trace->rows.empty()) first = t;
        if (t < last && !trace->rows.empty())
            fail(f[0], fmt::format("an arrival at or after the previous row's ({}): rows in arrival order",
                                   azure ? "its timestamp" : fmt::format("{} s", last)));
        last = t;
        if (static_cast<std::int64_t>(trace->rows.size()) >= kMaxTraceRows)
            fail(line, fmt::format("at most {} requests", kMaxTraceRows));
        trace->rows.push_back({t - first, static_cast<std::int32_t>(in), static_cast<std::int32_t>(out)});
    }
    if (!header) throw ConfigError(fmt::format("{}: empty: expected {}", shown, what));
    if (trace->rows.empty())
        throw ConfigError(fmt::format("{}: no requests after the header: expected {}", shown, what));
    return trace;
}

}   // namespace llmsim
