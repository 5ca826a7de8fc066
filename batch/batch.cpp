#include "batch/batch.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <functional>
#include <istream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "hardware_db/errors.hpp"

namespace llmsim::batch {

namespace {

// The JSON pointer token of a key (RFC 6901 escapes).
std::string pointer_token(const std::string& key) {
    std::string t;
    for (char c : key) {
        if (c == '~')
            t.append("~0");
        else if (c == '/')
            t.append("~1");
        else
            t.push_back(c);
    }
    return t;
}

void add_swept(Plan& plan, const std::string& path) {
    if (std::find(plan.swept.begin(), plan.swept.end(), path) == plan.swept.end()) plan.swept.push_back(path);
}

using Dimension = SweepDimension;

void expand_sweep(const Json& doc, const std::string& origin, const std::string& base_dir, Plan& plan) {
    Json base = doc;
    base.erase("sweep");
    base.erase("zip");
    std::vector<std::string> problems;
    std::vector<Dimension> dims;
    auto check_array = [&](const std::string& where, const Json& v) {
        if (v.is_array() && !v.empty()) return true;
        problems.push_back(fmt::format("{}{}: {}: expected a non-empty array of values", origin, where, json_brief(v)));
        return false;
    };
    if (doc.contains("sweep")) {
        const Json& sw = doc["sweep"];
        if (!sw.is_object() || sw.empty())
            problems.push_back(fmt::format("{}/sweep: {}: expected an object of \"dotted.path\": [values...]", origin,
                                           json_brief(sw)));
        else
            for (const auto& [path, values] : sw.items())
                if (check_array("/sweep/" + pointer_token(path), values))
                    dims.push_back({{path}, {values}, values.size()});
    }
    if (doc.contains("zip")) {
        const Json& z = doc["zip"];
        if (!z.is_object() || z.empty()) {
            problems.push_back(
                fmt::format("{}/zip: {}: expected an object of \"dotted.path\": [values...]", origin, json_brief(z)));
        } else {
            Dimension d;
            for (const auto& [path, values] : z.items()) {
                if (!check_array("/zip/" + pointer_token(path), values)) continue;
                if (d.paths.empty()) d.size = values.size();
                if (values.size() != d.size)
                    problems.push_back(
                        fmt::format("{}/zip/{}: {} values: expected {} (zip lists pair up element by "
                                    "element, so they must have the same length)",
                                    origin, pointer_token(path), values.size(), d.size));
                d.paths.push_back(path);
                d.values.push_back(values);
            }
            if (!d.paths.empty()) dims.push_back(std::move(d));
        }
    }
    // A path in both (the zip, one dimension, comes last): said once, at its zip entry.
    if (doc.contains("sweep") && doc["sweep"].is_object() && doc.contains("zip") && doc["zip"].is_object())
        for (const auto& [path, values] : doc["zip"].items())
            if (doc["sweep"].contains(path))
                problems.push_back(fmt::format("{}/zip/{}: \"{}\" is both swept and zipped: expected it in one of them",
                                               origin, pointer_token(path), path));
    if (!problems.empty()) throw ConfigError(problems);
    for (const auto& d : dims)
        for (const auto& p : d.paths) add_swept(plan, p);

    std::size_t total = 1;
    for (const auto& d : dims) {
        if (total > kMaxRunScenarios / d.size || plan.items.size() + total * d.size > kMaxRunScenarios)
            throw ConfigError(
                fmt::format("{}/sweep: more than {} scenarios: expected at most {} per run (split the "
                            "sweep over several files)",
                            origin, kMaxRunScenarios, kMaxRunScenarios));
        total *= d.size;
    }
    // Item 0 is built now: a path through a non-object of the base document is an error of the file,
    // reported before anything runs (a value that is not an object on another path's way is its row's).
    const std::size_t first = plan.items.size();
    plan.items.add_sweep(std::move(base), base_dir, origin, std::move(dims), total);
    (void)plan.items[first];
}

std::string csv_cell(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) {
        if (c == '"') q.push_back('"');
        q.push_back(c);
    }
    q.push_back('"');
    return q;
}

std::string csv_value(const Json& v) {
    if (v.is_null()) return "";
    if (v.is_string()) return csv_cell(v.get<std::string>());
    return csv_cell(v.dump());
}

const Json* at_dotted(const Json& j, const std::string& dotted) {
    const Json* cur = &j;
    std::size_t start = 0;
    while (true) {
        const auto dot = dotted.find('.', start);
        const std::string key = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (!cur->is_object()) return nullptr;
        const auto it = cur->find(key);
        if (it == cur->end()) return nullptr;
        cur = &*it;
        if (dot == std::string::npos) return cur;
        start = dot + 1;
    }
}

std::string one_line(std::string s) {
    std::replace(s.begin(), s.end(), '\n', ' ');
    std::replace(s.begin(), s.end(), '\r', ' ');
    return s;
}

}   // namespace

