#include "app/accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hardware_db/embedded.hpp"

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
                           std::round(q.error * 1e4) / 1e4});
        }
    }
    return out;
}

std::string residuals_json_text(const std::vector<Residual>& rs) {
    // One residual per line, so that a change of the model reads as a diff of the cases it moved.
    std::string out =
        "{\"what\": \"llmsim's serving residuals on validation/serving.json (error = predicted / measured - 1), "
        "made by `llmsim validate validation/serving.json --residuals FILE`; app/accuracy reads them to give each "
        "answer the range the published runs most like it measured (docs/serving.md, How sure)\",\n"
        "\"residuals\": [\n";
    for (std::size_t i = 0; i < rs.size(); ++i) {
        const auto& r = rs[i];
        const nlohmann::ordered_json row = {
            {"id", r.id},         {"quantity", r.quantity},       {"arrivals", r.arrivals},
            {"engine", r.engine}, {"accelerator", r.accelerator}, {"error", r.error}};
        out.append(" ");
        out.append(row.dump());
        out.append(i + 1 < rs.size() ? ",\n" : "\n");
    }
    return out + "]}\n";
}

const std::vector<Residual>& builtin_serving_residuals() {
    static const std::vector<Residual> rs = [] {
        std::vector<Residual> out;
        for (const auto& f : embedded_files()) {
            if (f.path != "residuals/serving.json") continue;
            const auto j = nlohmann::json::parse(f.content);
            for (const auto& r : j.at("residuals"))
                out.push_back({r.at("id").get<std::string>(), r.at("quantity").get<std::string>(),
                               r.at("engine").get<std::string>(), r.at("accelerator").get<std::string>(),
                               r.at("arrivals").get<std::string>(), r.at("error").get<double>()});
        }
        return out;
    }();
    return rs;
}

std::optional<PublishedRange> published_range(const std::vector<Residual>& rs, const std::string& quantity,
                                              const std::string& arrivals, const std::string& engine,
                                              const std::string& accelerator, double predicted) {
    std::vector<const Residual*> same_engine, same_gpu;
    for (const auto& r : rs) {
        if (r.quantity != quantity || r.arrivals != arrivals || r.engine != engine) continue;
        same_engine.push_back(&r);
        if (r.accelerator == accelerator) same_gpu.push_back(&r);
    }
    const auto& use = static_cast<int>(same_gpu.size()) >= kMinRangeRuns ? same_gpu : same_engine;
    if (static_cast<int>(use.size()) < kMinRangeRuns || !(predicted > 0)) return std::nullopt;
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
    std::string names;
    for (const auto& g : gpus) {
        if (!names.empty()) names.append(", ");
        names.append(g);
    }
    p.basis = fmt::format("{} published run{} of {} on {}", p.runs, p.runs == 1 ? "" : "s", engine, names);
    return p;
}

}   // namespace llmsim::app
