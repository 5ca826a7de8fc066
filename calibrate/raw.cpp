#include "calibrate/raw.hpp"

#include <cmath>

#include <fmt/format.h>

#include "hardware_db/errors.hpp"
#include "hardware_db/input_file.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/limits.hpp"

namespace llmsim::calibrate {

namespace {

using nlohmann::json;

// Typed, range-checked access that records every problem with its JSON pointer:
// "FILE#/POINTER: VALUE: expected WHAT". Unknown keys are tolerated (newer probes measure more).
class Reader {
public:
    explicit Reader(std::string origin) : origin_(std::move(origin)) {}

    std::string str(const json& o, const std::string& key, const std::string& ptr, bool required = false) {
        const json* v = find(o, key);
        if (!v) {
            if (required) missing(ptr + "/" + key, "a string");
            return {};
        }
        if (!v->is_string()) {
            bad(ptr + "/" + key, *v, "a string");
            return {};
        }
        return v->get<std::string>().substr(0, 4096);
    }
    double num(const json& o, const std::string& key, const std::string& ptr, bool required = false, double dflt = 0,
               double lo = 0, double hi = 1e15, bool lo_inclusive = true) {
        const json* v = find(o, key);
        if (!v) {
            if (required) missing(ptr + "/" + key, "a number");
            return dflt;
        }
        const double x = v->is_number() ? v->get<double>() : 0;
        if (!v->is_number() || !std::isfinite(x) || (lo_inclusive ? x < lo : x <= lo) || x > hi) {
            bad(ptr + "/" + key, *v, fmt::format("a number in {}{:g}, {:g}]", lo_inclusive ? "[" : "(", lo, hi));
            return dflt;
        }
        return x;
    }
    std::int64_t integer(const json& o, const std::string& key, const std::string& ptr, bool required = false,
                         std::int64_t dflt = 0, std::int64_t lo = 0, std::int64_t hi = std::int64_t{1} << 62) {
        const json* v = find(o, key);
        if (!v) {
            if (required) missing(ptr + "/" + key, "an integer");
            return dflt;
        }
        if (!v->is_number_integer() || (v->is_number_unsigned() && v->get<std::uint64_t>() > INT64_MAX) ||
            v->get<std::int64_t>() < lo || v->get<std::int64_t>() > hi) {
            bad(ptr + "/" + key, *v, fmt::format("an integer in [{}, {}]", lo, hi));
            return dflt;
        }
        return v->get<std::int64_t>();
    }
    const json* array(const json& o, const std::string& key, const std::string& ptr) {
        const json* v = find(o, key);
        if (!v) return nullptr;
        if (!v->is_array()) {
            bad(ptr + "/" + key, *v, "an array");
            return nullptr;
        }
        return v;
    }
    bool object(const json& v, const std::string& ptr) {
        if (v.is_object()) return true;
        bad(ptr, v, "an object");
        return false;
    }
    void bad(const std::string& ptr, const json& v, const std::string& expected) {
        problems_.push_back(fmt::format("{}#{}: {}: expected {}", origin_, ptr, json_brief(v), expected));
    }
    void missing(const std::string& ptr, const std::string& expected) {
        problems_.push_back(fmt::format("{}#{}: missing: expected {}", origin_, ptr, expected));
    }
    void raise_if_any() const {
        if (!problems_.empty()) throw ConfigError(problems_);
    }

private:
    static const json* find(const json& o, const std::string& key) {
        if (!o.is_object()) return nullptr;
        auto it = o.find(key);
        return it == o.end() || it->is_null() ? nullptr : &*it;
    }
    std::string origin_;
    std::vector<std::string> problems_;
};

}   // namespace

RawMeasurements parse_raw(const json& j, const std::string& origin) {
    Reader rd(origin);
    RawMeasurements r;
    r.source_file = origin;
    if (!j.is_object() || !j.contains("llmsim_probe"))
        throw ConfigError(
            fmt::format("{}: not an llmsim-probe raw file (no \"llmsim_probe\" key); "
                        "nccl-tests logs go after --nccl-tests",
                        origin));
    r.format_version = static_cast<int>(rd.integer(j, "llmsim_probe", "", true, 1, 1, 1));
    r.probe_version = rd.str(j, "probe_version", "");
    r.command = rd.str(j, "command", "");
    r.host = rd.str(j, "host", "");
    r.date = rd.str(j, "date", "");
    if (j.contains("versions") && rd.object(j["versions"], "/versions")) {
        const auto& v = j["versions"];
        r.cuda_runtime = rd.str(v, "cuda_runtime", "/versions");
        r.cuda_driver = rd.str(v, "cuda_driver", "/versions");
        r.driver = rd.str(v, "driver", "/versions");
        r.nccl_version = rd.str(v, "nccl", "/versions");
        r.cublaslt = rd.str(v, "cublasLt", "/versions");
    }
    if (const json* a = rd.array(j, "gpus", "")) {
        for (std::size_t i = 0; i < a->size(); ++i) {
            const std::string p = fmt::format("/gpus/{}", i);
            if (!rd.object((*a)[i], p)) continue;
            const auto& g = (*a)[i];
            RawGpu gpu;
            gpu.index =
                static_cast<int>(rd.integer(g, "index", p, false, static_cast<std::int64_t>(i), 0, limits::kGpus));
            gpu.name = rd.str(g, "name", p, true);
            gpu.sm_count = static_cast<int>(rd.integer(g, "sm_count", p, false, 0, 0, limits::kSmCount));
            gpu.compute_capability = rd.str(g, "compute_capability", p);
            gpu.memory_bytes = rd.num(g, "memory_bytes", p, false, 0, 0, limits::kMaxBytes);
            gpu.pci_bus_id = rd.str(g, "pci_bus_id", p);
            r.gpus.push_back(gpu);
        }
    }
    if (j.contains("world") && rd.object(j["world"], "/world")) {
        const auto& w = j["world"];
        r.mode = rd.str(w, "mode", "/world");
        r.world_size = static_cast<int>(rd.integer(w, "world_size", "/world", false, 1, 1, limits::kGpus));
        r.nodes = static_cast<int>(rd.integer(w, "nodes", "/world", false, 1, 1, limits::kGpus));
        if (const json* h = rd.array(w, "hosts", "/world"))
            for (const auto& x : *h)
                if (x.is_string()) r.hosts.push_back(x.get<std::string>());
    }
    if (const json* n = rd.array(j, "notes", ""))
        for (const auto& x : *n)
            if (x.is_string()) r.notes.push_back(x.get<std::string>());
    auto bandwidths = [&](const std::string& key, const std::string& kind_key, const std::string& bytes_key,
                          std::vector<BandwidthPoint>& out) {
        if (const json* a = rd.array(j, key, "")) {
            for (std::size_t i = 0; i < a->size(); ++i) {
                const std::string p = fmt::format("/{}/{}", key, i);
                if (!rd.object((*a)[i], p)) continue;
                const auto& e = (*a)[i];
                BandwidthPoint b;
                b.kernel = rd.str(e, kind_key, p, true);
                b.bytes = rd.num(e, bytes_key, p, true, 0, 0, limits::kMaxBytes, false);
                b.GBps = rd.num(e, "GBps", p, true, 0, 0, limits::kMaxRate, false);
                out.push_back(b);
            }
        }
    };
    bandwidths("hbm", "kernel", "bytes_per_array", r.hbm);
    bandwidths("pcie", "direction", "bytes", r.pcie);
    if (j.contains("launch") && !j["launch"].is_null() && rd.object(j["launch"], "/launch")) {
        const auto& l = j["launch"];
        if (const json* s = rd.array(l, "samples_us", "/launch")) {
            for (std::size_t i = 0; i < s->size(); ++i) {
                const auto& x = (*s)[i];
                if (x.is_number() && x.get<double>() >= 0 && x.get<double>() <= limits::kMaxLatencyUs)
                    r.launch_samples_us.push_back(x.get<double>());
                else
                    rd.bad(fmt::format("/launch/samples_us/{}", i), x,
                           fmt::format("a number in [0, {:g}] (us)", limits::kMaxLatencyUs));
            }
        }
        if (l.contains("median_us") && !l["median_us"].is_null())
            r.launch_median_us = rd.num(l, "median_us", "/launch", false, 0, 0, limits::kMaxLatencyUs);
    }
    auto gemms = [&](const std::string& key, std::vector<RawGemm>& out) {
        if (const json* a = rd.array(j, key, "")) {
            for (std::size_t i = 0; i < a->size(); ++i) {
                const std::string p = fmt::format("/{}/{}", key, i);
                if (!rd.object((*a)[i], p)) continue;
                const auto& e = (*a)[i];
                RawGemm g;
                g.point.precision = rd.str(e, "precision", p, true);
                g.point.m = rd.integer(e, "m", p, true, 1, 1, limits::kSeqLen);
                g.point.n = rd.integer(e, "n", p, true, 1, 1, limits::kSeqLen);
                g.point.k = rd.integer(e, "k", p, true, 1, 1, limits::kSeqLen);
                g.point.batch = rd.integer(e, "batch", p, false, 1, 1, limits::kBatch);
                g.point.time_us = rd.num(e, "time_us", p, true, 1, 0, 1e12, false);
                g.point.label = rd.str(e, "label", p);
                g.tflops = rd.num(e, "tflops", p, false, 0, 0, limits::kMaxRate);
                out.push_back(g);
            }
        }
    };
    gemms("peak", r.peak);
    gemms("gemm", r.gemm);
    if (const json* a = rd.array(j, "nccl", "")) {
        for (std::size_t i = 0; i < a->size(); ++i) {
            const std::string p = fmt::format("/nccl/{}", i);
            if (!rd.object((*a)[i], p)) continue;
            const auto& e = (*a)[i];
            RawNcclSweep s;
            s.collective = rd.str(e, "collective", p, true);
            s.ranks = static_cast<int>(rd.integer(e, "ranks", p, true, 1, 1, limits::kGpus));
            s.nodes = static_cast<int>(rd.integer(e, "nodes", p, false, 1, 1, limits::kGpus));
            s.gpus_per_node =
                static_cast<int>(rd.integer(e, "gpus_per_node", p, false, s.ranks / s.nodes, 0, limits::kGpusPerNode));
            s.dtype = rd.str(e, "dtype", p);
            if (const json* rows = rd.array(e, "rows", p)) {
                for (std::size_t k = 0; k < rows->size(); ++k) {
                    const std::string q = fmt::format("{}/rows/{}", p, k);
                    if (!rd.object((*rows)[k], q)) continue;
                    const auto& x = (*rows)[k];
                    RawNcclRow row;
                    row.size_bytes = rd.integer(x, "size_bytes", q, true);
                    row.count = rd.integer(x, "count", q);
                    row.time_us = rd.num(x, "time_us", q, true, 1, 0, 1e12, false);
                    row.algbw_GBps = rd.num(x, "algbw_GBps", q, false, 0, 0, limits::kMaxRate);
                    row.busbw_GBps = rd.num(x, "busbw_GBps", q, false, 0, 0, limits::kMaxRate);
                    s.rows.push_back(row);
                }
            }
            r.nccl.push_back(std::move(s));
        }
    }
    rd.raise_if_any();
    return r;
}

RawMeasurements read_raw(const std::string& path) {
    const std::string text = read_input_file(path, limits::kJsonFileBytes, "a raw measurement file from llmsim-probe");
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || text[first] != '{')
        throw ConfigError(fmt::format("{}: not a raw measurement file from llmsim-probe (JSON object expected){}", path,
                                      first != std::string::npos && text[first] == '#'
                                          ? "; it looks like an nccl-tests log: pass it with --nccl-tests"
                                          : ""));
    return parse_raw(parse_json_text(text, path), path);
}

}   // namespace llmsim::calibrate