const std::vector<std::string> kResultColumns = {"step_time_s",
                                                 "mfu",
                                                 "hfu",
                                                 "tokens_per_s",
                                                 "tokens_per_s_per_gpu",
                                                 "bubble_fraction",
                                                 "memory.total_bytes",
                                                 "memory.capacity_bytes",
                                                 "memory.fits",
                                                 "ttft_s",
                                                 "tpot_s",
                                                 "e2e_latency_s",
                                                 "output_tokens_per_s",
                                                 "output_tokens_per_s_per_gpu",
                                                 "gpus",
                                                 "layout"};

void set_path(Json& doc, const std::string& dotted, const Json& value, const std::string& origin) {
    Json* cur = &doc;
    std::size_t start = 0;
    std::string pointer;
    while (true) {
        const auto dot = dotted.find('.', start);
        const std::string key = dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (key.empty())
            throw ConfigError(fmt::format("{}: sweep path \"{}\": expected dot-separated keys such as \"parallel.tp\"",
                                          origin, dotted));
        if (cur->is_null()) *cur = Json::object();
        if (!cur->is_object())
            throw ConfigError(fmt::format("{}{}: {}: expected an object to hold \"{}\" (sweep path \"{}\")", origin,
                                          pointer, json_brief(*cur), key, dotted));
        pointer.append("/").append(pointer_token(key));
        cur = &(*cur)[key];
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    *cur = value;
}

void ItemList::add(Item it) {
    Source src;
    src.single = std::move(it);
    src.first = total_;
    src.count = 1;
    sources_.push_back(std::move(src));
    ++total_;
}

void ItemList::add_sweep(Json base, std::string base_dir, std::string origin, std::vector<SweepDimension> dims,
                         std::size_t count) {
    Source src;
    src.single = {std::move(base), std::move(base_dir), std::move(origin), Json::object()};
    src.dims = std::move(dims);
    src.first = total_;
    src.count = count;
    sources_.push_back(std::move(src));
    total_ += count;
}

Item ItemList::operator[](std::size_t i) const {
    // The source holding item i (sources in order of their first item).
    const auto it = std::upper_bound(sources_.begin(), sources_.end(), i,
                                     [](std::size_t x, const Source& s) { return x < s.first; });
    const Source& src = *(it - 1);
    if (src.dims.empty()) return src.single;
    std::size_t n = i - src.first;
    Item item;
    item.doc = src.single.doc;
    item.base_dir = src.single.base_dir;
    item.origin = fmt::format("{}/sweep[{}]", src.single.origin, n);
    // The last dimension varies fastest: n in mixed radix over the dimensions' sizes.
    std::vector<std::size_t> at(src.dims.size(), 0);
    for (std::size_t d = src.dims.size(); d-- > 0;) {
        at[d] = n % src.dims[d].size;
        n /= src.dims[d].size;
    }
    for (std::size_t d = 0; d < src.dims.size(); ++d)
        for (std::size_t p = 0; p < src.dims[d].paths.size(); ++p) {
            const Json& v = src.dims[d].values[p][at[d]];
            set_path(item.doc, src.dims[d].paths[p], v, src.single.origin);
            item.swept[src.dims[d].paths[p]] = v;
        }
    return item;
}

bool ItemList::any_swept_number() const {
    for (const auto& src : sources_)
        for (const auto& d : src.dims)
            for (const auto& values : d.values)
                for (const auto& v : values)
                    if (v.is_number()) return true;
    return false;
}

void expand(const Json& doc, const std::string& origin, const std::string& base_dir, Plan& plan) {
    if (!doc.is_object())
        throw ConfigError(fmt::format("{}: {}: expected a scenario object, {{\"scenarios\": [...]}} or a sweep", origin,
                                      json_brief(doc)));
    if (doc.contains("scenarios")) {
        std::vector<std::string> problems;
        for (const auto& [k, v] : doc.items())
            if (k != "scenarios")
                problems.push_back(fmt::format("{}/{}: unknown key next to \"scenarios\": expected only \"scenarios\"",
                                               origin, pointer_token(k)));
        const Json& list = doc["scenarios"];
        if (!list.is_array())
            problems.push_back(
                fmt::format("{}/scenarios: {}: expected an array of scenarios", origin, json_brief(list)));
        if (!problems.empty()) throw ConfigError(problems);
        for (std::size_t i = 0; i < list.size(); ++i)
            expand(list[i], fmt::format("{}/scenarios/{}", origin, i), base_dir, plan);
        return;
    }
    if (doc.contains("sweep") || doc.contains("zip")) {
        expand_sweep(doc, origin, base_dir, plan);
        return;
    }
    plan.items.add({doc, base_dir, origin, Json::object()});
}

Plan expand_files(const std::vector<std::string>& files) {
    Plan plan;
    std::vector<std::string> problems;
    for (const auto& file : files) {
        try {
            expand(parse_json_file(file), file + "#", directory_of(file), plan);
        } catch (const ConfigError& e) {
            problems.insert(problems.end(), e.problems().begin(), e.problems().end());
        }
    }
    if (!problems.empty()) throw ConfigError(problems);
    return plan;
}

Shard parse_shard(const std::string& text) {
    Shard s;
    const auto slash = text.find('/');
    auto number = [](const std::string& t, int& out) {
        const auto r = std::from_chars(t.data(), t.data() + t.size(), out);
        return !t.empty() && r.ec == std::errc() && r.ptr == t.data() + t.size();
    };
    if (slash == std::string::npos || !number(text.substr(0, slash), s.k) || !number(text.substr(slash + 1), s.n) ||
        s.n < 1 || s.k < 1 || s.k > s.n)
        throw ConfigError(fmt::format("--shard: \"{}\": expected K/N with 1 <= K <= N (slice K of N)", text));
    return s;
}

std::vector<std::size_t> shard_indices(std::size_t total, const Shard& s) {
    std::vector<std::size_t> idx;
    const auto n = static_cast<std::size_t>(s.n), k = static_cast<std::size_t>(s.k - 1);
    if (s.strided) {
        for (std::size_t i = k; i < total; i += n) idx.push_back(i);
    } else {
        for (std::size_t i = total * k / n; i < total * (k + 1) / n; ++i) idx.push_back(i);
    }
    return idx;
}

Format format_of(const std::string& path) {
    return path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0 ? Format::csv : Format::jsonl;
}

std::string csv_header(const Plan& plan) {
    std::string h = "index,of,origin,ok,error";
    for (const auto& p : plan.swept) h.append(",").append(csv_cell(p));
    for (const auto& c : kResultColumns) h.append(",").append(c);
    return h.append(",scenario\n");
}

std::string csv_row(const Plan& plan, const Row& row) {
    std::string r = fmt::format("{},{},{},{},{}", row.index, row.total, csv_cell(row.item->origin),
                                row.ok ? "true" : "false", csv_cell(row.error));
    for (const auto& p : plan.swept) {
        const auto it = row.item->swept.find(p);
        r.push_back(',');
        if (it != row.item->swept.end()) r.append(csv_value(*it));
    }
    for (const auto& c : kResultColumns) {
        const Json* v = row.ok ? at_dotted(row.result, c) : nullptr;
        r.push_back(',');
        if (v) r.append(csv_value(*v));
    }
    return r.append(",").append(csv_cell(row.scenario.dump())).append("\n");
}

std::string jsonl_row(const Row& row) {
    // Keys in a fixed order with the index first (merge() reads it without parsing the line).
    std::string r = fmt::format("{{\"index\":{},\"of\":{},\"origin\":{},\"ok\":{}", row.index, row.total,
                                Json(row.item->origin).dump(), row.ok ? "true" : "false");
    if (!row.item->swept.empty()) r.append(",\"swept\":").append(row.item->swept.dump());
    if (row.ok)
        r.append(",\"result\":").append(row.result.dump());
    else
        r.append(",\"error\":").append(Json(row.error).dump());
    return r.append(",\"scenario\":").append(row.scenario.dump()).append("}\n");
}

RunSummary run(const Plan& plan, const std::vector<std::size_t>& indices, const Evaluator& evaluate,
               const RunOptions& options, std::ostream& out) {
    const std::size_t n = indices.size();
    unsigned threads = options.threads > 0 ? static_cast<unsigned>(options.threads)
                                           : std::max(1u, std::thread::hardware_concurrency());
    threads = static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(n, 1)));
    // Rows wait in a ring of `window` slots until every row before them is written (bounded memory).
    const std::size_t window = 1024 * static_cast<std::size_t>(threads);
    struct Slot {
        std::optional<Row> row;
        std::string line;
    };
    std::vector<Slot> ring(std::min(window, std::max<std::size_t>(n, 1)));
    std::mutex m;
    std::condition_variable cv;
    std::atomic<std::size_t> next{0};
    std::size_t written = 0;

    auto work = [&] {
        while (true) {
            const std::size_t pos = next.fetch_add(1);
            if (pos >= n) return;
            {
                std::unique_lock lock(m);
                cv.wait(lock, [&] { return pos < written + ring.size(); });
            }
            Row row;
            row.index = indices[pos];
            row.total = plan.items.size();
            try {
                row.item = std::make_shared<const Item>(plan.items[indices[pos]]);
            } catch (const ConfigError& e) {
                // A sweep value on another path's way that is not an object: this row's error.
                Item broken;
                broken.origin = fmt::format("row {}", indices[pos]);
                row.item = std::make_shared<const Item>(std::move(broken));
                std::string msg;
                for (const auto& p : e.problems()) msg += (msg.empty() ? "" : "; ") + one_line(p);
                row.error = msg;
            }
            const Item& item = *row.item;
            try {
                if (!row.error.empty()) throw ConfigError(row.error);
                Outcome o = evaluate(item);
                row.ok = true;
                row.scenario = std::move(o.scenario);
                row.result = std::move(o.result);
            } catch (const ConfigError& e) {
                std::string msg;
                for (const auto& p : e.problems()) msg += (msg.empty() ? "" : "; ") + one_line(p);
                row.error = msg;
            } catch (const std::exception& e) {
                row.error = one_line(e.what());
            }
            if (!row.ok) row.scenario = item.doc;
            std::string line = options.format == Format::csv ? csv_row(plan, row) : jsonl_row(row);
            {
                std::lock_guard lock(m);
                ring[pos % ring.size()] = {std::move(row), std::move(line)};
            }
            cv.notify_all();
        }
    };

    if (options.format == Format::csv) out << csv_header(plan);
    std::vector<std::thread> pool;
    RunSummary sum;
    // A callback or the output stream may throw: the workers are stopped and joined before it
    // propagates (a joinable thread's destructor would end the process).
    struct Joiner {
        std::vector<std::thread>& pool;
        std::atomic<std::size_t>& next;
        std::size_t n;
        std::mutex& m;
        std::condition_variable& cv;
        std::size_t& written;
        ~Joiner() {
            next.store(n);
            {
                std::lock_guard lock(m);
                written = n;   // releases workers waiting for a ring slot
            }
            cv.notify_all();
            for (auto& t : pool)
                if (t.joinable()) t.join();
        }
    } joiner{pool, next, n, m, cv, written};
    sum.threads_asked = threads;
    for (unsigned t = 0; t < threads; ++t) {
        try {
            pool.emplace_back(work);
        } catch (const std::system_error& e) {
            // The system would not start another thread (was std::terminate, SIGABRT): run on the ones
            // that started, or refuse when none did (no worker runs then, so nothing is half-written).
            sum.thread_error = e.what();
            if (pool.empty())
                throw ConfigError(fmt::format("-j: {}: no worker thread could be started ({}): expected fewer threads",
                                              threads, e.what()));
            break;
        }
    }
    sum.threads_started = static_cast<unsigned>(pool.size());
    while (written < n) {
        Slot s;
        {
            std::unique_lock lock(m);
            Slot& slot = ring[written % ring.size()];
            cv.wait(lock, [&] { return slot.row.has_value(); });
            s = std::exchange(slot, Slot{});   // the slot is free again
        }
        if (options.on_row) options.on_row(*s.row);
        out << s.line;
        ++sum.rows;
        if (!s.row->ok) ++sum.failed;
        {
            std::lock_guard lock(m);
            ++written;
        }
        cv.notify_all();
        if (options.progress) options.progress(static_cast<double>(written) / static_cast<double>(n));
    }
    out.flush();
    return sum;
}

