// llmsim calibrate import-nccl-tests LOG... [--json]
// llmsim calibrate fit [RAW.json] [--nccl-tests LOG...] [--system PRESET] -o PROFILE.json [--json]
// Reading nccl-tests logs and fitting llmsim-probe measurements into a calibration profile
// (docs/calibration.md). Everything is computed before anything is printed.
#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "app/calibration_check.hpp"
#include "calibrate/nccl_tests.hpp"
#include "calibrate/profile.hpp"
#include "calibrate/raw.hpp"
#include "cli/calibration_truth.hpp"
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

// The table of one test, written as Table::str() writes it but row by row (a 10^6-row log is not
// held as a table of strings): a first pass measures the columns, a second writes the rows.
void write_test_table(std::ostream& os, const calibrate::NcclTestsRun& t) {
    std::string out = fmt::format("{}:{}: {} on {} ranks", t.source_file, t.first_line, t.collective,
                                  t.ranks > 0 ? std::to_string(t.ranks) : std::string("unknown"));
    if (t.nodes > 0) out += fmt::format(", {} node{}", t.nodes, t.nodes == 1 ? "" : "s");
    if (!t.gpu_name.empty()) out += ", " + t.gpu_name;
    if (!t.nccl_version.empty()) out += ", NCCL " + t.nccl_version;
    out = fit_text(out + fmt::format("  [collective: {}; ranks: {}]\n", t.collective_source, t.ranks_source));
    const std::array<std::string, 9> header{"size (B)",           "count",        "type",
                                            "time (us)",          "algbw (GB/s)", "busbw (GB/s)",
                                            "in-place time (us)", "algbw (GB/s)", "busbw (GB/s)"};
    std::array<std::size_t, 9> w{};
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = header[i].size();
    auto cells = [](const calibrate::NcclTestsRow& r, std::array<fmt::memory_buffer, 9>& c) {
        for (auto& b : c) b.clear();
        fmt::format_to(std::back_inserter(c[0]), FMT_COMPILE("{}"), r.size_bytes);
        fmt::format_to(std::back_inserter(c[1]), FMT_COMPILE("{}"), r.count);
        c[2].append(r.type.view());
        std::size_t k = 3;
        for (const auto* h : {&r.out_of_place, &r.in_place}) {
            for (double v : {h->time_us, h->algbw_GBps, h->busbw_GBps}) {
                if (h->present)
                    fmt::format_to(std::back_inserter(c[k]), FMT_COMPILE("{:.2f}"), v);
                else
                    c[k].push_back('-');
                ++k;
            }
        }
    };
    std::array<fmt::memory_buffer, 9> c;
    for (const auto& r : t.rows) {
        cells(r, c);
        for (std::size_t i = 0; i < w.size(); ++i) w[i] = std::max(w[i], c[i].size());
    }
    // Wider than the terminal (80 columns unless --wide), the in-place columns are left out, as Table leaves
    // out its optional columns, and a line under the table says so.
    std::size_t total = 0;
    for (auto x : w) total += x + 2;
    constexpr std::size_t kOutOfPlace = 6;   // size, count, type and the out-of-place time, algbw, busbw
    const std::size_t columns = table_width() > 0 && total - 2 > table_width() ? kOutOfPlace : w.size();
    if (columns < w.size()) {
        total = 0;
        for (std::size_t i = 0; i < columns; ++i) total += w[i] + 2;
    }
    // Cells are ASCII except perhaps the header's: padded by bytes, as Table pads them.
    auto emit = [&](auto cell) {
        const std::size_t start = out.size();
        for (std::size_t i = 0; i < columns; ++i) {
            const std::string_view v = cell(i);
            const std::size_t pad = w[i] > v.size() ? w[i] - v.size() : 0;
            if (i == 0) {
                out.append(v);
                out.append(pad, ' ');
            } else {
                out.append(2 + pad, ' ');
                out.append(v);
            }
        }
        std::size_t n = out.size();
        while (n > start && out[n - 1] == ' ') --n;
        out.resize(n);
        out += '\n';
    };
    emit([&](std::size_t i) { return std::string_view(header[i]); });
    out += std::string(total > 2 ? total - 2 : 0, '-') + "\n";
    for (const auto& r : t.rows) {
        cells(r, c);
        emit([&](std::size_t i) { return std::string_view(c[i].data(), c[i].size()); });
        if (out.size() > (std::size_t{1} << 20)) {
            os << out;
            out.clear();
        }
    }
    if (columns < w.size())
        out += wrap_text(fmt::format("(in-place time, algbw and busbw left out to fit {} columns; --wide shows them)",
                                     table_width()));
    if (t.avg_busbw_GBps) {
        out += fmt::format("avg bus bandwidth: {} GB/s ({} rows)\n", fmt::format("{:g}", *t.avg_busbw_GBps),
                           t.rows.size());
    } else if (auto m = calibrate::mean_busbw(t)) {
        out +=
            wrap_text(fmt::format("avg bus bandwidth: no footer in the log; mean of the busbw column {:.4g} GB/s ({} "
                                  "rows)",
                                  *m, t.rows.size()));
    }
    os << out;
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

struct CheckOptions {
    std::string truth;
    std::string system;   // default: the truth file's GPU's system (as calibrate fit guesses presets)
    std::string profile;
    bool json = false;
};

std::string pct(double x) { return fmt::format("{:+.1f}%", 100.0 * x); }

std::string ms(double s) { return fmt::format("{:.3f}", s * 1e3); }

// The GPU a calibration profile was measured on (its measured_on.gpu), "" when it does not say or the
// profile cannot be read here (resolve_system reports that).
std::string profile_gpu(const std::string& profile, const Database& db) {
    Json prof;
    std::error_code ec;
    if (profile.find('/') == std::string::npos && !std::filesystem::is_regular_file(profile, ec)) {
        const Json* builtin = db.builtin_profile(profile);
        if (!builtin) return "";
        prof = *builtin;
    } else {
        try {
            prof = parse_json_file(profile);
        } catch (const ConfigError&) {
            return "";
        }
    }
    const Json* on = prof.is_object() && prof.contains("measured_on") ? &prof["measured_on"] : nullptr;
    return on && on->is_object() && on->contains("gpu") && (*on)["gpu"].is_string() ? (*on)["gpu"].get<std::string>()
                                                                                    : std::string();
}

// calibrate check prices the truth file on the system of the GPU that file names (it priced an H200 run
// as dgx-h100 unless --system was given: decode +13 ... +43%): --system when given, else the preset
// calibrate fit guesses from the truth file's GPU, else the one of the profile's GPU. A --system or a
// profile measured on another GPU than the truth file's is refused.
void choose_check_system(CheckOptions& co, const app::LayerTruth& truth, const Database& db) {
    const std::string truth_preset = calibrate::guess_system_preset(truth.gpu);
    const std::string prof_gpu = profile_gpu(co.profile, db);
    const std::string prof_preset = calibrate::guess_system_preset(prof_gpu);
    auto gpu_of = [&](const std::string& preset) { return db.system(preset).gpu.name; };
    std::vector<std::string> problems;
    if (!truth_preset.empty() && !prof_preset.empty() && gpu_of(truth_preset) != gpu_of(prof_preset))
        problems.push_back(
            fmt::format("--profile: {}: measured on \"{}\": expected a profile of the truth file's GPU "
                        "(\"{}\", {}#/gpu)",
                        co.profile, prof_gpu, truth.gpu, co.truth));
    if (co.system.empty()) {
        co.system = !truth_preset.empty() ? truth_preset : prof_preset;
        if (co.system.empty())
            problems.push_back(
                fmt::format("--system: cannot tell the system from the truth file's GPU \"{}\" "
                            "({}#/gpu) or the profile: expected --system NAME (`llmsim hw list`)",
                            truth.gpu, co.truth));
    } else if (!truth_preset.empty() &&
               db.system_names().end() != std::find(db.system_names().begin(), db.system_names().end(), co.system) &&
               gpu_of(co.system) != gpu_of(truth_preset)) {
        problems.push_back(
            fmt::format("--system: {}: its GPU is {}: expected a system of the truth file's GPU "
                        "(\"{}\", {}#/gpu; e.g. {})",
                        co.system, gpu_of(co.system), truth.gpu, co.truth, truth_preset));
    }
    if (!problems.empty()) throw ConfigError(problems);
}

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
            calibrate::write_import_json(std::cout, files);   // streamed: as print_json would print it
        } else {
            bool first = true;
            for (const auto& f : files)
                for (const auto& t : f.tests) {
                    if (!first) std::cout << "\n";
                    first = false;
                    write_test_table(std::cout, t);
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
            std::cout << fit_text(calibrate::report_text(c));
            std::cout << fmt::format(
                "\nprofile written to {} ({} key{}); use it with\n"
                "  \"system\": {{\"preset\": \"{}\", \"profile\": \"{}\"}}\n",
                fo->out, c.keys.size(), c.keys.size() == 1 ? "" : "s", in.nominal.preset, fo->out);
        }
        ctx.exit_code = 0;
    });

    // ---------------------------------------------------------------- check
    auto co = std::make_shared<CheckOptions>();
    auto* chk =
        cal->add_subcommand("check",
                            "Compare llmsim's GEMM, layer and decode-step times with a GPU's PyTorch measurements "
                            "(calibrate/probe/layer_truth.py), without and with a calibration profile");
    chk->add_option("truth", co->truth, "JSON written by calibrate/probe/layer_truth.py")->required();
    chk->add_option("--system", co->system,
                    "System preset (default: the one of the truth file's GPU, else the profile's measured_on)");
    chk->add_option("--profile", co->profile, "Calibration profile: a built-in name or a file")->required();
    chk->add_flag("--json", co->json, "Print JSON");
    chk->callback([co, &ctx] {
        const Database& db = Database::builtin();
        const app::LayerTruth truth = read_layer_truth_file(co->truth);
        choose_check_system(*co, truth, db);
        Problems pr;
        const SystemSpec base = db.resolve_system(Json(co->system), "--system", pr);
        const SystemSpec calibrated =
            db.resolve_system(Json{{"preset", co->system}, {"profile", co->profile}}, "--profile", pr);
        pr.raise_if_any();
        std::map<std::string, ModelSpec> models;
        // A model the zoo does not know is an error of the truth file, at its pointer.
        auto add_model = [&](const std::string& name, const std::string& pointer) {
            if (models.count(name)) return;
            try {
                models.emplace(name, db.model(name));
            } catch (const ConfigError& e) {
                std::vector<std::string> lines;
                for (const auto& l : e.problems())
                    lines.push_back(fmt::format("{}#{}/model: {}", co->truth, pointer, l));
                throw ConfigError(lines);
            }
        };
        for (std::size_t i = 0; i < truth.gemms.size(); ++i) add_model(truth.gemms[i].model, truth.gemms[i].pointer);
        for (std::size_t i = 0; i < truth.layers.size(); ++i) add_model(truth.layers[i].model, truth.layers[i].pointer);
        for (std::size_t i = 0; i < truth.decode.size(); ++i) add_model(truth.decode[i].model, truth.decode[i].pointer);
        const auto r = app::check_against_truth(truth, models, base, calibrated);
        if (co->json) {
            Json rows = Json::array(), summary = Json::array();
            for (const auto& row : r.rows)
                rows.push_back({{"kind", row.kind},
                                {"label", row.label},
                                {"measured_s", row.measured_s},
                                {"uncalibrated_s", row.uncalibrated_s},
                                {"calibrated_s", row.calibrated_s},
                                {"err_uncalibrated", row.err_uncalibrated()},
                                {"err_calibrated", row.err_calibrated()}});
            for (const auto& s : r.summary)
                summary.push_back({{"kind", s.kind},
                                   {"rows", s.rows},
                                   {"mean_abs_err_uncalibrated", s.mean_abs_err_uncalibrated},
                                   {"mean_abs_err_calibrated", s.mean_abs_err_calibrated},
                                   {"max_abs_err_uncalibrated", s.max_abs_err_uncalibrated},
                                   {"max_abs_err_calibrated", s.max_abs_err_calibrated}});
            print_json({{"gpu", r.gpu},
                        {"date", r.date},
                        {"truth_file", r.truth_file},
                        {"system", co->system},
                        {"profile", co->profile},
                        {"rows", rows},
                        {"summary", summary}});
        } else {
            std::cout << wrap_text(fmt::format("llmsim vs PyTorch on {} ({}), system {}, profile {}; isolated "
                                               "kernels (sustained_fraction 1)",
                                               r.gpu, r.date, co->system, co->profile))
                      << "\n";
            Table t({"measured", "ms", "uncalibrated ms", "err", "calibrated ms", "err"});
            for (const auto& row : r.rows)
                t.row({row.label, ms(row.measured_s), ms(row.uncalibrated_s), pct(row.err_uncalibrated()),
                       ms(row.calibrated_s), pct(row.err_calibrated())});
            std::cout << t.str() << "\n";
            Table s({"kind", "rows", "mean |err| uncalibrated", "max", "mean |err| calibrated", "max"});
            for (const auto& x : r.summary)
                s.row({x.kind, std::to_string(x.rows), fmt::format("{:.1f}%", 100 * x.mean_abs_err_uncalibrated),
                       fmt::format("{:.1f}%", 100 * x.max_abs_err_uncalibrated),
                       fmt::format("{:.1f}%", 100 * x.mean_abs_err_calibrated),
                       fmt::format("{:.1f}%", 100 * x.max_abs_err_calibrated)});
            std::cout << s.str();
        }
        ctx.exit_code = 0;
    });
}

}   // namespace llmsim::cli
