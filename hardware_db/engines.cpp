#include "hardware_db/engines.hpp"

#include <array>

#include <fmt/format.h>

namespace llmsim {

namespace {
constexpr std::array kEngines{EngineKind::tensorrt_llm, EngineKind::vllm, EngineKind::sglang};
}   // namespace

const std::vector<std::string>& engine_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        v.reserve(kEngines.size());
        for (EngineKind e : kEngines) v.emplace_back(to_string(e));
        return v;
    }();
    return names;
}

std::optional<EngineKind> engine_from_string(std::string_view name) {
    for (EngineKind e : kEngines)
        if (name == to_string(e)) return e;
    return std::nullopt;
}

std::optional<EngineVersion> parse_engine_version(std::string_view text) {
    std::array<int, 3> parts{0, 0, 0};
    std::size_t part = 0, i = 0;
    while (true) {
        const std::size_t start = i;
        int value = 0;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
            if (i - start >= 4) return std::nullopt;   // at most 9999
            value = value * 10 + (text[i] - '0');
            ++i;
        }
        if (i == start) return std::nullopt;                            // empty part, sign, letter
        if (i - start > 1 && text[start] == '0') return std::nullopt;   // leading zero
        parts[part++] = value;
        if (i == text.size()) break;
        if (text[i] != '.' || part == parts.size()) return std::nullopt;
        ++i;
    }
    return EngineVersion{parts[0], parts[1], parts[2]};
}

std::string to_string(const EngineVersion& v) { return fmt::format("{}.{}.{}", v.major, v.minor, v.patch); }

}   // namespace llmsim
