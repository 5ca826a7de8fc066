// The hardware database (hardware_db/, docs/hardware-db.md): every data file loads, every number
// has a source, presets with overrides change only what they override (and say so in the
// provenance), the contract's systems exist, and the peaks match validation/hardware.csv.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "hardware_db/database.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/scenario.hpp"
#include "hardware_db/units.hpp"

using namespace llmsim;

namespace {

const Database& db() { return Database::builtin(); }

// Every numeric leaf (and array of numbers) of `j`, as a dotted path ("efficiency.gemm_max.bf16").
void numeric_paths(const Json& j, const std::string& prefix, std::vector<std::string>& out) {
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (prefix.empty() && it.key() == "sources") continue;
        const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (it->is_object())
            numeric_paths(*it, path, out);
        else if (it->is_number() || it->is_array())
            out.push_back(path);
    }
}

// A source entry for the path itself or one of its parents ("peak_tflops" covers "peak_tflops.bf16").
bool has_source(const Json& sources, const std::string& path) {
    std::string p = path;
    while (true) {
        if (sources.contains(p) && sources[p].is_string() && !sources[p].get<std::string>().empty()) return true;
        const auto dot = p.rfind('.');
        if (dot == std::string::npos) return false;
        p = p.substr(0, dot);
    }
}

void check_sources(const Json& j, const std::string& what) {
    REQUIRE(j.contains("sources"));
    std::vector<std::string> paths;
    numeric_paths(j, "", paths);
    CHECK(paths.size() >= 5);
    for (const auto& p : paths) {
        INFO(what << ": numeric key " << p << " has no source (exact path or a parent)");
        CHECK(has_source(j["sources"], p));
    }
    // Every source names a key that exists (no stale entries).
    for (auto it = j["sources"].begin(); it != j["sources"].end(); ++it) {
        const Json* node = &j;
        std::stringstream ss(it.key());
        std::string part;
        bool found = true;
        while (std::getline(ss, part, '.')) {
            if (!node->is_object() || !node->contains(part)) {
                found = false;
                break;
            }
            node = &(*node)[part];
        }
        INFO(what << ": source for missing key " << it.key());
        CHECK(found);
    }
}

// hardware.csv: fields may be quoted and contain commas.
std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> row;
    std::string field;
    bool quoted = false;
    char c;
    while (in.get(c)) {
        if (quoted) {
            if (c == '"') {
                if (in.peek() == '"') {
                    field += '"';
                    in.get(c);
                } else {
                    quoted = false;
                }
            } else {
                field += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            row.push_back(field);
            field.clear();
        } else if (c == '\n') {
            row.push_back(field);
            field.clear();
            rows.push_back(row);
            row.clear();
        } else if (c != '\r') {
            field += c;
        }
    }
    if (!field.empty() || !row.empty()) {
        row.push_back(field);
        rows.push_back(row);
    }
    std::vector<std::map<std::string, std::string>> out;
    for (std::size_t i = 1; i < rows.size(); ++i) {
        std::map<std::string, std::string> m;
        for (std::size_t k = 0; k < rows[0].size() && k < rows[i].size(); ++k) m[rows[0][k]] = rows[i][k];
        out.push_back(m);
    }
    return out;
}

// The leading number of a CSV cell ("459 (listed; ...)" -> 459); NaN for "n/a" or empty.
double leading_number(const std::string& s) {
    try {
        std::size_t used = 0;
        const double v = std::stod(s, &used);
        return used > 0 ? v : NAN;
    } catch (...) {
        return NAN;
    }
}

}   // namespace

