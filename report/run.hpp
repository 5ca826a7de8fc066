// One row of `llmsim run` (docs/runs.md): the evaluator the batch room runs each scenario through —
// the layout search for a scenario with a "search" block, else the estimate — and the row's result
// (`estimate --json` less its per-stage, per-collective and per-operator lists) with the resolved
// scenario. The CLI's `run` and the Python module's sweep runner both hand it to batch::run.
#pragma once

#include "app/estimate.hpp"
#include "batch/batch.hpp"
#include "hardware_db/json_reader.hpp"

namespace llmsim::report {

// The resolved scenario without the sources of its hardware numbers (`provenance`, most of its bytes;
// `estimate --json` and `hw show` carry them).
Json compact_scenario(Json scenario);

// Throws (ConfigError or another std::exception) when the scenario is bad or cannot be estimated: the
// row's error.
batch::Outcome evaluate_row(const batch::Item& item, const app::EstimateOptions& options);

}   // namespace llmsim::report
