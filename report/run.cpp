#include "report/run.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "cost_models/memory.hpp"
#include "hardware_db/scenario.hpp"
#include "report/estimate.hpp"
#include "report/search.hpp"
#include "report/search_request.hpp"
#include "sim/step_sim.hpp"

namespace llmsim::report {

namespace {

// The per-stage, per-operator and per-collective lists of `estimate --json` (and memory.stages) stay
// out of run rows (one row per scenario, contract keys); the resolved scenario is the row's "scenario".
constexpr const char* kDetailKeys[] = {"stages", "communication", "layer_ops", "simulation", "timeline", "scenario"};

}   // namespace

Json compact_scenario(Json scenario) {
    if (scenario.contains("system") && scenario["system"].is_object()) {
        auto& sys = scenario["system"];
        sys.erase("provenance");
        if (sys.contains("gpu") && sys["gpu"].is_object()) sys["gpu"].erase("provenance");
    }
    return scenario;
}

batch::Outcome evaluate_row(const batch::Item& item, const app::EstimateOptions& opt) {
    if (item.doc.is_object() && item.doc.contains("search")) {
        auto req = search::parse_search_request(item.doc, item.base_dir);
        req.options.threads = 1;   // the batch's pool already uses every core
        req.options.confirm = 0;
        const auto res = search::run_search(req.base, req.space, req.options);
        if (res.top.empty()) {
            std::string why;
            for (const auto& [reason, n] : res.rejected)
                why += fmt::format("{}{} ({})", why.empty() ? "" : ", ", reason, n);
            throw std::runtime_error(fmt::format("no layout fits among {} considered: {}", res.considered(), why));
        }
        Json best = search_entry_json(req.base, res.top.front(), true, req.options.price_per_gpu_hour);
        best["evaluated"] = res.evaluated;
        best["rejected"] = res.rejected_total;
        Json scenario = compact_scenario(to_json(search::apply_candidate(req.base, res.top.front().c)));
        return {std::move(scenario), std::move(best)};
    }
    Scenario s = parse_scenario(item.doc, item.base_dir);
    resolve_memory_levers(s);
    thread_local sim::StepSimulator simulator;
    const Estimate e = run_estimate(s, opt, simulator);
    Json r = estimate_json(s, e, opt);
    for (const char* k : kDetailKeys) r.erase(k);
    if (r.contains("memory")) r["memory"].erase("stages");
    return {compact_scenario(to_json(s)), std::move(r)};
}

}   // namespace llmsim::report
