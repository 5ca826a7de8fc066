// llmsim calibrate import-nccl-tests LOG... [--json]
// llmsim calibrate fit [RAW.json] [--nccl-tests LOG...] [--system PRESET] -o PROFILE.json [--json]
// Reading nccl-tests logs and fitting llmsim-probe measurements into a calibration profile
// (docs/calibration.md). Everything is computed before anything is printed.
#include <chrono>
#include <ctime>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "calibrate/nccl_tests.hpp"
#include "calibrate/profile.hpp"
#include "calibrate/raw.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "hardware_db/database.hpp"
#include "hardware_db/errors.hpp"

namespace llmsim::cli {

namespace {

std::string today_utc() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[16];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
    return buf;
}

std::string quote_arg(const std::string& a) {
    return a.find_first_of(" \t\"'") == std::string::npos ? a : "'" + a + "'";
}

std::string fixed(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

std::string test_table(const calibrate::NcclTestsRun& t) {
    std::string out = fmt::format("{}:{}: {} on {} ranks", t.source_file, t.first_line, t.collective,
                                  t.ranks > 0 ? std::to_string(t.ranks) : std::string("unknown"));
    if (t.nodes > 0) out += fmt::format(", {} node{}", t.nodes, t.nodes == 1 ? "" : "s");
    if (!t.gpu_name.empty()) out += ", " + t.gpu_name;
    if (!t.nccl_version.empty()) out += ", NCCL " + t.nccl_version;
    out += fmt::format("  [collective: {}; ranks: {}]\n", t.collective_source, t.ranks_source);
    Table tab({"size (B)", "count", "type", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "in-place time (us)",
               "algbw (GB/s)", "busbw (GB/s)"});
    for (const auto& r : t.rows) {
        auto half = [](const calibrate::NcclTestsResult& h, std::vector<std::string>& cells) {
            if (!h.present) {
                cells.insert(cells.end(), {"-", "-", "-"});
                return;
            }
            cells.push_back(fixed(h.time_us, 2));
            cells.push_back(fixed(h.algbw_GBps, 2));
            cells.push_back(fixed(h.busbw_GBps, 2));
        };
        std::vector<std::string> cells{std::to_string(r.size_bytes), std::to_string(r.count), r.type};
        half(r.out_of_place, cells);
        half(r.in_place, cells);
        tab.row(std::move(cells));
    }
    out += tab.str();
    if (t.avg_busbw_GBps) {
        out += fmt::format("avg bus bandwidth: {} GB/s ({} rows)\n", fmt::format("{:g}", *t.avg_busbw_GBps),
                           t.rows.size());
    } else if (auto m = calibrate::mean_busbw(t)) {
        out += fmt::format("avg bus bandwidth: no footer in the log; mean of the busbw column {:.4g} GB/s ({} rows)\n",
                           *m, t.rows.size());
    }
    return out;
}

struct ImportOptions {
    std::vector<std::string> logs;
    bool json = false;
};

struct FitOptions {
    std::string raw;
    std::vector<std::string> logs;
    std::string system;
    std::string out;
    bool json = false;
    bool no_reject = false;
};

}   // namespace

void setup_calibrate(CLI::App* cal, Context& ctx) {
    cal->require_subcommand(1);

    // ---------------------------------------------------------------- import-nccl-tests
    auto io = std::make_shared<ImportOptions>();
    auto* imp = cal->add_subcommand("import-nccl-tests",
                                    "Read nccl-tests output (text logs or -J JSON) and check busbw against size/time");
    imp->add_option("logs", io->logs, "nccl-tests output files")->required();
    imp->add_flag("--json", io->json, "Print JSON instead of tables");
    imp->callback([io, &ctx] {
        std::vector<calibrate::NcclTestsFile> files;
        for (const auto& path : io->logs) files.push_back(calibrate::read_nccl_tests_file(path));
        std::vector<std::string> warnings;
        for (const auto& f : files) {
            warnings.insert(warnings.end(), f.warnings.begin(), f.warnings.end());
            for (const auto& t : f.tests) warnings.insert(warnings.end(), t.warnings.begin(), t.warnings.end());
        }
        if (io->json) {
            Json tests = Json::array();
            for (const auto& f : files)
                for (const auto& t : f.tests) tests.push_back(calibrate::to_json(t));
            Json file_warnings = Json::array();
            for (const auto& f : files)
                for (const auto& w : f.warnings) file_warnings.push_back(w);
            print_json({{"tests", tests}, {"warnings", file_warnings}});
        } else {
            bool first = true;
            for (const auto& f : files)
                for (const auto& t : f.tests) {
                    if (!first) std::cout << "\n";
                    first = false;
                    std::cout << test_table(t);
                }
        }
        for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
        ctx.exit_code = 0;
    });

    // ---------------------------------------------------------------- fit
    auto fo = std::make_shared<FitOptions>();
    auto* fit = cal->add_subcommand(
        "fit", "Fit cost-model parameters to llmsim-probe measurements and/or nccl-tests logs; write a profile");
    fit->add_option("raw", fo->raw, "Raw measurement JSON written by llmsim-probe");
    fit->add_option("--nccl-tests", fo->logs, "nccl-tests output files (text or -J JSON)");
    fit->add_option("--system", fo->system,
                    "System preset the nominal numbers come from (default: guessed from the GPU name)");
    fit->add_option("-o,--out", fo->out, "Profile JSON to write")->required();
    fit->add_flag("--json", fo->json, "Print the profile JSON instead of the report");
    fit->add_flag("--no-reject", fo->no_reject, "Keep every point (no MAD outlier rejection)");
    fit->callback([fo, &ctx] {
        if (fo->raw.empty() && fo->logs.empty())
            throw ConfigError(
                "calibrate fit: nothing to fit: give a raw file from llmsim-probe and/or --nccl-tests LOG...");
        std::optional<calibrate::RawMeasurements> raw;
        if (!fo->raw.empty()) raw = calibrate::read_raw(fo->raw);
        calibrate::CalibrateInputs in;
        for (const auto& path : fo->logs)
            for (auto& t : calibrate::read_nccl_tests_file(path).tests) in.logs.push_back(std::move(t));
        std::string preset = fo->system;
        if (preset.empty()) {
            std::string gpu = raw ? raw->gpu_name() : std::string();
            for (const auto& t : in.logs)
                if (gpu.empty()) gpu = t.gpu_name;
            preset = calibrate::guess_system_preset(gpu);
            if (preset.empty())
                throw ConfigError(
                    fmt::format("--system: cannot guess the system preset from the GPU name \"{}\"; "
                                "pass --system NAME (see `llmsim hw list`)",
                                gpu.empty() ? std::string("(none recorded)") : gpu));
        }
        in.nominal = calibrate::nominal_from_system(Database::builtin().system(preset));
        in.raw = raw ? &*raw : nullptr;
        in.today = today_utc();
        in.robust.reject = !fo->no_reject;
        std::string cmd = "llmsim calibrate fit";
        if (!fo->raw.empty()) cmd += " " + quote_arg(fo->raw);
        if (!fo->logs.empty()) {
            cmd += " --nccl-tests";
            for (const auto& l : fo->logs) cmd += " " + quote_arg(l);
        }
        if (!fo->system.empty()) cmd += " --system " + quote_arg(fo->system);
        cmd += " -o " + quote_arg(fo->out);
        if (fo->no_reject) cmd += " --no-reject";
        in.command = cmd;

        const auto c = calibrate::calibrate(in);
        const Json profile = calibrate::profile_json(c);
        calibrate::write_json_file(fo->out, profile);
        if (fo->json) {
            print_json(profile);
        } else {
            std::cout << calibrate::report_text(c);
            std::cout << fmt::format(
                "\nprofile written to {} ({} key{}); use it with\n"
                "  \"system\": {{\"preset\": \"{}\", \"profile\": \"{}\"}}\n",
                fo->out, c.keys.size(), c.keys.size() == 1 ? "" : "s", in.nominal.preset, fo->out);
        }
        ctx.exit_code = 0;
    });
}

}   // namespace llmsim::cli
