// `llmsim validate` as a library call: every measured quantity of every case against the model's
// prediction (training step times on the simulator, with the closed form beside them), and the error
// statistics per quantity over all cases and over the exact ones (docs/accuracy.md).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hardware_db/validation_case.hpp"

namespace llmsim::app {

struct QuantityError {
    std::string quantity;
    double predicted = 0, measured = 0, error = 0;          // error = predicted / measured − 1
    std::optional<double> closed_form, closed_form_error;   // training step time
};

struct CaseResult {
    const ValidationCase* c = nullptr;
    std::vector<QuantityError> quantities;   // in the order of the case's measured keys
    std::string failure;                     // why nothing could be predicted (empty when ok)
    // Training: memory per GPU of the most loaded GPU against its capacity (a published layout ran,
    // so it must fit).
    std::optional<bool> fits;
    double memory_bytes = 0, capacity_bytes = 0;
    // The memory levers the scenario left unstated and the layout needs (resolve_memory_levers).
    std::vector<std::string> assumed;
    bool ok() const { return failure.empty(); }
};

struct ErrorStats {
    std::size_t n = 0;
    double mean = 0, median = 0, worst = 0;   // of |error|
    std::string worst_id;
};

struct ValidationReport {
    std::vector<CaseResult> cases;
    // Per quantity: over all cases, over exact cases, and the closed form (training step time).
    std::map<std::string, ErrorStats> all, exact, closed_form_all, closed_form_exact;
    std::size_t failed = 0;
    std::size_t training_cases = 0, training_fit = 0;   // training layouts checked, and how many fit
    // The quantity a file is judged on: step_time_s (training) or output_tokens_per_s_per_gpu (serving).
    std::string primary;
};

// `progress(done, total)` is called after each case.
// A case whose input meets a work limit (the simulator's) is a ConfigError naming FILE#/cases/N/scenario/...
ValidationReport run_validation(const std::vector<ValidationCase>& cases,
                                const std::function<void(std::size_t, std::size_t)>& progress = {});

ErrorStats error_stats(const std::vector<std::pair<std::string, double>>& id_error);

}   // namespace llmsim::app
