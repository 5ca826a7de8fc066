#include "calibrate/nccl_tests.hpp"

#include "cost_models/collectives.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hardware_db/errors.hpp"
#include "hardware_db/input_file.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/limits.hpp"

namespace llmsim::calibrate {

namespace {

// ------------------------------------------------------------------------------------------------
// Collective names and factors
// ------------------------------------------------------------------------------------------------

// The nccl-tests collective names llmsim knows: those of the collectives registry
// (cost_models/collectives.hpp).
const std::vector<std::string>& known_collectives() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const auto& d : collectives())
            for (auto n : d.nccl_names)
                if (!n.empty()) out.emplace_back(n);
        return out;
    }();
    return names;
}

bool is_known(const std::string& c) {
    const auto& k = known_collectives();
    return std::find(k.begin(), k.end(), c) != k.end();
}

// ------------------------------------------------------------------------------------------------
// Tokens
// ------------------------------------------------------------------------------------------------

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string_view trim(std::string_view s) {
    std::size_t a = 0, b = s.size();
    while (a < b && is_space(s[a])) ++a;
    while (b > a && is_space(s[b - 1])) --b;
    return s.substr(a, b - a);
}

void split_ws(std::string_view s, std::vector<std::string_view>& out) {
    out.clear();
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && is_space(s[i])) ++i;
        const std::size_t b = i;
        while (i < s.size() && !is_space(s[i])) ++i;
        if (i > b) out.push_back(s.substr(b, i - b));
    }
}

std::vector<std::string_view> split_ws(std::string_view s) {
    std::vector<std::string_view> out;
    split_ws(s, out);
    return out;
}

std::vector<std::string> split_ws_strings(std::string_view s) {
    std::vector<std::string> out;
    for (auto t : split_ws(s)) out.emplace_back(t);
    return out;
}

// A whole token that is a decimal integer (optional sign); nullopt otherwise or beyond int64.
std::optional<std::int64_t> as_integer(std::string_view t) {
    const char* b = t.data();
    const char* e = b + t.size();
    if (b != e && *b == '+') ++b;
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || end != e || b == e) return std::nullopt;
    return v;
}

// Is the whole token a decimal number as printf prints one ("135.8", "1.2e+05", "-1")? Not nan, inf,
// hex or trailing text.
bool number_syntax(std::string_view t) {
    std::size_t i = 0;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    std::size_t digits = 0;
    while (i < t.size() && is_digit(t[i])) ++i, ++digits;
    if (i < t.size() && t[i] == '.') {
        ++i;
        while (i < t.size() && is_digit(t[i])) ++i, ++digits;
    }
    if (digits == 0) return false;
    if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
        ++i;
        if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
        std::size_t exp_digits = 0;
        while (i < t.size() && is_digit(t[i])) ++i, ++exp_digits;
        if (exp_digits == 0) return false;
    }
    return i == t.size() && t.size() <= 64;
}

// A whole token that is a finite decimal number (number_syntax); nullopt otherwise.
std::optional<double> as_number(std::string_view t) {
    if (!number_syntax(t)) return std::nullopt;
    if (t[0] == '+') t.remove_prefix(1);   // from_chars takes no plus sign
    double v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v)) return std::nullopt;
    return v;
}

bool is_word(std::string_view tok) {
    if (tok.empty() || tok.size() > ShortName::kMax || !is_alpha(tok[0])) return false;
    return std::all_of(tok.begin(), tok.end(), [](char c) { return is_alpha(c) || is_digit(c) || c == '_'; });
}

// Half a unit in the last printed digit of a number as printed ("135.8" -> 0.05, "12646" -> 0.5,
// "1.2e+05" -> 5000).
float half_ulp(std::string_view tok) {
    int decimals = 0;
    int exponent = 0;
    const auto epos = tok.find_first_of("eE");
    const std::string_view mant = epos == std::string_view::npos ? tok : tok.substr(0, epos);
    if (epos != std::string_view::npos) exponent = static_cast<int>(as_integer(tok.substr(epos + 1)).value_or(0));
    const auto dot = mant.find('.');
    if (dot != std::string_view::npos) decimals = static_cast<int>(mant.size() - dot - 1);
    static const auto powers = [] {
        std::array<double, 41> p{};
        for (int k = 0; k < 41; ++k) p[static_cast<std::size_t>(k)] = std::pow(10.0, k - 20);
        return p;
    }();
    const int k = std::clamp(exponent - decimals, -300, 300);
    const int index = k + 20;   // powers[index] = 10^k for k in [-20, 20]
    return static_cast<float>(
        0.5 * (index >= 0 && index <= 40 ? powers[static_cast<std::size_t>(index)] : std::pow(10.0, k)));
}

// A value quoted in a message: cut, control characters replaced.
std::string brief(std::string_view s) { return json_brief(nlohmann::json(std::string(s.substr(0, 80)))); }

// Does `s` start an NCCL debug line "HOST:PID:TID [DEV] NCCL ..." (NCCL_DEBUG=INFO/WARN/TRACE)?
bool starts_nccl_debug_line(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size() && (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '.' || s[i] == '_' || s[i] == '-')) ++i;
    if (i == 0) return false;
    for (int field = 0; field < 2; ++field) {
        if (i >= s.size() || s[i] != ':') return false;
        const std::size_t b = ++i;
        while (i < s.size() && is_digit(s[i])) ++i;
        if (i == b) return false;
    }
    if (s.substr(i, 2) != " [") return false;
    i += 2;
    const std::size_t b = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == b) return false;
    return s.substr(i, 7) == "] NCCL ";
}

// Column layout of a result table, from its header line (or guessed from a row).
struct Layout {
    int size = 0, count = 1, type = 2, redop = 3, root = 4;   // root < 0: absent
    int oop_time = 5, oop_alg = 6, oop_bus = 7, oop_wrong = 8;
    int ip_time = 9, ip_alg = 10, ip_bus = 11, ip_wrong = 12;
    bool old_format = false;
    int needed() const {
        return 1 + std::max({size, count, type, redop, root, oop_time, oop_alg, oop_bus, oop_wrong, ip_time, ip_alg,
                             ip_bus, ip_wrong});
    }
    // Kind of token expected at a position: 'i' integer, 'w' word, 'n' number or N/A.
    char kind(int pos) const {
        if (pos == size || pos == count) return 'i';
        if (pos == type || pos == redop) return 'w';
        if (pos == root) return 'i';
        return 'n';
    }
    // The column at a position, for messages.
    std::string name(int pos) const {
        const std::pair<int, const char*> names[] = {{size, "size"},
                                                     {count, "count"},
                                                     {type, "type"},
                                                     {redop, "redop"},
                                                     {root, "root"},
                                                     {oop_time, "out-of-place time"},
                                                     {oop_alg, "out-of-place algbw"},
                                                     {oop_bus, "out-of-place busbw"},
                                                     {oop_wrong, "out-of-place #wrong"},
                                                     {ip_time, "in-place time"},
                                                     {ip_alg, "in-place algbw"},
                                                     {ip_bus, "in-place busbw"},
                                                     {ip_wrong, "in-place #wrong"}};
        for (const auto& [p, n] : names)
            if (p == pos) return n;
        return fmt::format("column {}", pos + 1);
    }
    std::string expected(int pos) const {
        switch (kind(pos)) {
            case 'i': return "an integer";
            case 'w': return fmt::format("a name of at most {} letters, digits or _", ShortName::kMax);
            default: return "a number >= 0 or N/A";
        }
    }
};

