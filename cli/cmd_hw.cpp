// llmsim hw list | hw show NAME: the hardware database with the source of every value.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "hardware_db/database.hpp"
#include "hardware_db/errors.hpp"

namespace llmsim::cli {

namespace {

std::string source_of(const std::map<std::string, Provenance>& prov, const std::string& key) {
    // The most specific entry: "efficiency.gemm_max.bf16", then "efficiency.gemm_max", "efficiency".
    std::string k = key;
    while (true) {
        auto it = prov.find(k);
        if (it != prov.end()) {
            if (it->second.kind == "calibration" || it->second.kind == "override")
                return "[" + it->second.kind + "] " + it->second.source;
            return it->second.source;
        }
        const auto dot = k.rfind('.');
        if (dot == std::string::npos) return "-";
        k = k.substr(0, dot);
    }
}

void add_rows(Table& t, const Json& j, const std::string& prefix, const std::map<std::string, Provenance>& prov) {
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (it.key() == "provenance" || it.key() == "gpu" || it.key() == "name" || it.key() == "display_name") continue;
        if (it->is_object()) {
            add_rows(t, *it, key, prov);
            continue;
        }
        std::string v = it->is_string() ? it->get<std::string>() : it->dump();
        if (it->is_number_float()) v = fmt::format("{:.6g}", it->get<double>());
        t.row({key, v, source_of(prov, key)});
    }
}

}   // namespace

void setup_hw(CLI::App* hw, Context& ctx) {
    hw->require_subcommand(1);
    auto* list = hw->add_subcommand("list", "List systems and accelerators");
    auto list_json = std::make_shared<bool>(false);
    list->add_flag("--json", *list_json, "Print JSON");
    list->callback([list_json, &ctx] {
        const auto& db = Database::builtin();
        if (*list_json) {
            print_json({{"systems", db.system_names()}, {"accelerators", db.accelerator_names()}});
            ctx.exit_code = 0;
            return;
        }
        Table ts({"system", "accelerator", "per node", "scale-up GB/s", "scale-out GB/s", "description"});
        ts.left(1).clip(5);   // one line per system; --wide shows the whole description
        for (const auto& n : db.system_names()) {
            const auto s = db.system(n);
            ts.row({n, s.gpu.name, std::to_string(s.gpus_per_node), fmt::format("{:.0f}", s.intra_node_GBps),
                    fmt::format("{:.1f}", s.inter_node_GBps), s.display_name});
        }
        Table ta({"accelerator", "bf16 TFLOP/s", "fp8 TFLOP/s", "HBM GiB", "HBM GB/s", "description"});
        ta.clip(5);
        for (const auto& n : db.accelerator_names()) {
            const auto a = db.accelerator(n);
            // A precision the chip lacks is "-" (V100 has no bf16; it read "0").
            auto peak = [&](Precision p) { return a.peak(p) > 0 ? fmt::format("{:.0f}", a.peak(p) / 1e12) : "-"; };
            ta.row({n, peak(Precision::bf16), peak(Precision::fp8),
                    fmt::format("{:.1f}", a.hbm_capacity_bytes / (1 << 30) / 1.0), fmt::format("{:.0f}", a.hbm_GBps),
                    a.display_name});
        }
        std::cout << ts.str() << "\n" << ta.str();
        ctx.exit_code = 0;
    });
    auto* show = hw->add_subcommand("show", "Show the resolved values of a system or accelerator, with sources");
    auto name = std::make_shared<std::string>();
    auto profile = std::make_shared<std::string>();
    auto show_json = std::make_shared<bool>(false);
    show->add_option("name", *name, "System or accelerator name")->required();
    show->add_option("--profile", *profile, "Apply a calibration profile (JSON) to the system");
    show->add_flag("--json", *show_json, "Print JSON");
    show->callback([name, profile, show_json, &ctx] {
        const auto& db = Database::builtin();
        const auto systems = db.system_names();
        const bool is_system = std::find(systems.begin(), systems.end(), *name) != systems.end();
        if (is_system) {
            Problems pr;
            Json value = *name;
            if (!profile->empty()) value = Json{{"preset", *name}, {"profile", *profile}};
            const auto s = db.resolve_system(value, "--profile", pr);
            pr.raise_if_any();
            if (*show_json) {
                print_json(to_json(s, true));
            } else {
                Table t({"system " + s.name, "value", "source"});
                t.left(1).left(2);
                add_rows(t, to_json(s, false), "", s.provenance);
                Table g({"accelerator " + s.gpu.name, "value", "source"});
                g.left(1).left(2);
                add_rows(g, to_json(s.gpu, false), "", s.gpu.provenance);
                std::cout << wrap_text(s.display_name) << t.str() << "\n" << wrap_text(s.gpu.display_name) << g.str();
            }
        } else {
            const auto a = db.accelerator(*name);   // throws with suggestions when unknown
            if (*show_json) {
                print_json(to_json(a, true));
            } else {
                Table g({"accelerator " + a.name, "value", "source"});
                g.left(1).left(2);
                add_rows(g, to_json(a, false), "", a.provenance);
                std::cout << wrap_text(a.display_name) << g.str();
            }
        }
        ctx.exit_code = 0;
    });
}

}   // namespace llmsim::cli
