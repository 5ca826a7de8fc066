// --plot FILE.svg end to end (the built binary): each chart is well-formed XML (every element closed, in
// order), a self-contained SVG (no scripts, no outside references) and holds the series it should: the
// memory components and capacity per stage, the step breakdown of both methods, the played step's
// passes, the strong and weak scaling curves, the Pareto front and one line per sweep combination.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/cli_runner.hpp"

namespace fs = std::filesystem;

namespace {

std::string scenario(const char* name) { return (fs::path(LLMSIM_SOURCE_DIR) / "scenarios" / name).string(); }

// Checks that `xml` is well-formed: tags balance and nest, attributes are quoted, entities are known.
// Returns "" or what is wrong.
std::string xml_problem(const std::string& xml) {
    std::vector<std::string> open;
    std::size_t i = 0;
    while ((i = xml.find('<', i)) != std::string::npos) {
        const auto end = xml.find('>', i);
        if (end == std::string::npos) return "unclosed tag at " + std::to_string(i);
        std::string tag = xml.substr(i + 1, end - i - 1);
        i = end + 1;
        if (tag.empty()) return "empty tag";
        if (tag[0] == '?' || tag[0] == '!') continue;
        if (tag[0] == '/') {
            if (open.empty() || open.back() != tag.substr(1)) return "mismatched </" + tag.substr(1) + ">";
            open.pop_back();
            continue;
        }
        const bool self = tag.back() == '/';
        const std::string name = tag.substr(0, tag.find_first_of(" \n/"));
        // Attribute values are quoted: an even number of quotes.
        if (std::count(tag.begin(), tag.end(), '"') % 2 != 0) return "odd quotes in <" + name + ">";
        if (!self) open.push_back(name);
    }
    if (!open.empty()) return "unclosed <" + open.back() + ">";
    for (std::size_t a = 0; (a = xml.find('&', a)) != std::string::npos; ++a) {
        const auto semi = xml.find(';', a);
        const std::string ent = xml.substr(a, semi - a + 1);
        if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;") return "entity " + ent;
    }
    return "";
}

bool has(const std::string& svg, const std::string& s) { return svg.find(s) != std::string::npos; }

std::string plot(std::vector<std::string> args, const std::string& file) {
    const auto dir = llmsim::test::temp_dir("plot");
    const auto path = (dir / file).string();
    args.push_back("--plot" + std::string(file.find("timeline") != std::string::npos ? "-timeline" : ""));
    args.push_back(path);
    const auto r = llmsim::test::run_llmsim(args, "plot");
    INFO(r.err);
    REQUIRE(r.rc == 0);
    const std::string svg = llmsim::test::slurp(path);
    REQUIRE(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
    CHECK(xml_problem(svg) == "");
    CHECK(svg.find("<script") == std::string::npos);
    CHECK(svg.find("href") == std::string::npos);
    for (const char* bad : {"\"nan", "\"-nan", "\"inf", "\"-inf", ">nan<", ">inf<"}) CHECK_FALSE(has(svg, bad));
    return svg;
}

}   // namespace

TEST_CASE("the well-formedness check itself catches broken XML", "[plot]") {
    CHECK(xml_problem("<svg><g></g></svg>") == "");
    CHECK(xml_problem("<svg><g></svg>") != "");
    CHECK(xml_problem("<svg><rect x=\"1/></svg>") != "");
    CHECK(xml_problem("<svg>a & b</svg>") != "");
}

TEST_CASE("memory --plot: one stacked bar per pipeline stage against the capacity", "[plot]") {
    const auto svg = plot({"memory", "--scenario", scenario("llama3-70b-h100-64.json")}, "memory.svg");
    for (const char* part : {"weights", "gradients", "optimizer states", "activations"})
        CHECK(has(svg, std::string("data-part=\"") + part + "\""));
    for (const char* stage : {">stage 0<", ">stage 3<"}) CHECK(has(svg, stage));
    CHECK_FALSE(has(svg, ">stage 4<"));
    CHECK(has(svg, "capacity 80 GiB"));
    CHECK(has(svg, "GiB, 2^30 bytes"));
}

TEST_CASE("estimate --plot and --plot-timeline: the step breakdown and the played step", "[plot]") {
    const auto step = plot({"estimate", "--scenario", scenario("gpt3-175b-a100-1024.json")}, "step.svg");
    CHECK(has(step, ">closed form ("));
    CHECK(has(step, ">simulator ("));
    CHECK(has(step, "data-part=\"compute\""));
    CHECK(has(step, "time per step (s)"));
    const auto tl =
        plot({"estimate", "--scenario", scenario("gpt3-175b-a100-1024.json"), "--global-batch", "64"}, "timeline.svg");
    CHECK(has(tl, "data-kind=\"forward\""));
    CHECK(has(tl, "data-kind=\"backward\""));
    CHECK(has(tl, ">stage 7<"));
}

TEST_CASE("scaling, search and run --plot: curves, Pareto front, sweep lines", "[plot]") {
    const auto sc = plot({"scaling", "--model", "gpt3-175b", "--system", "dgx-a100-80gb", "--seq-len", "2048",
                          "--global-batch", "1536", "--gpus", "256,512,1024"},
                         "scaling.svg");
    CHECK(has(sc, "data-name=\"strong (fixed global batch)\""));
    CHECK(has(sc, "data-name=\"weak (batch grows with GPUs)\""));
    CHECK(has(sc, ">1,024<"));   // GPU ticks with thousands separators
    const auto se = plot({"search", "--model", "llama-3-8b", "--system", "dgx-h100", "--gpus", "8", "--seq-len", "4096",
                          "--global-batch", "64"},
                         "search.svg");
    CHECK(has(se, "data-name=\"Pareto front\""));
    const auto run =
        plot({"run", (fs::path(LLMSIM_SOURCE_DIR) / "scenarios/sweeps/llama3-70b-tp-pp.json").string(), "--fast"},
             "run.svg");
    // 3 GPU counts x (2 pp x 3 tp) lines.
    for (const char* line : {"pp=2, tp=2", "pp=2, tp=8", "pp=4, tp=4"})
        CHECK(has(run, std::string("data-name=\"") + line + "\""));
    CHECK(has(run, "gpus (log scale)"));
}

TEST_CASE("estimate --qps-sweep --plot: p50/p99 TTFT and TPOT against the rate, log-log, the knee marked", "[plot]") {
    const auto svg = plot({"estimate", "--model", "llama-3-8b", "--system", "dgx-h100", "--input-len", "1000",
                           "--output-len", "250", "--requests", "300", "--qps-sweep", "1,4,16,64"},
                          "sweep.svg");
    for (const char* s : {"TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99"})
        CHECK(has(svg, std::string("data-name=\"") + s + "\""));
    CHECK(has(svg, "offered rate (requests/s) (log scale)"));
    CHECK(has(svg, "latency (ms) (log scale)"));
    CHECK(has(svg, ">capacity knee 4 req/s<"));   // 16 req/s serves 14.97 < 95%
    for (const char* tick : {">1<", ">10<", ">100<", ">64<"}) CHECK(has(svg, tick));
}