std::optional<Layout> layout_from_header(const std::vector<std::string>& cols) {
    auto find = [&](const std::string& name, int from) -> int {
        for (int i = from; i < static_cast<int>(cols.size()); ++i)
            if (cols[i] == name) return i;
        return -1;
    };
    Layout L;
    L.size = find("size", 0);
    L.count = find("count", 0);
    L.type = find("type", 0);
    L.redop = find("redop", 0);
    L.root = find("root", 0);
    if (L.size < 0 || L.count < 0 || L.type < 0 || L.redop < 0) return std::nullopt;
    int t1 = -1;
    for (int i = 0; i < static_cast<int>(cols.size()); ++i)
        if (cols[i] == "time" || cols[i] == "cputime") {
            t1 = i;
            break;
        }
    if (t1 < 0) return std::nullopt;
    int t2 = -1;
    for (int i = t1 + 1; i < static_cast<int>(cols.size()); ++i)
        if (cols[i] == "time" || cols[i] == "cputime") {
            t2 = i;
            break;
        }
    L.oop_time = t1;
    L.oop_alg = find("algbw", t1);
    L.oop_bus = find("busbw", t1);
    if (L.oop_alg < 0 || L.oop_bus < 0) return std::nullopt;
    L.oop_wrong = L.oop_bus + 1 < static_cast<int>(cols.size()) && L.oop_bus + 1 != t2 ? L.oop_bus + 1 : -1;
    if (t2 > 0) {
        L.ip_time = t2;
        L.ip_alg = find("algbw", t2);
        L.ip_bus = find("busbw", t2);
        if (L.ip_alg < 0 || L.ip_bus < 0) return std::nullopt;
        L.ip_wrong = L.ip_bus + 1 < static_cast<int>(cols.size()) ? L.ip_bus + 1 : -1;
        // A trailing "timestamp" column is not a #wrong column.
        if (L.ip_wrong >= 0 && cols[L.ip_wrong] == "timestamp") L.ip_wrong = -1;
    } else {
        L.ip_time = L.ip_alg = L.ip_bus = L.ip_wrong = -1;
    }
    L.old_format = L.root < 0;
    return L;
}

// Collective candidates consistent with a row's redop/root and the observed busbw/algbw ratio.
std::vector<std::string> consistent_collectives(std::string_view redop, std::optional<int> root, double ratio, int n,
                                                double tol) {
    std::vector<std::string> out;
    bool rooted = root.has_value() && *root >= 0;
    for (const auto& c : known_collectives()) {
        if (c == "hypercube") continue;
        bool needs_root = (c == "broadcast" || c == "reduce" || c == "gather" || c == "scatter");
        if (root.has_value() && needs_root != rooted) continue;
        bool reducing = (c == "all_reduce" || c == "reduce_scatter" || c == "reduce");
        if (redop == "none" && reducing) continue;
        if (redop != "none" && !reducing && c != "sendrecv") continue;
        if (n > 0) {
            auto f = nccl_bus_factor(c, n);
            if (!f || std::fabs(*f - ratio) > tol) continue;
        }
        out.push_back(c);
    }
    return out;
}

// The busbw/algbw ratio from the rows with the most significant digits, with its tolerance.
std::optional<std::pair<double, double>> observed_ratio(const NcclTestsRun& run) {
    const NcclTestsRow* best = nullptr;
    for (const auto& r : run.rows)
        if (r.out_of_place.present && r.out_of_place.algbw_GBps > 0 &&
            (!best || r.out_of_place.algbw_GBps > best->out_of_place.algbw_GBps))
            best = &r;
    if (!best || best->out_of_place.algbw_GBps < 0.5) return std::nullopt;
    const auto& o = best->out_of_place;
    double ratio = o.busbw_GBps / o.algbw_GBps;
    double tol = (o.busbw_res + ratio * o.algbw_res) / o.algbw_GBps + 1e-9;
    return std::make_pair(ratio, tol);
}

// ------------------------------------------------------------------------------------------------
// Text parser
// ------------------------------------------------------------------------------------------------

// The longest physical line (or reassembled rank line) read; longer is not nccl-tests output.
constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;
// The bounds of a row's figures, one for the text and the JSON (-J) forms: sizes and counts up to 2^62
// (4 EiB), times and bandwidths up to 1e15 (us, GB/s), #wrong up to 1e18. The text reader dropped a size
// past 2^63 without a word and took a time of 1e300 us that -J refuses.
constexpr std::int64_t kMaxRowSize = std::int64_t{1} << 62;
constexpr double kMaxRowFigure = 1e15;
constexpr double kMaxRowWrong = 1e18;
// Rows reserved per byte of log still to read (a row line is >= 64 bytes in every nccl-tests format),
// so that the row vector never reallocates while a large log is read.
constexpr std::int64_t kBytesPerRowReserved = 64;

class TextParser {
public:
    explicit TextParser(std::string source, std::int64_t total_bytes)
        : source_(std::move(source)), total_bytes_(total_bytes) {
        auto slash = source_.find_last_of('/');
        basename_ = slash == std::string::npos ? source_ : source_.substr(slash + 1);
    }

    // One physical line of the log (without its newline) starting at byte `offset`. mpirun
    // --tag-output and srun --label prefixes are removed wherever they appear and each stream's text
    // is reassembled into whole lines before it is read.
    void physical_line(std::string_view raw, int lineno, std::int64_t offset) {
        offset_ = offset;
        if (raw.size() > kMaxLineBytes)
            fail(lineno, fmt::format("a line of {} bytes: expected lines of at most {} "
                                     "bytes (nccl-tests output)",
                                     raw.size(), kMaxLineBytes));
        if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
        prefixes_.clear();
        for (std::size_t i = 0; i < raw.size(); ++i) {
            if (raw[i] == '[') {
                const std::size_t n = tag_length(raw, i);
                if (n > 0) {
                    prefixes_.push_back({i, i + n, std::string(raw.substr(i, n))});
                    i += n - 1;
                    continue;
                }
            }
            if (is_digit(raw[i]) && (i == 0 || is_space(raw[i - 1]))) {
                const std::size_t n = label_length(raw, i);
                if (n > 0 && (label_mode_ || trim(raw.substr(0, i)).empty())) {
                    label_mode_ = true;   // from the first line that starts with a label on
                    std::size_t digits = 0;
                    while (is_digit(raw[i + digits])) ++digits;
                    prefixes_.push_back({i, i + n, std::string(raw.substr(i, digits))});
                    i += n - 1;
                }
            }
        }
        if (prefixes_.empty()) {
            deliver("", raw, lineno, true);
            return;
        }
        // Text before the first prefix continues the untagged stream (padding blanks are dropped).
        if (!trim(raw.substr(0, prefixes_[0].begin)).empty())
            deliver("", raw.substr(0, prefixes_[0].begin), lineno, false);
        for (std::size_t k = 0; k < prefixes_.size(); ++k) {
            const std::size_t end = k + 1 < prefixes_.size() ? prefixes_[k + 1].begin : raw.size();
            deliver(prefixes_[k].key, raw.substr(prefixes_[k].text, end - prefixes_[k].text), lineno,
                    k + 1 == prefixes_.size());
        }
    }

    NcclTestsFile finish(int last_line) {
        // Streams whose last line had no newline, in the order they started.
        std::vector<std::pair<int, std::string>> rest;
        for (auto& [key, p] : partials_) rest.emplace_back(p.line, std::move(p.text));
        partials_.clear();
        std::sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        for (const auto& [line, text] : rest) logical_line(text, line);
        if (pending_.active()) fail_pending(last_line, "at the end of the log");
        finish_test();
        return std::move(out_);
    }

private:
    struct Prefix {
        std::size_t begin, text;   // where the prefix starts, where its text starts
        std::string key;           // the stream
    };
    struct Partial {
        std::string text;
        int line = 0;
    };
    struct Pending {
        std::vector<std::string> toks;
        int line = 0;
        bool active() const { return !toks.empty(); }
    };