TEST_CASE("every accelerator, system and model JSON loads through Database::builtin()", "[hwdb]") {
    CHECK(db().accelerator_names().size() >= 12);
    CHECK(db().system_names().size() >= 11);
    CHECK(db().model_names().size() >= 30);
    for (const auto& n : db().accelerator_names()) {
        INFO("accelerator " << n);
        AcceleratorSpec a;
        REQUIRE_NOTHROW(a = db().accelerator(n));
        CHECK(a.name == n);
        CHECK(a.peak(Precision::bf16) + a.peak(Precision::fp16) > 0);
        CHECK(a.hbm_capacity_bytes > 8e9);
        CHECK(a.hbm_GBps > 100);
        CHECK(a.sm_count > 0);
        for (int i = 0; i < kPrecisionCount; ++i) {
            CHECK(a.efficiency.gemm_max[i] > 0.0);
            CHECK(a.efficiency.gemm_max[i] <= 1.0);
        }
    }
    for (const auto& n : db().system_names()) {
        INFO("system " << n);
        SystemSpec s;
        REQUIRE_NOTHROW(s = db().system(n));
        CHECK(s.name == n);
        CHECK(s.gpus_per_node >= 1);
        CHECK(s.intra_node_GBps > 0);
        CHECK_FALSE(s.gpu.name.empty());
        CHECK(s.gpu.hbm_capacity_bytes > 0);
        if (s.is_torus())
            CHECK(s.ici_link_GBps > 0);
        else
            CHECK(s.inter_node_GBps > 0);
    }
    for (const auto& n : db().model_names()) {
        INFO("model " << n);
        ModelSpec m;
        REQUIRE_NOTHROW(m = db().model(n));
        CHECK(m.name == n);
        CHECK(m.layers > 0);
        CHECK(m.heads % m.kv_heads == 0);
        CHECK_FALSE(m.source.empty());
    }
}

TEST_CASE("every numeric key of every accelerator and system file has a source entry", "[hwdb][provenance]") {
    for (const auto& n : db().accelerator_names()) check_sources(db().accelerator_json(n), "accelerators/" + n);
    for (const auto& n : db().system_names()) check_sources(db().system_json(n), "systems/" + n);
}

TEST_CASE("the source check catches a number without a source", "[hwdb][provenance]") {
    Json j = db().accelerator_json("h100-sxm");
    j["sources"].erase("hbm_GBps");
    std::vector<std::string> paths;
    numeric_paths(j, "", paths);
    bool missing = false;
    for (const auto& p : paths) missing = missing || !has_source(j["sources"], p);
    CHECK(missing);
}

TEST_CASE("provenance of loaded specs carries the file's sources", "[hwdb][provenance]") {
    const auto a = db().accelerator("h100-sxm");
    REQUIRE(a.provenance.count("peak_tflops"));
    CHECK(a.provenance.at("peak_tflops").source.find("datasheet") != std::string::npos);
    REQUIRE(a.provenance.count("efficiency.gemm_max.bf16"));
    CHECK(a.provenance.at("efficiency.gemm_max.bf16").kind == "measurement");
}

TEST_CASE("preset with override {\"preset\":\"dgx-h100\",\"inter_node_GBps\":25} changes only that value",
          "[hwdb][override]") {
    Problems pr;
    const SystemSpec base = db().system("dgx-h100");
    const SystemSpec s =
        db().resolve_system(Json::parse(R"({"preset": "dgx-h100", "inter_node_GBps": 25})"), "/system", pr);
    REQUIRE(pr.empty());
    CHECK(s.inter_node_GBps == 25.0);
    CHECK(base.inter_node_GBps == 50.0);
    REQUIRE(s.provenance.count("inter_node_GBps"));
    CHECK(s.provenance.at("inter_node_GBps").kind == "override");
    CHECK(base.provenance.at("inter_node_GBps").kind != "override");
    // Everything else is the preset's: compare the echoed JSON with that one key put back.
    Json a = to_json(s, true), b = to_json(base, true);
    a["inter_node_GBps"] = b["inter_node_GBps"];
    a["provenance"]["inter_node_GBps"] = b["provenance"]["inter_node_GBps"];
    CHECK(a == b);
    // Only the overridden key is marked.
    int overrides = 0;
    for (const auto& [k, v] : s.provenance) overrides += v.kind == "override";
    CHECK(overrides == 1);
}

