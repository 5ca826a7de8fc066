// llmsim run FILE...: a batch of scenarios (each file one scenario, or {"scenarios": [...]}), all
// validated first (any bad scenario: errors on stderr, exit 2, nothing on stdout), then estimated.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/estimate_report.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/scenario.hpp"

namespace llmsim::cli {

void setup_run(CLI::App* cmd, Context& ctx) {
    auto files = std::make_shared<std::vector<std::string>>();
    auto json = std::make_shared<bool>(false);
    auto fast = std::make_shared<bool>(false);

    cmd->add_option("files", *files, "Scenario JSON files")->required();
    cmd->add_flag("--json", *json, "Print JSON");
    cmd->add_flag("--fast", *fast, "Closed-form step time (no discrete-event simulation)");
    cmd->callback([files, json, fast, &ctx] {
        struct Item {
            std::string file, name;
            Scenario scenario;
        };
        std::vector<Item> items;
        std::vector<std::string> problems;
        for (const auto& file : *files) {
            const std::string base = directory_of(file);
            Json doc;
            try {
                doc = parse_json_file(file);
            } catch (const ConfigError& e) {
                problems.insert(problems.end(), e.problems().begin(), e.problems().end());
                continue;
            }
            std::vector<std::pair<std::string, Json>> docs;   // pointer prefix, scenario
            if (doc.is_object() && doc.contains("scenarios")) {
                if (!doc["scenarios"].is_array()) {
                    problems.push_back(fmt::format("{}#/scenarios: {}: expected an array of scenarios", file,
                                                   json_brief(doc["scenarios"])));
                    continue;
                }
                for (std::size_t i = 0; i < doc["scenarios"].size(); ++i)
                    docs.emplace_back(fmt::format("{}#/scenarios/{}", file, i), doc["scenarios"][i]);
            } else {
                docs.emplace_back(file + "#", doc);
            }
            for (const auto& [prefix, j] : docs) {
                try {
                    Item it;
                    it.file = file;
                    it.scenario = parse_scenario(j, base);
                    it.name = it.scenario.name.empty() ? prefix : it.scenario.name;
                    items.push_back(std::move(it));
                } catch (const ConfigError& e) {
                    for (const auto& l : e.problems()) problems.push_back(prefix + l);
                }
            }
        }
        if (!problems.empty()) throw ConfigError(problems);
        sim::EstimateOptions opt;
        opt.fast = *fast;
        sim::StepSimulator simulator;
        Json results = Json::array();
        Table t({"scenario", "kind", "step / TTFT", "MFU / TPOT", "tokens/s per GPU", "memory per GPU", "fits"});
        for (const auto& it : items) {
            const Estimate e = run_estimate(it.scenario, opt, simulator);
            results.push_back({{"name", it.name}, {"file", it.file}, {"result", estimate_json(it.scenario, e, opt)}});
            if (e.serving) {
                const auto& r = *e.serving;
                t.row({it.name, "serving", human_seconds(r.ttft_s), human_seconds(r.tpot_s),
                       fmt::format("{:.0f}", r.output_tokens_per_s_per_gpu), gib(r.memory.total_bytes),
                       r.memory.fits ? "yes" : "NO"});
            } else {
                const auto& r = e.training->chosen();
                t.row({it.name, "training", human_seconds(r.step_time_s), fmt::format("{:.1f}%", 100 * r.mfu),
                       fmt::format("{:.0f}", r.tokens_per_s_per_gpu), gib(r.memory.total_bytes),
                       r.memory.fits ? "yes" : "NO"});
            }
        }
        if (*json)
            print_json({{"results", results}});
        else
            std::cout << t.str();
        ctx.exit_code = 0;
    });
}

}   // namespace llmsim::cli
