// llmsim validate [FILE...]: every case of validation files (validation/README.md) against its
// measured values; per-quantity errors with mean / median / worst over all and over exact cases.
// Without files, the published runs compiled into the binary (validation/). --fit-sustained fits each
// accelerator's sustained fraction instead (calibrate/sustained_fit.hpp).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "app/accuracy.hpp"
#include "app/validate.hpp"
#include "calibrate/sustained_fit.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/progress.hpp"
#include "hardware_db/units.hpp"
#include "hardware_db/validation_case.hpp"
#include "report/validate.hpp"

namespace llmsim::cli {

namespace {

std::string report_text(const app::ValidationReport& rep) {
    Table t({"case", "quantity", "predicted", "measured", "error", "closed form", "exact", "memory/GPU"});
    t.left(1).detail(7);
    for (const auto& r : rep.cases) {
        if (!r.ok()) {
            t.row({r.c->id, "FAILED: " + r.failure, "", "", "", "", "", ""});
            continue;
        }
        const std::string mem =
            r.fits ? fmt::format("{:.1f}/{:.0f} GiB{}{}", r.memory_bytes / kGiB, r.capacity_bytes / kGiB,
                                 *r.fits ? "" : " DOES NOT FIT", r.assumed.empty() ? "" : " (assumed levers)")
                   : "";
        for (const auto& q : r.quantities)
            t.row({r.c->id, q.quantity, fmt::format("{:.4g}", q.predicted), fmt::format("{:.4g}", q.measured),
                   fmt::format("{:+.1f}%", 100 * q.error),
                   q.closed_form_error ? fmt::format("{:+.1f}%", 100 * *q.closed_form_error) : "",
                   r.c->exact ? "yes" : "", mem});
    }
    std::string out = t.str() + "\n";
    auto line = [](const std::string& what, const app::ErrorStats& s) {
        return wrap_text(fmt::format("{}: {} cases, mean |error| {:.1f}%, median {:.1f}%, worst {:.1f}% ({})", what,
                                     s.n, 100 * s.mean, 100 * s.median, 100 * s.worst, s.worst_id));
    };
    for (const auto& [q, s] : rep.all) {
        out += line(q + ", all", s);
        if (const auto e = rep.exact.find(q); e != rep.exact.end()) out += line(q + ", exact", e->second);
        if (const auto c = rep.closed_form_all.find(q); c != rep.closed_form_all.end())
            out += line(q + ", closed form", c->second);
    }
    if (rep.training_cases)
        out += fmt::format("memory: {} of {} published training layouts fit\n", rep.training_fit, rep.training_cases);
    for (const auto& [q, c] : app::range_coverages(rep))
        out += wrap_text(fmt::format(
            "how sure, tested: the {} ranges (estimate's 'how sure') built without each case's own source hold "
            "{} of {} ({:.0f}%), where they state {:.0f}% on average",
            q, c.inside, c.runs, 100 * c.share(), 100 * c.stated_level()));
    if (rep.failed) out += fmt::format("{} case(s) FAILED to produce a prediction\n", rep.failed);
    return out;
}

int fit_sustained(const std::vector<ValidationCase>& cases, bool json) {
    const auto fits = calibrate::fit_sustained_fractions(cases);
    Json out = Json::object();
    // sustained_fraction; mean |error| in-sample, leave-one-out and leave-one-source-out (over the cases
    // with another source); "do not fit": layouts left out (memory).
    Table t({"accelerator", "cases", "do not fit", "fraction", "in-sample", "LOO", "LOSO"});
    // Per source: its cases predicted with the fraction fitted without it (every accelerator it ran on).
    struct SourceErrors {
        double in_sample = 0, loso = 0;
        std::size_t cases = 0, loso_cases = 0;
    };
    std::map<std::string, SourceErrors> by_source;
    for (const auto& f : fits) {
        const std::string left_out = std::to_string(f.not_fitting.size());
        if (!f.fitted) {
            t.row({f.accelerator, std::to_string(f.cases), left_out, "(too few cases to fit)", "", "", ""});
            continue;
        }
        Json per = Json::array();
        for (const auto& c : f.per_case) {
            Json row = {{"id", c.id},
                        {"source", c.source},
                        {"error", c.error},
                        {"loo_fraction", c.loo_fraction},
                        {"loo_error", c.loo_error}};
            auto& se = by_source[c.source];
            se.in_sample += std::fabs(c.error);
            ++se.cases;
            if (c.loso) {
                row["loso_fraction"] = c.loso_fraction;
                row["loso_error"] = c.loso_error;
                se.loso += std::fabs(c.loso_error);
                ++se.loso_cases;
            }
            per.push_back(row);
        }
        out[f.accelerator] = {{"sustained_fraction", f.fraction},
                              {"cases", f.cases},
                              {"mean_abs_error", f.mean_abs_error},
                              {"loo_mean_abs_error", f.loo_mean_abs_error},
                              {"loso_mean_abs_error", f.loso_mean_abs_error},
                              {"loso_cases", f.loso_cases},
                              {"per_case", per},
                              {"not_fitting", f.not_fitting}};
        t.row({f.accelerator, std::to_string(f.cases), left_out, fmt::format("{:.4f}", f.fraction),
               fmt::format("{:.1f}%", 100 * f.mean_abs_error), fmt::format("{:.1f}%", 100 * f.loo_mean_abs_error),
               f.loso_cases > 0 ? fmt::format("{:.1f}% ({})", 100 * f.loso_mean_abs_error, f.loso_cases)
                                : std::string("one source")});
    }
    Table ts({"source", "cases", "in-sample", "LOSO"});
    Json sources = Json::object();
    for (const auto& [name, se] : by_source) {
        const double in = se.in_sample / static_cast<double>(se.cases);
        Json j = {{"cases", se.cases}, {"mean_abs_error", in}, {"loso_cases", se.loso_cases}};
        std::string loso = "no other source on its accelerator";
        if (se.loso_cases > 0) {
            const double l = se.loso / static_cast<double>(se.loso_cases);
            j["loso_mean_abs_error"] = l;
            loso = fmt::format("{:.1f}%", 100 * l);
            if (se.loso_cases < se.cases) loso += fmt::format(" ({} of {})", se.loso_cases, se.cases);
        }
        sources[name] = j;
        ts.row({name, std::to_string(se.cases), fmt::format("{:.1f}%", 100 * in), loso});
    }
    // The step-time ranges estimate, search and plan report, built without each run's own source: how
    // often they hold it.
    std::map<std::string, std::string> source_of;
    for (const auto& c : cases) source_of[c.id] = source_key(c.source);
    const auto cover = app::step_time_interval_coverage(app::builtin_residuals(), source_of);
    if (json) {
        print_json({{"accelerators", out},
                    {"sources", sources},
                    {"step_time_interval_coverage", report::coverage_json(cover)}});
    } else {
        std::cout << t.str()
                  << wrap_text(
                         "mean |error| of step time: in-sample; LOO: each case with the fraction fitted without it; "
                         "LOSO: without every case of its source (in brackets: the cases another source could "
                         "fit)")
                  << "\n"
                  << ts.str()
                  << wrap_text(fmt::format(
                         "step-time ranges (estimate's 'how sure', step_time_interval_s) built without each run's "
                         "own source hold {} of {} runs ({:.0f}%), where they state {:.0f}% on average",
                         cover.inside, cover.runs, 100 * cover.share(), 100 * cover.stated_level()));
    }
    return 0;
}

}   // namespace

void setup_validate(CLI::App* cmd, Context& ctx) {
    auto files = std::make_shared<std::vector<std::string>>();
    auto json = std::make_shared<bool>(false);
    auto fit = std::make_shared<bool>(false);
    auto residuals = std::make_shared<std::string>();
    cmd->add_option("files", *files,
                    "Validation JSON files ({\"cases\": [{id, scenario, measured, assumed}]}); default: the published "
                    "runs in validation/ (training.json, inference.json, serving.json), compiled into the binary");
    cmd->add_flag("--json", *json, "Print JSON");
    cmd->add_flag("--fit-sustained", *fit,
                  "Fit each accelerator's efficiency.sustained_fraction to the training cases (least absolute "
                  "deviations of log step time, accelerators with >= 3 cases), with leave-one-out and "
                  "leave-one-source-out errors");
    cmd->add_option("--residuals", *residuals,
                    "Also write the cases' residuals to this JSON file (hardware_db/data/residuals/serving.json "
                    "and training.json are this file for validation/serving.json and training.json: the ranges "
                    "answers carry)");
    cmd->callback([files, json, fit, residuals, &ctx] {
        const auto cases = report::read_validation_cases(*files);
        if (*fit) {
            ctx.exit_code = fit_sustained(cases, *json);
            return;
        }
        ProgressBar bar("validate");
        const auto rep = app::run_validation(cases, [&bar](std::size_t done, std::size_t total) {
            bar.update(static_cast<double>(done) / static_cast<double>(std::max<std::size_t>(total, 1)));
        });
        if (!residuals->empty()) {
            // Written whole to a temporary beside it, then renamed: never half-written.
            const std::string tmp = *residuals + ".tmp";
            {
                std::ofstream f(tmp, std::ios::binary);
                if (!f) throw WriteError("--residuals: " + tmp + ": cannot be written");
                f << app::residuals_json_text(app::residuals(rep));
                check_written(f, tmp, "--residuals");
            }
            if (std::rename(tmp.c_str(), residuals->c_str()) != 0)
                throw WriteError("--residuals: " + *residuals + ": cannot be written");
        }
        if (*json)
            print_json(report::validation_json(rep));
        else
            std::cout << report_text(rep);
        ctx.exit_code = rep.failed ? 1 : 0;
    });
}

}   // namespace llmsim::cli
