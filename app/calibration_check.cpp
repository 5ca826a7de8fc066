#include "app/calibration_check.hpp"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "cost_models/inference.hpp"
#include "cost_models/layer/layer.hpp"
#include "cost_models/roofline.hpp"
#include "cost_models/step_time.hpp"
#include "hardware_db/errors.hpp"

namespace llmsim::app {

namespace {

SystemSpec isolated(SystemSpec s) {
    s.gpu.efficiency.sustained_fraction = 1.0;
    return s;
}

double gemm_s(const SystemSpec& s, double m, double n, double k) {
    GemmSpec g;
    g.m = m;
    g.n = n;
    g.k = k;
    g.precision = Precision::bf16;
    g.sustained = false;
    g.launches = 0;
    return gemm_time(s.gpu, g).time_s;
}

struct LayerTimes {
    double fwd_s = 0, bwd_s = 0;
};

// One layer as layer_truth.py runs it: PyTorch modules (F.linear, F.rms_norm, RoPE and SwiGLU as written)
// eager or under torch.compile, attention through SDPA, which PyTorch 2.11 runs on cuDNN's kernel on
// Hopper: the truth's own timings say so (8B compiled layer forward 6.91 ms, its four GEMMs 5.29 ms: 1.6 ms
// for attention and the fused passes, against cuDNN's 1.01 ms and FlashAttention-2's 1.80 ms alone).
LayerTimes layer_s(const SystemSpec& s, const ModelSpec& m, int seq, int micro_batch, bool compiled) {
    ParallelConfig p;
    p.framework = Framework::torchtitan;
    p.torch_compile = compiled;
    p.sdpa_fa2 = false;
    TrainingConfig t;
    t.seq_len = seq;
    t.micro_batch = micro_batch;
    t.global_batch = micro_batch;
    t.precision = Precision::bf16;
    t.recompute = Recompute::none;
    t.flash_attention = true;
    const TrainingJob job{m, s, p, t};
    const LayerCost c = layer_cost(job, has_moe_layers(m));
    return {c.fwd_s(), c.bwd_s()};
}

double decode_s(const SystemSpec& s, const ModelSpec& m, double batch, double context) {
    ParallelConfig p;
    InferenceConfig in;
    in.cuda_graphs = true;         // layer_truth.py replays each decode step from a CUDA graph
    in.host_per_sequence_us = 0;   // ... with no serving engine around it: no host work per sequence
    in.weight_precision = Precision::bf16;
    in.kv_precision = Precision::bf16;
    in.compute_precision = Precision::bf16;
    const ServingJob job{m, s, p, in};
    IterationBatch b;
    b.decode_seqs = batch;
    b.decode_kv_tokens = batch * context;
    return iteration_cost(job, b).time_s;
}

}   // namespace

CalibrationCheck check_against_truth(const LayerTruth& truth, const std::map<std::string, ModelSpec>& models,
                                     const SystemSpec& base_in, const SystemSpec& calibrated_in) {
    const SystemSpec base = isolated(base_in), cal = isolated(calibrated_in);
    CalibrationCheck r;
    r.truth_file = truth.file;
    r.gpu = truth.gpu;
    r.date = truth.date;
    auto model = [&](const std::string& name) -> const ModelSpec& {
        const auto it = models.find(name);
        if (it == models.end()) throw ConfigError(fmt::format("{}: model {} is not given", truth.file, name));
        return it->second;
    };
    for (const auto& g : truth.gemms) {
        r.rows.push_back({"gemm", fmt::format("{} {} {} {:g}x{:g}x{:g}", g.model, g.op, g.pass, g.m, g.n, g.k),
                          g.measured_s, gemm_s(base, g.m, g.n, g.k), gemm_s(cal, g.m, g.n, g.k)});
    }
    for (const auto& l : truth.layers) {
        const ModelSpec& m = model(l.model);
        const LayerTimes u = layer_s(base, m, l.seq_len, l.micro_batch, l.compiled()),
                         c = layer_s(cal, m, l.seq_len, l.micro_batch, l.compiled());
        const std::int64_t tokens = std::int64_t{l.seq_len} * l.micro_batch;   // bounded by the reader
        r.rows.push_back(
            {"layer", fmt::format("{} layer fwd ({}, {} tokens)", l.model, l.mode, tokens), l.fwd_s, u.fwd_s, c.fwd_s});
        r.rows.push_back({"layer", fmt::format("{} layer bwd ({}, {} tokens)", l.model, l.mode, tokens),
                          l.fwd_bwd_s - l.fwd_s, u.bwd_s, c.bwd_s});
        r.rows.push_back({"layer", fmt::format("{} layer fwd+bwd ({}, {} tokens)", l.model, l.mode, tokens),
                          l.fwd_bwd_s, u.fwd_s + u.bwd_s, c.fwd_s + c.bwd_s});
    }
    for (const auto& d : truth.decode) {
        ModelSpec m = model(d.model);
        m.layers = d.layers;   // a stack of the model's layers
        const double ctx = d.context + 1.0;
        r.rows.push_back({"decode",
                          fmt::format("{} {} layers + head, batch {:g}, context {:g}", d.model, d.layers, d.batch, ctx),
                          d.step_s, decode_s(base, m, d.batch, ctx), decode_s(cal, m, d.batch, ctx)});
    }
    if (r.rows.empty()) throw ConfigError(fmt::format("{}: no gemms, layers or decode rows to compare", truth.file));
    for (const char* kind : {"gemm", "layer", "decode"}) {
        CheckSummary s;
        s.kind = kind;
        for (const auto& row : r.rows) {
            if (row.kind != kind) continue;
            ++s.rows;
            s.mean_abs_err_uncalibrated += std::abs(row.err_uncalibrated());
            s.mean_abs_err_calibrated += std::abs(row.err_calibrated());
            s.max_abs_err_uncalibrated = std::max(s.max_abs_err_uncalibrated, std::abs(row.err_uncalibrated()));
            s.max_abs_err_calibrated = std::max(s.max_abs_err_calibrated, std::abs(row.err_calibrated()));
        }
        if (s.rows == 0) continue;
        s.mean_abs_err_uncalibrated /= s.rows;
        s.mean_abs_err_calibrated /= s.rows;
        r.summary.push_back(s);
    }
    return r;
}

}   // namespace llmsim::app
