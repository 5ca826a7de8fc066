#include "calibrate/nccl_tests.hpp"

#include "cost_models/collectives.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hardware_db/errors.hpp"

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

std::string trim(const std::string& s) {
    std::size_t a = 0, b = s.size();
    while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
    return s.substr(a, b - a);
}

std::vector<std::string> split_ws(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    std::string t;
    while (in >> t) out.push_back(t);
    return out;
}

// Half a unit in the last printed digit of a number as printed ("135.8" -> 0.05, "12646" -> 0.5,
// "1.2e+05" -> 5000).
double half_ulp(const std::string& tok) {
    int decimals = 0;
    int exponent = 0;
    auto epos = tok.find_first_of("eE");
    std::string mant = epos == std::string::npos ? tok : tok.substr(0, epos);
    if (epos != std::string::npos) exponent = std::atoi(tok.c_str() + epos + 1);
    auto dot = mant.find('.');
    if (dot != std::string::npos) decimals = static_cast<int>(mant.size() - dot - 1);
    return 0.5 * std::pow(10.0, exponent - decimals);
}

// Length of the longest prefix of `tok` that is a number (0 if none).
std::size_t numeric_prefix(const std::string& tok) {
    const char* b = tok.c_str();
    char* e = nullptr;
    std::strtod(b, &e);
    std::size_t n = static_cast<std::size_t>(e - b);
    // strtod accepts "inf"/"nan"/hex; nccl-tests never prints those in a row.
    if (n > 0 && !(std::isdigit(static_cast<unsigned char>(b[0])) || b[0] == '-' || b[0] == '+' || b[0] == '.'))
        return 0;
    return n;
}

std::size_t integer_prefix(const std::string& tok) {
    std::size_t i = 0;
    if (i < tok.size() && (tok[i] == '-' || tok[i] == '+')) ++i;
    std::size_t d = i;
    while (i < tok.size() && std::isdigit(static_cast<unsigned char>(tok[i]))) ++i;
    return i > d ? i : 0;
}