    std::string source_, basename_;
    std::int64_t total_bytes_ = 0, offset_ = 0;
    NcclTestsFile out_;
    NcclTestsRun cur_;
    bool cur_started_ = false;
    std::optional<Layout> layout_;
    std::string binary_hint_;   // binary name seen on a command line, for the next test
    std::map<int, std::string> rank_hosts_;
    bool label_mode_ = false;
    std::vector<Prefix> prefixes_;
    std::map<std::string, Partial> partials_;
    Pending pending_;                             // a data row cut short, waiting for the rest of its tokens
    std::vector<std::string_view> raw_, views_;   // scratch: the tokens of the line being read

    [[noreturn]] void fail(int lineno, const std::string& what) const {
        throw ConfigError(fmt::format("{}:{}: {}", source_, lineno, what));
    }

    // "[1,0]<stdout>:" at s[i]: its length, else 0.
    static std::size_t tag_length(std::string_view s, std::size_t i) {
        std::size_t j = i + 1;
        for (int field = 0; field < 2; ++field) {
            const std::size_t b = j;
            while (j < s.size() && is_digit(s[j])) ++j;
            if (j == b || j - b > 9 || j >= s.size() || s[j] != (field == 0 ? ',' : ']')) return 0;
            ++j;
        }
        for (std::string_view tail : {std::string_view("<stdout>:"), std::string_view("<stderr>:")})
            if (s.substr(j, tail.size()) == tail) return j + tail.size() - i;
        return 0;
    }
    // "12: " (or "12:" at the end) at s[i]: its length, else 0.
    static std::size_t label_length(std::string_view s, std::size_t i) {
        std::size_t j = i;
        while (j < s.size() && is_digit(s[j])) ++j;
        if (j == i || j - i > 9 || j >= s.size() || s[j] != ':') return 0;
        if (j + 1 == s.size()) return j + 1 - i;   // at the end of the line
        if (s[j + 1] != ' ') return 0;
        return j + 2 - i;
    }

    void deliver(const std::string& key, std::string_view text, int lineno, bool complete) {
        auto it = partials_.find(key);
        if (!complete) {
            if (it == partials_.end()) it = partials_.emplace(key, Partial{std::string(), lineno}).first;
            it->second.text += text;
            if (it->second.text.size() > kMaxLineBytes)
                fail(it->second.line,
                     fmt::format("a line of more than {} bytes: expected nccl-tests output", kMaxLineBytes));
            return;
        }
        if (it == partials_.end()) {
            logical_line(text, lineno);
            return;
        }
        std::string full = std::move(it->second.text);
        const int first = it->second.line;
        partials_.erase(it);
        full += text;
        logical_line(full, first);
    }

    void begin_test(int lineno) {
        if (!cur_started_) {
            cur_started_ = true;
            cur_.first_line = lineno;
            cur_.source_file = source_;
        }
    }

    // A header-type line arrived: if the current test already has rows, it is complete.
    void boundary(int lineno) {
        if (!cur_.rows.empty() || cur_.avg_busbw_GBps) {
            if (pending_.active()) fail_pending(lineno, fmt::format("(line {} starts another test)", lineno));
            finish_test();
        }
        begin_test(lineno);
    }

    void logical_line(std::string_view s, int lineno) {
        std::string_view t = trim(s);
        if (t.empty()) return;
        if (t[0] == '#') {
            if (pending_.active()) fail_pending(lineno, fmt::format("(line {} is a comment)", lineno));
            comment(std::string(t), lineno);
            return;
        }
        if (try_data(t, lineno)) return;
        other(t, lineno);
    }

    // A line that is neither a comment nor a data row: NCCL_DEBUG output, a command line, ...
    void other(std::string_view t, int /*lineno*/) {
        // NCCL_DEBUG=INFO announces the library version: "... NCCL INFO NCCL version 2.22.3+cuda12.6".
        const bool info = t.find("NCCL INFO") != std::string_view::npos;
        if (info) {
            const auto v = t.find("NCCL INFO NCCL version");
            if (cur_.nccl_version.empty() && v != std::string_view::npos) {
                const auto words = split_ws(t.substr(v + 22));
                if (!words.empty()) cur_.nccl_version = std::string(words.front().substr(0, 64));
            }
            return;
        }
        // Perhaps a command line naming the binary: a word (after a '/' or '=') like all_reduce_perf[_mpi].
        if (t.find("_perf") == std::string_view::npos) return;
        for (auto word : split_ws(t)) {
            const auto cut = word.find_last_of("/=");
            if (cut != std::string_view::npos) word.remove_prefix(cut + 1);
            if (is_binary_name(word)) {
                if (!cur_.rows.empty()) finish_test();
                binary_hint_ = std::string(word.substr(0, 128));
                return;
            }
        }
    }

    // [A-Za-z0-9]+(_[A-Za-z0-9]+)*_perf(_mpi)?
    static bool is_binary_name(std::string_view w) {
        std::string_view stem = w;
        if (stem.size() > 4 && stem.substr(stem.size() - 4) == "_mpi") stem.remove_suffix(4);
        if (stem.size() <= 5 || stem.substr(stem.size() - 5) != "_perf") return false;
        bool prev_underscore = true;   // no leading, doubled or trailing underscore
        for (char c : stem) {
            if (c == '_') {
                if (prev_underscore) return false;
                prev_underscore = true;
            } else if (is_alpha(c) || is_digit(c)) {
                prev_underscore = false;
            } else {
                return false;
            }
        }
        return true;
    }

    // The words of a comment line after its '#'.
    static std::vector<std::string_view> comment_words(std::string_view t) { return split_ws(t.substr(1)); }
    static bool is_int(std::string_view w) { return as_integer(w).has_value(); }

