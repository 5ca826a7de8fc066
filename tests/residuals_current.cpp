// The residuals compiled into the binary (hardware_db/data/residuals/serving.json, training.json) against
// the ones this build's `llmsim validate validation/FILE.json --residuals FILE` just wrote (the
// validate_serving and validate_training tests): every case and quantity present in both, errors within
// kTolerance (a capacity found by bisection moves by its 0.5% tolerance between compilers). Stale:
// regenerate with that command. Usage: residuals_current COMMITTED FRESH VALIDATION_FILE.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace {
constexpr double kTolerance = 0.01;

std::map<std::string, double> read(const char* path) {
    std::ifstream f(path);
    if (!f) throw std::runtime_error(std::string(path) + ": cannot be read");
    const auto j = nlohmann::json::parse(f);
    std::map<std::string, double> out;
    for (const auto& r : j.at("residuals"))
        out[r.at("id").get<std::string>() + " " + r.at("quantity").get<std::string>()] = r.at("error").get<double>();
    return out;
}
}   // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: residuals_current COMMITTED FRESH VALIDATION_FILE\n");
        return 2;
    }
    try {
        const auto committed = read(argv[1]), fresh = read(argv[2]);
        int bad = 0;
        for (const auto& [key, e] : fresh) {
            const auto it = committed.find(key);
            if (it == committed.end()) {
                std::printf("missing from %s: %s\n", argv[1], key.c_str());
                ++bad;
            } else if (!(std::fabs(it->second - e) <= kTolerance)) {
                std::printf("%s: committed %+.4f, this build %+.4f\n", key.c_str(), it->second, e);
                ++bad;
            }
        }
        for (const auto& [key, e] : committed)
            if (!fresh.count(key)) {
                std::printf("no longer predicted: %s\n", key.c_str());
                ++bad;
            }
        if (bad) {
            std::printf("%d residuals stale: llmsim validate %s --residuals %s\n", bad, argv[3], argv[1]);
            return 1;
        }
        std::printf("%zu residuals current\n", fresh.size());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
