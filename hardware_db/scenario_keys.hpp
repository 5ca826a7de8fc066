// The scenario key table: every key a scenario may hold, in ONE place. The strict readers
// (hardware_db/scenario.cpp, hardware_db/database.cpp, report/search_request.cpp) take from it the keys
// each object accepts and the bounds and choices they enforce, and `llmsim scenario-reference`
// renders it as docs/scenario-reference.md, so the reference cannot drift from what is accepted.
// tests/test_scenario_keys.cpp walks it: every key is accepted with its example value, every object
// rejects an unknown sibling naming its JSON pointer, and literal defaults equal the echoed ones.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hardware_db/json_reader.hpp"

namespace llmsim {

enum class KeyType {
    integer,   // an integer in [imin, imax]
    number,    // a number in [min, max] ((min, max] when !min_inclusive)
    boolean,
    string,
    choice,         // one of `choices`
    choice_list,    // a non-empty array of `choices`
    integer_list,   // an array of integers in [imin, imax]
    number_list,    // an array of numbers in [min, max]
    object,         // an object whose keys are listed under its pointer
    text_map,       // an object of key -> source text
    object_map,     // an object of name -> object whose keys are listed under <pointer>/NAME
    model,          // a model-zoo name, a model / config.json path or a model object (/model)
    system,         // a system name or object (/system)
    accelerator,    // an accelerator name or object (/system/gpu)
    length,         // an integer in [imin, imax] tokens, or a distribution object
    batch_range,    // an integer, "a:b" or [a, b]: the powers of two in a..b
    rate,           // a number in [min, max], or "max" (the largest rate meeting the SLO)
};

// The scenario kinds a key applies to (bit set).
enum ScenarioKind : unsigned {
    kTrainingKind = 1,    // a scenario with "training" (or neither "training" nor "inference")
    kInferenceKind = 2,   // "inference" with static batching
    kServingKind = 4,     // "inference" with "batching": "continuous"
    kSearchKind = 8,      // read by `llmsim search`
    kAllKinds = 15,
};

struct ScenarioKey {
    std::string object;   // JSON pointer of the enclosing object ("" at the top level)
    std::string key;
    KeyType type = KeyType::string;
    std::int64_t imin = 0, imax = 0;   // integer, integer_list, length
    double min = 0, max = 0;           // number
    bool min_inclusive = true;
    double zero_or_min = 0;             // number: when > 0, the value is 0 or in [zero_or_min, max] (0 means "off")
    std::vector<std::string> choices;   // choice, choice_list
    std::string unit;                   // "tokens", "bytes", "s", "GB/s", ... ("" when none)
    std::string default_json;           // a literal default (JSON text), echoed as such in outputs
    std::string default_text;           // the default in words when not a literal ("" with default_json)
    bool required = false;
    unsigned kinds = kAllKinds;
    bool contract = true;   // named in the project's scenario contract (false: an llmsim extension)
    std::string example;    // JSON text of a value the reader accepts
    std::string meaning;    // one line

    std::string pointer() const { return object + "/" + key; }
};

// Every key, grouped by object in reading order.
const std::vector<ScenarioKey>& scenario_keys();
// The key at `object`/`key`; throws std::logic_error when the table has none (a reader asking for
// an undocumented key is a programming error).
const ScenarioKey& scenario_key(std::string_view object, std::string_view key);
// The keys the object at `object` accepts.
std::vector<std::string> scenario_object_keys(std::string_view object);
// Objects that have keys, in table order.
std::vector<std::string> scenario_objects();

// One-line renderings used by the reference and by messages.
std::string key_type_text(const ScenarioKey& k);
std::string key_accepted_text(const ScenarioKey& k);   // range or choices ("" when none)
std::string key_default_text(const ScenarioKey& k);
std::string key_kinds_text(unsigned kinds);

// docs/scenario-reference.md, and the same table as JSON.
std::string scenario_reference_markdown();
Json scenario_reference_json();

// An ObjectReader for the object at `schema` (a table pointer such as "/parallel"; the reader's own
// pointer may differ: a model file, a critic model): only the table's keys are accepted, and the
// *_key readers take bounds and choices from the table.
class KeyReader : public ObjectReader {
public:
    KeyReader(const Json& obj, std::string pointer, Problems& problems, std::string schema);

    const ScenarioKey& spec(const std::string& key) const { return scenario_key(schema_, key); }
    std::optional<std::int64_t> int_key(const std::string& key);
    std::int64_t int_key_or(const std::string& key, std::int64_t dflt) { return int_key(key).value_or(dflt); }
    std::int64_t required_int_key(const std::string& key);
    std::optional<double> num_key(const std::string& key);
    double num_key_or(const std::string& key, double dflt) { return num_key(key).value_or(dflt); }
    double required_num_key(const std::string& key);
    std::optional<std::string> choice_key(const std::string& key);

private:
    std::string schema_;
};

}   // namespace llmsim
