// The hardware database and model zoo: JSON files under hardware_db/data/ (compiled into the
// binary), resolved into plain structs with presets, overrides, calibration profiles and provenance.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hardware_db/json_reader.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim {

class Database {
public:
    // The database compiled into the binary (hardware_db/data/).
    static const Database& builtin();
    // A database from explicit JSON documents (tests); keys are "accelerators/x.json" etc.
    explicit Database(const std::map<std::string, std::string>& files);

    std::vector<std::string> accelerator_names() const;
    std::vector<std::string> system_names() const;
    std::vector<std::string> model_names() const;
    // Calibration profiles built into the binary (hardware_db/data/profiles/NAME.json, fitted from the
    // measurements in hardware_db/profiles/NAME/); a scenario's `"profile": NAME` names one.
    std::vector<std::string> profile_names() const;
    const Json* builtin_profile(const std::string& name) const;

    // Named entries; an unknown name throws ConfigError suggesting the closest names.
    AcceleratorSpec accelerator(const std::string& name) const;
    SystemSpec system(const std::string& name) const;
    ModelSpec model(const std::string& name) const;

    // The raw JSON of an entry (for `hw show --json`, echoing).
    const Json& accelerator_json(const std::string& name) const;
    const Json& system_json(const std::string& name) const;
    const Json& model_json(const std::string& name) const;

    // Scenario values: a name, or an object (`{"preset": NAME, key: override...}` or a full
    // description); models may also be a Hugging Face config.json path or object. Problems are
    // appended (with JSON pointers under `pointer`); `base_dir` resolves relative file paths.
    SystemSpec resolve_system(const Json& value, const std::string& pointer, Problems& problems,
                              const std::string& base_dir = ".") const;
    AcceleratorSpec resolve_accelerator(const Json& value, const std::string& pointer, Problems& problems) const;
    ModelSpec resolve_model(const Json& value, const std::string& pointer, Problems& problems,
                            const std::string& base_dir = ".") const;

private:
    // Applies the calibration profile file `profile_path` to `s` (problems use the file's pointers).
    // The scenario's own keys (`scenario`, read at `pointer`) are applied again on top: explicit
    // overrides win over the profile.
    void read_profile(SystemSpec& s, const std::string& profile_path, const std::string& base_dir, Problems& problems,
                      const Json& scenario, const std::string& pointer) const;
    std::map<std::string, Json> accelerators_, systems_, models_;
    // Profiles are parsed when first asked for (they are two fifths of the embedded data, and most
    // commands name none): the text, then its JSON.
    struct LazyProfile {
        std::string text, origin;
        std::once_flag parsed;
        Json json;
    };
    std::map<std::string, std::unique_ptr<LazyProfile>> profiles_;
};

// Strict parsers of one JSON description into a struct (unknown keys are problems).
AcceleratorSpec parse_accelerator(const Json& j, const std::string& pointer, Problems& problems);
ModelSpec parse_model(const Json& j, const std::string& pointer, Problems& problems);

// Checks that a model's shape is self-consistent (heads divisible by kv_heads, ...).
void check_model(const ModelSpec& m, const std::string& pointer, Problems& problems);

// The JSON form of resolved structs (echoed next to every result).
Json to_json(const ModelSpec& m);
Json to_json(const SystemSpec& s, bool with_provenance = false);
Json to_json(const AcceleratorSpec& a, bool with_provenance = false);

}   // namespace llmsim
