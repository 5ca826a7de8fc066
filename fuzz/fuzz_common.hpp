// Shared by the libFuzzer harnesses (docs/reliability.md, "Fuzzing"). Each harness defines
// LLVMFuzzerTestOneInput; with clang and LLMSIM_FUZZ=ON it links libFuzzer, otherwise it links
// fuzz/replay_main.cpp, which runs it over corpus files (the regression tests in ctest).
//
// The contract every harness checks: a reader either returns a value or throws ConfigError. Any
// other exception, a crash, a sanitizer report, a hang or unbounded memory is a defect;
// FUZZ_CHECK turns a violated property into a crash the fuzzer records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#define FUZZ_CHECK(cond)                                                                       \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            std::fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #cond); \
            __builtin_trap();                                                                  \
        }                                                                                      \
    } while (0)

namespace llmsim::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
    return std::string(reinterpret_cast<const char*>(data), size);
}

}   // namespace llmsim::fuzz
