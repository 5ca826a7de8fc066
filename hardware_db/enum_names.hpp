// The names of a closed set of enum values and the reverse look-up, from the one to_string of the enum
// (found by argument-dependent lookup): every registry of names (schedulers, routers, engines, frameworks)
// lists its values once, in an array, and derives both from it.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmsim {

template <typename E, std::size_t N>
[[nodiscard]] std::vector<std::string> enum_names(const std::array<E, N>& all) {
    std::vector<std::string> v;
    v.reserve(N);
    for (E e : all) v.emplace_back(to_string(e));
    return v;
}

template <typename E, std::size_t N>
[[nodiscard]] std::optional<E> enum_from_string(const std::array<E, N>& all, std::string_view name) {
    for (E e : all)
        if (name == to_string(e)) return e;
    return std::nullopt;
}

}   // namespace llmsim
