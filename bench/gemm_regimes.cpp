// llmsim_gemm_regimes: measured GEMMs (bench/gemm/measured-gemms.csv) against llmsim's GEMM time, per
// data source and M regime (docs/step-time-model.md, "GEMM shapes").
//
//   build/bench/llmsim_gemm_regimes [CSV] [--rows] [--loso]
//
// --rows prints every row; --loso refits kGemmFixed_s and kGemmOverlapP leaving each source out and
// reports the held-out source's error.
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "bench/gemm/regimes.hpp"

using namespace llmsim;
using namespace llmsim::gemm_regimes;

namespace {

void print_table(const Table& t) {
    std::printf("%-24s", "source (mean |err|, bias, n)");
    for (const char* r : regime_names()) std::printf(" %22s", r);
    std::printf(" %16s\n", "all");
    for (const auto& [source, cells] : t.cells) {
        std::printf("%-24s", source.c_str());
        for (const auto& c : cells) {
            if (c.n)
                std::printf("   %5.1f%% %+6.1f%% %4d", 100 * c.mean_abs(), 100 * c.bias(), c.n);
            else
                std::printf(" %22s", "-");
        }
        const Cell& a = t.all.at(source);
        std::printf("   %5.1f%% %4d\n", 100 * a.mean_abs(), a.n);
    }
}

}   // namespace

int main(int argc, char** argv) {
    std::string path = std::string(LLMSIM_SOURCE_DIR) + "/bench/gemm/measured-gemms.csv";
    bool rows_out = false, loso = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--rows")
            rows_out = true;
        else if (a == "--loso")
            loso = true;
        else
            path = a;
    }
    try {
        const auto rows = read_measured(path);
        const Predictor pr(rows);
        if (rows_out) {
            std::printf("%-24s %-5s %-40s %6s %6s %6s %4s %10s %10s %7s\n", "source", "prec", "label", "m", "n", "k",
                        "b", "meas us", "pred us", "err");
            for (const auto& g : rows) {
                const double p = pr.predict(g);
                std::printf("%-24s %-5s %-40s %6.0f %6.0f %6.0f %4.0f %10.2f %10.2f %+6.1f%%%s\n", g.source.c_str(),
                            g.precision.c_str(), g.label.c_str(), g.m, g.n, g.k, g.batch, g.time_s * 1e6, p * 1e6,
                            100 * (p / g.time_s - 1), excluded(g) ? "  (cuBLASLt M=2,4: not scored)" : "");
            }
            std::printf("\n");
        }
        std::printf("llmsim GEMM time vs %zu measured GEMMs (%s); err = predicted / measured - 1\n", rows.size(),
                    path.c_str());
        std::printf("probe rows at M = 2, 4 not scored (cuBLASLt's heuristic picks 2x slower kernels there)\n\n");
        print_table(tabulate(rows, [&](const MeasuredGemm& g) { return pr.predict(g); }));
        if (loso) {
            std::set<std::string> all;
            for (const auto& g : rows) all.insert(g.source);
            const std::vector<std::string> sources(all.begin(), all.end());
            const auto c = fit_constants(rows, pr, sources);
            std::printf("\nfit on all sources: fixed %.2f us, p %.1f (objective %.4f); built in: %.2f us, %.1f\n",
                        c.fixed_s * 1e6, c.p, c.objective, kGemmFixed_s * 1e6, kGemmOverlapP);
            std::printf("%-24s %10s %6s %22s %22s\n", "held out", "fixed us", "p", "held-out mean |err|",
                        "with all-data fit");
            for (const auto& held : sources) {
                std::vector<std::string> train;
                for (const auto& s : sources)
                    if (s != held) train.push_back(s);
                const auto f = fit_constants(rows, pr, train);
                Cell out, in;
                for (const auto& g : rows) {
                    if (g.source != held || excluded(g)) continue;
                    const KernelTime k = pr.kernel(g);
                    out.add(pr.as_measured(g, gemm_kernel_time_s(k.compute_s, k.memory_s, f.fixed_s, f.p)) / g.time_s -
                            1);
                    in.add(pr.as_measured(g, gemm_kernel_time_s(k.compute_s, k.memory_s, c.fixed_s, c.p)) / g.time_s -
                           1);
                }
                std::printf("%-24s %10.2f %6.1f %21.1f%% %21.1f%%\n", held.c_str(), f.fixed_s * 1e6, f.p,
                            100 * out.mean_abs(), 100 * in.mean_abs());
            }
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "llmsim_gemm_regimes: %s\n", e.what());
        return 2;
    }
    return 0;
}
