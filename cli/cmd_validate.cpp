// llmsim validate FILE...: every case of a validation file (../shared/validation format) against
// its measured value; per-case error and mean / median / worst absolute error, all and exact cases.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/estimate_report.hpp"
#include "cost_models/inference.hpp"
#include "cost_models/step_time.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/scenario.hpp"

namespace llmsim::cli {

namespace {

struct CaseResult {
    std::string id, file, quantity, error_text;
    double predicted = 0, measured = 0, error = 0;
    bool exact = false, ok = false;
};

struct Summary {
    std::size_t n = 0;
    double mean = 0, median = 0, worst = 0;
    std::string worst_id;
};

Summary summarize(const std::vector<CaseResult>& rs, bool exact_only) {
    Summary s;
    std::vector<double> errs;
    for (const auto& r : rs) {
        if (!r.ok || (exact_only && !r.exact)) continue;
        const double a = std::fabs(r.error);
        errs.push_back(a);
        if (a >= s.worst) {
            s.worst = a;
            s.worst_id = r.id;
        }
    }
    s.n = errs.size();
    if (errs.empty()) return s;
    double sum = 0;
    for (double x : errs) sum += x;
    s.mean = sum / errs.size();
    std::sort(errs.begin(), errs.end());
    s.median = errs.size() % 2 ? errs[errs.size() / 2] : 0.5 * (errs[errs.size() / 2 - 1] + errs[errs.size() / 2]);
    return s;
}

Json summary_json(const Summary& s) {
    return {{"cases", s.n}, {"mean_abs_error", s.mean}, {"median_abs_error", s.median}, {"worst_abs_error", s.worst},
            {"worst_case", s.worst_id}};
}

}  // namespace

void register_validate(CLI::App& app, Context& ctx) {
    auto files = std::make_shared<std::vector<std::string>>();
    auto json = std::make_shared<bool>(false);
    auto* cmd = app.add_subcommand("validate", "Predict every case of validation files and report the errors");
    cmd->add_option("files", *files, "Validation JSON files ({\"cases\": [{id, scenario, measured, assumed}]})")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_flag("--json", *json, "Print JSON");
    cmd->callback([files, json, &ctx] {
        std::vector<CaseResult> results;
        for (const auto& file : *files) {
            const Json doc = parse_json_file(file);
            if (!doc.is_object() || !doc.contains("cases") || !doc["cases"].is_array())
                throw ConfigError(fmt::format("{}#/cases: missing: expected an array of cases", file));
            const auto dir = std::filesystem::path(file).parent_path().string();
            std::size_t i = 0;
            for (const auto& c : doc["cases"]) {
                CaseResult r;
                r.file = file;
                r.id = c.value("id", fmt::format("case-{}", i));
                r.exact = c.contains("assumed") && c["assumed"].is_array() && c["assumed"].empty();
                try {
                    if (!c.contains("scenario") || !c.contains("measured"))
                        throw ConfigError(fmt::format("{}#/cases/{}: expected scenario and measured", file, i));
                    const Scenario s = parse_scenario(c["scenario"], dir.empty() ? "." : dir);
                    const auto& meas = c["measured"];
                    if (meas.contains("step_time_s")) {
                        r.quantity = "step_time_s";
                        r.measured = meas["step_time_s"].get<double>();
                        r.predicted = estimate_step(s).step_time_s;
                    } else if (meas.contains("output_tokens_per_s_per_gpu")) {
                        r.quantity = "output_tokens_per_s_per_gpu";
                        r.measured = meas["output_tokens_per_s_per_gpu"].get<double>();
                        r.predicted = estimate_inference(s).output_tokens_per_s_per_gpu;
                    } else {
                        throw ConfigError(fmt::format("{}#/cases/{}/measured: expected step_time_s or "
                                                      "output_tokens_per_s_per_gpu", file, i));
                    }
                    if (!std::isfinite(r.predicted) || r.predicted <= 0)
                        throw std::runtime_error("no finite prediction");
                    r.error = (r.predicted - r.measured) / r.measured;
                    r.ok = true;
                } catch (const ConfigError& e) {
                    r.error_text = e.what();
                } catch (const std::exception& e) {
                    r.error_text = e.what();
                }
                results.push_back(r);
                ++i;
            }
        }
        const Summary all = summarize(results, false);
        const Summary exact = summarize(results, true);
        std::size_t failed = 0;
        for (const auto& r : results) failed += r.ok ? 0 : 1;
        if (*json) {
            Json cases = Json::array();
            for (const auto& r : results) {
                Json c = {{"id", r.id}, {"file", r.file}, {"exact", r.exact}, {"ok", r.ok}};
                if (r.ok) {
                    c["quantity"] = r.quantity;
                    c["predicted"] = r.predicted;
                    c["measured"] = r.measured;
                    c["error"] = r.error;
                } else {
                    c["error_text"] = r.error_text;
                }
                cases.push_back(c);
            }
            print_json({{"cases", cases}, {"all", summary_json(all)}, {"exact", summary_json(exact)}, {"failed", failed}});
        } else {
            Table t({"case", "quantity", "predicted", "measured", "error", "exact"});
            for (const auto& r : results) {
                if (r.ok)
                    t.row({r.id, r.quantity, fmt::format("{:.4g}", r.predicted), fmt::format("{:.4g}", r.measured),
                           fmt::format("{:+.1f}%", 100 * r.error), r.exact ? "yes" : ""});
                else
                    t.row({r.id, "FAILED: " + r.error_text, "", "", "", ""});
            }
            std::cout << t.str();
            std::cout << fmt::format(
                "\nall {} cases:   mean |error| {:.1f}%, median {:.1f}%, worst {:.1f}% ({})\n", all.n, 100 * all.mean,
                100 * all.median, 100 * all.worst, all.worst_id);
            std::cout << fmt::format("exact {} cases: mean |error| {:.1f}%, median {:.1f}%, worst {:.1f}% ({})\n",
                                     exact.n, 100 * exact.mean, 100 * exact.median, 100 * exact.worst, exact.worst_id);
            if (failed) std::cout << fmt::format("{} case(s) FAILED to produce a prediction\n", failed);
        }
        ctx.exit_code = failed ? 1 : 0;
    });
}

}  // namespace llmsim::cli
