#include "hardware_db/validation.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "hardware_db/embedded.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/scenario.hpp"

namespace llmsim {

std::vector<ValidationCase> read_validation(const Json& doc, const std::string& origin, const std::string& base_dir,
                                            const Database& db) {
    Problems pr;
    std::vector<ValidationCase> out;
    ObjectReader root(doc, "", pr);
    if (!root.ok()) {
        pr.add("", doc, "an object with \"cases\"");
    } else {
        const Json* cases = root.get("cases");
        if (!cases || !cases->is_array() || cases->empty()) {
            pr.add("/cases", cases ? *cases : Json(), "a non-empty array of cases");
        } else {
            std::map<std::string, std::string> first_at;   // id -> the case that named it first
            for (std::size_t i = 0; i < cases->size(); ++i) {
                const std::string at = fmt::format("/cases/{}", i);
                ObjectReader r((*cases)[i], at, pr);
                if (!r.ok()) {
                    pr.add(at, (*cases)[i], "a case object {id, source, scenario, measured, derived, assumed}");
                    continue;
                }
                ValidationCase c;
                c.file = origin;
                c.pointer = at;
                c.id = r.required_string("id");
                // Ids name the cases in every table and the residuals: unique and not empty (a repeated id
                // was counted twice in the means, an empty one printed as "()").
                if (r.has("id") && c.id.empty()) pr.add(r.ptr("id"), Json(""), "a non-empty case id");
                if (!c.id.empty()) {
                    const auto [it, fresh] = first_at.emplace(c.id, at);
                    if (!fresh)
                        pr.add(r.ptr("id"), Json(c.id), fmt::format("an id not used before (it names {})", it->second));
                }
                c.source = r.string_or("source", "");
                r.string("derived");
                if (const Json* a = r.get("assumed")) {
                    if (!a->is_array())
                        pr.add(r.ptr("assumed"), *a, "an array of strings (inputs the source does not state)");
                    else
                        c.exact = a->empty();
                }
                bool scenario_ok = false;
                if (const Json* s = r.get("scenario")) {
                    try {
                        c.scenario = parse_scenario(*s, base_dir, db);
                        scenario_ok = true;
                    } catch (const ConfigError& e) {
                        // "/: 7: ..." is the scenario value itself: "/cases/1/scenario: 7: ...".
                        for (const auto& l : e.problems())
                            pr.add_raw(r.ptr("scenario") + (l.rfind("/: ", 0) == 0 ? l.substr(1) : l));
                    }
                } else {
                    pr.add_raw(r.ptr("scenario") + ": missing: expected the run as a scenario");
                }
                if (const Json* m = r.get("measured")) {
                    if (!m->is_object() || m->empty()) {
                        pr.add(r.ptr("measured"), *m,
                               "an object of measured quantities (e.g. {\"step_time_s\": 13.9})");
                    } else {
                        // The scenario's kind, when it parsed; else any kind's quantities.
                        const unsigned kind = !scenario_ok                        ? 7u
                                              : !c.scenario.is_inference          ? 1u
                                              : c.scenario.inference.continuous() ? 4u
                                                                                  : 2u;
                        const char* kind_name = kind == 1 ? "training" : kind == 2 ? "static-batching" : "serving";
                        for (auto it = m->begin(); it != m->end(); ++it) {
                            const std::string p = r.ptr("measured") + "/" + it.key();
                            const MeasuredQuantity* q = nullptr;
                            for (const auto& x : kMeasuredQuantities)
                                if (x.name == it.key() && (x.kinds & kind)) q = &x;
                            if (!q) {
                                std::string names;
                                for (const auto& x : kMeasuredQuantities)
                                    if (x.kinds & kind) names += (names.empty() ? "" : ", ") + std::string(x.name);
                                pr.add_raw(fmt::format("{}: unknown quantity: expected one llmsim predicts{}: {}", p,
                                                       kind == 7u ? "" : fmt::format(" for a {} case", kind_name),
                                                       names));
                            } else if (!it->is_number() || !std::isfinite(it->get<double>()) ||
                                       it->get<double>() < q->lo || it->get<double>() > q->hi) {
                                const std::string unit = q->unit.empty() ? std::string() : fmt::format(" {}", q->unit);
                                pr.add(p, *it, fmt::format("a measured value in [{:g}, {:g}]{}", q->lo, q->hi, unit));
                            } else {
                                c.measured[it.key()] = it->get<double>();
                            }
                        }
                    }
                } else {
                    pr.add_raw(r.ptr("measured") + ": missing: expected the measured quantities");
                }
                r.finish();
                out.push_back(std::move(c));
            }
        }
        root.finish();
    }
    if (!pr.empty()) {
        std::vector<std::string> lines;
        for (const auto& l : pr.lines) lines.push_back(origin + "#" + l);
        throw ConfigError(lines);
    }
    return out;
}

std::vector<ValidationCase> read_validation_file(const std::string& path, const Database& db) {
    return read_validation(parse_json_file(path), path, directory_of(path), db);
}

std::vector<std::string> builtin_validation_names() {
    std::vector<std::string> out;
    for (const auto& f : embedded_validation_files()) out.emplace_back(f.path);
    return out;
}

std::vector<ValidationCase> read_builtin_validation(const std::string& name, const Database& db) {
    for (const auto& f : embedded_validation_files())
        if (f.path == name) {
            const std::string origin = "validation/" + name;
            return read_validation(parse_json_text(std::string(f.content), origin), origin, ".", db);
        }
    throw ConfigError(
        fmt::format("{}: not a built-in validation file: expected one of the files in validation/", name));
}

std::string source_key(std::string_view source) {
    const auto first_space = source.find(' ');
    const std::string_view first_word = source.substr(0, first_space);
    if (first_word.find('/') != std::string_view::npos) return std::string(first_word);   // owner/repo
    const auto end = std::min(source.find(','), source.find(" ("));
    std::string_view key = source.substr(0, end);
    while (!key.empty() && key.back() == ' ') key.remove_suffix(1);
    return std::string(key);
}

}   // namespace llmsim