    // Header and footer lines (parsed by words: no regular expression, bounded work per line).
    void comment(const std::string& t, int lineno) {
        if (t.size() > 4096) return;   // no header line is that long
        const auto w = comment_words(t);
        auto word = [&](std::size_t i) { return i < w.size() ? w[i] : std::string_view(); };
        // "# nccl-tests version 2.17.8 nccl-headers=22902 nccl-library=22902"
        if (word(0) == "nccl-tests" && word(1) == "version" && w.size() >= 3) {
            boundary(lineno);
            cur_.nccl_tests_version = std::string(word(2).substr(0, 64));
            std::string_view headers, library;
            for (std::size_t i = 3; i < w.size(); ++i) {
                if (w[i].rfind("nccl-headers=", 0) == 0) headers = w[i].substr(13);
                if (w[i].rfind("nccl-library=", 0) == 0) library = w[i].substr(13);
            }
            const std::string_view code = is_int(library) ? library : headers;
            if (is_int(code) && cur_.nccl_version.empty()) cur_.nccl_version = version_text(std::string(code));
            return;
        }
        // "# Collective test starting: all_reduce_perf" / "# Collective test concluded: ..."
        if (word(0) == "Collective" && word(1) == "test") {
            if (word(2) == "starting:" && w.size() >= 4) {
                boundary(lineno);
                cur_.binary = std::string(word(3).substr(0, 128));
            } else if (word(2).rfind("concluded", 0) == 0) {
                if (pending_.active()) fail_pending(lineno, fmt::format("(line {} ends the test)", lineno));
                finish_test();
            }
            return;
        }
        // "# nThread 1 nGpus 1 minBytes ..."
        if (word(0) == "nThread" && is_int(word(1)) && word(2) == "nGpus" && is_int(word(3))) {
            boundary(lineno);
            return;
        }
        // "#  Rank  0 Group  0 Pid  1234 on  host device  0 [0000:18:00] NVIDIA H100 80GB HBM3" (Group optional)
        if (word(0) == "Rank" && is_int(word(1))) {
            std::size_t i = 2;
            if (word(i) == "Group" && is_int(word(i + 1))) i += 2;
            if (word(i) == "Pid" && is_int(word(i + 1)) && word(i + 2) == "on" && !word(i + 3).empty() &&
                word(i + 4) == "device" && is_int(word(i + 5)) && word(i + 6).rfind('[', 0) == 0) {
                const auto close = t.find(']', static_cast<std::size_t>(word(i + 6).data() - t.data()));
                if (close != std::string::npos) {
                    device_line(*as_integer(word(1)), word(i + 3), trim(std::string_view(t).substr(close + 1)), lineno);
                    return;
                }
            }
        }
        // "# Avg bus bandwidth    : 48.8121"
        if (word(0) == "Avg" && word(1) == "bus" && word(2).rfind("bandwidth", 0) == 0) {
            // "bandwidth : x", "bandwidth: x", "bandwidth :x"
            std::string_view v = word(2).substr(9);
            std::size_t i = 3;
            if (v.empty()) v = word(i++);
            if (v == ":") v = word(i++);
            if (v.rfind(':', 0) == 0) v.remove_prefix(1);
            const auto x = as_number(v);
            if (!x || *x < 0)
                fail(lineno, fmt::format("average bus bandwidth {}: expected a number >= 0 (GB/s)", brief(v)));
            cur_.avg_busbw_GBps = *x;
            return;
        }
        // Column header?
        auto cols = split_ws_strings(std::string_view(t).substr(1));
        if (!cols.empty() && cols[0] == "#") cols.erase(cols.begin());
        if (std::find(cols.begin(), cols.end(), "size") != cols.end() &&
            std::find(cols.begin(), cols.end(), "count") != cols.end()) {
            auto L = layout_from_header(cols);
            if (L) {
                if (!cur_.rows.empty()) boundary(lineno);
                begin_test(lineno);
                layout_ = L;
            } else {
                out_.warnings.push_back(fmt::format(
                    "{}:{}: unrecognised column header; guessing the layout from the rows", source_, lineno));
            }
        }
    }

    void device_line(std::int64_t rank, std::string_view host, std::string_view gpu, int lineno) {
        if (rank < 0 || rank >= limits::kGpus) {
            out_.warnings.push_back(fmt::format("{}:{}: device line of rank {} ignored (ranks are below {})", source_,
                                                lineno, rank, limits::kGpus));
            return;
        }
        if (!cur_.rows.empty()) boundary(lineno);
        begin_test(lineno);
        rank_hosts_[static_cast<int>(rank)] = std::string(host.substr(0, 256));
        if (cur_.gpu_name.empty()) cur_.gpu_name = std::string(gpu.substr(0, 256));
    }

