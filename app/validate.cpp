#include "app/validate.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "app/quantities.hpp"
#include "app/serving.hpp"
#include "cost_models/memory.hpp"
#include "hardware_db/errors.hpp"

namespace llmsim::app {

ErrorStats error_stats(const std::vector<std::pair<std::string, double>>& id_error) {
    ErrorStats s;
    std::vector<double> errs;
    for (const auto& [id, e] : id_error) {
        const double a = std::fabs(e);
        errs.push_back(a);
        if (a >= s.worst) {
            s.worst = a;
            s.worst_id = id;
        }
    }
    s.n = errs.size();
    if (errs.empty()) return s;
    double sum = 0;
    for (double x : errs) sum += x;
    s.mean = sum / static_cast<double>(errs.size());
    std::sort(errs.begin(), errs.end());
    const std::size_t h = errs.size() / 2;
    s.median = errs.size() % 2 ? errs[h] : 0.5 * (errs[h - 1] + errs[h]);
    return s;
}

ValidationReport run_validation(const std::vector<ValidationCase>& cases,
                                const std::function<void(std::size_t, std::size_t)>& progress) {
    ValidationReport rep;
    std::map<std::string, std::vector<std::pair<std::string, double>>> all, exact, cf_all, cf_exact;
    std::size_t done = 0;
    for (const auto& c : cases) {
        CaseResult r;
        r.c = &c;
        try {
            Scenario sc = c.scenario;
            resolve_memory_levers(sc);
            auto pred = predicted_quantities(sc);
            const bool training = !sc.is_inference;
            if (!training) {
                if (const auto fit = serving_fit(sc); !fit.fits)
                    throw std::runtime_error("does not fit: " + fit.reason);
            }
            // A published rate with an SLO is a capacity measurement (MLPerf Server: the submitter raised the
            // Poisson rate until the latency limits held no more): the largest rate meeting the same SLO is
            // compared with it (slo_capacity_qps against the scenario's qps).
            std::optional<double> capacity_measured;
            if (!training && sc.inference.continuous() && sc.inference.qps > 0 && sc.inference.slo.any()) {
                Scenario cap = sc;
                cap.inference.qps_max = true;
                pred["slo_capacity_qps"] = slo_capacity(cap).qps;
                capacity_measured = sc.inference.qps;
            }
            std::map<std::string, double> closed;
            if (training && c.measured.count("step_time_s")) closed = predicted_quantities(sc, true);
            if (training) {
                const auto mem = training_memory(sc.training_job());
                r.assumed = mem.assumed_levers;
                r.fits = mem.fits;
                r.memory_bytes = mem.total_bytes;
                r.capacity_bytes = mem.capacity_bytes;
            }
            for (const auto& [q, measured] : c.measured) {
                const auto it = pred.find(q);
                if (it == pred.end()) {
                    r.failure = fmt::format("llmsim does not predict \"{}\" for this scenario", q);
                    break;
                }
                if (!std::isfinite(it->second) || it->second <= 0) {
                    r.failure = fmt::format("no finite positive prediction of {}", q);
                    break;
                }
                QuantityError e;
                e.quantity = q;
                e.predicted = it->second;
                e.measured = measured;
                e.error = e.predicted / measured - 1.0;
                if (const auto cf = closed.find(q); cf != closed.end()) {
                    e.closed_form = cf->second;
                    e.closed_form_error = cf->second / measured - 1.0;
                }
                r.quantities.push_back(e);
            }
            // The iteration at the operating point the run measured (app/serving iteration_at_load), against the
            // measured mean TPOT: the iteration's cost apart from the queueing that decides the state.
            if (r.failure.empty() && !training && c.measured.count("tpot_s") && c.measured.count("requests_per_s")) {
                if (const auto st = iteration_at_load(sc, c.measured.at("requests_per_s"), c.measured.at("tpot_s"))) {
                    QuantityError e;
                    e.quantity = "iteration_s_at_measured_load";
                    e.predicted = st->iteration_s;
                    e.measured = c.measured.at("tpot_s");
                    e.error = e.predicted / e.measured - 1.0;
                    r.quantities.push_back(e);
                }
            }
            if (capacity_measured && r.failure.empty()) {
                QuantityError e;
                e.quantity = "slo_capacity_qps";
                e.predicted = pred["slo_capacity_qps"];
                e.measured = *capacity_measured;
                e.error = e.predicted / e.measured - 1.0;
                r.quantities.push_back(e);
            }
        } catch (const ConfigError& e) {
            // A work limit (the simulator's) is a problem of the case's input, not a failed prediction.
            std::vector<std::string> lines;
            for (const auto& l : e.problems())
                lines.push_back(l.rfind('/', 0) == 0 ? fmt::format("{}#{}/scenario{}", c.file, c.pointer, l) : l);
            throw ConfigError(lines);
        } catch (const std::exception& ex) {
            r.failure = ex.what();
        }
        if (r.fits) {
            ++rep.training_cases;
            if (*r.fits) ++rep.training_fit;
        }
        if (r.ok()) {
            for (const auto& e : r.quantities) {
                all[e.quantity].emplace_back(c.id, e.error);
                if (c.exact) exact[e.quantity].emplace_back(c.id, e.error);
                if (e.closed_form_error) {
                    cf_all[e.quantity].emplace_back(c.id, *e.closed_form_error);
                    if (c.exact) cf_exact[e.quantity].emplace_back(c.id, *e.closed_form_error);
                }
            }
        } else {
            ++rep.failed;
        }
        rep.cases.push_back(std::move(r));
        if (progress) progress(++done, cases.size());
    }
    for (const auto& [q, v] : all) rep.all[q] = error_stats(v);
    for (const auto& [q, v] : exact) rep.exact[q] = error_stats(v);
    for (const auto& [q, v] : cf_all) rep.closed_form_all[q] = error_stats(v);
    for (const auto& [q, v] : cf_exact) rep.closed_form_exact[q] = error_stats(v);
    for (const char* q : {"step_time_s", "output_tokens_per_s_per_gpu"})
        if (rep.all.count(q)) {
            rep.primary = q;
            break;
        }
    if (rep.primary.empty() && !rep.all.empty()) rep.primary = rep.all.begin()->first;
    return rep;
}

}   // namespace llmsim::app