TEST_CASE("overriding a preset's NICs or GPUs per node re-derives its scale-out bandwidth", "[hwdb][override]") {
    // The overrides were echoed and ignored: one 100 Gb/s card per DGX H100 node kept the 8 x 400 Gb/s figure.
    auto resolved = [](const char* text, Problems& pr) {
        return db().resolve_system(Json::parse(text), "/system", pr);
    };
    Problems pr;
    const SystemSpec one = resolved(R"({"preset": "dgx-h100", "nics_per_node": 1, "nic_Gbps": 100})", pr);
    REQUIRE(pr.empty());
    CHECK(one.inter_node_GBps == Approx(1.0 * 100 / 8 / 8));   // 1.5625 GB/s per GPU
    CHECK(one.provenance.at("inter_node_GBps").kind == "override");
    CHECK(one.provenance.at("inter_node_GBps").source.find("nics_per_node") != std::string::npos);
    CHECK(resolved(R"({"preset": "dgx-h100", "gpus_per_node": 4, "scaleup_domain": 4})", pr).inter_node_GBps ==
          Approx(8.0 * 400 / 8 / 4));
    REQUIRE(pr.empty());
    // Stated beside them, inter_node_GBps wins.
    CHECK(resolved(R"({"preset": "dgx-h100", "nics_per_node": 1, "inter_node_GBps": 7})", pr).inter_node_GBps == 7.0);
    REQUIRE(pr.empty());
    // No NICs left: no scale-out bandwidth to derive.
    (void)resolved(R"({"preset": "dgx-h100", "nics_per_node": 0})", pr);
    REQUIRE(pr.lines.size() == 1);
    CHECK(pr.lines[0].find("/system/nics_per_node: 0: expected a network") != std::string::npos);
}

TEST_CASE("a nested GPU override changes only that accelerator field, marked as an override", "[hwdb][override]") {
    Problems pr;
    const SystemSpec base = db().system("dgx-h100");
    const SystemSpec s =
        db().resolve_system(Json::parse(R"({"preset": "dgx-h100", "gpu": {"hbm_GBps": 4000}})"), "/system", pr);
    REQUIRE(pr.empty());
    CHECK(s.gpu.name == "h100-sxm");
    CHECK(s.gpu.hbm_GBps == 4000.0);
    CHECK(s.gpu.peak(Precision::bf16) == base.gpu.peak(Precision::bf16));
    CHECK(s.gpu.hbm_capacity_bytes == base.gpu.hbm_capacity_bytes);
    REQUIRE(s.gpu.provenance.count("hbm_GBps"));
    CHECK(s.gpu.provenance.at("hbm_GBps").kind == "override");
    CHECK(s.inter_node_GBps == base.inter_node_GBps);
    // A GPU swapped by name inside a preset system.
    const SystemSpec swapped =
        db().resolve_system(Json::parse(R"({"preset": "dgx-h100", "gpu": "h200-sxm"})"), "/system", pr);
    REQUIRE(pr.empty());
    CHECK(swapped.gpu.hbm_GBps == 4800.0);
    CHECK(swapped.intra_node_GBps == base.intra_node_GBps);
}

TEST_CASE("overrides are read strictly: an unknown or mistyped override key is a problem", "[hwdb][override]") {
    Problems pr;
    db().resolve_system(Json::parse(R"({"preset": "dgx-h100", "inter_node_gbps": 25, "nvls": 1})"), "/system", pr);
    REQUIRE(pr.lines.size() == 2);
    bool unknown = false, type = false;
    for (const auto& l : pr.lines) {
        unknown = unknown || (l.find("/system/inter_node_gbps") != std::string::npos &&
                              l.find("did you mean \"inter_node_GBps\"") != std::string::npos);
        type = type || (l.find("/system/nvls") != std::string::npos && l.find("true or false") != std::string::npos);
    }
    CHECK(unknown);
    CHECK(type);
}