namespace {

// One piece of a merge, read a line at a time.
struct Piece {
    std::string name;
    std::unique_ptr<std::istream> in;
    std::size_t line_no = 0;
    bool done = false;
    std::optional<std::size_t> index, last;   // the row read ahead, and the one before it
    std::string line;
};

// A line of at most kMaxRowBytes (a row holds one resolved scenario and its result: kilobytes).
constexpr std::size_t kMaxRowBytes = std::size_t{64} << 20;

// `ended`: the line ended with a newline (run ends every row with one: a last line without it was cut short).
bool read_line(std::istream& in, std::string& line, bool& too_long, bool& ended) {
    line.clear();
    too_long = false;
    ended = false;
    std::streambuf* sb = in.rdbuf();
    bool any = false;
    for (int c = sb->sbumpc(); c != std::char_traits<char>::eof(); c = sb->sbumpc()) {
        any = true;
        if (c == '\n') return ended = true;
        if (line.size() >= kMaxRowBytes) {
            too_long = true;   // skip the rest of the line
            continue;
        }
        line.push_back(static_cast<char>(c));
    }
    return any;
}

// Streams the pieces in index order: with out == nullptr only checks them (every problem collected),
// else writes the merged rows (the pieces were checked: nothing half-written on a bad piece).
void merge_pass(const std::vector<std::string>& names,
                const std::function<std::unique_ptr<std::istream>(std::size_t)>& open,
                const std::function<void(const std::string&)>* out, std::vector<std::string>& problems) {
    std::optional<std::string> header;
    std::optional<bool> csv;
    std::optional<std::size_t> total;
    auto number_at = [](const std::string& line, std::size_t pos, std::size_t& value) {
        const auto r = std::from_chars(line.data() + pos, line.data() + line.size(), value);
        return r.ec == std::errc() ? static_cast<std::size_t>(r.ptr - line.data()) : std::string::npos;
    };
    std::vector<Piece> pieces(names.size());
    // Reads piece `p`'s next row into p.index / p.line (headers checked on the way).
    auto advance = [&](Piece& p) {
        p.index.reset();
        std::string line;
        bool too_long = false, ended = false;
        while (!p.done) {
            if (!read_line(*p.in, line, too_long, ended)) {
                p.done = true;
                break;
            }
            ++p.line_no;
            if (too_long) {
                problems.push_back(fmt::format("{}:{}: a line longer than {} MiB: expected rows of llmsim run", p.name,
                                               p.line_no, kMaxRowBytes >> 20));
                continue;
            }
            if (!ended) {
                problems.push_back(
                    fmt::format("{}:{}: the last line ends without a newline (the piece was cut short?): "
                                "expected whole rows of llmsim run, each ending its line",
                                p.name, p.line_no));
                continue;
            }
            if (line.empty()) continue;
            const bool is_csv = line.front() != '{';
            if (csv && *csv != is_csv) {
                problems.push_back(
                    fmt::format("{}:{}: mixes JSON lines and CSV: expected pieces of one format", p.name, p.line_no));
                p.done = true;
                break;
            }
            csv = is_csv;
            if (is_csv && line.rfind("index,", 0) == 0) {
                if (header && *header != line)
                    problems.push_back(
                        fmt::format("{}:{}: CSV header differs from the first piece's: expected the "
                                    "shards of one run",
                                    p.name, p.line_no));
                if (!header) {
                    header = line;
                    if (out) (*out)(line);
                }
                continue;
            }
            std::size_t index = 0, of = 0;
            const std::size_t p0 = is_csv ? 0 : std::string("{\"index\":").size();
            if (!is_csv && (line.rfind("{\"index\":", 0) != 0 || !Json::accept(line))) {
                problems.push_back(
                    fmt::format("{}:{}: not a JSON row of llmsim run: expected one JSON object per line, "
                                "starting {{\"index\":",
                                p.name, p.line_no));
                continue;
            }
            const std::size_t q = number_at(line, p0, index);
            const std::string sep = is_csv ? "," : ",\"of\":";
            if (q == std::string::npos || line.compare(q, sep.size(), sep) != 0 ||
                number_at(line, q + sep.size(), of) == std::string::npos) {
                problems.push_back(
                    fmt::format("{}:{}: expected a row of llmsim run (index, of, ...)", p.name, p.line_no));
                continue;
            }
            if (total && *total != of)
                problems.push_back(
                    fmt::format("{}:{}: row of a run of {} scenarios: expected {} (the shards of one run)", p.name,
                                p.line_no, of, *total));
            total = of;
            if (p.last && index <= *p.last) {
                problems.push_back(
                    fmt::format("{}:{}: row {} after row {}: expected rows in the order llmsim run "
                                "writes them",
                                p.name, p.line_no, index, *p.last));
                continue;
            }
            p.last = index;
            p.index = index;
            p.line = std::move(line);
            return;
        }
    };
    for (std::size_t i = 0; i < names.size(); ++i) {
        pieces[i].name = names[i];
        pieces[i].in = open(i);
        advance(pieces[i]);
    }
    std::size_t next = 0, missing = 0, first_missing = 0;
    while (true) {
        Piece* best = nullptr;
        for (auto& p : pieces)
            if (p.index && (!best || *p.index < *best->index)) best = &p;
        if (!best) break;
        const std::size_t i = *best->index;
        if (i < next) {
            problems.push_back(fmt::format("{}:{}: row {} appears twice: expected each row in one piece", best->name,
                                           best->line_no, i));
        } else {
            if (i > next && missing == 0) first_missing = next;
            missing += i - next;
            next = i + 1;
            if (out) (*out)(best->line);
        }
        advance(*best);
    }
    if (total && next < *total) {
        if (missing == 0) first_missing = next;
        missing += *total - next;
    }
    if (missing > 0)
        problems.push_back(fmt::format("{} of {} rows missing (first: row {}): expected every shard's output", missing,
                                       total.value_or(next), first_missing));
    // Pieces without a row cannot say how many rows the run had (a shard can run nothing): merged alone,
    // the run's rows would be lost without a word.
    if (!total && problems.empty())
        problems.push_back(
            fmt::format("no piece holds a row ({}): expected the outputs of every shard of "
                        "llmsim run --shard K/N (a shard that ran nothing writes no row)",
                        names.size() == 1 ? names.front() : fmt::format("{} pieces", names.size())));
}

}   // namespace

void merge_files(const std::vector<std::string>& names,
                 const std::function<std::unique_ptr<std::istream>(std::size_t)>& open,
                 const std::function<void(const std::string&)>& write) {
    std::vector<std::string> problems;
    merge_pass(names, open, nullptr, problems);
    if (!problems.empty()) throw ConfigError(problems);
    merge_pass(names, open, &write, problems);
    if (!problems.empty()) throw ConfigError(problems);   // a piece changed between the passes
}

void merge_files(const std::vector<std::string>& names,
                 const std::function<std::unique_ptr<std::istream>(std::size_t)>& open, std::ostream& out) {
    merge_files(names, open, [&out](const std::string& line) { out << line << "\n"; });
}

std::string merge(const std::vector<std::pair<std::string, std::string>>& pieces) {
    std::vector<std::string> names;
    names.reserve(pieces.size());
    for (const auto& pc : pieces) names.push_back(pc.first);
    std::ostringstream out;
    merge_files(
        names, [&](std::size_t i) { return std::make_unique<std::istringstream>(pieces[i].second); }, out);
    return out.str();
}

}   // namespace llmsim::batch
