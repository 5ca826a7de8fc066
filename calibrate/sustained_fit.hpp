// The one constant llmsim fits on published end-to-end runs: each accelerator's
// efficiency.sustained_fraction (docs/accuracy.md). Least absolute deviations of log step time over the training
// cases of that accelerator (at least three), with the leave-one-out error of every case (the case's
// error when the fraction is fitted on the others) and its leave-one-source-out error (fitted without
// every case of its source).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hardware_db/validation_case.hpp"

namespace llmsim::calibrate {

struct SustainedCase {
    std::string id;
    std::string source;        // source_key of the case's source
    double error = 0;          // in-sample: predicted / measured − 1
    double loo_fraction = 0;   // fitted without this case
    double loo_error = 0;      // this case predicted with loo_fraction
    // Leave-one-source-out: fitted without every case of this case's source (paper, repository or
    // release); none when fewer than three cases of the accelerator remain.
    bool loso = false;
    double loso_fraction = 0, loso_error = 0;
};

struct SustainedFit {
    std::string accelerator;
    std::size_t cases = 0;
    bool fitted = false;   // false: fewer than three cases
    double fraction = 0;
    double mean_abs_error = 0, loo_mean_abs_error = 0;
    double loso_mean_abs_error = 0;   // over the cases with a leave-one-source-out fit
    std::size_t loso_cases = 0;
    std::vector<SustainedCase> per_case;
    std::vector<std::string> not_fitting;   // cases left out: the layout does not fit in memory
};

// Minimises Σ |log(predicted/measured)| over the fraction in [0.2, 1.5] (golden section; the loss is
// unimodal because step time is monotone in the fraction): least absolute deviations, so a class of
// runs whose physics the model lacks (the DeepSpeed ZeRO-3 runs of 2021, −57 … −75%) moves the constant
// as any run on that side of it does, not by the square of its miss (least squares read A100 0.732 over
// 24 runs against 0.90 over the other 18).
double fit_sustained_fraction(const std::vector<const ValidationCase*>& cases);

// One fit per accelerator among the cases that measure step_time_s and whose layout fits in memory
// (one that cannot fit did not run as written; those are listed in not_fitting). An accelerator whose
// cases all fail to fit has no entry.
std::vector<SustainedFit> fit_sustained_fractions(const std::vector<ValidationCase>& cases);

}   // namespace llmsim::calibrate