TEST_CASE("the contract's 11 system names exist", "[hwdb][contract]") {
    for (const std::string n : {"dgx-a100-40gb", "dgx-a100-80gb", "dgx-h100", "dgx-h800", "hgx-h200", "dgx-b200",
                                "gb200-nvl72", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e"}) {
        INFO(n);
        CHECK_NOTHROW(db().system(n));
    }
    CHECK_THROWS_AS(db().system("dgx-h10"), ConfigError);
}

TEST_CASE(
    "published peaks: A100 312 bf16, H100 989.4 bf16 / 1978.9 fp8, H200 4800 GB/s, B200 2250, "
    "TPU v4 275, v5e 197, v5p 459, v6e 918",
    "[hwdb][peaks]") {
    const double T = 1e12;
    CHECK(db().accelerator("a100-sxm-80gb").peak(Precision::bf16) == 312 * T);
    CHECK(db().accelerator("a100-sxm-80gb").peak(Precision::fp8) == 0.0);   // no fp8 tensor cores
    CHECK(db().accelerator("a100-sxm-40gb").peak(Precision::bf16) == 312 * T);
    CHECK(db().accelerator("h100-sxm").peak(Precision::bf16) == Approx(989.4 * T));
    CHECK(db().accelerator("h100-sxm").peak(Precision::fp8) == Approx(1978.9 * T));
    CHECK(db().accelerator("h200-sxm").hbm_GBps == 4800.0);
    CHECK(db().accelerator("h200-sxm").peak(Precision::bf16) == Approx(989.4 * T));
    CHECK(db().accelerator("b200").peak(Precision::bf16) == 2250 * T);
    CHECK(db().accelerator("tpu-v4").peak(Precision::bf16) == 275 * T);
    CHECK(db().accelerator("tpu-v5e").peak(Precision::bf16) == 197 * T);
    CHECK(db().accelerator("tpu-v5p").peak(Precision::bf16) == 459 * T);
    CHECK(db().accelerator("tpu-v6e").peak(Precision::bf16) == 918 * T);
}

TEST_CASE("every accelerator row of validation/hardware.csv matches bf16, fp8 and HBM bandwidth", "[hwdb][peaks]") {
    const auto rows = read_csv(std::string(LLMSIM_VALIDATION_DIR) + "/hardware.csv");
    REQUIRE(rows.size() >= 11);
    const std::map<std::string, std::string> ids{{"A100-SXM4-40GB", "a100-sxm-40gb"},
                                                 {"A100-SXM4-80GB", "a100-sxm-80gb"},
                                                 {"H100-SXM5-80GB", "h100-sxm"},
                                                 {"H100-PCIe-80GB", "h100-pcie"},
                                                 {"H200-SXM-141GB", "h200-sxm"},
                                                 {"H800-SXM-80GB", "h800-sxm"},
                                                 {"B200-HGX", "b200"},
                                                 {"TPU-v4", "tpu-v4"},
                                                 {"TPU-v5e", "tpu-v5e"},
                                                 {"TPU-v5p", "tpu-v5p"},
                                                 {"TPU-v6e", "tpu-v6e"}};
    int matched = 0;
    for (const auto& row : rows) {
        const auto it = ids.find(row.at("id"));
        if (it == ids.end()) continue;
        ++matched;
        const auto a = db().accelerator(it->second);
        INFO(row.at("id") << " -> " << it->second);
        CHECK(a.peak(Precision::bf16) / 1e12 == Approx(leading_number(row.at("dense_bf16_tflops"))).epsilon(1e-6));
        CHECK(a.hbm_GBps == Approx(leading_number(row.at("hbm_bw_GBps"))).epsilon(1e-6));
        const double fp8 = leading_number(row.at("dense_fp8_tflops"));
        if (std::isnan(fp8))
            CHECK(a.peak(Precision::fp8) == 0.0);
        else
            CHECK(a.peak(Precision::fp8) / 1e12 == Approx(fp8).epsilon(1e-6));
    }
    CHECK(matched == static_cast<int>(ids.size()));
}

TEST_CASE("unknown accelerator and model names suggest the closest names", "[hwdb]") {
    try {
        db().accelerator("h100");
        FAIL("expected ConfigError");
    } catch (const ConfigError& e) {
        CHECK(std::string(e.what()).find("h100-sxm") != std::string::npos);
    }
    try {
        db().model("mixtral-8x7");
        FAIL("expected ConfigError");
    } catch (const ConfigError& e) {
        CHECK(std::string(e.what()).find("mixtral-8x7b") != std::string::npos);
    }
}

TEST_CASE("B200 and GB200 GEMM fractions are the measured MAMF values; B200 shares GB200's fitted fraction",
          "[hardware][sustained]") {
    // ml-engineering's Maximum Achievable Matmul FLOPS table (the source of H100's values too): B200
    // BF16 1745.0 / 2250, FP8 3432.5 / 4500; GB200 BF16 1822.0 / 2500, FP8 3615.6 / 5000.
    const auto& db = Database::builtin();
    const auto b200 = db.accelerator("b200"), gb200 = db.accelerator("gb200");
    CHECK(b200.gemm_max(Precision::bf16) == Approx(1745.0 / 2250).margin(5e-4));
    CHECK(b200.gemm_max(Precision::fp8) == Approx(3432.5 / 4500).margin(5e-4));
    CHECK(gb200.gemm_max(Precision::bf16) == Approx(1822.0 / 2500).margin(5e-4));
    CHECK(gb200.gemm_max(Precision::fp8) == Approx(3615.6 / 5000).margin(5e-4));
    // One B200 run fits in memory, too few to fit alone: the same die takes GB200's fit (pinned to the
    // fit itself in tests/test_calibrate_fit.cpp).
    CHECK(b200.efficiency.sustained_fraction == gb200.efficiency.sustained_fraction);
}

TEST_CASE("an inline model's bias and dropout default by its MLP family: SwiGLU none, GELU GPT-style", "[hwdb]") {
    Problems pr;
    const ModelSpec llama =
        parse_model(Json::parse(R"({"layers": 32, "hidden": 4096, "heads": 32, "ffn_hidden": 11008, "vocab": 32000,
                        "mlp": "swiglu"})"),
                    "/model", pr);
    const ModelSpec gpt =
        parse_model(Json::parse(R"({"layers": 32, "hidden": 4096, "heads": 32, "ffn_hidden": 16384, "vocab": 50257,
                        "mlp": "gelu"})"),
                    "/model", pr);
    const ModelSpec explicit_bias =
        parse_model(Json::parse(R"({"layers": 32, "hidden": 4096, "heads": 32, "ffn_hidden": 11008, "vocab": 32000,
                        "mlp": "swiglu", "bias": true, "dropout": true})"),
                    "/model", pr);
    REQUIRE(pr.empty());
    CHECK_FALSE(llama.bias);
    CHECK_FALSE(llama.dropout);
    CHECK(gpt.bias);
    CHECK(gpt.dropout);
    CHECK(explicit_bias.bias);
    CHECK(explicit_bias.dropout);
}

