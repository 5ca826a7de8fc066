// Strict reading of JSON objects into typed values. Every key must be read (or it is reported as
// unknown), every value is type- and range-checked, and every problem names its JSON pointer, the
// value found and what was expected. Problems accumulate in a Problems list so that one run reports
// them all; the caller throws ConfigError at the end.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace llmsim {

using Json = nlohmann::json;

struct Problems {
    std::vector<std::string> lines;
    void add(const std::string& pointer, const Json& value, const std::string& expected);
    void add_raw(std::string line) { lines.push_back(std::move(line)); }
    bool empty() const { return lines.empty(); }
    [[noreturn]] void raise() const;
    void raise_if_any() const {
        if (!lines.empty()) raise();
    }
};

// A short, one-line rendering of a JSON value for messages (strings quoted, long or deep values cut;
// bounded time and size whatever the value).
std::string json_brief(const Json& v);
// An object key as one JSON-pointer token (RFC 6901: "~" -> "~0", "/" -> "~1"), cut when long.
std::string pointer_token(const std::string& key);

// Parse JSON text strictly; a syntax error becomes a ConfigError naming `origin`, line and column; a
// duplicate key, nesting deeper than limits::kJsonDepth or a number beyond a double one naming
// `origin#pointer`.
Json parse_json_text(const std::string& text, const std::string& origin);
// Read a file (a regular file of at most limits::kJsonFileBytes) and parse it strictly; a missing,
// irregular or oversized file is a ConfigError.
Json parse_json_file(const std::string& path);

// Paths inside a file (a Hugging Face config, a calibration profile) are relative to its folder:
// the folder of `file` ("." for a bare file name), and `path` resolved against it (as given when it
// exists from the working directory, else joined to `base_dir`; unchanged when neither exists).
std::string directory_of(const std::string& file);
std::string resolve_path(const std::string& path, const std::string& base_dir);

class ObjectReader {
public:
    // `pointer` is the JSON pointer of `obj` ("" for the root).
    ObjectReader(const Json& obj, std::string pointer, Problems& problems);

    bool ok() const { return is_object_; }
    bool has(const std::string& key) const;
    std::string ptr(const std::string& key) const { return pointer_ + "/" + pointer_token(key); }
    const std::string& pointer() const { return pointer_; }
    // Marks the key as known and returns it (nullptr if absent).
    const Json* get(const std::string& key);
    // Marks keys as known without reading them.
    void accept(const std::string& key) { known_.insert(key); }

    std::optional<std::int64_t> integer(const std::string& key, std::int64_t min_value = 1,
                                        std::int64_t max_value = INT64_MAX);
    std::int64_t integer_or(const std::string& key, std::int64_t dflt, std::int64_t min_value = 1,
                            std::int64_t max_value = INT64_MAX);
    std::int64_t required_integer(const std::string& key, std::int64_t min_value = 1,
                                  std::int64_t max_value = INT64_MAX);
    // Number > min_exclusive (or >= min when inclusive).
    std::optional<double> number(const std::string& key, double min_value = 0.0, bool min_inclusive = false,
                                 double max_value = 1e300);
    double number_or(const std::string& key, double dflt, double min_value = 0.0, bool min_inclusive = false,
                     double max_value = 1e300);
    double required_number(const std::string& key, double min_value = 0.0, bool min_inclusive = false,
                           double max_value = 1e300);
    std::optional<bool> boolean(const std::string& key);
    bool boolean_or(const std::string& key, bool dflt);
    std::optional<std::string> string(const std::string& key);
    std::string string_or(const std::string& key, const std::string& dflt);
    std::string required_string(const std::string& key);
    // One of `choices`; reports the choices otherwise.
    std::optional<std::string> choice(const std::string& key, const std::vector<std::string>& choices);

    // Only `allowed` keys are accepted (the scenario key table's keys of the object `schema`): any other
    // key is unknown, and a key the reader reads but `allowed` lacks is a programming error
    // (std::logic_error from finish()), so no key can be accepted but undocumented.
    void restrict_to(std::vector<std::string> allowed, std::string schema);

    // Reports every key that was never read as unknown (with the closest known key).
    void finish(const std::vector<std::string>& also_known = {});
    Problems& problems() { return problems_; }

private:
    const Json& obj_;
    std::string pointer_;
    Problems& problems_;
    bool is_object_;
    std::set<std::string> known_;
    std::optional<std::set<std::string>> allowed_;
    std::string schema_;
};

}   // namespace llmsim
