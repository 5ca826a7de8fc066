#include "calibrate/profile.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cost_models/roofline.hpp"
#include "hardware_db/errors.hpp"

namespace llmsim::calibrate {

using nlohmann::json;

namespace {

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

double element_bytes(const std::string& precision) {
    if (precision == "fp8" || precision == "int8") return 1;
    if (precision == "tf32" || precision == "fp32") return 4;
    return 2;
}

std::string fmt_g(double v, int digits = 4) { return fmt::format("{:.{}g}", v, digits); }

std::string date_of(const Calibration& c) {
    std::string d = c.measured_on.value("date", std::string());
    return d.size() >= 10 ? d.substr(0, 10) : d;
}

std::string gpu_of(const Calibration& c) {
    std::string g = c.measured_on.value("gpu", std::string());
    return g.empty() ? std::string("unknown GPU") : g;
}

void set_key(Calibration& c, const std::string& key, json value, const std::string& provenance) {
    if (value.is_number() && !(std::isfinite(value.get<double>()) && value.get<double>() >= 0)) {
        c.notes.push_back(fmt::format("{}: the fit gave {}; not used", key, value.get<double>()));
        return;   // a profile never carries nan, inf or a negative figure
    }
    for (auto& kv : c.keys) {
        if (kv.first == key) {
            kv.second = std::move(value);
            c.provenance[key] = provenance;
            return;
        }
    }
    c.keys.emplace_back(key, std::move(value));
    c.provenance[key] = provenance;
}

// Efficiency keys must lie in (0, 1] for the loader; clamp with a note.
double clamp_efficiency(Calibration& c, const std::string& key, double v) {
    if (v > 1.0) {
        c.notes.push_back(
            fmt::format("{} came out as {:.3f} > 1 (the measured bandwidth beats the preset's nominal "
                        "{}); clamped to 1.0: check the --system preset",
                        key, v, key.find("inter") != std::string::npos ? "inter_node_GBps" : "value"));
        return 1.0;
    }
    return v;
}

// Datasets from the logs and the probe, each placed in a tier.
std::vector<NcclDataset> collect_datasets(const CalibrateInputs& in, std::vector<std::string>& notes) {
    std::vector<NcclDataset> out;
    const int gpn = std::max(1, in.nominal.gpus_per_node);
    auto place = [&](NcclDataset& d) {
        if (d.nodes <= 0) {
            d.tier_assumed = true;
            d.gpus_per_node = std::min(d.ranks, gpn);
            d.nodes = (d.ranks + gpn - 1) / gpn;
        }
        if (d.gpus_per_node <= 0) d.gpus_per_node = d.nodes > 0 ? d.ranks / d.nodes : d.ranks;
        d.tier = d.nodes > 1 ? "inter_node" : "intra_node";
    };
    for (const auto& run : in.logs) {
        NcclDataset d;
        d.collective = run.collective;
        d.ranks = run.ranks;
        d.nodes = run.nodes;
        d.gpus_per_node = run.gpus_per_node();
        d.source = fmt::format("{}:{}", run.source_file, run.first_line);
        d.gpu = run.gpu_name;
        d.nccl_version = run.nccl_version;
        if (d.ranks <= 0 || d.collective == "unknown") {
            notes.push_back(fmt::format("{}: {} on {} ranks cannot be fitted (collective or rank count unknown)",
                                        d.source, d.collective, d.ranks > 0 ? std::to_string(d.ranks) : "unknown"));
            continue;
        }
        for (const auto& r : run.rows)
            if (r.out_of_place.present) d.points.push_back({static_cast<double>(r.size_bytes), r.out_of_place.time_us});
        place(d);
        out.push_back(std::move(d));
    }
    if (in.raw) {
        for (const auto& s : in.raw->nccl) {
            NcclDataset d;
            d.collective = s.collective;
            d.ranks = s.ranks;
            d.nodes = s.nodes;
            d.gpus_per_node = s.gpus_per_node;
            d.source = fmt::format("{} (llmsim-probe)", in.raw->source_file);
            d.gpu = in.raw->gpu_name();
            d.nccl_version = in.raw->nccl_version;
            for (const auto& r : s.rows) d.points.push_back({static_cast<double>(r.size_bytes), r.time_us});
            place(d);
            out.push_back(std::move(d));
        }
    }
    return out;
}

std::string fit_summary(const LinearFit& f) {
    return fmt::format("R²={:.4f}, {} outlier{}", f.r2, f.outliers(), f.outliers() == 1 ? "" : "s");
}

// Priority of collectives for deriving link efficiency (ring algorithms only).
int ring_priority(const std::string& c) {
    if (c == "all_reduce") return 0;
    if (c == "reduce_scatter") return 1;
    if (c == "all_gather") return 2;
    return 99;
}

void derive_network_keys(Calibration& c) {
    const Nominal& nom = c.nominal;
    const std::string date = date_of(c);
    // ---- intra-node: the sweeps on the most ranks of one node ----
    int best_intra = 0;
    for (const auto& r : c.collectives)
        if (r.fit && r.data.tier == "intra_node") best_intra = std::max(best_intra, r.data.ranks);
    std::map<std::string, CollectiveResult*> intra;
    for (auto& r : c.collectives) {
        if (!r.fit || r.data.tier != "intra_node" || r.data.ranks != best_intra || best_intra < 2) continue;
        auto it = intra.find(r.data.collective);
        if (it == intra.end() || r.data.points.size() > it->second->data.points.size()) intra[r.data.collective] = &r;
    }
    auto bw = [&](const std::string& coll) { return intra.count(coll) ? intra[coll]->fit->busbw_GBps : 0.0; };
    std::vector<CollectiveResult*> ring_used;
    bool nvls = false;
    if (intra.count("all_reduce")) {
        const double ar = bw("all_reduce");
        const double other = std::max(bw("all_gather"), bw("reduce_scatter"));
        nvls = (other > 0 && ar > 1.15 * other) || (nom.intra_node_GBps > 0 && ar > nom.intra_node_GBps);
        if (nvls) {
            auto* r = intra["all_reduce"];
            set_key(c, "nvls", true, "");
            set_key(c, "nvls_GBps", ar,
                    fmt::format("fit of {} all_reduce sizes on {} ranks ({}), busbw {} GB/s exceeds the ring ({}), so "
                                "NVLS is in use; {}, {} on {}",
                                r->fit->points.size(), r->data.ranks, r->data.source, fmt_g(ar),
                                other > 0 ? fmt::format("all_gather/reduce_scatter {} GB/s", fmt_g(other))
                                          : fmt::format("nominal {} GB/s", fmt_g(nom.intra_node_GBps)),
                                fit_summary(r->fit->fit), date, r->data.gpu.empty() ? gpu_of(c) : r->data.gpu));
            c.provenance["nvls"] = c.provenance["nvls_GBps"];
            r->used_for = "nvls_GBps";
        } else {
            ring_used.push_back(intra["all_reduce"]);
        }
    }
    if (ring_used.empty()) {
        for (const char* coll : {"reduce_scatter", "all_gather"})
            if (intra.count(coll)) ring_used.push_back(intra[coll]);
    }
    double intra_eff = nom.intra_node_efficiency;
    double intra_lat = nom.intra_node_latency_us;
    if (!ring_used.empty() && nom.intra_node_GBps > 0) {
        double sum_bw = 0, sum_lat = 0;
        std::vector<std::string> names, sources;
        int npts = 0, nout = 0;
        double min_r2 = 1;
        for (auto* r : ring_used) {
            sum_bw += r->fit->busbw_GBps;
            sum_lat += std::max(0.05, (r->fit->alpha_us - nom.collective_base_latency_us) / r->fit->steps);
            names.push_back(r->data.collective);
            sources.push_back(r->data.source);
            npts += static_cast<int>(r->fit->points.size());
            nout += r->fit->fit.outliers();
            min_r2 = std::min(min_r2, r->fit->fit.r2);
            r->used_for = r->used_for.empty() ? "intra_node_efficiency, intra_node_latency_us" : r->used_for;
        }
        const double busbw = sum_bw / ring_used.size();
        intra_eff = clamp_efficiency(c, "intra_node_efficiency", busbw / nom.intra_node_GBps);
        intra_lat = sum_lat / ring_used.size();
        const std::string what =
            fmt::format("{} on {} ranks of one node ({} sizes, {}; R²≥{:.4f}, {} outlier{})", fmt::join(names, "+"),
                        best_intra, npts, fmt::join(sources, ", "), min_r2, nout, nout == 1 ? "" : "s");
        const std::string gpu = ring_used.front()->data.gpu.empty() ? gpu_of(c) : ring_used.front()->data.gpu;
        set_key(c, "intra_node_efficiency", intra_eff,
                fmt::format("fit of {} on {}: busbw {} GB/s / nominal {} GB/s ({}), {}", what, gpu, fmt_g(busbw),
                            fmt_g(nom.intra_node_GBps), nom.preset, date));
        set_key(
            c, "intra_node_latency_us", intra_lat,
            fmt::format("fit of {} on {}: (alpha - collective_base_latency_us {} us) / ring steps, clamped >= 0.05, {}",
                        what, gpu, fmt_g(nom.collective_base_latency_us), date));
    }
    // ---- inter-node: the sweeps on the most ranks across nodes ----
    int best_inter = 0;
    for (const auto& r : c.collectives)
        if (r.fit && r.data.tier == "inter_node") best_inter = std::max(best_inter, r.data.ranks);
    CollectiveResult* inter = nullptr;
    for (auto& r : c.collectives) {
        if (!r.fit || r.data.tier != "inter_node" || r.data.ranks != best_inter) continue;
        if (ring_priority(r.data.collective) == 99) continue;
        if (!inter || ring_priority(r.data.collective) < ring_priority(inter->data.collective) ||
            (ring_priority(r.data.collective) == ring_priority(inter->data.collective) &&
             r.data.points.size() > inter->data.points.size()))
            inter = &r;
    }
    if (inter && nom.inter_node_GBps > 0) {
        const auto& d = inter->data;
        const auto& f = *inter->fit;
        const int g = std::max(1, d.gpus_per_node);
        const double intra_ring = intra_eff * nom.intra_node_GBps;
        const std::string gpu = d.gpu.empty() ? gpu_of(c) : d.gpu;
        const std::string what =
            fmt::format("{} on {} ranks = {} nodes x {} GPUs{} ({} sizes, {}, {})", d.collective, d.ranks, d.nodes, g,
                        d.tier_assumed ? " (node count assumed)" : "", f.points.size(), d.source, fit_summary(f.fit));
        if (intra_ring > 0 && f.busbw_GBps >= 0.95 * intra_ring) {
            c.notes.push_back(
                fmt::format("inter-node {}: busbw {} GB/s is not below the intra-node ring busbw {} GB/s, "
                            "so the network is not the bottleneck; inter_node_efficiency not fitted",
                            d.source, fmt_g(f.busbw_GBps), fmt_g(intra_ring)));
        } else {
            const double eff = clamp_efficiency(c, "inter_node_efficiency", f.busbw_GBps / (g * nom.inter_node_GBps));
            set_key(c, "inter_node_efficiency", eff,
                    fmt::format("fit of {} on {}: busbw {} GB/s / ({} x nominal {} GB/s per GPU, {}), {}", what, gpu,
                                fmt_g(f.busbw_GBps), g, fmt_g(nom.inter_node_GBps), nom.preset, date));
            inter->used_for = "inter_node_efficiency";
        }
        // Latency: base + (steps - inter_steps)·intra + inter_steps·inter (NCCL's ring latency).
        auto inter_steps = nccl_ring_steps(d.collective, d.nodes);
        if (inter_steps && *inter_steps > 0) {
            const int intra_steps = f.steps - *inter_steps;
            const double lat =
                std::max(0.05, (f.alpha_us - nom.collective_base_latency_us - intra_steps * intra_lat) / *inter_steps);
            set_key(c, "inter_node_latency_us", lat,
                    fmt::format("fit of {} on {}: (alpha {} us - base {} us - {} intra-node steps x {} us) / {} "
                                "inter-node steps, clamped >= 0.05, {}",
                                what, gpu, fmt_g(f.alpha_us), fmt_g(nom.collective_base_latency_us), intra_steps,
                                fmt_g(intra_lat), *inter_steps, date));
            inter->used_for += inter->used_for.empty() ? "inter_node_latency_us" : ", inter_node_latency_us";
        }
    } else if (inter) {
        c.notes.push_back("inter-node sweeps found but the preset has no inter_node_GBps; inter-node keys not fitted");
    }
}

}   // namespace

Nominal nominal_from_system(const SystemSpec& s) {
    Nominal n;
    n.preset = s.name;
    n.gpu_display_name = s.gpu.display_name;
    n.gpus_per_node = s.gpus_per_node;
    n.intra_node_GBps = s.intra_node_GBps;
    n.inter_node_GBps = s.inter_node_GBps;
    n.intra_node_latency_us = s.intra_node_latency_us;
    n.intra_node_efficiency = s.intra_node_efficiency;
    n.inter_node_latency_us = s.inter_node_latency_us;
    n.collective_base_latency_us = s.collective_base_latency_us;
    n.pcie_GBps = s.pcie_GBps;
    for (int i = 0; i < kPrecisionCount; ++i) {
        const auto p = static_cast<Precision>(i);
        if (s.gpu.peak(p) > 0) n.peak_flops[to_string(p)] = s.gpu.peak(p);
    }
    n.sm_count = s.gpu.sm_count;
    n.tile_m = s.gpu.efficiency.gemm_tile_m;
    n.tile_n = s.gpu.efficiency.gemm_tile_n;
    n.hbm_GBps = s.gpu.hbm_GBps;
    n.hbm_efficiency = s.gpu.efficiency.hbm_efficiency;
    n.gemm_k_half = s.gpu.efficiency.gemm_k_half;
    return n;
}

std::string guess_system_preset(const std::string& gpu_name) {
    const std::string g = lower(gpu_name);
    auto has = [&](const char* s) { return g.find(s) != std::string::npos; };
    if (has("gh200")) return "gh200";   // before "h200": "NVIDIA GH200 144G HBM3e" contains it
    if (has("h200")) return "hgx-h200";
    if (has("h800")) return "dgx-h800";
    if (has("h100")) return has("nvl") ? "h100-nvl-8x" : has("pcie") ? "h100-pcie-8x" : "dgx-h100";
    if (has("h20")) return "hgx-h20";   // after "h200"
    if (has("a100")) return has("40gb") ? "dgx-a100-40gb" : "dgx-a100-80gb";
    if (has("a800")) return "dgx-a800";
    if (has("l40s")) return "l40s-8x";
    if (g == "nvidia l4") return "l4-8x";   // not "NVIDIA L40" (no entry)
    if (has("b200")) return "dgx-b200";
    if (has("v100")) return "dgx-v100";
    return "";
}

namespace {

// Where the measurements were taken (Calibration::measured_on, from the probe's file and the logs).
void record_measured_on(Calibration& c, const CalibrateInputs& in) {
    const RawMeasurements* raw = in.raw;
    std::string gpu = raw ? raw->gpu_name() : std::string();
    std::string nccl = raw ? raw->nccl_version : std::string();
    std::string host = raw ? raw->host : std::string();
    for (const auto& l : in.logs) {
        if (gpu.empty()) gpu = l.gpu_name;
        if (nccl.empty()) nccl = l.nccl_version;
        if (host.empty() && !l.hosts.empty()) host = l.hosts.front();
    }
    c.measured_on = {{"gpu", gpu},
                     {"driver", raw ? raw->driver : ""},
                     {"cuda", raw ? raw->cuda_runtime : ""},
                     {"nccl", nccl},
                     {"host", host},
                     {"date", raw && !raw->date.empty() ? raw->date : in.today},
                     {"command", raw ? raw->command : ""},
                     {"fit_command", in.command},
                     {"system_preset", in.nominal.preset}};
    if (raw) c.measured_on["raw_file"] = raw->source_file;
    json logs = json::array();
    for (const auto& l : in.logs) logs.push_back(fmt::format("{}:{}", l.source_file, l.first_line));
    if (!logs.empty()) c.measured_on["nccl_tests_logs"] = logs;
}

// The collectives' alpha-beta fits, and the network keys derived from them.
void fit_collectives(Calibration& c, const CalibrateInputs& in) {
    const RawMeasurements* raw = in.raw;
    {
        std::vector<std::string> gpus;
        auto add = [&](const std::string& g) {
            if (!g.empty() && std::find(gpus.begin(), gpus.end(), g) == gpus.end()) gpus.push_back(g);
        };
        if (raw) add(raw->gpu_name());
        for (const auto& l : in.logs) add(l.gpu_name);
        if (gpus.size() > 1)
            c.notes.push_back(
                fmt::format("the measurements come from different GPUs ({}); one profile should describe "
                            "one system",
                            fmt::join(gpus, ", ")));
    }
    for (auto& d : collect_datasets(in, c.notes)) {
        CollectiveResult r;
        r.data = std::move(d);
        try {
            r.fit = fit_alpha_beta(r.data.collective, r.data.ranks, r.data.points, in.robust);
            if (r.fit->alpha_clamped)
                c.notes.push_back(
                    fmt::format("{}: {} on {} ranks: the fitted latency alpha was {:.3g} us (< 0: the "
                                "smallest sizes are below the fit's resolution); alpha_us is 0 and the "
                                "bandwidth refitted with it",
                                r.data.source, r.data.collective, r.data.ranks, r.fit->alpha_fitted_us));
        } catch (const std::invalid_argument& e) {
            r.error = e.what();
            c.notes.push_back(fmt::format("{}: {} not fitted: {}", r.data.source, r.data.collective, e.what()));
        }
        c.collectives.push_back(std::move(r));
    }
    derive_network_keys(c);
}

// The GEMM efficiency of every measured precision, and one k_half (bf16's, else fp16's, else the first).
void fit_gemms(Calibration& c, const CalibrateInputs& in, const RawMeasurements& r, const std::string& gpu,
               const std::string& date) {
    const RawMeasurements* raw = &r;
    // ---- GEMM ----
    const int sm =
        !raw->gpus.empty() && raw->gpus.front().sm_count > 0 ? raw->gpus.front().sm_count : in.nominal.sm_count;
    if (!raw->gpus.empty() && raw->gpus.front().sm_count > 0 && in.nominal.sm_count > 0 &&
        raw->gpus.front().sm_count != in.nominal.sm_count)
        c.notes.push_back(
            fmt::format("the measured GPU has {} SMs, the preset {} has {}: the measured count is used "
                        "for wave quantisation; is --system right?",
                        raw->gpus.front().sm_count, in.nominal.preset, in.nominal.sm_count));
    std::vector<GemmPoint> pts;
    std::vector<std::string> precisions;
    for (const auto& g : raw->gemm) {
        pts.push_back(g.point);
        if (std::find(precisions.begin(), precisions.end(), g.point.precision) == precisions.end())
            precisions.push_back(g.point.precision);
    }
    // The 16-bit peaks the cost model's one k_half is quoted at (gemm_k_half in cost_models/roofline).
    const auto peak_of = [&](const char* p) {
        const auto it = in.nominal.peak_flops.find(p);
        return it == in.nominal.peak_flops.end() ? 0.0 : it->second;
    };
    const double bf16 = peak_of("bf16"), fp16 = peak_of("fp16");
    for (const auto& p : precisions) {
        auto pk = in.nominal.peak_flops.find(p);
        if (pk == in.nominal.peak_flops.end() || pk->second <= 0) {
            c.notes.push_back(
                fmt::format("gemm {}: the preset {} has no {} peak; not fitted", p, in.nominal.preset, p));
            continue;
        }
        GemmGeometry geo;
        geo.peak_flops = pk->second;
        geo.sm_count = sm;
        geo.tile_m = in.nominal.tile_m;
        geo.tile_n = in.nominal.tile_n;
        geo.hbm_GBps = in.nominal.hbm_GBps;
        geo.hbm_efficiency = in.nominal.hbm_efficiency;
        geo.k_half = gemm_k_half_at(in.nominal.gemm_k_half, geo.peak_flops, bf16, fp16);
        geo.element_bytes = element_bytes(p);
        try {
            auto f = fit_gemm(p, pts, geo, in.robust);
            if (!(f.gemm_max > 0) || f.gemm_max > 1.0) {
                c.notes.push_back(
                    fmt::format("gemm {}: fitted gemm_max {} is outside (0, 1]; not used", p, fmt_g(f.gemm_max)));
            } else {
                set_key(
                    c, "gpu.efficiency.gemm_max." + p, f.gemm_max,
                    fmt::format("fit of {} cuBLASLt GEMMs on {}, peak {} TFLOP/s ({}), R²={:.4f}, {} outlier{}, {}",
                                f.points.size(), gpu.empty() ? "unknown GPU" : gpu, fmt_g(geo.peak_flops / 1e12),
                                in.nominal.preset, f.fit.r2, f.fit.outliers(), f.fit.outliers() == 1 ? "" : "s", date));
            }
            c.gemm.push_back(std::move(f));
        } catch (const std::invalid_argument& e) {
            c.notes.push_back(fmt::format("gemm {}: not fitted: {}", p, e.what()));
        }
    }
    // One k_half in the cost model: bf16's, else fp16's, else the first fitted.
    const GemmFit* kh = nullptr;
    for (const char* p : {"bf16", "fp16", "tf32", "fp8"})
        for (const auto& f : c.gemm)
            if (!kh && f.precision == p && f.gemm_max > 0 && f.gemm_max <= 1.0) kh = &f;
    if (kh) {
        if (kh->k_half >= 0) {
            set_key(c, "gpu.efficiency.gemm_k_half", kh->k_half,
                    fmt::format("fit of {} {} cuBLASLt GEMMs on {} (slope/intercept of y vs split/K), R²={:.4f}, {}",
                                kh->points.size(), kh->precision, gpu.empty() ? "unknown GPU" : gpu, kh->fit.r2, date));
        } else {
            c.notes.push_back(fmt::format("gemm {}: fitted k_half {} < 0 (no K dependence); not used", kh->precision,
                                          fmt_g(kh->k_half)));
        }
    }
    // A precision with a faster peak (FP8) would get the one k_half scaled by its peak; its own fit
    // replaces that (gemm_k_half_by), and a note says how far the scaled one was.
    if (kh && kh->k_half >= 0)
        for (const auto& f : c.gemm) {
            if (&f == kh || !(f.gemm_max > 0) || f.gemm_max > 1.0 || !(f.k_half >= 0) ||
                !(gemm_k_half_at(1.0, f.geometry.peak_flops, bf16, fp16) > 1.01))
                continue;
            set_key(c, "gpu.efficiency.gemm_k_half_by." + f.precision, f.k_half,
                    fmt::format("fit of {} {} cuBLASLt GEMMs on {} (slope/intercept of y vs split/K), R²={:.4f}, {}",
                                f.points.size(), f.precision, gpu.empty() ? "unknown GPU" : gpu, f.fit.r2, date));
            const double scaled = gemm_k_half_at(kh->k_half, f.geometry.peak_flops, bf16, fp16);
            if (scaled > 0 && (f.k_half > 1.5 * scaled || f.k_half < scaled / 1.5))
                c.notes.push_back(
                    fmt::format("gemm {}: its own fit puts k_half at {}, where {}'s {} scaled by the "
                                "peak gives {}: the profile keeps its own (gemm_k_half_by)",
                                f.precision, fmt_g(f.k_half), kh->precision, fmt_g(kh->k_half), fmt_g(scaled)));
        }
}

// HBM and PCIe bandwidths and the kernel launch time.
void fit_bandwidths_and_launch(Calibration& c, const CalibrateInputs& in, const RawMeasurements& r,
                               const std::string& gpu, const std::string& date) {
    const RawMeasurements* raw = &r;
    // ---- HBM ----
    // The cost model's memory-bound bytes are reads plus writes, so the efficiency comes from the
    // kernels that do both (copy, triad); read-only and write-only sweeps (probe >= 2026-11) are
    // reported by the probe but not fitted (on an H100 they run 5-10% faster than copy).
    std::vector<BandwidthPoint> hbm_rw;
    for (const auto& p : raw->hbm)
        if (p.kernel != "read" && p.kernel != "write") hbm_rw.push_back(p);
    if (!hbm_rw.empty()) {
        auto f = fit_best_bandwidth(hbm_rw, in.nominal.hbm_GBps);
        if (f.efficiency > 0) {
            const double eff = clamp_efficiency(c, "gpu.efficiency.hbm_efficiency", f.efficiency);
            std::vector<std::string> used;
            for (const auto& u : f.used) used.push_back(fmt::format("{} {} GB/s", u.kernel, fmt_g(u.GBps)));
            set_key(c, "gpu.efficiency.hbm_efficiency", eff,
                    fmt::format("median of the largest-size stream kernels ({}) = {} GB/s / nominal {} GB/s on {}, {}",
                                fmt::join(used, ", "), fmt_g(f.best_GBps), fmt_g(in.nominal.hbm_GBps), gpu, date));
        }
        c.hbm = std::move(f);
    }
    // ---- PCIe ----
    if (!raw->pcie.empty()) {
        auto f = fit_best_bandwidth(raw->pcie, in.nominal.pcie_GBps);
        if (f.best_GBps > 0) {
            set_key(c, "pcie_GBps", f.best_GBps,
                    fmt::format("median of pinned host<->device copies at the largest size ({} transfers) on {}, {}",
                                f.used.size(), gpu, date));
        }
        c.pcie = std::move(f);
    }
    // ---- launch ----
    c.launch_samples_us = raw->launch_samples_us;
    if (!raw->launch_samples_us.empty())
        c.kernel_launch_us = median(raw->launch_samples_us);
    else if (raw->launch_median_us)
        c.kernel_launch_us = *raw->launch_median_us;
    if (c.kernel_launch_us && *c.kernel_launch_us > 0) {
        set_key(
            c, "gpu.efficiency.kernel_launch_us", *c.kernel_launch_us,
            fmt::format("median of {} empty-kernel launch samples on {}, {}",
                        raw->launch_samples_us.empty() ? std::size_t{1} : raw->launch_samples_us.size(), gpu, date));
    }
}

}   // namespace

Calibration calibrate(const CalibrateInputs& in) {
    Calibration c;
    c.nominal = in.nominal;
    record_measured_on(c, in);
    const std::string gpu = c.measured_on["gpu"].get<std::string>();
    const std::string date = date_of(c);
    fit_collectives(c, in);
    if (in.raw) {
        fit_gemms(c, in, *in.raw, gpu, date);
        fit_bandwidths_and_launch(c, in, *in.raw, gpu, date);
        for (const auto& n : in.raw->notes) c.notes.push_back("probe: " + n);
    }
    if (c.keys.empty()) c.notes.push_back("no system key could be fitted from these measurements");
    return c;
}

// ------------------------------------------------------------------------------------------------
// Output
// ------------------------------------------------------------------------------------------------

json profile_json(const Calibration& c) {
    json sys = json::object();
    for (const auto& [key, value] : c.keys) {
        json* node = &sys;
        std::size_t start = 0;
        while (true) {
            auto dot = key.find('.', start);
            if (dot == std::string::npos) {
                (*node)[key.substr(start)] = value;
                break;
            }
            node = &(*node)[key.substr(start, dot - start)];
            start = dot + 1;
        }
    }
    json prov = json::object();
    for (const auto& [key, value] : c.keys) {
        (void)value;
        auto it = c.provenance.find(key);
        if (it != c.provenance.end() && !it->second.empty()) prov[key] = it->second;
    }
    json fits = json::array();
    for (const auto& r : c.collectives) {
        json f = {{"kind", "collective"},
                  {"collective", r.data.collective},
                  {"ranks", r.data.ranks},
                  {"nodes", r.data.nodes},
                  {"gpus_per_node", r.data.gpus_per_node},
                  {"tier", r.data.tier},
                  {"tier_assumed", r.data.tier_assumed},
                  {"source", r.data.source},
                  {"model", "t_us = alpha_us + size_bytes*factor/(busbw_GBps*1e3)"},
                  {"used_for", r.used_for}};
        if (r.fit) {
            const auto& a = *r.fit;
            f["factor"] = a.factor;
            f["steps"] = a.steps;
            f["alpha_us"] = a.alpha_us;
            if (a.alpha_clamped) f["alpha_fitted_us"] = a.alpha_fitted_us;
            f["busbw_GBps"] = a.busbw_GBps;
            f["max_measured_busbw_GBps"] = a.max_measured_busbw_GBps;
            f["r2"] = a.fit.r2;
            f["rms_rel_residual"] = a.fit.rms_rel;
            f["rejection_threshold"] = a.fit.threshold;
            f["outliers"] = a.fit.outliers();
            json pts = json::array();
            for (std::size_t i = 0; i < a.points.size(); ++i)
                pts.push_back({{"size_bytes", a.points[i].size_bytes},
                               {"time_us", a.points[i].time_us},
                               {"fitted_us", a.fit.predicted[i]},
                               {"rel_residual", a.fit.rel_residual[i]},
                               {"rejected", static_cast<bool>(a.fit.rejected[i])}});
            f["points"] = pts;
        } else {
            f["error"] = r.error;
        }
        fits.push_back(std::move(f));
    }
    for (const auto& g : c.gemm) {
        json f = {{"kind", "gemm"},
                  {"precision", g.precision},
                  {"model", "y = peak*f_wave*t/(2*batch*M*N*K) = 1/gemm_max + (k_half/gemm_max)/K"},
                  {"gemm_max", g.gemm_max},
                  {"k_half", g.k_half},
                  {"peak_flops", g.geometry.peak_flops},
                  {"sm_count", g.geometry.sm_count},
                  {"tile_m", g.geometry.tile_m},
                  {"tile_n", g.geometry.tile_n},
                  {"ridge_flop_per_byte", g.ridge_flop_per_byte},
                  {"r2", g.fit.r2},
                  {"rms_rel_residual", g.fit.rms_rel},
                  {"rejection_threshold", g.fit.threshold},
                  {"outliers", g.fit.outliers()}};
        json pts = json::array();
        for (std::size_t i = 0; i < g.points.size(); ++i) {
            const auto& p = g.points[i];
            pts.push_back({{"m", p.m},
                           {"n", p.n},
                           {"k", p.k},
                           {"batch", p.batch},
                           {"label", p.label},
                           {"time_us", p.time_us},
                           {"fitted_us", p.time_us * g.fit.predicted[i] / (g.fit.predicted[i] + g.fit.residual[i])},
                           {"rel_residual", g.fit.rel_residual[i]},
                           {"rejected", static_cast<bool>(g.fit.rejected[i])}});
        }
        f["points"] = pts;
        json mb = json::array();
        for (const auto& p : g.memory_bound)
            mb.push_back(
                {{"m", p.m}, {"n", p.n}, {"k", p.k}, {"batch", p.batch}, {"label", p.label}, {"time_us", p.time_us}});
        f["memory_bound_excluded"] = mb;
        fits.push_back(std::move(f));
    }
    auto bw_json = [](const char* kind, const BandwidthFit& b) {
        json used = json::array();
        for (const auto& u : b.used) used.push_back({{"kernel", u.kernel}, {"bytes", u.bytes}, {"GBps", u.GBps}});
        return json{{"kind", kind},
                    {"rule", "median of each kernel's bandwidth at its largest size"},
                    {"used", used},
                    {"best_GBps", b.best_GBps},
                    {"nominal_GBps", b.nominal_GBps},
                    {"efficiency", b.efficiency}};
    };
    if (c.hbm) fits.push_back(bw_json("hbm", *c.hbm));
    if (c.pcie) fits.push_back(bw_json("pcie", *c.pcie));
    if (c.kernel_launch_us)
        fits.push_back({{"kind", "launch"}, {"samples_us", c.launch_samples_us}, {"median_us", *c.kernel_launch_us}});
    json measured = c.measured_on;
    if (!c.notes.empty()) measured["notes"] = c.notes;
    return json{
        {"llmsim_profile", 1}, {"measured_on", measured}, {"system", sys}, {"provenance", prov}, {"fits", fits}};
}

std::string report_text(const Calibration& c) {
    std::string out;
    auto line = [&](const std::string& s) { out += s + "\n"; };
    line(fmt::format("calibration against preset {} (GPU {})", c.nominal.preset.empty() ? "?" : c.nominal.preset,
                     gpu_of(c)));
    for (const auto& r : c.collectives) {
        line("");
        line(fmt::format("collective {} on {} ranks, {} node{}{} [{}]", r.data.collective, r.data.ranks, r.data.nodes,
                         r.data.nodes == 1 ? "" : "s", r.data.tier_assumed ? " (assumed)" : "", r.data.tier));
        line("  from " + r.data.source);
        if (!r.fit) {
            line("  not fitted: " + r.error);
            continue;
        }
        const auto& a = *r.fit;
        line(fmt::format("  t_us = {:.3f} + S x {:.4g} / ({:.2f} GB/s x 1e3)", a.alpha_us, a.factor, a.busbw_GBps));
        line(fmt::format("  R² {:.4f}  rms rel {:.1f}%  outliers {}", a.fit.r2, 100 * a.fit.rms_rel, a.fit.outliers()));
        line(fmt::format("  {:>14}  {:>12}  {:>12}  {:>8}", "size (B)", "measured us", "fitted us", "resid"));
        for (std::size_t i = 0; i < a.points.size(); ++i)
            line(fmt::format("  {:>14.0f}  {:>12.2f}  {:>12.2f}  {:>+7.1f}%{}", a.points[i].size_bytes,
                             a.points[i].time_us, a.fit.predicted[i], 100 * a.fit.rel_residual[i],
                             a.fit.rejected[i] ? "  rejected" : ""));
        if (!r.used_for.empty()) line("  -> " + r.used_for);
    }
    for (const auto& g : c.gemm) {
        line("");
        line(fmt::format("gemm {}: gemm_max {:.4f}  k_half {:.1f}  R² {:.4f}", g.precision, g.gemm_max, g.k_half,
                         g.fit.r2));
        line(fmt::format("  peak {} TFLOP/s, {} SMs, tile {}x{}, ridge {:.0f} FLOP/B",
                         fmt_g(g.geometry.peak_flops / 1e12), g.geometry.sm_count, g.geometry.tile_m, g.geometry.tile_n,
                         g.ridge_flop_per_byte));
        line(fmt::format("  outliers {}, memory-bound excluded {}", g.fit.outliers(), g.memory_bound.size()));
        line(fmt::format("  {:>20}  {:>11}  {:>11}  {:>8}  {:>8}", "M x N x K (batch)", "measured us", "fitted us",
                         "TFLOP/s", "resid"));
        for (std::size_t i = 0; i < g.points.size(); ++i) {
            const auto& p = g.points[i];
            // ŷ/y = fitted time / measured time
            const double fitted_us = p.time_us * g.fit.predicted[i] / (g.fit.predicted[i] + g.fit.residual[i]);
            const double tflops = 2.0 * p.batch * static_cast<double>(p.m) * p.n * p.k / (p.time_us * 1e-6) / 1e12;
            line(fmt::format("  {:>20}  {:>11.2f}  {:>11.2f}  {:>8.1f}  {:>+7.1f}%{}",
                             fmt::format("{}x{}x{}{}", p.m, p.n, p.k, p.batch > 1 ? fmt::format(" ({})", p.batch) : ""),
                             p.time_us, fitted_us, tflops, 100 * g.fit.rel_residual[i],
                             g.fit.rejected[i] ? "  rejected" : ""));
        }
    }
    if (c.hbm) {
        line("");
        line(fmt::format("hbm: best {} GB/s / nominal {} GB/s = {:.3f}", fmt_g(c.hbm->best_GBps),
                         fmt_g(c.hbm->nominal_GBps), c.hbm->efficiency));
        for (const auto& u : c.hbm->used)
            line(fmt::format("  {:<6} {:>14.0f} B  {:>8.1f} GB/s", u.kernel, u.bytes, u.GBps));
    }
    if (c.pcie) {
        line("");
        line(
            fmt::format("pcie: best {} GB/s (nominal {} GB/s)", fmt_g(c.pcie->best_GBps), fmt_g(c.pcie->nominal_GBps)));
        for (const auto& u : c.pcie->used)
            line(fmt::format("  {:<6} {:>14.0f} B  {:>8.1f} GB/s", u.kernel, u.bytes, u.GBps));
    }
    if (c.kernel_launch_us) {
        line("");
        line(fmt::format("kernel launch: median {:.2f} us over {} samples", *c.kernel_launch_us,
                         c.launch_samples_us.size()));
    }
    line("");
    line("fitted system keys:");
    if (c.keys.empty()) line("  (none)");
    for (const auto& [k, v] : c.keys)
        line(fmt::format("  {:<36} {}", k, v.is_number_float() ? fmt_g(v.get<double>(), 5) : v.dump()));
    if (!c.notes.empty()) {
        line("");
        line("notes:");
        for (const auto& n : c.notes) line("  - " + n);
    }
    return out;
}

void write_json_file(const std::string& path, const json& j) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) throw ConfigError(fmt::format("{}: cannot write the profile (directory missing or not writable)", path));
    f << j.dump(2, ' ', false, json::error_handler_t::replace) << "\n";   // log text may hold invalid UTF-8
    if (!f) throw ConfigError(fmt::format("{}: error while writing the profile", path));
}

}   // namespace llmsim::calibrate