TEST_CASE("AMD Instinct and Blackwell Ultra entries carry their datasheet and MAMF numbers", "[hwdb][peaks]") {
    const double T = 1e12;
    // AMD MI300X datasheet: 1307.4 TFLOPS dense BF16, 2614.9 FP8, 192 GB HBM3 at 5.3 TB/s, 304 CUs, 750 W;
    // rocm-smi reports 205822885888 B of VRAM.
    const auto mi300x = db().accelerator("mi300x");
    CHECK(mi300x.vendor == "amd");
    CHECK(mi300x.peak(Precision::bf16) == Approx(1307.4 * T));
    CHECK(mi300x.peak(Precision::fp8) == Approx(2614.9 * T));
    CHECK(mi300x.hbm_GBps == 5300.0);
    CHECK(mi300x.hbm_capacity_bytes == Approx(205822885888.0).epsilon(1e-4));
    CHECK(mi300x.sm_count == 304);
    // ml-engineering MAMF: MI300X BF16 668.4 TFLOPS (over the 1307.4 peak, not the table's rounded 1300).
    CHECK(mi300x.gemm_max(Precision::bf16) == Approx(668.4 / 1307.4).margin(5e-4));
    // B300: 288 GB HBM3e (nvidia-smi 275040 MiB), 8 TB/s, BF16 2250 / FP8 4500 dense; MAMF 1769.0 and 3353.3.
    const auto b300 = db().accelerator("b300");
    CHECK(b300.hbm_capacity_bytes == Approx(275040.0 * 1024 * 1024).epsilon(1e-4));
    CHECK(b300.hbm_capacity_bytes < 288.0 * 1024 * 1024 * 1024);   // 288 GB printed, not 288 GiB
    CHECK(b300.hbm_GBps == 8000.0);
    CHECK(b300.peak(Precision::bf16) == 2250 * T);
    CHECK(b300.gemm_max(Precision::bf16) == Approx(1769.0 / 2250).margin(5e-4));
    CHECK(b300.gemm_max(Precision::fp8) == Approx(3353.3 / 4500).margin(5e-4));
    CHECK(db().accelerator("gb300").peak(Precision::fp4) == 15000 * T);
    // MI300X platform: 7 XGMI links x 64 GB/s per direction, no switch; DGX B300: 8x 800 Gb/s ConnectX-8.
    const auto mi = db().system("mi300x-8x");
    CHECK(mi.intra_node_GBps == 7 * 64.0);
    CHECK_FALSE(mi.nvls);
    CHECK(mi.inter_node_GBps == 8 * 400 / 8.0 / 8);
    const auto dgx = db().system("dgx-b300");
    CHECK(dgx.inter_node_GBps == 8 * 800 / 8.0 / 8);
    CHECK(db().system("gb300-nvl72").scaleup_domain == 72);
    // MI325X: MI300X compute, 256 GB HBM3e at 6 TB/s, 1000 W; MI355X: 2516.6 BF16 (2400 MHz x 512 x 2 x 1024),
    // 288 GB at 8 TB/s, 256 CUs; MAMF 784.9 and 1565.0 over those peaks.
    const auto mi325x = db().accelerator("mi325x"), mi355x = db().accelerator("mi355x");
    CHECK(mi325x.peak(Precision::bf16) == mi300x.peak(Precision::bf16));
    CHECK(mi325x.hbm_GBps == 6000.0);
    CHECK(mi325x.gemm_max(Precision::bf16) == Approx(784.9 / 1307.4).margin(5e-4));
    CHECK(mi355x.peak(Precision::bf16) == Approx(2400e6 * 512 * 2 * 1024));
    CHECK(mi355x.hbm_GBps == 8000.0);
    CHECK(mi355x.sm_count == 256);
    CHECK(mi355x.gemm_max(Precision::bf16) == Approx(1565.0 / 2516.6).margin(5e-4));
    CHECK(db().system("mi355x-8x").intra_node_GBps == Approx(7 * 153.6 / 2));
}

