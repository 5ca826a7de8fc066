// llmsim validate FILE...: every case of a validation file (../shared/validation format) against
// its measured value; per-case error and mean / median / worst absolute error, all and exact cases.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/estimate_report.hpp"
#include "cost_models/inference.hpp"
#include "cost_models/step_time.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/scenario.hpp"
#include "sim/step_sim.hpp"

namespace llmsim::cli {

namespace {

struct CaseResult {
    std::string id, file, quantity, error_text;
    double predicted = 0, measured = 0, error = 0;
    double closed_form = 0, closed_form_error = 0;   // training: the closed form beside the simulator
    bool exact = false, ok = false;
};

struct Summary {
    std::size_t n = 0;
    double mean = 0, median = 0, worst = 0;
    std::string worst_id;
};

Summary summarize(const std::vector<CaseResult>& rs, bool exact_only, bool closed_form = false) {
    Summary s;
    std::vector<double> errs;
    for (const auto& r : rs) {
        if (!r.ok || (exact_only && !r.exact)) continue;
        if (closed_form && r.quantity != "step_time_s") continue;
        const double a = std::fabs(closed_form ? r.closed_form_error : r.error);
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
    return {{"cases", s.n},
            {"mean_abs_error", s.mean},
            {"median_abs_error", s.median},
            {"worst_abs_error", s.worst},
            {"worst_case", s.worst_id}};
}

// Step time of a scenario with the accelerator's sustained fraction replaced by `f`.
double predict_with(Scenario s, double f) {
    s.system.gpu.efficiency.sustained_fraction = f;
    return estimate_step(s.training_job()).step_time_s;
}

struct FitCase {
    std::string id;
    Scenario scenario;
    double measured = 0;
};

// Minimises the mean squared log error of the cases over f in [0.2, 1.5] (golden section; the
// error is unimodal in f because step time is monotone in it).
double fit_fraction(const std::vector<const FitCase*>& cases) {
    auto loss = [&](double f) {
        double l = 0;
        for (const auto* c : cases) {
            const double r = std::log(predict_with(c->scenario, f) / c->measured);
            l += r * r;
        }
        return l;
    };
    double lo = 0.2, hi = 1.5;
    const double g = (std::sqrt(5.0) - 1) / 2;
    double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
    double f1 = loss(x1), f2 = loss(x2);
    for (int i = 0; i < 40; ++i) {
        if (f1 < f2) {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - g * (hi - lo);
            f1 = loss(x1);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + g * (hi - lo);
            f2 = loss(x2);
        }
    }
    return 0.5 * (lo + hi);
}

int fit_sustained(const std::vector<std::string>& files, bool json) {
    std::map<std::string, std::vector<FitCase>> by_gpu;
    for (const auto& file : files) {
        const Json doc = parse_json_file(file);
        const std::string dir = directory_of(file);
        for (const auto& c : doc.at("cases")) {
            if (!c.contains("measured") || !c["measured"].contains("step_time_s")) continue;
            FitCase fc;
            fc.id = c.value("id", "?");
            fc.scenario = parse_scenario(c.at("scenario"), dir);
            fc.measured = c["measured"]["step_time_s"].get<double>();
            by_gpu[fc.scenario.system.gpu.name].push_back(std::move(fc));
        }
    }
    Json out = Json::object();
    Table t({"accelerator", "cases", "sustained_fraction", "mean |err| in-sample", "mean |err| leave-one-out"});
    for (auto& [gpu, cases] : by_gpu) {
        if (cases.size() < 3) {
            t.row({gpu, std::to_string(cases.size()), "(too few cases to fit)", "", ""});
            continue;
        }
        std::vector<const FitCase*> all;
        for (const auto& c : cases) all.push_back(&c);
        const double f = fit_fraction(all);
        double in_err = 0, loo_err = 0;
        Json per = Json::array();
        for (std::size_t i = 0; i < cases.size(); ++i) {
            std::vector<const FitCase*> rest;
            for (std::size_t j = 0; j < cases.size(); ++j)
                if (j != i) rest.push_back(&cases[j]);
            const double f_loo = fit_fraction(rest);
            const double e_in = predict_with(cases[i].scenario, f) / cases[i].measured - 1;
            const double e_loo = predict_with(cases[i].scenario, f_loo) / cases[i].measured - 1;
            in_err += std::fabs(e_in);
            loo_err += std::fabs(e_loo);
            per.push_back({{"id", cases[i].id}, {"error", e_in}, {"loo_fraction", f_loo}, {"loo_error", e_loo}});
        }
        in_err /= cases.size();
        loo_err /= cases.size();
        out[gpu] = {{"sustained_fraction", f},
                    {"cases", cases.size()},
                    {"mean_abs_error", in_err},
                    {"loo_mean_abs_error", loo_err},
                    {"per_case", per}};
        t.row({gpu, std::to_string(cases.size()), fmt::format("{:.4f}", f), fmt::format("{:.1f}%", 100 * in_err),
               fmt::format("{:.1f}%", 100 * loo_err)});
    }
    if (json)
        print_json(out);
    else
        std::cout << t.str();
    return 0;
}

}   // namespace

void setup_validate(CLI::App* cmd, Context& ctx) {
    auto files = std::make_shared<std::vector<std::string>>();
    auto json = std::make_shared<bool>(false);

    cmd->add_option("files", *files, "Validation JSON files ({\"cases\": [{id, scenario, measured, assumed}]})")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_flag("--json", *json, "Print JSON");
    auto fit = std::make_shared<bool>(false);
    cmd->add_flag("--fit-sustained", *fit,
                  "Fit each accelerator's efficiency.sustained_fraction to the training cases (least squares on "
                  "log step time, accelerators with >= 3 cases), with leave-one-out errors");
    cmd->callback([files, json, fit, &ctx] {
        if (*fit) {
            ctx.exit_code = fit_sustained(*files, *json);
            return;
        }
        std::vector<CaseResult> results;
        for (const auto& file : *files) {
            const Json doc = parse_json_file(file);
            if (!doc.is_object() || !doc.contains("cases") || !doc["cases"].is_array())
                throw ConfigError(fmt::format("{}#/cases: missing: expected an array of cases", file));
            const std::string dir = directory_of(file);
            std::size_t i = 0;
            for (const auto& c : doc["cases"]) {
                CaseResult r;
                r.file = file;
                r.id = c.value("id", fmt::format("case-{}", i));
                r.exact = c.contains("assumed") && c["assumed"].is_array() && c["assumed"].empty();
                try {
                    if (!c.contains("scenario") || !c.contains("measured"))
                        throw ConfigError(fmt::format("{}#/cases/{}: expected scenario and measured", file, i));
                    const Scenario s = parse_scenario(c["scenario"], dir);
                    const auto& meas = c["measured"];
                    if (meas.contains("step_time_s")) {
                        r.quantity = "step_time_s";
                        r.measured = meas["step_time_s"].get<double>();
                        // The simulator is `estimate`'s default; the closed form is reported beside it.
                        r.closed_form = estimate_step(s.training_job()).step_time_s;
                        r.predicted = sim::simulate_step(s.training_job()).step_time_s;
                        r.closed_form_error = (r.closed_form - r.measured) / r.measured;
                    } else if (meas.contains("output_tokens_per_s_per_gpu")) {
                        r.quantity = "output_tokens_per_s_per_gpu";
                        r.measured = meas["output_tokens_per_s_per_gpu"].get<double>();
                        r.predicted = estimate_inference(s.serving_job()).output_tokens_per_s_per_gpu;
                    } else {
                        throw ConfigError(
                            fmt::format("{}#/cases/{}/measured: expected step_time_s or "
                                        "output_tokens_per_s_per_gpu",
                                        file, i));
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
        const Summary cf_all = summarize(results, false, true);
        const Summary cf_exact = summarize(results, true, true);
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
                    if (r.quantity == "step_time_s") {
                        c["closed_form"] = r.closed_form;
                        c["closed_form_error"] = r.closed_form_error;
                    }
                } else {
                    c["error_text"] = r.error_text;
                }
                cases.push_back(c);
            }
            print_json({{"cases", cases},
                        {"all", summary_json(all)},
                        {"exact", summary_json(exact)},
                        {"closed_form", {{"all", summary_json(cf_all)}, {"exact", summary_json(cf_exact)}}},
                        {"failed", failed}});
        } else {
            Table t({"case", "quantity", "predicted", "measured", "error", "closed form", "exact"});
            for (const auto& r : results) {
                if (r.ok)
                    t.row({r.id, r.quantity, fmt::format("{:.4g}", r.predicted), fmt::format("{:.4g}", r.measured),
                           fmt::format("{:+.1f}%", 100 * r.error),
                           r.quantity == "step_time_s" ? fmt::format("{:+.1f}%", 100 * r.closed_form_error) : "",
                           r.exact ? "yes" : ""});
                else
                    t.row({r.id, "FAILED: " + r.error_text, "", "", "", ""});
            }
            std::cout << t.str();
            std::cout << fmt::format("\nall {} cases:   mean |error| {:.1f}%, median {:.1f}%, worst {:.1f}% ({})\n",
                                     all.n, 100 * all.mean, 100 * all.median, 100 * all.worst, all.worst_id);
            std::cout << fmt::format("exact {} cases: mean |error| {:.1f}%, median {:.1f}%, worst {:.1f}% ({})\n",
                                     exact.n, 100 * exact.mean, 100 * exact.median, 100 * exact.worst, exact.worst_id);
            if (cf_all.n)
                std::cout << fmt::format(
                    "closed form, {} training cases: mean |error| {:.1f}%, median {:.1f}%, worst "
                    "{:.1f}% ({})\n",
                    cf_all.n, 100 * cf_all.mean, 100 * cf_all.median, 100 * cf_all.worst, cf_all.worst_id);
            if (failed) std::cout << fmt::format("{} case(s) FAILED to produce a prediction\n", failed);
        }
        ctx.exit_code = failed ? 1 : 0;
    });
}

}   // namespace llmsim::cli
