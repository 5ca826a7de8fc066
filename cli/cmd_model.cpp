// llmsim model list | model show NAME|config.json: the model zoo with derived parameter counts.
#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "app/drills/calc.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cost_models/layer/layer.hpp"
#include "cost_models/model_params.hpp"
#include "hardware_db/database.hpp"

namespace llmsim::cli {

namespace {
std::string published_error(const std::optional<double>& published, double computed) {
    if (!published) return "-";
    return fmt::format("{:+.2f}%", 100.0 * (computed - *published) / *published);
}
}   // namespace

void setup_model(CLI::App* model, Context& ctx) {
    model->require_subcommand(1);
    auto* list = model->add_subcommand("list", "List the model zoo");
    auto list_json = std::make_shared<bool>(false);
    list->add_flag("--json", *list_json, "Print JSON");
    list->callback([list_json, &ctx] {
        const auto& db = Database::builtin();
        Json out = Json::array();
        Table t({"model", "layers", "hidden", "heads/kv", "ffn", "vocab", "params", "active", "vs published"});
        for (const auto& n : db.model_names()) {
            const auto m = db.model(n);
            const auto pc = count_parameters(m);
            out.push_back({{"name", n}, {"params", pc.total}, {"active_params", pc.active}});
            t.row({n, std::to_string(m.layers), std::to_string(m.hidden), fmt::format("{}/{}", m.heads, m.kv_heads),
                   std::to_string(static_cast<std::int64_t>(ffn_width(describe_layer(m, LayerShape{.moe = true})))),
                   std::to_string(m.vocab), human_count(pc.total), human_count(pc.active),
                   published_error(m.published_params, pc.total)});
        }
        if (*list_json)
            print_json(out);
        else
            std::cout << t.str();
        ctx.exit_code = 0;
    });
    auto* show = model->add_subcommand("show", "Show a model's shape and derived counts");
    auto name = std::make_shared<std::string>();
    auto show_json = std::make_shared<bool>(false);
    show->add_option("name", *name, "Zoo name or Hugging Face config.json path")->required();
    show->add_flag("--json", *show_json, "Print JSON");
    show->callback([name, show_json, &ctx] {
        Problems pr;
        const auto m = Database::builtin().resolve_model(Json(*name), "model", pr);
        pr.raise_if_any();
        const auto pc = count_parameters(m);
        Json counts = {{"total", pc.total},
                       {"active", pc.active},
                       {"non_embedding", pc.non_embedding},
                       {"embedding", pc.embedding},
                       {"position", pc.position},
                       {"output", pc.output},
                       {"attention_per_layer", pc.attention_per_layer},
                       {"dense_mlp_per_layer", pc.dense_mlp_per_layer},
                       {"moe_mlp_per_layer", pc.moe_mlp_per_layer},
                       {"dense_layer", pc.dense_layer},
                       {"moe_layer", pc.moe_layer}};
        if (*show_json) {
            Json j = to_json(m);
            j["params"] = counts;
            if (m.published_params) j["published_params"] = *m.published_params;
            if (m.published_active_params) j["published_active_params"] = *m.published_active_params;
            j["source"] = m.source;
            print_json(j);
        } else {
            Table t({m.display_name.empty() ? m.name : m.display_name, "value"});
            t.left(1);
            const Json shape = to_json(m);
            for (auto it = shape.begin(); it != shape.end(); ++it)
                if (!it->is_object()) t.row({it.key(), it->is_string() ? it->get<std::string>() : it->dump()});
            // The block kinds' own keys, in their words (cost_models/layer/impl).
            const auto& attention = attention_kind(m);
            if (const auto text = attention.text(m, 2.0, {drills::num, drills::count_str}); !text.summary.empty())
                t.row({attention.name, text.summary});
            if (const auto& mlp = mlp_kind(m, true); mlp.summary) t.row({mlp.name, mlp.summary(m)});
            t.row({"parameters", fmt::format("{} ({:.4g})", human_count(pc.total), pc.total)});
            t.row({"active parameters", fmt::format("{} ({:.4g})", human_count(pc.active), pc.active)});
            t.row({"non-embedding", human_count(pc.non_embedding)});
            t.row({"per layer (dense)", human_count(pc.dense_layer)});
            if (has_moe_layers(m)) t.row({"per layer (MoE)", human_count(pc.moe_layer)});
            if (m.published_params)
                t.row({"published", fmt::format("{} ({})", human_count(*m.published_params),
                                                published_error(m.published_params, pc.total))});
            std::cout << t.str();
            if (!m.source.empty()) std::cout << wrap_text("source: " + m.source);
        }
        ctx.exit_code = 0;
    });
}

}   // namespace llmsim::cli