TEST_CASE("L40S, L4, H20, A800, H100 NVL and GH200 carry their datasheet peaks, bandwidth and nvidia-smi capacity",
          "[hwdb][peaks]") {
    const double T = 1e12, MiB = 1024.0 * 1024.0;
    // Datasheet dense peaks (2:4-sparse figures halved), bandwidth, nvidia-smi MiB, SMs, and the measured
    // BF16 matmul (MAMF: mag-/gpu_benchmark for L40S, L4, H100 NVL; ml-engineering for GH200; 0: none).
    struct Sheet {
        const char* name;
        double bf16_tflops, fp8_tflops, GBps, MiB_total;
        int sms;
        double mamf_bf16_tflops;
    };
    const Sheet sheets[] = {
        {"l40s", 362.05, 733, 864, 46068, 142, 252.0},                   // NVIDIA L40S datasheet
        {"l4", 242.0 / 2, 485.0 / 2, 300, 23034, 58, 91.4},              // NVIDIA L4 datasheet
        {"h20", 148, 296, 4000, 97871, 78, 0},                           // NVIDIA H20
        {"h100-nvl", 1671.0 / 2, 3341.0 / 2, 3900, 95830, 132, 488.5},   // NVIDIA H100 NVL datasheet
        {"gh200", 989.4, 1978.9, 4900, 146831, 132, 828.6},              // GH200 144GB HBM3e: H100 SXM peaks
    };
    for (const auto& x : sheets) {
        INFO(x.name);
        const auto a = db().accelerator(x.name);
        CHECK(a.peak(Precision::bf16) == Approx(x.bf16_tflops * T).epsilon(1e-4));
        CHECK(a.peak(Precision::fp8) == Approx(x.fp8_tflops * T).epsilon(1e-4));
        CHECK(a.hbm_GBps == x.GBps);
        CHECK(a.hbm_capacity_bytes == Approx(x.MiB_total * MiB).epsilon(1e-4));
        CHECK(a.sm_count == x.sms);
        if (x.mamf_bf16_tflops > 0)
            CHECK(a.gemm_max(Precision::bf16) == Approx(x.mamf_bf16_tflops / x.bf16_tflops).margin(5e-4));
    }
    CHECK(db().accelerator("gh200").gemm_max(Precision::fp8) == Approx(1535.0 / 1978.9).margin(5e-4));
    // A800 SXM4 80GB: A100's chip (312 BF16, no FP8, 2039 GB/s, 81920 MiB) with NVLink cut to 400 GB/s.
    const auto a800 = db().accelerator("a800-sxm-80gb"), a100 = db().accelerator("a100-sxm-80gb");
    CHECK(a800.peak(Precision::bf16) == 312 * T);
    CHECK(a800.peak(Precision::fp8) == 0.0);
    CHECK(a800.hbm_GBps == a100.hbm_GBps);
    CHECK(a800.hbm_capacity_bytes == 81920 * MiB);
    CHECK(a800.efficiency.sustained_fraction == a100.efficiency.sustained_fraction);

    // Their systems: PCIe-only Ada servers (PCIe Gen4 x16 = 31.5 GB/s per direction, no NVLS), NVLink
    // 900 / 400 GB/s bidirectional (450 / 200 per direction), H100 NVL bridged pairs, one GH200 per node
    // with NVLink-C2C 900 GB/s bidirectional as its host link.
    for (const std::string n : {"l40s-8x", "l4-8x"}) {
        INFO(n);
        const auto s = db().system(n);
        CHECK(s.gpus_per_node == 8);
        CHECK(s.scaleup_domain == 8);
        CHECK(s.intra_node_GBps == Approx(16 * 16 * 128.0 / 130 / 8).epsilon(1e-3));
        CHECK(s.pcie_GBps == s.intra_node_GBps);
        CHECK_FALSE(s.nvls);
    }
    CHECK(db().system("l40s-8x").gpu.name == "l40s");
    CHECK(db().system("l4-8x").gpu.name == "l4");
    const auto hgx = db().system("hgx-h20");
    CHECK(hgx.gpu.name == "h20");
    CHECK(hgx.intra_node_GBps == 900 / 2.0);
    CHECK(hgx.nvls);
    const auto dgx = db().system("dgx-a800");
    CHECK(dgx.gpu.name == "a800-sxm-80gb");
    CHECK(dgx.intra_node_GBps == 400 / 2.0);
    CHECK(dgx.inter_node_GBps == 8 * 200 / 8.0 / 8);
    const auto nvl8 = db().system("h100-nvl-8x");
    CHECK(nvl8.gpu.name == "h100-nvl");
    CHECK(nvl8.scaleup_domain == 2);
    CHECK(nvl8.intra_node_GBps == 600 / 2.0);
    const auto gh = db().system("gh200");
    CHECK(gh.gpus_per_node == 1);
    CHECK(gh.inter_node_GBps == 400 / 8.0);
    CHECK(gh.pcie_GBps == 900 / 2.0);
    CHECK(gh.host_memory_bytes == 480 * 1024.0 * MiB);
}

