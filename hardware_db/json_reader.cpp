#include "hardware_db/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "hardware_db/errors.hpp"

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

std::string json_brief(const Json& v) {
    std::string s = v.dump();
    if (s.size() > 60) s = s.substr(0, 57) + "...";
    return s;
}

void Problems::add(const std::string& pointer, const Json& value, const std::string& expected) {
    lines.push_back(fmt::format("{}: {}: expected {}", pointer.empty() ? "/" : pointer, json_brief(value), expected));
}

void Problems::raise() const { throw ConfigError(lines); }

Json parse_json_text(const std::string& text, const std::string& origin) {
    try {
        return Json::parse(text);
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
        throw ConfigError(fmt::format("{}:{}:{}: malformed JSON: {}", origin, line, col, what));
    }
}

Json parse_json_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw ConfigError(fmt::format("{}: cannot open file: expected a readable JSON file", path));
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_json_text(ss.str(), path);
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
    bool integral = v->is_number_integer() || v->is_number_unsigned();
    if (v->is_number_float()) {
        const double d = v->get<double>();
        integral = std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15;
    }
    if (!integral) {
        problems_.add(ptr(key), *v, "an integer");
        return std::nullopt;
    }
    const std::int64_t x = v->is_number_float() ? static_cast<std::int64_t>(v->get<double>()) : v->get<std::int64_t>();
    if (x < min_value || x > max_value) {
        if (max_value == INT64_MAX)
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
        std::string range = fmt::format("a number {} {}", min_inclusive ? ">=" : ">", min_value);
        if (max_value < 1e300) range += fmt::format(" and <= {}", max_value);
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

void ObjectReader::finish(const std::vector<std::string>& also_known) {
    if (!is_object_) return;
    for (const auto& k : also_known) known_.insert(k);
    std::vector<std::string> known(known_.begin(), known_.end());
    for (auto it = obj_.begin(); it != obj_.end(); ++it) {
        if (known_.count(it.key())) continue;
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