    static std::string version_text(const std::string& code) {
        const int v = static_cast<int>(std::min<std::int64_t>(as_integer(code).value_or(0), 99999999));
        return v >= 20900 ? fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100)
                          : fmt::format("{}.{}.{}", v / 1000, (v / 100) % 10, v % 100);
    }

    Layout guess_layout(const std::vector<std::string_view>& toks) const {
        Layout L;
        // Old format (no root column): the 5th token is a time with a decimal point, and a row has 12.
        if (toks.size() >= 5 && toks[4].find('.') != std::string_view::npos && toks.size() == 12) {
            L.root = -1;
            L.oop_time = 4;
            L.oop_alg = 5;
            L.oop_bus = 6;
            L.oop_wrong = 7;
            L.ip_time = 8;
            L.ip_alg = 9;
            L.ip_bus = 10;
            L.ip_wrong = 11;
            L.old_format = true;
        }
        return L;
    }

    // A data row starts with its size and count (integers) and, when there is more, the data type.
    // The size may be past 2^63 (refused by emit, not skipped as "not a row").
    static bool row_start(const std::vector<std::string_view>& raw) {
        const bool digits = !raw.empty() && !raw[0].empty() && raw[0].size() <= 64 &&
                            std::all_of(raw[0].begin(), raw[0].end(), [](char c) { return is_digit(c); });
        return raw.size() >= 2 && digits && is_digit(raw[1][0]) && (raw.size() == 2 || is_alpha(raw[2][0]));
    }

    // Token syntax only; values are converted and range-checked once, by emit().
    static bool valid(std::string_view tok, char kind) {
        if (kind == 'i') return as_integer(tok).has_value();
        if (kind == 'w') return is_word(tok);
        return tok == "N/A" || number_syntax(tok);
    }

    enum class Read { complete, incomplete, not_row };

    // Reads the tokens of `line` (split in `raw`) into `into`, at row positions into.size() on. A token
    // glued to an interleaved NCCL debug line or comment is cut where that line starts when exactly one
    // cut fits; the rest of the line is then read as a line of its own. `strict`: an invalid token is
    // an error (a row start) rather than "not a row" (a candidate continuation).
    Read read_tokens(std::string_view line, const std::vector<std::string_view>& raw,
                     std::vector<std::string_view>& into, int row_line, int lineno, bool strict,
                     std::string_view& rest) {
        const Layout& L = *layout_;
        const std::size_t needed = static_cast<std::size_t>(L.needed());
        rest = {};
        for (std::size_t j = 0; j < raw.size(); ++j) {
            const std::string_view tok = raw[j];
            if (into.size() >= needed) break;   // trailing columns (per-iteration, timestamps): not read
            const int pos = static_cast<int>(into.size());
            const char kind = L.kind(pos);
            if (valid(tok, kind)) {
                into.emplace_back(tok);
                continue;
            }
            // A line that does not begin with a whole token is not (the rest of) a row.
            if (j == 0 && !strict) return Read::not_row;
            // Glued output: every cut where a valid token ends and an interleaved line starts.
            const std::size_t off = static_cast<std::size_t>(tok.data() - line.data());
            std::vector<std::size_t> cuts;
            for (std::size_t k = 1; k < tok.size(); ++k) {
                if (!valid(tok.substr(0, k), kind)) continue;
                const std::string_view after = line.substr(off + k);
                if (after[0] == '#' || starts_nccl_debug_line(after)) cuts.push_back(k);
            }
            if (cuts.size() > 1)
                fail(lineno, fmt::format("the row of line {} is glued to other output at {} and the boundary cannot be "
                                         "told: expected each line of output whole",
                                         row_line, brief(tok)));
            if (cuts.size() == 1) {
                into.emplace_back(tok.substr(0, cuts[0]));
                rest = line.substr(off + cuts[0]);
                return into.size() >= needed ? Read::complete : Read::incomplete;
            }
            if (!strict) return Read::not_row;
            if (label_mode_ && tok.find(':') != std::string_view::npos)
                fail(lineno, fmt::format("the row of line {} is glued to a task label (srun --label) at {}: the "
                                         "boundary cannot be told: expected each task's output on its own line",
                                         row_line, brief(tok)));
            fail(lineno, fmt::format("{} of the row of size {}: {}: expected {}", L.name(pos),
                                     into.empty() ? brief(tok) : into[0], brief(tok), L.expected(pos)));
        }
        return into.size() >= needed ? Read::complete : Read::incomplete;
    }

    bool try_data(std::string_view t, int lineno) {
        split_ws(t, raw_);
        std::string_view rest;
        if (pending_.active()) {
            // The rest of a cut row: a line made only of the tokens that come next.
            views_.assign(pending_.toks.begin(), pending_.toks.end());
            const std::size_t before = views_.size();
            const Read r = read_tokens(t, raw_, views_, pending_.line, lineno, false, rest);
            if (r != Read::not_row && views_.size() > before) {
                if (r == Read::complete) {
                    cur_.warnings.push_back(
                        fmt::format("{}:{}: row of size {} was split by interleaved output; rejoined with line {}",
                                    source_, pending_.line, pending_.toks[0], lineno));
                    emit(views_, pending_.line);
                    pending_ = Pending{};
                } else {
                    std::vector<std::string> keep(views_.begin(), views_.end());
                    pending_.toks = std::move(keep);
                }
                if (!rest.empty()) logical_line(rest, lineno);   // reuses raw_ and views_
                return true;
            }
        }
        if (!row_start(raw_)) return false;
        if (pending_.active()) fail_pending(lineno, fmt::format("(line {} starts another row)", lineno));
        if (!layout_) layout_ = guess_layout(raw_);
        begin_test(lineno);
        views_.clear();
        const Read r = read_tokens(t, raw_, views_, lineno, lineno, true, rest);
        if (r == Read::complete) {
            emit(views_, lineno);
        } else {
            pending_.toks.assign(views_.begin(), views_.end());
            pending_.line = lineno;
        }
        if (!rest.empty()) logical_line(rest, lineno);   // reuses raw_ and views_
        return true;
    }

    [[noreturn]] void fail_pending(int lineno, const std::string& why) const {
        fail(pending_.line,
             fmt::format("the row of size {} has {} of {} columns and is never completed {}: expected the "
                         "rest of the row on the following lines (last line read: {})",
                         pending_.toks[0], pending_.toks.size(), layout_ ? layout_->needed() : 0, why, lineno));
    }

    // Parses a complete row: every figure finite and >= 0 (N/A where nccl-tests prints it).
    void emit(const std::vector<std::string_view>& t, int lineno) {
        const Layout& L = *layout_;
        auto integer = [&](int pos, std::int64_t lo, std::int64_t hi) {
            const auto v = as_integer(t[static_cast<std::size_t>(pos)]);
            if (!v || *v < lo || *v > hi)
                fail(lineno, fmt::format("{} of the row of size {}: {}: expected an integer in [{}, {}]", L.name(pos),
                                         t[0], brief(t[static_cast<std::size_t>(pos)]), lo, hi));
            return *v;
        };
        NcclTestsRow row;
        row.size_bytes = integer(L.size, 0, kMaxRowSize);
        row.count = integer(L.count, 0, kMaxRowSize);
        row.type = ShortName(t[static_cast<std::size_t>(L.type)]);
        row.redop = ShortName(t[static_cast<std::size_t>(L.redop)]);
        if (L.root >= 0) {
            const auto root = integer(L.root, -1, limits::kGpus - 1);
            if (root >= limits::kGpus)
                fail(lineno, fmt::format("root of the row of size {}: {}: expected a rank below {}", t[0], root,
                                         limits::kGpus));
            row.root = static_cast<int>(root);
        }
        row.out_of_place = result(t, L, L.oop_time, L.oop_alg, L.oop_bus, L.oop_wrong, lineno);
        row.in_place = result(t, L, L.ip_time, L.ip_alg, L.ip_bus, L.ip_wrong, lineno);
        row.line = lineno;
        cur_.format = L.old_format ? "text-old" : "text";
        if (cur_.rows.empty())   // reserve once for the rest of the log: no reallocation (memory peak)
            cur_.rows.reserve(static_cast<std::size_t>(
                std::min<std::int64_t>((total_bytes_ - offset_) / kBytesPerRowReserved + 16, std::int64_t{1} << 26)));
        cur_.rows.push_back(row);
    }

    NcclTestsResult result(const std::vector<std::string_view>& t, const Layout& L, int time, int alg, int bus,
                           int wrong, int lineno) const {
        NcclTestsResult r;
        if (time < 0 || t[static_cast<std::size_t>(time)] == "N/A") return r;
        auto num = [&](int pos, double hi = kMaxRowFigure) {
            const std::string_view tok = t[static_cast<std::size_t>(pos)];
            const auto v = as_number(tok);
            if (!v || *v < 0 || *v > hi)
                fail(lineno, fmt::format("{} of the row of size {}: {}: expected a number in [0, {:g}]", L.name(pos),
                                         t[0], brief(tok), hi));
            return *v;
        };
        r.present = true;
        r.time_us = num(time);
        r.algbw_GBps = num(alg);
        r.busbw_GBps = num(bus);
        r.time_res = half_ulp(t[static_cast<std::size_t>(time)]);
        r.algbw_res = half_ulp(t[static_cast<std::size_t>(alg)]);
        r.busbw_res = half_ulp(t[static_cast<std::size_t>(bus)]);
        if (wrong >= 0 && wrong < static_cast<int>(t.size()) && t[static_cast<std::size_t>(wrong)] != "N/A")
            r.wrong = num(wrong, kMaxRowWrong);
        return r;
    }

    void finish_test() {
        if (cur_.rows.empty()) {
            if (cur_started_ && (!cur_.binary.empty() || !rank_hosts_.empty()))
                out_.warnings.push_back(fmt::format("{}:{}: test {} has no result rows", source_, cur_.first_line,
                                                    cur_.binary.empty() ? std::string("(unnamed)") : cur_.binary));
            reset();
            return;
        }
        NcclTestsRun& r = cur_;
        // Ranks and hosts from the device lines.
        if (!rank_hosts_.empty()) {
            r.ranks = static_cast<int>(rank_hosts_.size());
            r.ranks_source = "device lines";
            std::unordered_set<std::string> seen;
            for (const auto& [rank, host] : rank_hosts_)
                if (seen.insert(host).second) r.hosts.push_back(host);
            r.nodes = static_cast<int>(r.hosts.size());
        }
        // Collective: header, then command line, then the data, then the file name.
        if (r.binary.empty() && !binary_hint_.empty()) {
            r.binary = binary_hint_;
            r.collective_source = "command line";
        } else if (!r.binary.empty()) {
            r.collective_source = "header";
        }
        if (!r.binary.empty()) {
            r.collective = collective_from_binary(r.binary);
            if (!is_known(r.collective)) r.collective_source += " (collective not known to llmsim)";
        }
        binary_hint_.clear();
        resolve_from_data(r, basename_);
        for (auto& w : check_bandwidths(r)) r.warnings.push_back(std::move(w));
        out_.tests.push_back(std::move(cur_));
        reset();
    }

    void reset() {
        cur_ = NcclTestsRun{};
        cur_started_ = false;
        layout_.reset();
        rank_hosts_.clear();
        pending_ = Pending{};
    }

