// llmsim's GEMM time against 2,564 measured GEMMs of five sources (bench/gemm/measured-gemms.csv: this
// project's H100 and H200 probe runs, Vidur's A100 and H100 operator profiles), per M regime
// (docs/step-time-model.md, "GEMM shapes"). The bounds hold today's errors (6.2 / 6.5 / 8.3 / 12.1 /
// 9.6% overall) with a little room; the model before the tile/split-K/overlap/fixed-time physics read
// 8.1 / 8.8 / 9.9 / 20.1 / 15.6%.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "bench/gemm/regimes.hpp"

using namespace llmsim;
using namespace llmsim::gemm_regimes;

namespace {
const std::vector<MeasuredGemm>& rows() {
    static const auto r = read_measured(std::string(LLMSIM_SOURCE_DIR) + "/bench/gemm/measured-gemms.csv");
    return r;
}
}   // namespace

TEST_CASE("GEMM time per source and M regime against measured GEMMs", "[gemm][regimes]") {
    const Predictor pr(rows());
    const Table t = tabulate(rows(), [&](const MeasuredGemm& g) { return pr.predict(g); });
    REQUIRE(t.all.size() == 5);
    // Overall mean |error| per source.
    CHECK(t.all.at("probe-h100-2026-11-22").mean_abs() < 0.07);
    CHECK(t.all.at("probe-h100-2026-11-26").mean_abs() < 0.07);
    CHECK(t.all.at("probe-h200-2026-11-26").mean_abs() < 0.09);
    CHECK(t.all.at("vidur-a100").mean_abs() < 0.13);
    CHECK(t.all.at("vidur-h100").mean_abs() < 0.11);
    // Serving's regimes (M up to 256): no source's mean |error| over 15%, no bias beyond ±10%.
    for (const auto& [source, cells] : t.cells)
        for (int r : {0, 1}) {
            INFO(source << " " << regime_names()[static_cast<std::size_t>(r)]);
            CHECK(cells[static_cast<std::size_t>(r)].mean_abs() < 0.15);
            CHECK(std::fabs(cells[static_cast<std::size_t>(r)].bias()) < 0.10);
        }
}

TEST_CASE("kGemmFixed_s and kGemmOverlapP are the fit on all five sources", "[gemm][regimes]") {
    const Predictor pr(rows());
    std::set<std::string> s;
    for (const auto& g : rows()) s.insert(g.source);
    const auto c = fit_constants(rows(), pr, std::vector<std::string>(s.begin(), s.end()));
    CHECK(c.fixed_s == Approx(kGemmFixed_s).margin(1e-12));
    CHECK(c.p == Approx(kGemmOverlapP));
}
