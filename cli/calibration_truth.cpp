#include "cli/calibration_truth.hpp"

#include <cmath>

#include <fmt/format.h>

#include "hardware_db/errors.hpp"
#include "hardware_db/limits.hpp"

namespace llmsim::cli {

namespace {

// A GEMM dimension of a measured shape: at most 2^24 (tokens, or a width; limits.hpp bounds both).
constexpr double kShape = static_cast<double>(limits::kSeqLen);

struct Reader {
    const std::string& file;
    const Json& at(const Json& j, const std::string& ptr, const char* key) const {
        if (!j.is_object() || !j.contains(key))
            throw ConfigError(fmt::format("{}#{}/{}: missing; expected layer_truth.py output", file, ptr, key));
        return j.at(key);
    }
    double positive(const Json& j, const std::string& ptr, const char* key, double max = 1e12) const {
        const Json& v = at(j, ptr, key);
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0 || v.get<double>() > max)
            throw ConfigError(
                fmt::format("{}#{}/{}: {}: expected a positive number up to {:g}", file, ptr, key, json_brief(v), max));
        return v.get<double>();
    }
    int count(const Json& j, const std::string& ptr, const char* key, double max = 1e7) const {
        const double v = positive(j, ptr, key, max);
        if (v != std::floor(v))
            throw ConfigError(fmt::format("{}#{}/{}: {:g}: expected a whole number", file, ptr, key, v));
        return static_cast<int>(v);
    }
    std::string text(const Json& j, const std::string& ptr, const char* key) const {
        const Json& v = at(j, ptr, key);
        if (!v.is_string())
            throw ConfigError(fmt::format("{}#{}/{}: {}: expected a string", file, ptr, key, json_brief(v)));
        return v.get<std::string>();
    }
    const Json* list(const Json& j, const char* key) const {   // optional section
        if (!j.contains(key)) return nullptr;
        if (!j.at(key).is_array())
            throw ConfigError(fmt::format("{}#/{}: {}: expected an array", file, key, json_brief(j.at(key))));
        return &j.at(key);
    }
};

}   // namespace

app::LayerTruth read_layer_truth(const Json& j, const std::string& file) {
    const Reader rd{file};
    if (!j.is_object() || !j.contains("llmsim_layer_truth"))
        throw ConfigError(fmt::format(
            "{}: expected the JSON that calibrate/probe/layer_truth.py writes (key llmsim_layer_truth)", file));
    app::LayerTruth t;
    t.file = file;
    t.gpu = rd.text(j, "", "gpu");
    t.date = rd.text(j, "", "date");
    if (const Json* g = rd.list(j, "gemms"))
        for (std::size_t i = 0; i < g->size(); ++i) {
            const Json& e = (*g)[i];
            const std::string p = fmt::format("/gemms/{}", i);
            t.gemms.push_back({rd.text(e, p, "model"), rd.text(e, p, "op"), rd.text(e, p, "pass"),
                               static_cast<double>(rd.count(e, p, "m", kShape)),
                               static_cast<double>(rd.count(e, p, "n", kShape)),
                               static_cast<double>(rd.count(e, p, "k", kShape)), rd.positive(e, p, "ms") * 1e-3, p});
        }
    if (const Json* l = rd.list(j, "layers"))
        for (std::size_t i = 0; i < l->size(); ++i) {
            const Json& e = (*l)[i];
            if (e.is_object() && e.contains("error")) continue;   // a variant that failed on the GPU
            const std::string p = fmt::format("/layers/{}", i);
            app::LayerTruth::Layer x{rd.text(e, p, "model"),
                                     rd.text(e, p, "mode"),
                                     rd.count(e, p, "seq_len", static_cast<double>(limits::kSeqLen)),
                                     rd.count(e, p, "micro_batch", static_cast<double>(limits::kBatch)),
                                     rd.positive(e, p, "fwd_ms") * 1e-3,
                                     rd.positive(e, p, "fwd_bwd_ms") * 1e-3,
                                     p};
            // seq_len · micro_batch tokens in one layer call: bounded like a sequence (was an int overflow).
            if (static_cast<double>(x.seq_len) * x.micro_batch > static_cast<double>(limits::kSeqLen))
                throw ConfigError(
                    fmt::format("{}#{}/micro_batch: {}: expected seq_len · micro_batch at most {} tokens "
                                "(here {} · {})",
                                file, p, x.micro_batch, limits::kSeqLen, x.seq_len, x.micro_batch));
            if (x.mode != "eager" && x.mode != "compiled")
                throw ConfigError(
                    fmt::format("{}#{}/mode: \"{}\": expected \"eager\" or \"compiled\" (layer_truth.py's "
                                "two ways of running the layer)",
                                file, p, x.mode));
            if (x.fwd_bwd_s <= x.fwd_s)
                throw ConfigError(fmt::format("{}#{}/fwd_bwd_ms: {:g}: expected more than fwd_ms {:g}", file, p,
                                              1e3 * x.fwd_bwd_s, 1e3 * x.fwd_s));
            t.layers.push_back(x);
        }
    // The compiled decode sections: elementwise work fused as serving engines fuse it.
    for (const char* section : {"decode_8b_compiled", "decode_70b_layers_compiled"})
        if (const Json* d = rd.list(j, section))
            for (std::size_t i = 0; i < d->size(); ++i) {
                const Json& e = (*d)[i];
                if (e.is_object() && e.contains("error")) continue;
                const std::string p = fmt::format("/{}/{}", section, i);
                t.decode.push_back(
                    {rd.text(e, p, "model"), rd.count(e, p, "layers", static_cast<double>(limits::kLayers)),
                     static_cast<double>(rd.count(e, p, "batch", static_cast<double>(limits::kBatch))),
                     static_cast<double>(rd.count(e, p, "context", static_cast<double>(limits::kSeqLen))),
                     rd.positive(e, p, "step_ms") * 1e-3, p});
            }
    return t;
}

app::LayerTruth read_layer_truth_file(const std::string& path) { return read_layer_truth(parse_json_file(path), path); }

}   // namespace llmsim::cli