public:
    // Fills collective (when unknown) and ranks (when unknown) from the rows and the file name.
    static void resolve_from_data(NcclTestsRun& r, const std::string& basename) {
        auto ratio = observed_ratio(r);
        const NcclTestsRow& first = r.rows.front();
        if (r.collective == "unknown") {
            std::vector<std::string> cands;
            if (ratio) {
                if (r.ranks > 0) {
                    cands =
                        consistent_collectives(first.redop.view(), first.root, ratio->first, r.ranks, ratio->second);
                } else {
                    // Unknown ranks: any n from 2 to 65536 consistent with the ratio.
                    for (const auto& c : consistent_collectives(first.redop.view(), first.root, 0, 0, 0)) {
                        for (int n = 2; n <= 65536; n *= 2) {
                            auto f = nccl_bus_factor(c, n);
                            if (f && std::fabs(*f - ratio->first) <= ratio->second) {
                                cands.push_back(c);
                                break;
                            }
                        }
                    }
                }
            } else {
                cands = consistent_collectives(first.redop.view(), first.root, 0, 0, 0);
            }
            std::string hinted;
            for (const auto& c : known_collectives()) {
                // Longest known name in the file name ("all_reduce" rather than "reduce").
                if (basename.find(c) != std::string::npos && c.size() > hinted.size()) hinted = c;
            }
            if (cands.size() == 1) {
                r.collective = cands[0];
                r.collective_source =
                    fmt::format("data (redop {}, busbw/algbw {:.4f})", first.redop.view(), ratio ? ratio->first : 0.0);
            } else if (!hinted.empty() &&
                       (cands.empty() || std::find(cands.begin(), cands.end(), hinted) != cands.end())) {
                r.collective = hinted;
                r.collective_source = "file name";
            } else {
                r.collective_source = "unknown";
                r.warnings.push_back(
                    fmt::format("{}: cannot tell the collective (candidates: {})", r.source_file,
                                cands.empty() ? std::string("none") : fmt::format("{}", fmt::join(cands, ", "))));
            }
        }
        if (r.ranks == 0) {
            r.ranks_source = "unknown";
            if (ratio && is_known(r.collective)) {
                // Invert the factor: n = 2/(2-f) for all_reduce, 1/(1-f) for (n-1)/n.
                double f = ratio->first;
                double n = 0;
                if (r.collective == "all_reduce" && f < 2)
                    n = 2.0 / (2.0 - f);
                else if (f < 1 && nccl_bus_factor(r.collective, 4).value_or(1) < 1)
                    n = 1.0 / (1.0 - f);
                int ni = static_cast<int>(std::lround(n));
                if (ni >= 2) {
                    auto fi = nccl_bus_factor(r.collective, ni);
                    if (fi && std::fabs(*fi - f) <= ratio->second) {
                        r.ranks = ni;
                        r.ranks_source = "busbw/algbw ratio";
                    }
                }
            }
        }
    }
};

// ------------------------------------------------------------------------------------------------
// JSON (-J) parser: typed and range-checked, problems named by pointer; keys llmsim does not read
// are ignored (the format grows with nccl-tests versions).
// ------------------------------------------------------------------------------------------------

// A figure written as a number or as a string holding one ("    -1"); nullopt (and a problem) else.
std::optional<double> json_figure(ObjectReader& r, const std::string& key, double lo, double hi, bool integral) {
    const Json* v = r.get(key);
    if (!v) return std::nullopt;
    std::optional<double> x;
    if (v->is_number()) {
        x = v->get<double>();
    } else if (v->is_string()) {
        const std::string_view s = trim(v->get_ref<const std::string&>());
        x = integral ? (as_integer(s) ? std::optional<double>(static_cast<double>(*as_integer(s))) : std::nullopt)
                     : as_number(s);
    }
    if (!x || (integral && *x != std::floor(*x)) || *x < lo || *x > hi) {
        r.problems().add(r.ptr(key), *v,
                         fmt::format("{} in [{:g}, {:g}]", integral ? "an integer" : "a number", lo, hi));
        return std::nullopt;
    }
    return x;
}

NcclTestsResult json_half(const Json& o, const std::string& pointer, Problems& pr) {
    NcclTestsResult x;
    ObjectReader r(o, pointer, pr);
    if (!r.ok()) return x;
    x.present = true;
    const char* time_key = r.has("time") ? "time" : "cpu_time";
    if (!r.has(time_key)) pr.add_raw(fmt::format("{}: missing: expected a number >= 0 (us)", r.ptr("time")));
    x.time_us = json_figure(r, time_key, 0, kMaxRowFigure, false).value_or(0);
    x.algbw_GBps = json_figure(r, "alg_bw", 0, kMaxRowFigure, false).value_or(0);
    x.busbw_GBps = json_figure(r, "bus_bw", 0, kMaxRowFigure, false).value_or(0);
    x.wrong = json_figure(r, "nwrong", 0, kMaxRowWrong, false);
    // "%lf" prints 6 decimals.
    x.time_res = x.algbw_res = x.busbw_res = 5e-7f;
    return x;
}

ShortName json_name(ObjectReader& r, const std::string& key) {
    const auto s = r.string(key);
    if (!s) return {};
    if (!is_word(*s)) {
        r.problems().add(
            r.ptr(key), Json(*s),
            fmt::format("a name of at most {} letters, digits or _ (a data type or reduction)", ShortName::kMax));
        return {};
    }
    return ShortName(std::string_view(*s));
}

NcclTestsFile parse_json_form(const Json& j, const std::string& source) {
    Problems pr;
    NcclTestsFile out;
    NcclTestsRun r;
    r.source_file = source;
    r.format = "json";
    auto slash = source.find_last_of('/');
    std::string basename = slash == std::string::npos ? source : source.substr(slash + 1);
    ObjectReader top(j, source + "#", pr);
    if (!top.ok()) pr.raise();
    if (const Json* args = top.get("args")) {
        if (!args->is_array() || (!args->empty() && !(*args)[0].is_string())) {
            pr.add(top.ptr("args"), *args, "an array of strings (the command line)");
        } else if (!args->empty()) {
            r.binary = (*args)[0].get<std::string>();
            auto s = r.binary.find_last_of('/');
            if (s != std::string::npos) r.binary = r.binary.substr(s + 1);
            r.binary = r.binary.substr(0, 128);
            r.collective = collective_from_binary(r.binary);
            r.collective_source = "json args";
        }
    }
    if (const auto v = top.integer("nccl_version", 0, 99999999)) {
        const auto code = static_cast<int>(*v);
        r.nccl_version = code >= 20900 ? fmt::format("{}.{}.{}", code / 10000, (code / 100) % 100, code % 100)
                                       : fmt::format("{}.{}.{}", code / 1000, (code / 100) % 10, code % 100);
    }
    if (const Json* cfg = top.get("config")) {
        ObjectReader c(*cfg, top.ptr("config"), pr);
        const auto nthreads = c.integer_or("nthreads", 1, 1, limits::kGpus);
        const auto ngpus = c.integer_or("ngpus", 1, 1, limits::kGpus);
        if (const Json* devices = c.get("devices")) {
            if (!devices->is_array()) {
                pr.add(c.ptr("devices"), *devices, "an array of device objects");
            } else if (!devices->empty()) {
                // One entry per process (nccl-tests parses the first device line of each process).
                const auto ranks =
                    limits::checked_product({static_cast<std::int64_t>(devices->size()), nthreads, ngpus});
                if (!ranks || *ranks > limits::kGpus) {
                    pr.add(c.ptr("devices"), *devices,
                           fmt::format("at most {} ranks (devices · nthreads · ngpus)", limits::kGpus));
                } else {
                    r.ranks = static_cast<int>(*ranks);
                    r.ranks_source = "json config";
                }
                std::unordered_set<std::string> seen;
                for (std::size_t i = 0; i < devices->size(); ++i) {
                    ObjectReader d((*devices)[i], fmt::format("{}/{}", c.ptr("devices"), i), pr);
                    const std::string h = d.string_or("hostname", "").substr(0, 256);
                    if (!h.empty() && seen.insert(h).second) r.hosts.push_back(h);
                    if (r.gpu_name.empty()) r.gpu_name = d.string_or("device_info", "").substr(0, 256);
                }
                r.nodes = static_cast<int>(r.hosts.size());
            }
        }
    }
    const Json* results = top.get("results");
    if (!results)
        pr.add_raw(fmt::format("{}: missing: expected the list of result rows", top.ptr("results")));
    else if (!results->is_array())
        pr.add(top.ptr("results"), *results, "an array of result rows");
    else {
        r.rows.reserve(results->size());
        for (std::size_t i = 0; i < results->size(); ++i) {
            ObjectReader e((*results)[i], fmt::format("{}/{}", top.ptr("results"), i), pr);
            if (!e.ok()) continue;
            NcclTestsRow row;
            row.size_bytes = e.integer_or("size", 0, 0, kMaxRowSize);
            row.count = e.integer_or("count", 0, 0, kMaxRowSize);
            row.type = json_name(e, "type");
            row.redop = json_name(e, "redop");
            if (const auto root = json_figure(e, "root", -1, static_cast<double>(limits::kGpus - 1), true))
                row.root = static_cast<int>(*root);
            if (const Json* h = e.get("out_of_place")) row.out_of_place = json_half(*h, e.ptr("out_of_place"), pr);
            if (const Json* h = e.get("in_place")) row.in_place = json_half(*h, e.ptr("in_place"), pr);
            r.rows.push_back(row);
        }
    }
    if (const Json* a = top.get("average_bus_bandwidth")) {
        ObjectReader ar(*a, top.ptr("average_bus_bandwidth"), pr);
        if (ar.ok()) r.avg_busbw_GBps = json_figure(ar, "bandwidth", 0, 1e15, false);
    }
    pr.raise_if_any();
    if (r.rows.empty()) throw ConfigError(fmt::format("{}#/results: []: expected at least one result row", source));
    TextParser::resolve_from_data(r, basename);
    for (auto& w : check_bandwidths(r)) r.warnings.push_back(std::move(w));
    out.tests.push_back(std::move(r));
    return out;
}

