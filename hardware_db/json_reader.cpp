#include "hardware_db/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "hardware_db/errors.hpp"
#include "hardware_db/input_file.hpp"
#include "hardware_db/limits.hpp"

namespace llmsim {

namespace {
std::string join_lines(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) {
        if (!out.empty()) out += "\n";
        out += l;
    }
    return out;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t sub = prev[j - 1] + (std::tolower(a[i - 1]) == std::tolower(b[j - 1]) ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}
}   // namespace

ConfigError::ConfigError(std::vector<std::string> problems)
    : std::runtime_error(join_lines(problems)), problems_(std::move(problems)) {}

std::vector<std::string> closest_names(const std::string& name, const std::vector<std::string>& candidates,
                                       std::size_t n) {
    std::vector<std::pair<std::size_t, std::string>> scored;
    if (name.size() > 64) return {};   // no sensible suggestion (and edit distance grows with length)
    for (const auto& c : candidates) {
        std::size_t d = edit_distance(name, c);
        // A substring match is a strong hint ("h100" -> "dgx-h100").
        if (c.find(name) != std::string::npos || name.find(c) != std::string::npos) d = std::min<std::size_t>(d, 1);
        scored.emplace_back(d, c);
    }
    std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<std::string> out;
    for (const auto& [d, c] : scored) {
        if (out.size() >= n) break;
        if (d <= std::max<std::size_t>(3, name.size() / 2)) out.push_back(c);
    }
    return out;
}

namespace {

// Appends a compact rendering of `v` to `out`, stopping once `out` is longer than `limit` and never
// descending more than a few levels (the value may be as deep as the parser allows).
void render_brief(const Json& v, std::string& out, std::size_t limit, int depth) {
    if (out.size() > limit) return;
    switch (v.type()) {
        case Json::value_t::object: {
            if (depth >= 4) {
                out += "{...}";
                return;
            }
            out += '{';
            bool first = true;
            for (auto it = v.begin(); it != v.end() && out.size() <= limit; ++it) {
                if (!first) out += ',';
                first = false;
                render_brief(Json(it.key().substr(0, limit)), out, limit, depth + 1);
                out += ':';
                render_brief(*it, out, limit, depth + 1);
            }
            out += '}';
            return;
        }
        case Json::value_t::array: {
            if (depth >= 4) {
                out += "[...]";
                return;
            }
            out += '[';
            bool first = true;
            for (auto it = v.begin(); it != v.end() && out.size() <= limit; ++it) {
                if (!first) out += ',';
                first = false;
                render_brief(*it, out, limit, depth + 1);
            }
            out += ']';
            return;
        }
        case Json::value_t::string: {
            const auto& s = v.get_ref<const std::string&>();
            out += Json(s.size() > limit ? s.substr(0, limit + 1) : s)
                       .dump(-1, ' ', false, Json::error_handler_t::replace);
            return;
        }
        default: out += v.dump(-1, ' ', false, Json::error_handler_t::replace);
    }
}

// Control characters would split a one-line message; long texts are cut.
std::string one_line(std::string s, std::size_t limit) {
    for (auto& c : s)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    if (s.size() > limit) s = s.substr(0, limit - 3) + "...";
    return s;
}

}   // namespace

std::string json_brief(const Json& v) {
    std::string s;
    render_brief(v, s, limits::kMessageValueChars, 0);
    return one_line(std::move(s), limits::kMessageValueChars);
}

std::string pointer_token(const std::string& key) {
    std::string out;
    for (char c : key) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return one_line(std::move(out), limits::kMessageValueChars);
}

void Problems::add(const std::string& pointer, const Json& value, const std::string& expected) {
    lines.push_back(fmt::format("{}: {}: expected {}", pointer.empty() ? "/" : pointer, json_brief(value), expected));
}

void Problems::raise() const { throw ConfigError(lines); }

namespace {

// Strict parsing (docs/reliability.md): duplicate keys, nesting deeper than kJsonDepth and numbers
// beyond a double are errors naming their JSON pointer. The parser is nlohmann's; its callback keeps
// the path to the value being parsed.
class StrictParse {
public:
    struct Frame {
        bool object = false;
        std::string pointer;
        std::set<std::string> keys;
        std::string key;
        std::size_t index = 0;
    };
    struct Refusal {
        std::string pointer, problem;
    };

