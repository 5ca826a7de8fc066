#include "calibrate/raw.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "hardware_db/errors.hpp"

namespace llmsim::calibrate {

namespace {

using nlohmann::json;

// Typed access that records every problem with its JSON pointer.
class Reader {
public:
    explicit Reader(std::string origin) : origin_(std::move(origin)) {}

    std::string str(const json& o, const std::string& key, const std::string& ptr, bool required = false) {
        if (!o.contains(key) || o[key].is_null()) {
            if (required) missing(ptr + "/" + key, "a string");
            return {};
        }
        if (!o[key].is_string()) {
            bad(ptr + "/" + key, o[key], "a string");
            return {};
        }
        return o[key].get<std::string>();
    }
    double num(const json& o, const std::string& key, const std::string& ptr, bool required = false, double dflt = 0) {
        if (!o.contains(key) || o[key].is_null()) {
            if (required) missing(ptr + "/" + key, "a number");
            return dflt;
        }
        if (!o[key].is_number()) {
            bad(ptr + "/" + key, o[key], "a number");
            return dflt;
        }
        return o[key].get<double>();
    }
    std::int64_t integer(const json& o, const std::string& key, const std::string& ptr, bool required = false,
                         std::int64_t dflt = 0) {
        if (!o.contains(key) || o[key].is_null()) {
            if (required) missing(ptr + "/" + key, "an integer");
            return dflt;
        }
        if (!o[key].is_number_integer()) {
            bad(ptr + "/" + key, o[key], "an integer");
            return dflt;
        }
        return o[key].get<std::int64_t>();
    }
    const json* array(const json& o, const std::string& key, const std::string& ptr) {
        if (!o.contains(key) || o[key].is_null()) return nullptr;
        if (!o[key].is_array()) {
            bad(ptr + "/" + key, o[key], "an array");
            return nullptr;
        }
        return &o[key];
    }
    bool object(const json& v, const std::string& ptr) {
        if (v.is_object()) return true;
        bad(ptr, v, "an object");
        return false;
    }
    void bad(const std::string& ptr, const json& v, const std::string& expected) {
        std::string s = v.dump();
        if (s.size() > 40) s = s.substr(0, 37) + "...";
        problems_.push_back(fmt::format("{}#{}: {} is not {}", origin_, ptr, s, expected));
    }
    void missing(const std::string& ptr, const std::string& expected) {
        problems_.push_back(fmt::format("{}#{}: missing: expected {}", origin_, ptr, expected));
    }
    void raise_if_any() const {
        if (!problems_.empty()) throw ConfigError(problems_);
    }

private:
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
    r.format_version = static_cast<int>(rd.integer(j, "llmsim_probe", "", true, 1));
    if (r.format_version != 1)
        throw ConfigError(fmt::format("{}#/llmsim_probe: {} is not a supported raw format version (expected 1)", origin,
                                      r.format_version));
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
            gpu.index = static_cast<int>(rd.integer(g, "index", p, false, static_cast<std::int64_t>(i)));
            gpu.name = rd.str(g, "name", p, true);
            gpu.sm_count = static_cast<int>(rd.integer(g, "sm_count", p));
            gpu.compute_capability = rd.str(g, "compute_capability", p);
            gpu.memory_bytes = rd.num(g, "memory_bytes", p);
            gpu.pci_bus_id = rd.str(g, "pci_bus_id", p);
            r.gpus.push_back(gpu);
        }
    }
    if (j.contains("world") && rd.object(j["world"], "/world")) {
        const auto& w = j["world"];
        r.mode = rd.str(w, "mode", "/world");
        r.world_size = static_cast<int>(rd.integer(w, "world_size", "/world", false, 1));
        r.nodes = static_cast<int>(rd.integer(w, "nodes", "/world", false, 1));
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
                b.bytes = rd.num(e, bytes_key, p, true);
                b.GBps = rd.num(e, "GBps", p, true);
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
                if ((*s)[i].is_number())
                    r.launch_samples_us.push_back((*s)[i].get<double>());
                else
                    rd.bad(fmt::format("/launch/samples_us/{}", i), (*s)[i], "a number");
            }
        }
        if (l.contains("median_us")) r.launch_median_us = rd.num(l, "median_us", "/launch");
    }
    auto gemms = [&](const std::string& key, std::vector<RawGemm>& out) {
        if (const json* a = rd.array(j, key, "")) {
            for (std::size_t i = 0; i < a->size(); ++i) {
                const std::string p = fmt::format("/{}/{}", key, i);
                if (!rd.object((*a)[i], p)) continue;
                const auto& e = (*a)[i];
                RawGemm g;
                g.point.precision = rd.str(e, "precision", p, true);
                g.point.m = rd.integer(e, "m", p, true);
                g.point.n = rd.integer(e, "n", p, true);
                g.point.k = rd.integer(e, "k", p, true);
                g.point.batch = rd.integer(e, "batch", p, false, 1);
                g.point.time_us = rd.num(e, "time_us", p, true);
                g.point.label = rd.str(e, "label", p);
                g.tflops = rd.num(e, "tflops", p);
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
            s.ranks = static_cast<int>(rd.integer(e, "ranks", p, true));
            s.nodes = static_cast<int>(rd.integer(e, "nodes", p, false, 1));
            s.gpus_per_node =
                static_cast<int>(rd.integer(e, "gpus_per_node", p, false, s.nodes > 0 ? s.ranks / s.nodes : 0));
            s.dtype = rd.str(e, "dtype", p);
            if (const json* rows = rd.array(e, "rows", p)) {
                for (std::size_t k = 0; k < rows->size(); ++k) {
                    const std::string q = fmt::format("{}/rows/{}", p, k);
                    if (!rd.object((*rows)[k], q)) continue;
                    const auto& x = (*rows)[k];
                    RawNcclRow row;
                    row.size_bytes = rd.integer(x, "size_bytes", q, true);
                    row.count = rd.integer(x, "count", q);
                    row.time_us = rd.num(x, "time_us", q, true);
                    row.algbw_GBps = rd.num(x, "algbw_GBps", q);
                    row.busbw_GBps = rd.num(x, "busbw_GBps", q);
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
    std::ifstream f(path, std::ios::binary);
    if (!f) throw ConfigError(fmt::format("{}: cannot open raw measurement file", path));
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string text = ss.str();
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || text[first] != '{')
        throw ConfigError(fmt::format("{}: not a raw measurement file from llmsim-probe (JSON object expected){}", path,
                                      first != std::string::npos && text[first] == '#'
                                          ? "; it looks like an nccl-tests log: pass it with --nccl-tests"
                                          : ""));
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        throw ConfigError(fmt::format("{}: not valid JSON: {}", path, e.what()));
    }
    return parse_raw(j, path);
}

}   // namespace llmsim::calibrate