bool looks_like_json(std::string_view head) {
    const auto t = trim(head);
    return !t.empty() && t[0] == '{';
}

// Feeds the physical lines of `text` to the parser.
NcclTestsFile parse_text(std::string_view text, const std::string& source) {
    TextParser p(source, static_cast<std::int64_t>(text.size()));
    std::size_t pos = 0;
    int lineno = 0;
    while (pos < text.size()) {
        const std::size_t nl = text.find('\n', pos);
        const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
        p.physical_line(text.substr(pos, end - pos), ++lineno, static_cast<std::int64_t>(pos));
        pos = end + 1;
    }
    return p.finish(lineno);
}

}   // namespace

// ------------------------------------------------------------------------------------------------
// Public functions
// ------------------------------------------------------------------------------------------------

std::optional<double> nccl_bus_factor(const std::string& c, int n) {
    const CollectiveDef* d = find_collective_nccl(c);
    if (n < 1 || !d) return std::nullopt;
    return d->busbw_factor(n);
}

std::optional<int> nccl_ring_steps(const std::string& c, int n) {
    const CollectiveDef* d = find_collective_nccl(c);
    if (n < 1 || !d) return std::nullopt;
    return static_cast<int>(d->latency_steps(n));
}

std::string collective_from_binary(const std::string& binary) {
    std::string b = binary;
    auto s = b.find_last_of('/');
    if (s != std::string::npos) b = b.substr(s + 1);
    auto p = b.find("_perf");
    if (p != std::string::npos) b = b.substr(0, p);
    return b.empty() ? std::string("unknown") : b;
}

NcclTestsFile parse_nccl_tests(const std::string& text, const std::string& source_name) {
    if (looks_like_json(std::string_view(text).substr(0, 4096)))
        return parse_json_form(parse_json_text(text, source_name), source_name);
    return parse_text(text, source_name);
}

NcclTestsFile read_nccl_tests_file(const std::string& path) {
    const std::int64_t size = check_input_file(path, limits::kNcclTestsFileBytes, "an nccl-tests log");
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f) throw ConfigError(fmt::format("{}: cannot open file: expected an nccl-tests log", path));
    // Streamed: a chunk at a time, each physical line handed over as it completes.
    const std::size_t chunk = std::size_t{1} << 20;
    std::vector<char> buf(kMaxLineBytes + chunk + 1);
    std::size_t begin = 0, end = 0;
    std::int64_t consumed = 0;   // bytes before buf[begin]
    bool eof = false, first = true;
    std::optional<TextParser> parser;
    int lineno = 0;
    for (;;) {
        const char* nl = static_cast<const char*>(std::memchr(buf.data() + begin, '\n', end - begin));
        if (!nl && !eof) {
            if (end - begin > kMaxLineBytes)
                throw ConfigError(fmt::format("{}:{}: a line of more than {} bytes: expected nccl-tests output", path,
                                              lineno + 1, kMaxLineBytes));
            std::memmove(buf.data(), buf.data() + begin, end - begin);
            end -= begin;
            begin = 0;
            const std::size_t n = std::fread(buf.data() + end, 1, buf.size() - 1 - end, f.get());
            if (n == 0) eof = true;
            end += n;
            if (first && (eof || end > 0)) {
                first = false;
                if (looks_like_json(std::string_view(buf.data(), std::min<std::size_t>(end, 4096)))) {
                    f.reset();
                    const std::string text =
                        read_input_file(path, limits::kJsonFileBytes, "an nccl-tests -J JSON file");
                    return parse_json_form(parse_json_text(text, path), path);
                }
                parser.emplace(path, size);
            }
            continue;
        }
        if (!parser) parser.emplace(path, size);
        const std::size_t stop = nl ? static_cast<std::size_t>(nl - buf.data()) : end;
        if (!nl && begin == end) break;
        parser->physical_line(std::string_view(buf.data() + begin, stop - begin), ++lineno, consumed);
        const std::size_t next = nl ? stop + 1 : end;
        consumed += static_cast<std::int64_t>(next - begin);
        begin = next;
        if (!nl) break;
    }
    auto out = parser->finish(lineno);
    if (out.tests.empty())
        throw ConfigError(
            fmt::format("{}: no nccl-tests result rows found (expected lines like "
                        "\"  8  2  float  sum  -1  12.9  0.00  0.00  0 ...\")",
                        path));
    return out;
}

std::vector<std::string> check_bandwidths(const NcclTestsRun& run) {
    std::vector<std::string> out;
    auto factor = nccl_bus_factor(run.collective, run.ranks);
    auto check = [&](const NcclTestsRow& row, const NcclTestsResult& r, const char* which) {
        if (!r.present) return;
        // nccl-tests counts the elements its check found wrong: the run's data were corrupted.
        if (r.wrong && *r.wrong > 0)
            out.push_back(
                fmt::format("{}:{}: size {} {}: #wrong {:g}: nccl-tests found wrong results (a faulty "
                            "GPU, link or NCCL build); the timing is kept, check the run",
                            run.source_file, row.line, row.size_bytes, which, *r.wrong));
        if (row.size_bytes > 0 && r.time_us <= 0)
            out.push_back(
                fmt::format("{}:{}: size {} {}: time 0 us: size/time is infinite; the row says nothing "
                            "about the bandwidth",
                            run.source_file, row.line, row.size_bytes, which));
        if (row.size_bytes <= 0 || r.time_us <= 0) return;
        double S = static_cast<double>(row.size_bytes);
        double alg = S / r.time_us / 1e3;
        // algbw implied by the time at either end of its rounding interval.
        double alg_spread = alg * r.time_res / r.time_us;
        double tol_alg = r.algbw_res + alg_spread + 1e-9 + 1e-6 * alg;
        if (std::fabs(r.algbw_GBps - alg) > tol_alg)
            out.push_back(fmt::format("{}:{}: size {} {}: algbw {} GB/s but size/time = {:.4g} GB/s", run.source_file,
                                      row.line, row.size_bytes, which, r.algbw_GBps, alg));
        if (factor) {
            double bus = alg * *factor;
            double tol_bus = r.busbw_res + *factor * alg_spread + 1e-9 + 1e-6 * bus;
            if (std::fabs(r.busbw_GBps - bus) > tol_bus)
                out.push_back(fmt::format(
                    "{}:{}: size {} {}: busbw {} GB/s but algbw x {:.4f} ({} ranks) = {:.4g} GB/s", run.source_file,
                    row.line, row.size_bytes, which, r.busbw_GBps, *factor, run.ranks, bus));
        }
    };
    for (const auto& row : run.rows) {
        check(row, row.out_of_place, "out-of-place");
        check(row, row.in_place, "in-place");
    }
    return out;
}