TEST_CASE("sizes and counts as people type them: one reader (hardware_db/units.hpp)", "[units][flags]") {
    // Decimal units are powers of 1000, binary ones of 1024; a count's B is a billion, a size's a byte.
    CHECK(quantity_in("350GB", "--bytes", QuantityKind::bytes, 0, 1e18) == 3.5e11);
    CHECK(quantity_in("326GiB", "--bytes", QuantityKind::bytes, 0, 1e18) == 326.0 * 1073741824.0);
    CHECK(quantity_in("70mb", "--bytes", QuantityKind::bytes, 0, 1e18) == 7e7);
    CHECK(quantity_in("1.5TiB", "--bytes", QuantityKind::bytes, 0, 1e18) == 1.5 * 1099511627776.0);
    CHECK(quantity_in("4096", "--bytes", QuantityKind::bytes, 0, 1e18) == 4096);
    CHECK(quantity_in("3.5e11", "--bytes", QuantityKind::bytes, 0, 1e18) == 3.5e11);
    CHECK(quantity_in("175B", "--params", QuantityKind::count, 1, 1e18) == 1.75e11);
    CHECK(quantity_in("1.4T", "--tokens", QuantityKind::count, 1, 1e18) == 1.4e12);
    CHECK(quantity_in("8k", "--n", QuantityKind::count, 1, 1e18) == 8000);
    CHECK(quantity_in("70G", "--params", QuantityKind::count, 1, 1e18) == 7e10);
    CHECK(quantity_in("5.76e23", "--compute", QuantityKind::count, 1, 1e40) == 5.76e23);
    // Not numbers a person means: hexadecimal, inf, nan, spaces, an empty exponent, a unit of the other kind.
    for (const char* bad : {"0x10", "0x1p3", "inf", "nan", " 1GB", "1GB ", "", "GB", "1e", "1..5", "--1", "1e400",
                            "4XB", "1GiBB", "2 GB"})
        CHECK_FALSE(parse_quantity(bad, QuantityKind::bytes).has_value());
    CHECK_FALSE(parse_quantity("1GiB", QuantityKind::count).has_value());
    CHECK_FALSE(parse_quantity("7Bn", QuantityKind::count).has_value());
    CHECK(parse_decimal("+.5e-1") == 0.05);
    CHECK_FALSE(parse_decimal("010x").has_value());
    // Out of bounds, or not read: the flag, the text and what was expected.
    try {
        (void)quantity_in("2EB", "--memory-headroom-bytes", QuantityKind::bytes, 0, 1e18);
        FAIL("2EB read");
    } catch (const ConfigError& e) {
        CHECK(std::string(e.what()) ==
              "--memory-headroom-bytes: \"2EB\": expected a size in [0, 1e+18] bytes (350GB, 3.5e11, 326GiB, 70MB)");
    }
    CHECK_THROWS_WITH(quantity_in("0.5", "--params", QuantityKind::count, 1, 1e18),
                      "--params: \"0.5\": expected a count in [1, 1e+18] (175B, 1.75e11, 1.4T, 8k)");
}
