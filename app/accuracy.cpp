#include "app/accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hardware_db/embedded.hpp"
#include "hardware_db/validation_case.hpp"

namespace llmsim::app {

namespace {
const std::set<std::string>& serving_quantities() {
    static const std::set<std::string> q{"output_tokens_per_s_per_gpu", "requests_per_s", "slo_capacity_qps"};
    return q;
}
}   // namespace

std::vector<Residual> serving_residuals(const ValidationReport& rep) {
    std::vector<Residual> out;
    for (const auto& c : rep.cases) {
        if (!c.ok() || c.c == nullptr || !c.c->scenario.is_inference) continue;
        const auto& s = c.c->scenario;
        for (const auto& q : c.quantities) {
            if (!serving_quantities().count(q.quantity) || !std::isfinite(q.error)) continue;
            const char* arrivals = !s.inference.continuous() ? "static" : s.inference.qps > 0 ? "poisson" : "offline";
            out.push_back({c.c->id, q.quantity, to_string(s.inference.engine.kind), s.system.gpu.name, arrivals,
                           std::round(q.error * 1e4) / 1e4, source_key(c.c->source)});
        }
    }
    return out;
}

std::vector<Residual> training_residuals(const ValidationReport& rep) {
    std::vector<Residual> out;
    for (const auto& c : rep.cases) {
        if (!c.ok() || c.c == nullptr || c.c->scenario.is_inference) continue;
        const auto& s = c.c->scenario;
        for (const auto& q : c.quantities) {
            if (q.quantity != "step_time_s" || !std::isfinite(q.error)) continue;
            out.push_back({c.c->id, q.quantity, to_string(s.parallel.framework), s.system.gpu.name, "training",
                           std::round(q.error * 1e4) / 1e4, source_key(c.c->source)});
        }
    }
    return out;
}

std::vector<Residual> residuals(const ValidationReport& rep) {
    auto out = serving_residuals(rep);
    const auto t = training_residuals(rep);
    out.insert(out.end(), t.begin(), t.end());
    return out;
}

std::string residuals_json_text(const std::vector<Residual>& rs) {
    // One residual per line, so that a change of the model reads as a diff of the cases it moved.
    std::string out =
        "{\"what\": \"llmsim's residuals on a validation file (error = predicted / measured - 1), made by "
        "`llmsim validate validation/FILE.json --residuals FILE`; app/accuracy reads them to give each answer the "
        "range the published runs most like it measured (docs/serving.md and docs/accuracy.md, How sure); the "
        "engine of a training run is its framework\",\n"
        "\"residuals\": [\n";
    for (std::size_t i = 0; i < rs.size(); ++i) {
        const auto& r = rs[i];
        const nlohmann::ordered_json row = {
            {"id", r.id},         {"quantity", r.quantity},       {"arrivals", r.arrivals},
            {"engine", r.engine}, {"accelerator", r.accelerator}, {"error", r.error},
            {"source", r.source}};
        out.append(" ");
        out.append(row.dump());
        out.append(i + 1 < rs.size() ? ",\n" : "\n");
    }
    return out + "]}\n";
}

const std::vector<Residual>& builtin_residuals() {
    static const std::vector<Residual> rs = [] {
        std::vector<Residual> out;
        for (const auto& f : embedded_files()) {
            if (!f.path.starts_with("residuals/")) continue;
            const auto j = nlohmann::json::parse(f.content);
            for (const auto& r : j.at("residuals"))
                out.push_back({r.at("id").get<std::string>(), r.at("quantity").get<std::string>(),
                               r.at("engine").get<std::string>(), r.at("accelerator").get<std::string>(),
                               r.at("arrivals").get<std::string>(), r.at("error").get<double>(),
                               r.value("source", std::string())});
        }
        return out;
    }();
    return rs;
}

double range_level(int runs) noexcept { return runs > 0 ? static_cast<double>(runs - 1) / (runs + 1) : 0.0; }

namespace {

// The publications `use` comes from; a run without a source counts as its own.
int source_count(const std::vector<const Residual*>& use) {
    std::set<std::string> sources;
    for (const auto* r : use) sources.insert(r->source.empty() ? "run " + r->id : r->source);
    return static_cast<int>(sources.size());
}

// min and max of measured / predicted over `use`, times `predicted`; `what` names the runs.
PublishedRange range_of(const std::vector<const Residual*>& use, double predicted, const std::string& what) {
    PublishedRange p;
    p.low_ratio = 1e300;
    p.high_ratio = 0;
    std::set<std::string> gpus;
    for (const auto* r : use) {
        const double ratio = 1.0 / (1.0 + r->error);
        p.low_ratio = std::min(p.low_ratio, ratio);
        p.high_ratio = std::max(p.high_ratio, ratio);
        gpus.insert(r->accelerator);
    }
    p.low = predicted * p.low_ratio;
    p.high = predicted * p.high_ratio;
    p.runs = static_cast<int>(use.size());
    p.sources = source_count(use);
    p.level = range_level(p.runs);
    std::string names;
    for (const auto& g : gpus) {
        if (!names.empty()) names.append(", ");
        names.append(g);
    }
    p.basis = fmt::format("{} published run{} ({} source{}) {} on {}", p.runs, p.runs == 1 ? "" : "s", p.sources,
                          p.sources == 1 ? "" : "s", what, names);
    return p;
}

struct Candidate {
    const std::vector<const Residual*>* runs;
    std::string what;
};

// The first candidate, narrowest first, with kMinRangeRuns runs from kMinRangeSources sources; where none
// has that many sources, the one of at least kMinRangeRuns runs with the most (the widest of equals).
std::optional<PublishedRange> first_range(const std::vector<Candidate>& candidates, double predicted) {
    const Candidate* best = nullptr;
    int best_sources = 0;
    for (const auto& c : candidates) {
        if (static_cast<int>(c.runs->size()) < kMinRangeRuns) continue;
        const int n = source_count(*c.runs);
        if (n >= kMinRangeSources) return range_of(*c.runs, predicted, c.what);
        if (n >= best_sources) {
            best = &c;
            best_sources = n;
        }
    }
    if (best == nullptr) return std::nullopt;
    return range_of(*best->runs, predicted, best->what);
}

}   // namespace

std::optional<PublishedRange> published_range(const std::vector<Residual>& rs, const std::string& quantity,
                                              const std::string& arrivals, const std::string& engine,
                                              const std::string& accelerator, double predicted) {
    if (!(predicted > 0)) return std::nullopt;
    std::vector<const Residual*> same_engine, same_gpu;
    for (const auto& r : rs) {
        if (r.quantity != quantity || r.arrivals != arrivals || r.engine != engine) continue;
        same_engine.push_back(&r);
        if (r.accelerator == accelerator) same_gpu.push_back(&r);
    }
    return first_range({{&same_gpu, "of " + engine}, {&same_engine, "of " + engine}}, predicted);
}

std::optional<PublishedRange> step_time_range(const std::vector<Residual>& rs, const std::string& framework,
                                              const std::string& accelerator, double predicted_s) {
    if (!(predicted_s > 0)) return std::nullopt;
    std::vector<const Residual*> all, gpu, both, same_framework;
    for (const auto& r : rs) {
        if (r.quantity != "step_time_s" || r.arrivals != "training") continue;
        all.push_back(&r);
        if (r.engine == framework) same_framework.push_back(&r);
        if (r.accelerator != accelerator) continue;
        gpu.push_back(&r);
        if (r.engine == framework) both.push_back(&r);
    }
    const std::string with = framework == "unspecified" ? std::string() : " with " + framework;
    // A chip with too few runs takes the runs of its framework on other chips before every run (a run on a TPU
    // is not given the DeepSpeed ZeRO-3 runs' 1.5-4x).
    return first_range({{&both, "of training" + with},
                        {&gpu, "of training"},
                        {&same_framework, "of training" + with},
                        {&all, "of training"}},
                       predicted_s);
}

IntervalCoverage range_coverage(const std::vector<Residual>& rs, const std::map<std::string, std::string>& source_of,
                                const std::string& quantity) {
    const bool training = quantity == "step_time_s";
    IntervalCoverage c;
    std::map<std::string, std::vector<Residual>> others_of;   // a source's "other sources' runs", built once
    for (const auto& r : rs) {
        if (r.quantity != quantity || (r.arrivals == "training") != training) continue;
        const auto it = source_of.find(r.id);
        if (it == source_of.end()) continue;
        auto [slot, fresh] = others_of.try_emplace(it->second);
        if (fresh)
            for (const auto& o : rs) {
                const auto jt = source_of.find(o.id);
                if (jt == source_of.end() || jt->second != it->second) slot->second.push_back(o);
            }
        const auto& others = slot->second;
        const auto range = training ? step_time_range(others, r.engine, r.accelerator, 1.0)
                                    : published_range(others, r.quantity, r.arrivals, r.engine, r.accelerator, 1.0);
        if (!range) continue;
        const double ratio = 1.0 / (1.0 + r.error);   // measured / predicted
        ++c.runs;
        c.level_sum += range->level;
        if (ratio >= range->low_ratio && ratio <= range->high_ratio) ++c.inside;
    }
    return c;
}

std::map<std::string, IntervalCoverage> range_coverages(const ValidationReport& rep) {
    std::map<std::string, std::string> source_of;
    for (const auto& r : rep.cases)
        if (r.c != nullptr) source_of[r.c->id] = source_key(r.c->source);
    const auto rs = residuals(rep);
    std::map<std::string, IntervalCoverage> out;
    for (const char* q : {"step_time_s", "output_tokens_per_s_per_gpu", "slo_capacity_qps"})
        if (const auto c = range_coverage(rs, source_of, q); c.runs > 0) out[q] = c;
    return out;
}

IntervalCoverage step_time_interval_coverage(const std::vector<Residual>& rs,
                                             const std::map<std::string, std::string>& source_of) {
    return range_coverage(rs, source_of, "step_time_s");
}

}   // namespace llmsim::app