std::optional<double> mean_busbw(const NcclTestsRun& run) {
    double sum = 0;
    int n = 0;
    for (const auto& r : run.rows) {
        for (const auto* h : {&r.out_of_place, &r.in_place}) {
            if (!h->present) continue;
            sum += h->busbw_GBps;
            ++n;
        }
    }
    if (n == 0) return std::nullopt;
    return sum / n;
}

namespace {

// The run's JSON without its rows (to_json's other keys).
nlohmann::json run_header_json(const NcclTestsRun& run) {
    using nlohmann::json;
    json j;
    j["collective"] = run.collective;
    j["collective_source"] = run.collective_source;
    j["ranks"] = run.ranks > 0 ? json(run.ranks) : json("unknown");
    j["ranks_source"] = run.ranks_source;
    j["nodes"] = run.nodes > 0 ? json(run.nodes) : json(nullptr);
    j["hosts"] = run.hosts;
    j["gpu"] = run.gpu_name;
    j["binary"] = run.binary;
    j["nccl_version"] = run.nccl_version;
    j["nccl_tests_version"] = run.nccl_tests_version;
    j["format"] = run.format;
    j["avg_busbw_GBps"] = run.avg_busbw_GBps ? json(*run.avg_busbw_GBps) : json(nullptr);
    j["avg_busbw_source"] = run.avg_busbw_GBps ? "footer" : "none";
    if (!run.avg_busbw_GBps) {
        if (auto m = mean_busbw(run)) j["mean_busbw_GBps"] = *m;
    }
    j["source_file"] = run.source_file;
    j["first_line"] = run.first_line;
    j["warnings"] = run.warnings;
    return j;
}

// A number exactly as nlohmann's dump() writes it.
void append_number(std::string& out, double x) {
    char buf[64];
    char* e = nlohmann::detail::to_chars(buf, buf + sizeof buf, x);
    out.append(buf, static_cast<std::size_t>(e - buf));
}
void append_integer(std::string& out, std::int64_t x) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    out.append(buf, static_cast<std::size_t>(r.ptr - buf));
}

// The rows of one half as dump(2) writes the array at indentation `indent`.
void append_rows(std::string& out, const NcclTestsRun& run, bool in_place, std::size_t indent, std::ostream& os) {
    const std::string pad1(indent + 2, ' '), pad2(indent + 4, ' ');
    bool any = false;
    for (const auto& r : run.rows) {
        const auto& h = in_place ? r.in_place : r.out_of_place;
        if (!h.present) continue;
        out += any ? ",\n" : "[\n";
        any = true;
        out += pad1 + "{\n";
        auto key = [&](const char* k) { out.append(pad2).append("\"").append(k).append("\": "); };
        key("algbw_GBps");
        append_number(out, h.algbw_GBps);
        out += ",\n";
        key("busbw_GBps");
        append_number(out, h.busbw_GBps);
        out += ",\n";
        key("count");
        append_integer(out, r.count);
        out += ",\n";
        key("redop");
        out.append("\"").append(r.redop.view()).append("\",\n");
        if (r.root) {
            key("root");
            append_integer(out, *r.root);
            out += ",\n";
        }
        key("size_bytes");
        append_integer(out, r.size_bytes);
        out += ",\n";
        key("time_us");
        append_number(out, h.time_us);
        out += ",\n";
        key("type");
        out.append("\"").append(r.type.view()).append("\",\n");
        key("wrong");
        if (h.wrong)
            append_number(out, *h.wrong);
        else
            out += "null";
        out += "\n" + pad1 + "}";
        if (out.size() > (std::size_t{1} << 20)) {
            os << out;
            out.clear();
        }
    }
    out += any ? "\n" + std::string(indent, ' ') + "]" : "[]";
}

}   // namespace

void write_import_json(std::ostream& os, const std::vector<NcclTestsFile>& files) {
    using nlohmann::json;
    // The document with a marker where each rows array goes, dumped as dump(2) does; then the
    // markers are replaced by the rows, written as they are formatted.
    std::vector<const NcclTestsRun*> runs;
    json tests = json::array();
    json warnings = json::array();
    for (const auto& f : files) {
        for (const auto& t : f.tests) {
            json j = run_header_json(t);
            j["rows"] = fmt::format("\x01rows:{}:0", runs.size());
            j["in_place"] = {{"rows", fmt::format("\x01rows:{}:1", runs.size())}};
            runs.push_back(&t);
            tests.push_back(std::move(j));
        }
        for (const auto& w : f.warnings) warnings.push_back(w);
    }
    const std::string text =
        json{{"tests", tests}, {"warnings", warnings}}.dump(2, ' ', false, json::error_handler_t::replace);
    const std::string marker = "\"\\u0001rows:";
    std::string out;
    std::size_t pos = 0;
    for (;;) {
        const std::size_t m = text.find(marker, pos);
        if (m == std::string::npos) break;
        const std::size_t line_start = text.rfind('\n', m) + 1;
        const std::size_t indent = text.find_first_not_of(' ', line_start) - line_start;
        const std::size_t close = text.find('"', m + marker.size());
        const std::string spec = text.substr(m + marker.size(), close - m - marker.size());   // "3:0"
        const std::size_t colon = spec.find(':');
        const auto index = static_cast<std::size_t>(std::stoul(spec.substr(0, colon)));
        out.append(text, pos, m - pos);
        append_rows(out, *runs[index], spec.substr(colon + 1) == "1", indent, os);
        pos = close + 1;
    }
    out.append(text, pos, std::string::npos);
    os << out << "\n";
}

nlohmann::json to_json(const NcclTestsRun& run) {
    using nlohmann::json;
    auto rows = [&](bool in_place) {
        json a = json::array();
        for (const auto& r : run.rows) {
            const auto& h = in_place ? r.in_place : r.out_of_place;
            if (!h.present) continue;
            json o = {{"size_bytes", r.size_bytes}, {"time_us", h.time_us}, {"algbw_GBps", h.algbw_GBps},
                      {"busbw_GBps", h.busbw_GBps}, {"count", r.count},     {"type", r.type.str()},
                      {"redop", r.redop.str()}};
            if (r.root) o["root"] = *r.root;
            o["wrong"] = h.wrong ? json(*h.wrong) : json(nullptr);
            a.push_back(std::move(o));
        }
        return a;
    };
    json j = run_header_json(run);
    j["rows"] = rows(false);
    j["in_place"] = {{"rows", rows(true)}};
    return j;
}

}   // namespace llmsim::calibrate