    // The pointer of the value the parser is reading now.
    std::string here() const {
        if (stack_.empty()) return "";
        const Frame& f = stack_.back();
        return f.pointer + "/" + (f.object ? pointer_token(f.key) : std::to_string(f.index));
    }

    bool operator()(int /*depth*/, Json::parse_event_t event, Json& parsed) {
        switch (event) {
            case Json::parse_event_t::object_start:
            case Json::parse_event_t::array_start: {
                if (static_cast<int>(stack_.size()) >= limits::kJsonDepth)
                    throw Refusal{here(), fmt::format("nested more than {} levels deep: expected at most {} levels of "
                                                      "objects and arrays",
                                                      limits::kJsonDepth, limits::kJsonDepth)};
                Frame f;
                f.object = event == Json::parse_event_t::object_start;
                f.pointer = here();
                stack_.push_back(std::move(f));
                break;
            }
            case Json::parse_event_t::key: {
                Frame& f = stack_.back();
                std::string k = parsed.get<std::string>();
                f.key = k;
                if (!f.keys.insert(std::move(k)).second)
                    throw Refusal{here(), fmt::format("duplicate key {}: expected each key once in an object",
                                                      json_brief(parsed))};
                break;
            }
            case Json::parse_event_t::object_end:
            case Json::parse_event_t::array_end:
                stack_.pop_back();
                advance();
                break;
            case Json::parse_event_t::value: advance(); break;
        }
        return true;
    }

private:
    void advance() {
        if (!stack_.empty() && !stack_.back().object) ++stack_.back().index;
    }
    std::vector<Frame> stack_;
};

std::string origin_pointer(const std::string& origin, const std::string& pointer) {
    return fmt::format("{}#{}", origin, pointer.empty() ? "/" : one_line(pointer, 200));
}

}   // namespace

Json parse_json_text(const std::string& text, const std::string& origin) {
    StrictParse strict;
    try {
        return Json::parse(text, std::ref(strict));
    } catch (const StrictParse::Refusal& r) {
        throw ConfigError(fmt::format("{}: {}", origin_pointer(origin, r.pointer), r.problem));
    } catch (const Json::parse_error& e) {
        // Locate the byte offset as line:column for the message.
        std::size_t line = 1, col = 1;
        const std::size_t upto = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
        for (std::size_t i = 0; i < upto; ++i) {
            if (text[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        std::string what = e.what();
        const auto pos = what.find("syntax error");
        if (pos != std::string::npos) what = what.substr(pos);
        throw ConfigError(fmt::format("{}:{}:{}: malformed JSON: {}", origin, line, col, one_line(what, 200)));
    } catch (const Json::out_of_range& e) {
        // 406: a number that does not fit in a double ("1e400").
        std::string what = e.what();
        std::string token = "a number";
        const auto q1 = what.find('\''), q2 = what.rfind('\'');
        if (q1 != std::string::npos && q2 > q1) token = what.substr(q1 + 1, q2 - q1 - 1);
        throw ConfigError(fmt::format("{}: {}: expected a number a double can hold (magnitude below 1.8e308)",
                                      origin_pointer(origin, strict.here()), one_line(token, 40)));
    }
}

Json parse_json_file(const std::string& path) {
    return parse_json_text(read_input_file(path, limits::kJsonFileBytes, "a readable JSON file"), path);
}

ObjectReader::ObjectReader(const Json& obj, std::string pointer, Problems& problems)
    : obj_(obj), pointer_(std::move(pointer)), problems_(problems), is_object_(obj.is_object()) {
    if (!is_object_) problems_.add(pointer_, obj, "an object");
}

bool ObjectReader::has(const std::string& key) const { return is_object_ && obj_.contains(key); }

const Json* ObjectReader::get(const std::string& key) {
    known_.insert(key);
    if (!is_object_) return nullptr;
    auto it = obj_.find(key);
    return it == obj_.end() ? nullptr : &*it;
}

std::optional<std::int64_t> ObjectReader::integer(const std::string& key, std::int64_t min_value,
                                                  std::int64_t max_value) {
    const Json* v = get(key);
    if (!v) return std::nullopt;
    // An integral value in any JSON number form (8, 8.0, 1e3); values beyond int64 are out of range.
    std::optional<std::int64_t> x;
    bool integral = true;
    if (v->is_number_unsigned()) {
        const auto u = v->get<std::uint64_t>();
        if (u <= static_cast<std::uint64_t>(INT64_MAX)) x = static_cast<std::int64_t>(u);
    } else if (v->is_number_integer()) {
        x = v->get<std::int64_t>();
    } else if (v->is_number_float()) {
        const double d = v->get<double>();
        integral = std::isfinite(d) && d == std::floor(d);
        if (integral && std::fabs(d) < 9e15) x = static_cast<std::int64_t>(d);
    } else {
        integral = false;
    }
    if (!integral) {
        problems_.add(ptr(key), *v, "an integer");
        return std::nullopt;
    }
    if (!x && v->is_number_float() && std::fabs(v->get<double>()) < 9.2e18) {   // 1e16: doubles skip integers there
        problems_.add(ptr(key), *v,
                      fmt::format("an integer in [{}, {}], written in digits past 9e15", min_value, max_value));
        return std::nullopt;
    }
    if (!x || *x < min_value || *x > max_value) {
        // Below the least value "an integer >= min" says it; above, or past 64 bits, the whole range.
        if (max_value == INT64_MAX && x && *x < min_value)
            problems_.add(ptr(key), *v, fmt::format("an integer >= {}", min_value));
        else
            problems_.add(ptr(key), *v, fmt::format("an integer in [{}, {}]", min_value, max_value));
        return std::nullopt;
    }
    return x;
}

std::int64_t ObjectReader::integer_or(const std::string& key, std::int64_t dflt, std::int64_t min_value,
                                      std::int64_t max_value) {
    return integer(key, min_value, max_value).value_or(dflt);
}

std::int64_t ObjectReader::required_integer(const std::string& key, std::int64_t min_value, std::int64_t max_value) {
    if (!has(key)) {
        known_.insert(key);
        if (is_object_) problems_.add_raw(fmt::format("{}: missing: expected an integer", ptr(key)));
        return min_value;
    }
    return integer(key, min_value, max_value).value_or(min_value);
}

std::optional<double> ObjectReader::number(const std::string& key, double min_value, bool min_inclusive,
                                           double max_value) {
    const Json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_number()) {
        problems_.add(ptr(key), *v, "a number");
        return std::nullopt;
    }
    const double x = v->get<double>();
    const bool low_ok = min_inclusive ? x >= min_value : x > min_value;
    if (!std::isfinite(x) || !low_ok || x > max_value) {
        // Whole bounds print whole ("4194304", not "4.1943e+06").
        auto text = [](double bound) {
            return bound == std::floor(bound) && std::fabs(bound) < 1e15 ? fmt::format("{:.0f}", bound)
                                                                         : fmt::format("{:g}", bound);
        };
        std::string range = fmt::format("a number {} {}", min_inclusive ? ">=" : ">", text(min_value));
        if (max_value < 1e300) range += fmt::format(" and <= {}", text(max_value));
        problems_.add(ptr(key), *v, range);
        return std::nullopt;
    }
    return x;
}

double ObjectReader::number_or(const std::string& key, double dflt, double min_value, bool min_inclusive,
                               double max_value) {
    return number(key, min_value, min_inclusive, max_value).value_or(dflt);
}

double ObjectReader::required_number(const std::string& key, double min_value, bool min_inclusive, double max_value) {
    if (!has(key)) {
        known_.insert(key);
        if (is_object_) problems_.add_raw(fmt::format("{}: missing: expected a number", ptr(key)));
        return 0.0;
    }
    return number(key, min_value, min_inclusive, max_value).value_or(0.0);
}

std::optional<bool> ObjectReader::boolean(const std::string& key) {
    const Json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) {
        problems_.add(ptr(key), *v, "true or false");
        return std::nullopt;
    }
    return v->get<bool>();
}

bool ObjectReader::boolean_or(const std::string& key, bool dflt) { return boolean(key).value_or(dflt); }

std::optional<std::string> ObjectReader::string(const std::string& key) {
    const Json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) {
        problems_.add(ptr(key), *v, "a string");
        return std::nullopt;
    }
    return v->get<std::string>();
}

std::string ObjectReader::string_or(const std::string& key, const std::string& dflt) {
    return string(key).value_or(dflt);
}

std::string ObjectReader::required_string(const std::string& key) {
    if (!has(key)) {
        known_.insert(key);
        if (is_object_) problems_.add_raw(fmt::format("{}: missing: expected a string", ptr(key)));
        return {};
    }
    return string(key).value_or("");
}

std::optional<std::string> ObjectReader::choice(const std::string& key, const std::vector<std::string>& choices) {
    const Json* v = get(key);
    if (!v) return std::nullopt;
    std::string list;
    for (const auto& c : choices) list += (list.empty() ? "" : " | ") + ("\"" + c + "\"");
    if (!v->is_string() || std::find(choices.begin(), choices.end(), v->get<std::string>()) == choices.end()) {
        problems_.add(ptr(key), *v, "one of " + list);
        return std::nullopt;
    }
    return v->get<std::string>();
}

void ObjectReader::restrict_to(std::vector<std::string> allowed, std::string schema) {
    allowed_.emplace(allowed.begin(), allowed.end());
    schema_ = std::move(schema);
}

void ObjectReader::finish(const std::vector<std::string>& also_known) {
    for (const auto& k : also_known) known_.insert(k);
    if (allowed_)
        for (const auto& k : known_)
            if (!allowed_->count(k))
                throw std::logic_error(
                    fmt::format("{}/{} is read but not in the scenario key table "
                                "(hardware_db/scenario_keys.cpp)",
                                schema_ == "/" ? "" : schema_, k));
    if (!is_object_) return;
    std::vector<std::string> known = allowed_ ? std::vector<std::string>(allowed_->begin(), allowed_->end())
                                              : std::vector<std::string>(known_.begin(), known_.end());
    for (auto it = obj_.begin(); it != obj_.end(); ++it) {
        if (known_.count(it.key())) continue;
        if (allowed_ && allowed_->count(it.key())) {
            // A documented key this reader did not read: it does not apply with the other values.
            problems_.lines.push_back(
                fmt::format("{}: {}: expected it only where it applies (docs/scenario-reference.md: {}/{})",
                            ptr(it.key()), json_brief(*it), schema_ == "/" ? "" : schema_, pointer_token(it.key())));
            continue;
        }
        const auto near = closest_names(it.key(), known, 1);
        std::string expected = "a known key";
        if (!near.empty()) expected += fmt::format(" (did you mean \"{}\"?)", near.front());
        problems_.lines.push_back(
            fmt::format("{}: unknown key {}: expected {}", ptr(it.key()), json_brief(Json(it.key())), expected));
    }
}

std::string directory_of(const std::string& file) {
    const auto dir = std::filesystem::path(file).parent_path().string();
    return dir.empty() ? "." : dir;
}

std::string resolve_path(const std::string& path, const std::string& base_dir) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) return path;
    std::string joined = (std::filesystem::path(base_dir) / path).string();
    if (std::filesystem::is_regular_file(joined, ec)) return joined;
    return path;
}

}   // namespace llmsim
