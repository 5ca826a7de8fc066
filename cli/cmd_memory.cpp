// llmsim memory: per-GPU memory of a training (or inference) scenario.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/plot.hpp"
#include "cli/report.hpp"
#include "cost_models/memory.hpp"
#include "hardware_db/scenario.hpp"
#include "report/results.hpp"

namespace llmsim::cli {

void setup_memory(CLI::App* cmd, Context& ctx) {
    auto flags = std::make_shared<ScenarioFlags>();

    add_scenario_flags(cmd, *flags);
    // Days and GPU-hours for a token budget are estimate's (they need the step time).
    cmd->remove_option(cmd->get_option("--token-budget"));
    auto plot_file = std::make_shared<std::string>();
    cmd->add_option("--plot", *plot_file, "Write the memory of each pipeline stage as an SVG chart (training)");
    cmd->callback([flags, plot_file, &ctx] {
        const Scenario s = resolve_scenario(*flags);
        if (s.is_inference) {
            const auto im = inference_memory(s.model, s.system, s.parallel, s.inference);
            if (flags->json) {
                print_json(report::memory_document(s));
            } else {
                Table t({"component", "per GPU"});
                t.row({"weights", gib(im.weights_bytes)});
                t.row({fmt::format("KV cache (batch {})", s.inference.batch), gib(im.kv_cache_bytes)});
                t.row({"activations (prefill)", gib(im.activations_bytes)});
                t.row({"runtime reserve", gib(im.other_bytes)});
                t.row({"total", gib(im.total_bytes)});
                std::cout << t.str()
                          << fmt::format("capacity {} -> {}; max batch that fits: {}\n", gib(im.capacity_bytes),
                                         im.fits ? "fits" : "DOES NOT FIT", im.max_batch);
            }
            ctx.exit_code = 0;
            return;
        }
        const auto m = training_memory(s.training_job());
        if (!plot_file->empty()) plot::write(*plot_file, plot::memory_chart(s, m));
        if (flags->json) {
            print_json(report::memory_document(s));
        } else {
            std::cout << join_fields(
                             {fmt::format("{} on {} x {}", s.model.name, s.gpus, s.system.name),
                              fmt::format("tp {} pp {} dp {} cp {} ep {} vp {}", s.parallel.tp, s.parallel.pp,
                                          s.parallel.dp, s.parallel.cp, s.parallel.ep, s.parallel.vp),
                              fmt::format("zero {}", s.parallel.zero), fmt::format("mb {}", s.training.micro_batch),
                              training_options_text(s.training), fmt::format("seq {}", s.training.seq_len)},
                             " | ")
                      << memory_text(m);
        }
        ctx.exit_code = 0;
    });
}

}   // namespace llmsim::cli
