#include "calibrate/sustained_fit.hpp"

#include <algorithm>
#include <cmath>

#include "cost_models/memory.hpp"
#include "cost_models/step_time.hpp"
#include "hardware_db/validation_case.hpp"

namespace llmsim::calibrate {

namespace {

// Step time of a case with the accelerator's sustained fraction replaced by `f` (closed form).
double predict_with(const ValidationCase& c, double f) {
    SystemSpec sys = c.scenario.system;
    sys.gpu.efficiency.sustained_fraction = f;
    const auto& s = c.scenario;
    return estimate_step(TrainingJob{s.model, sys, s.parallel, s.training}).step_time_s;
}

double measured_step(const ValidationCase& c) { return c.measured.at("step_time_s"); }

}   // namespace

double fit_sustained_fraction(const std::vector<const ValidationCase*>& cases) {
    auto loss = [&](double f) {
        double l = 0;
        for (const auto* c : cases) {
            const double r = std::log(predict_with(*c, f) / measured_step(*c));
            l += std::fabs(r);
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

std::vector<SustainedFit> fit_sustained_fractions(const std::vector<ValidationCase>& cases) {
    std::map<std::string, std::vector<const ValidationCase*>> by_gpu;
    std::map<std::string, std::vector<std::string>> skipped;
    // Each case as `validate` prices it: with the memory levers it leaves unstated (resolve_memory_levers).
    std::vector<ValidationCase> resolved(cases);
    for (auto& c : resolved) {
        if (c.scenario.is_inference || !c.measured.count("step_time_s")) continue;
        resolve_memory_levers(c.scenario);
        // A layout the memory model says cannot fit did not run as written: its inputs (recompute,
        // gradient precision, sharding) differ from the run's, so its time says nothing about the
        // fraction. It is left out of the fit and reported as such.
        if (!training_memory(c.scenario.training_job()).fits) {
            skipped[c.scenario.system.gpu.name].push_back(c.id);
            continue;
        }
        by_gpu[c.scenario.system.gpu.name].push_back(&c);
    }
    std::vector<SustainedFit> out;
    for (const auto& [gpu, group] : by_gpu) {
        SustainedFit fit;
        fit.accelerator = gpu;
        fit.cases = group.size();
        if (auto it = skipped.find(gpu); it != skipped.end()) fit.not_fitting = it->second;
        if (group.size() >= 3) {
            fit.fitted = true;
            fit.fraction = fit_sustained_fraction(group);
            for (std::size_t i = 0; i < group.size(); ++i) {
                std::vector<const ValidationCase*> rest;
                for (std::size_t j = 0; j < group.size(); ++j)
                    if (j != i) rest.push_back(group[j]);
                SustainedCase sc;
                sc.id = group[i]->id;
                sc.source = source_key(group[i]->source);
                sc.loo_fraction = fit_sustained_fraction(rest);
                sc.error = predict_with(*group[i], fit.fraction) / measured_step(*group[i]) - 1;
                sc.loo_error = predict_with(*group[i], sc.loo_fraction) / measured_step(*group[i]) - 1;
                fit.mean_abs_error += std::fabs(sc.error);
                fit.loo_mean_abs_error += std::fabs(sc.loo_error);
                fit.per_case.push_back(sc);
            }
            fit.mean_abs_error /= static_cast<double>(group.size());
            fit.loo_mean_abs_error /= static_cast<double>(group.size());
            // Leave one source out: one refit per source of this accelerator's cases.
            std::map<std::string, double> without;   // source -> fraction fitted on the other sources
            for (const auto& sc : fit.per_case) {
                if (without.count(sc.source)) continue;
                std::vector<const ValidationCase*> rest;
                for (const auto* c : group)
                    if (source_key(c->source) != sc.source) rest.push_back(c);
                if (rest.size() >= 3) without[sc.source] = fit_sustained_fraction(rest);
            }
            for (std::size_t i = 0; i < group.size(); ++i) {
                auto& sc = fit.per_case[i];
                const auto it = without.find(sc.source);
                if (it == without.end()) continue;
                sc.loso = true;
                sc.loso_fraction = it->second;
                sc.loso_error = predict_with(*group[i], sc.loso_fraction) / measured_step(*group[i]) - 1;
                fit.loso_mean_abs_error += std::fabs(sc.loso_error);
                ++fit.loso_cases;
            }
            if (fit.loso_cases > 0) fit.loso_mean_abs_error /= static_cast<double>(fit.loso_cases);
        }
        out.push_back(std::move(fit));
    }
    return out;
}

}   // namespace llmsim::calibrate
