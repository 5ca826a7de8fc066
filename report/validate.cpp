#include "report/validate.hpp"

#include <iterator>

#include "hardware_db/errors.hpp"
#include "hardware_db/validation.hpp"

namespace llmsim::report {

namespace {

// The built-in files `llmsim validate` checks when given none.
const std::vector<std::string>& default_files() {
    static const std::vector<std::string> files{"training.json", "inference.json", "serving.json"};
    return files;
}

Json stats_json(const app::ErrorStats& s) {
    return {{"cases", s.n},
            {"mean_abs_error", s.mean},
            {"median_abs_error", s.median},
            {"worst_abs_error", s.worst},
            {"worst_case", s.worst_id}};
}

Json stats_for(const std::map<std::string, app::ErrorStats>& m, const std::string& q) {
    const auto it = m.find(q);
    return stats_json(it == m.end() ? app::ErrorStats{} : it->second);
}

}   // namespace

std::vector<ValidationCase> read_validation_cases(const std::vector<std::string>& files) {
    std::vector<ValidationCase> all;
    std::vector<std::string> problems;
    auto add = [&](auto&& read) {
        try {
            auto cs = read();
            all.insert(all.end(), std::make_move_iterator(cs.begin()), std::make_move_iterator(cs.end()));
        } catch (const ConfigError& e) {
            problems.insert(problems.end(), e.problems().begin(), e.problems().end());
        }
    };
    if (files.empty())
        for (const auto& name : default_files()) add([&] { return read_builtin_validation(name); });
    for (const auto& f : files) add([&] { return read_validation_file(f); });
    if (!problems.empty()) throw ConfigError(problems);
    return all;
}

Json coverage_json(const app::IntervalCoverage& c) {
    return {{"runs", c.runs}, {"inside", c.inside}, {"stated_level", c.stated_level()}};
}

Json validation_json(const app::ValidationReport& rep) {
    Json cases = Json::array();
    for (const auto& r : rep.cases) {
        if (!r.ok()) {
            cases.push_back({{"id", r.c->id},
                             {"file", r.c->file},
                             {"exact", r.c->exact},
                             {"ok", false},
                             {"error_text", r.failure}});
            continue;
        }
        for (const auto& q : r.quantities) {
            Json c = {
                {"id", r.c->id},          {"file", r.c->file},        {"exact", r.c->exact},    {"ok", true},
                {"quantity", q.quantity}, {"predicted", q.predicted}, {"measured", q.measured}, {"error", q.error}};
            if (q.closed_form) {
                c["closed_form"] = *q.closed_form;
                c["closed_form_error"] = *q.closed_form_error;
            }
            if (r.fits) {
                c["fits"] = *r.fits;
                c["memory_bytes"] = r.memory_bytes;
                c["capacity_bytes"] = r.capacity_bytes;
                c["assumed"] = r.assumed;
            }
            cases.push_back(c);
        }
    }
    Json by = Json::object();
    for (const auto& [q, s] : rep.all) by[q] = {{"all", stats_json(s)}, {"exact", stats_for(rep.exact, q)}};
    const std::string step = "step_time_s";
    Json coverage = Json::object();
    for (const auto& [q, c] : app::range_coverages(rep)) coverage[q] = coverage_json(c);
    return {{"cases", cases},
            {"primary_quantity", rep.primary},
            {"all", stats_for(rep.all, rep.primary)},
            {"exact", stats_for(rep.exact, rep.primary)},
            {"by_quantity", by},
            {"closed_form",
             {{"all", stats_for(rep.closed_form_all, step)}, {"exact", stats_for(rep.closed_form_exact, step)}}},
            {"failed", rep.failed},
            {"training_layouts", rep.training_cases},
            {"training_layouts_fit", rep.training_fit},
            {"range_coverage", coverage}};
}

}   // namespace llmsim::report