bool is_word(const std::string& tok) {
    if (tok.empty() || !std::isalpha(static_cast<unsigned char>(tok[0]))) return false;
    return std::all_of(tok.begin(), tok.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
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
std::vector<std::string> consistent_collectives(const std::string& redop, std::optional<int> root, double ratio, int n,
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

class TextParser {
public:
    TextParser(std::string source) : source_(std::move(source)) {
        auto slash = source_.find_last_of('/');
        basename_ = slash == std::string::npos ? source_ : source_.substr(slash + 1);
    }

    NcclTestsFile run(const std::string& text) {
        std::istringstream in(text);
        std::string raw;
        int lineno = 0;
        while (std::getline(in, raw)) {
            ++lineno;
            if (!raw.empty() && raw.back() == '\r') raw.pop_back();
            line(strip_prefix(raw), lineno);
        }
        flush_pending(lineno);
        finish_test();
        return std::move(out_);
    }

private:
    std::string source_, basename_;
    NcclTestsFile out_;
    NcclTestsRun cur_;
    bool cur_started_ = false;
    std::optional<Layout> layout_;
    std::string binary_hint_;   // binary name seen on a command line, for the next test
    std::map<int, std::string> rank_hosts_;
    // A data row cut short by an interleaved line, waiting for the rest of its tokens.
    std::vector<std::string> pending_;
    int pending_line_ = 0;

    static std::string strip_prefix(const std::string& s) {
        static const std::regex tag(R"(^\[\d+,\d+\]<(stdout|stderr)>:\s?)");
        static const std::regex label(R"(^\s*\d+:\s?)");
        std::smatch m;
        if (std::regex_search(s, m, tag)) return m.suffix().str();
        // srun --label "0: ", but not data rows ("   8   2 float ...": no colon after the number)
        if (std::regex_search(s, m, label)) {
            // NCCL INFO lines of the form "host:pid:tid" never start with digits + ": ".
            return m.suffix().str();
        }
        return s;
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
            flush_pending(lineno);
            finish_test();
        }
        begin_test(lineno);
    }

    void line(const std::string& s, int lineno) {
        std::string t = trim(s);
        if (t.empty()) return;
        if (t[0] == '#') {
            comment(t, lineno);
            return;
        }
        if (try_data(t, lineno)) return;
        // NCCL_DEBUG=INFO announces the library version: "... NCCL INFO NCCL version 2.22.3+cuda12.6".
        static const std::regex info_version(R"(NCCL INFO NCCL version\s+(\S+))");
        std::smatch mv;
        if (cur_.nccl_version.empty() && std::regex_search(t, mv, info_version)) cur_.nccl_version = mv[1].str();
        // Not a data row: perhaps a command line naming the binary.
        static const std::regex bin(R"((?:^|[\s/=])([A-Za-z0-9]+(?:_[A-Za-z0-9]+)*_perf(?:_mpi)?)(?:\s|$))");
        std::smatch m;
        if (t.find("NCCL INFO") == std::string::npos && std::regex_search(t, m, bin)) {
            std::string b = m[1].str();
            if (!cur_.rows.empty()) {
                flush_pending(lineno);
                finish_test();
            }
            binary_hint_ = b;
        }
    }

    void comment(const std::string& t, int lineno) {
        static const std::regex version(
            R"(^#\s*nccl-tests version\s+(\S+)(?:\s+nccl-headers=(\d+))?(?:\s+nccl-library=(\d+))?)");
        static const std::regex starting(R"(^#\s*Collective test starting:\s*(\S+))");
        static const std::regex concluded(R"(^#\s*Collective test concluded)");
        static const std::regex nthread(R"(^#\s*nThread\s+(\d+)\s+nGpus\s+(\d+))");
        static const std::regex device(
            R"(^#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s+(.*)$)");
        static const std::regex avg(R"(^#\s*Avg bus bandwidth\s*:\s*([-+0-9.eE]+|nan|inf))");
        std::smatch m;
        if (std::regex_search(t, m, version)) {
            boundary(lineno);
            cur_.nccl_tests_version = m[1].str();
            std::string code = m[3].matched ? m[3].str() : (m[2].matched ? m[2].str() : "");
            if (!code.empty() && cur_.nccl_version.empty()) {
                int v = std::atoi(code.c_str());
                cur_.nccl_version = v >= 20900 ? fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100)
                                               : fmt::format("{}.{}.{}", v / 1000, (v / 100) % 10, v % 100);
            }
            return;
        }
        if (std::regex_search(t, m, starting)) {
            boundary(lineno);
            cur_.binary = m[1].str();
            return;
        }
        if (std::regex_search(t, m, concluded)) {
            flush_pending(lineno);
            finish_test();
            return;
        }
        if (std::regex_search(t, m, nthread)) {
            boundary(lineno);
            return;
        }
        if (std::regex_search(t, m, device)) {
            if (!cur_.rows.empty()) boundary(lineno);
            begin_test(lineno);
            int rank = std::atoi(m[1].str().c_str());
            rank_hosts_[rank] = m[2].str();
            if (cur_.gpu_name.empty()) cur_.gpu_name = trim(m[3].str());
            return;
        }
        if (std::regex_search(t, m, avg)) {
            flush_pending(lineno);
            cur_.avg_busbw_GBps = std::strtod(m[1].str().c_str(), nullptr);
            return;
        }
        // Column header?
        auto cols = split_ws(t.substr(1));
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

    // Tokens of a line that fit the row grammar from position `pos0` on; `junk` tells whether the
    // line went on with something else (an interleaved log line glued to the row).
    std::vector<std::string> row_tokens(const std::string& t, const Layout& L, int pos0, bool& junk) const {
        std::vector<std::string> out;
        junk = false;
        for (const auto& tok : split_ws(t)) {
            int pos = pos0 + static_cast<int>(out.size());
            char k = pos < L.needed() ? L.kind(pos) : 'n';
            if (k == 'w') {
                if (!is_word(tok)) {
                    junk = true;
                    break;
                }
                out.push_back(tok);
                continue;
            }
            if (k == 'n' && tok == "N/A") {
                out.push_back(tok);
                continue;
            }
            std::size_t n = (k == 'i') ? integer_prefix(tok) : numeric_prefix(tok);
            if (n == 0) {
                junk = true;
                break;
            }
            out.push_back(tok.substr(0, n));
            if (n < tok.size()) {
                junk = true;
                break;
            }
        }
        return out;
    }

    Layout guess_layout(const std::vector<std::string>& toks) const {
        Layout L;
        // Old format (no root column): the 5th token is a time with a decimal point, and a row has 12.
        if (toks.size() >= 5 && toks[4].find('.') != std::string::npos && toks.size() == 12) {
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

    bool looks_like_row_start(const std::vector<std::string>& toks) const {
        return toks.size() >= 4 && integer_prefix(toks[0]) == toks[0].size() &&
               integer_prefix(toks[1]) == toks[1].size() && is_word(toks[2]) && is_word(toks[3]);
    }

    bool try_data(const std::string& t, int lineno) {
        auto raw = split_ws(t);
        bool start = looks_like_row_start(raw);
        if (!start) {
            // Continuation of a split row: a line made only of numbers.
            if (!pending_.empty() && layout_) {
                bool junk = false;
                auto toks = row_tokens(t, *layout_, static_cast<int>(pending_.size()), junk);
                if (!junk && !toks.empty() && toks.size() == raw.size()) {
                    pending_.insert(pending_.end(), toks.begin(), toks.end());
                    if (static_cast<int>(pending_.size()) >= layout_->needed()) {
                        cur_.warnings.push_back(
                            fmt::format("{}:{}: row of size {} was split by interleaved output; rejoined with line {}",
                                        source_, pending_line_, pending_[0], lineno));
                        emit(pending_, *layout_, pending_line_);
                        pending_.clear();
                    }
                    return true;
                }
            }
            return false;
        }
        if (!pending_.empty()) flush_pending(lineno);
        if (!layout_) layout_ = guess_layout(raw);
        begin_test(lineno);
        bool junk = false;
        auto toks = row_tokens(t, *layout_, 0, junk);
        if (static_cast<int>(toks.size()) >= layout_->needed()) {
            emit(toks, *layout_, lineno);
        } else if (junk) {
            pending_ = toks;
            pending_line_ = lineno;
        } else {
            out_.warnings.push_back(fmt::format("{}:{}: short data row ({} of {} columns) ignored", source_, lineno,
                                                toks.size(), layout_->needed()));
        }
        return true;
    }

    void flush_pending(int lineno) {
        if (pending_.empty()) return;
        out_.warnings.push_back(fmt::format("{}:{}: data row of size {} was cut off and never completed (by line {})",
                                            source_, pending_line_, pending_[0], lineno));
        pending_.clear();
    }

    static NcclTestsResult result(const std::vector<std::string>& t, int time, int alg, int bus, int wrong) {
        NcclTestsResult r;
        if (time < 0) return r;
        auto num = [&](int i) { return std::strtod(t[i].c_str(), nullptr); };
        if (t[time] == "N/A") return r;
        r.present = true;
        r.time_us = num(time);
        r.algbw_GBps = num(alg);
        r.busbw_GBps = num(bus);
        r.time_res = half_ulp(t[time]);
        r.algbw_res = half_ulp(t[alg]);
        r.busbw_res = half_ulp(t[bus]);
        if (wrong >= 0 && wrong < static_cast<int>(t.size()) && t[wrong] != "N/A") r.wrong = num(wrong);
        return r;
    }

    void emit(const std::vector<std::string>& t, const Layout& L, int lineno) {
        NcclTestsRow row;
        row.size_bytes = std::strtoll(t[L.size].c_str(), nullptr, 10);
        row.count = std::strtoll(t[L.count].c_str(), nullptr, 10);
        row.type = t[L.type];
        row.redop = t[L.redop];
        if (L.root >= 0) row.root = std::atoi(t[L.root].c_str());
        row.out_of_place = result(t, L.oop_time, L.oop_alg, L.oop_bus, L.oop_wrong);
        row.in_place = result(t, L.ip_time, L.ip_alg, L.ip_bus, L.ip_wrong);
        row.line = lineno;
        cur_.format = L.old_format ? "text-old" : "text";
        cur_.rows.push_back(std::move(row));
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
            for (const auto& [rank, host] : rank_hosts_)
                if (std::find(r.hosts.begin(), r.hosts.end(), host) == r.hosts.end()) r.hosts.push_back(host);
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
        pending_.clear();
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
                    cands = consistent_collectives(first.redop, first.root, ratio->first, r.ranks, ratio->second);
                } else {
                    // Unknown ranks: any n from 2 to 65536 consistent with the ratio.
                    for (const auto& c : consistent_collectives(first.redop, first.root, 0, 0, 0)) {
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
                cands = consistent_collectives(first.redop, first.root, 0, 0, 0);
            }
            std::string hinted;
            for (const auto& c : known_collectives()) {
                // Longest known name in the file name ("all_reduce" rather than "reduce").
                if (basename.find(c) != std::string::npos && c.size() > hinted.size()) hinted = c;
            }
            if (cands.size() == 1) {
                r.collective = cands[0];
                r.collective_source =
                    fmt::format("data (redop {}, busbw/algbw {:.4f})", first.redop, ratio ? ratio->first : 0.0);
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
// JSON (-J) parser
// ------------------------------------------------------------------------------------------------

NcclTestsFile parse_json_form(const nlohmann::json& j, const std::string& source) {
    NcclTestsFile out;
    NcclTestsRun r;
    r.source_file = source;
    r.format = "json";
    auto slash = source.find_last_of('/');
    std::string basename = slash == std::string::npos ? source : source.substr(slash + 1);
    if (j.contains("args") && j["args"].is_array() && !j["args"].empty() && j["args"][0].is_string()) {
        r.binary = j["args"][0].get<std::string>();
        auto s = r.binary.find_last_of('/');
        if (s != std::string::npos) r.binary = r.binary.substr(s + 1);
        r.collective = collective_from_binary(r.binary);
        r.collective_source = "json args";
    }
    if (j.contains("nccl_version") && j["nccl_version"].is_number_integer()) {
        int v = j["nccl_version"].get<int>();
        r.nccl_version = v >= 20900 ? fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100)
                                    : fmt::format("{}.{}.{}", v / 1000, (v / 100) % 10, v % 100);
    }
    if (j.contains("config") && j["config"].is_object()) {
        const auto& c = j["config"];
        int nthreads = c.value("nthreads", 1), ngpus = c.value("ngpus", 1);
        if (c.contains("devices") && c["devices"].is_array() && !c["devices"].empty()) {
            // One entry per process (nccl-tests parses the first device line of each process).
            r.ranks = static_cast<int>(c["devices"].size()) * nthreads * ngpus;
            r.ranks_source = "json config";
            for (const auto& d : c["devices"]) {
                std::string h = d.value("hostname", "");
                if (!h.empty() && std::find(r.hosts.begin(), r.hosts.end(), h) == r.hosts.end()) r.hosts.push_back(h);
                if (r.gpu_name.empty()) r.gpu_name = d.value("device_info", "");
            }
            r.nodes = static_cast<int>(r.hosts.size());
        }
    }
    if (!j.contains("results") || !j["results"].is_array())
        throw ConfigError(fmt::format("{}: nccl-tests JSON without a \"results\" list", source));
    auto half = [](const nlohmann::json& o) {
        NcclTestsResult x;
        if (!o.is_object()) return x;
        x.present = true;
        auto num = [](const nlohmann::json& v) {
            if (v.is_number()) return v.get<double>();
            if (v.is_string()) return std::strtod(v.get<std::string>().c_str(), nullptr);
            return 0.0;
        };
        x.time_us = num(o.contains("time") ? o["time"] : o.value("cpu_time", nlohmann::json(0)));
        x.algbw_GBps = num(o.value("alg_bw", nlohmann::json(0)));
        x.busbw_GBps = num(o.value("bus_bw", nlohmann::json(0)));
        // "%lf" prints 6 decimals.
        x.time_res = x.algbw_res = x.busbw_res = 5e-7;
        if (o.contains("nwrong") && o["nwrong"].is_number()) x.wrong = o["nwrong"].get<double>();
        return x;
    };
    for (const auto& e : j["results"]) {
        NcclTestsRow row;
        row.size_bytes = e.value("size", std::int64_t{0});
        row.count = e.value("count", std::int64_t{0});
        row.type = e.value("type", "");
        row.redop = e.value("redop", "");
        if (e.contains("root")) {
            if (e["root"].is_number_integer())
                row.root = e["root"].get<int>();
            else if (e["root"].is_string())
                row.root = std::atoi(e["root"].get<std::string>().c_str());
        }
        if (e.contains("out_of_place")) row.out_of_place = half(e["out_of_place"]);
        if (e.contains("in_place")) row.in_place = half(e["in_place"]);
        r.rows.push_back(std::move(row));
    }
    if (j.contains("average_bus_bandwidth") && j["average_bus_bandwidth"].is_object()) {
        const auto& b = j["average_bus_bandwidth"]["bandwidth"];
        if (b.is_number()) r.avg_busbw_GBps = b.get<double>();
    }
    if (r.rows.empty()) throw ConfigError(fmt::format("{}: nccl-tests JSON has no result rows", source));
    TextParser::resolve_from_data(r, basename);
    for (auto& w : check_bandwidths(r)) r.warnings.push_back(std::move(w));
    out.tests.push_back(std::move(r));
    return out;
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
    std::size_t i = 0;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i < text.size() && text[i] == '{') {
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(text);
        } catch (const nlohmann::json::parse_error& e) {
            throw ConfigError(fmt::format("{}: not valid nccl-tests JSON: {}", source_name, e.what()));
        }
        return parse_json_form(j, source_name);
    }
    TextParser p(source_name);
    return p.run(text);
}

NcclTestsFile read_nccl_tests_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw ConfigError(fmt::format("{}: cannot open nccl-tests log", path));
    std::stringstream ss;
    ss << f.rdbuf();
    auto out = parse_nccl_tests(ss.str(), path);
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
        if (!r.present || row.size_bytes <= 0 || r.time_us <= 0) return;
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

nlohmann::json to_json(const NcclTestsRun& run) {
    using nlohmann::json;
    auto rows = [&](bool in_place) {
        json a = json::array();
        for (const auto& r : run.rows) {
            const auto& h = in_place ? r.in_place : r.out_of_place;
            if (!h.present) continue;
            json o = {{"size_bytes", r.size_bytes},
                      {"time_us", h.time_us},
                      {"algbw_GBps", h.algbw_GBps},
                      {"busbw_GBps", h.busbw_GBps},
                      {"count", r.count},
                      {"type", r.type},
                      {"redop", r.redop}};
            if (r.root) o["root"] = *r.root;
            o["wrong"] = h.wrong ? json(*h.wrong) : json(nullptr);
            a.push_back(std::move(o));
        }
        return a;
    };
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
    j["rows"] = rows(false);
    j["in_place"] = {{"rows", rows(true)}};
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

}   // namespace llmsim::calibrate
