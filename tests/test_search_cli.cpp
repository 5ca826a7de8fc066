// The search, chinchilla, plan and scaling subcommands end to end (the built binary): JSON keys of
// the contract, constraints from flags and from a scenario file, errors naming the flag or pointer.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hardware_db/errors.hpp"
#include "report/search_request.hpp"
#include "tests/cli_runner.hpp"

namespace {

using llmsim::test::Run;

// The arguments are split at spaces (none of these tests passes an argument containing one).
Run run(const std::string& args) {
    std::vector<std::string> argv;
    std::istringstream in(args);
    for (std::string a; in >> a;) argv.push_back(a);
    return llmsim::test::run_llmsim(argv, "search-cli");
}

}   // namespace

TEST_CASE("llmsim search --json has results, evaluated, rejected and pareto, best first", "[search][cli]") {
    const auto r =
        run("search --model gpt3-1.3b --system dgx-a100-80gb --gpus 16 --seq-len 2048 --global-batch 128 "
            "--top-k 4 --threads 2 --json");
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["results"].size() == 4);
    CHECK(j["evaluated"].get<long long>() > 0);
    CHECK(j["rejected"].is_object());
    CHECK(j["pareto"].size() >= 1);
    for (const char* k : {"parallel", "training", "step_time_s", "mfu", "bubble_fraction", "memory"})
        CHECK(j["results"][0].contains(k));
    CHECK(j["results"][0]["memory"]["fits"] == true);
    // How sure: the range the published A100 runs measured against llmsim, around the step it reports.
    for (const auto& e : j["results"]) {
        REQUIRE(e.contains("step_time_interval_s"));
        const double step = e.contains("simulated_step_time_s") ? e["simulated_step_time_s"].get<double>()
                                                                : e["step_time_s"].get<double>();
        const auto& pr = e["step_time_published_range"];
        CHECK(e["step_time_interval_s"][0].get<double>() == Approx(step * pr["low_ratio"].get<double>()));
        CHECK(e["step_time_interval_s"][1].get<double>() == Approx(step * pr["high_ratio"].get<double>()));
        CHECK(pr["runs"].get<int>() >= 3);
        CHECK_THAT(pr["basis"].get<std::string>(), Catch::Contains("a100"));
    }
    CHECK(j["results"][0]["parallel"]["tp"].get<int>() * j["results"][0]["parallel"]["pp"].get<int>() *
              j["results"][0]["parallel"]["cp"].get<int>() * j["results"][0]["parallel"]["dp"].get<int>() ==
          16);
    for (std::size_t i = 1; i < j["results"].size(); ++i)
        CHECK(j["results"][i - 1]["objective"].get<double>() <=
              j["results"][i]["objective"].get<double>() * (1 + 1e-12) + (j["confirmed_by_simulator"] ? 1.0 : 0.0));
}

TEST_CASE("llmsim search --scenario: parallel block as constraints, search block limits", "[search][cli]") {
    const std::string path = "test_search_cli_scenario.json";
    std::ofstream(path) << R"({"model": "llama-2-7b", "system": "dgx-h100", "gpus": 32,
        "parallel": {"tp": [1, 2], "zero": [1]},
        "training": {"seq_len": 4096, "global_batch": 256, "recompute": "selective"},
        "search": {"top_k": 3, "max_pp": 2, "memory_headroom": 0.1}})";
    const auto r = run("search --scenario " + path + " --confirm 0 --json");
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["results"].size() == 3);
    for (const auto& e : j["results"]) {
        CHECK(e["parallel"]["tp"].get<int>() <= 2);
        CHECK(e["parallel"]["pp"].get<int>() <= 2);
        CHECK(e["parallel"]["zero"] == 1);
        CHECK(e["training"]["recompute"] == "selective");
        CHECK(e["memory"]["total_bytes"].get<double>() <= 0.9 * e["memory"]["capacity_bytes"].get<double>());
    }
    std::ofstream(path) << R"({"model": "llama-2-7b", "system": "dgx-h100", "gpus": 32,
        "training": {"global_batch": 256}, "search": {"top_kk": 3}})";
    const auto bad = run("search --scenario " + path);
    CHECK(bad.rc == 2);
    CHECK(bad.out.empty());
    CHECK(bad.err.find("/search/top_kk") != std::string::npos);
    // Per-layer activation policies are not searched: refused, naming the key.
    std::ofstream(path) << R"({"model": "llama-2-7b", "system": "dgx-h100", "gpus": 8,
        "training": {"global_batch": 64, "activation_offload_layers": 4}, "search": {}})";
    const auto off = run("search --scenario " + path);
    CHECK(off.rc == 2);
    CHECK(off.out.empty());
    CHECK(off.err.find("/training/activation_offload_layers: 4: expected absent in a layout search") !=
          std::string::npos);
    std::remove(path.c_str());
}

TEST_CASE("llmsim search flag errors name the flag", "[search][cli]") {
    const auto r = run("search --model gpt3-1.3b --system dgx-a100-80gb --gpus 8 --global-batch 64 --tp x8");
    CHECK(r.rc == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("--tp") != std::string::npos);
    const auto g = run("search --model gpt3-1.3b --system dgx-a100-80gb --gpus 8 --global-batch-range 9:15");
    CHECK(g.rc == 2);
    CHECK(g.out.empty());
    CHECK(g.err.find("--global-batch-range") != std::string::npos);
    // A size takes its unit: 70GiB of headroom on an 80 GiB A100 is the same search as 75161927680 bytes,
    // and leaves its best layout 10 GiB.
    const std::string base =
        "search --model gpt3-1.3b --system dgx-a100-80gb --gpus 8 --global-batch 64 --top-k 1 --json ";
    const auto unit = run(base + "--memory-headroom-bytes 70GiB");
    const auto bytes = run(base + "--memory-headroom-bytes 75161927680");
    REQUIRE(unit.rc == 0);
    REQUIRE(bytes.rc == 0);
    auto ju = nlohmann::json::parse(unit.out), jb = nlohmann::json::parse(bytes.out);
    ju.erase("wall_s");
    jb.erase("wall_s");
    CHECK(ju == jb);
    const auto& memory = ju["results"][0]["memory"];
    CHECK(memory["total_bytes"].get<double>() <= memory["capacity_bytes"].get<double>() - 70 * 1073741824.0);
    const auto odd = run(base + "--memory-headroom-bytes 0x10");
    CHECK(odd.rc == 2);
    CHECK(odd.out.empty());
    CHECK(odd.err.find("--memory-headroom-bytes: \"0x10\": expected a size in [0, ") != std::string::npos);
}

TEST_CASE("llmsim chinchilla --json reproduces Table 3 with approach1", "[scaling][cli]") {
    const auto r = run("chinchilla --compute 5.76e23 --fit approach1 --json");
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["results"][0]["params"].get<double>() == Approx(67e9));
    CHECK(j["results"][0]["tokens"].get<double>() == Approx(1.5e12));
    const auto p = run("chinchilla --params 70B --json");
    REQUIRE(p.rc == 0);
    CHECK(nlohmann::json::parse(p.out)["results"].size() == 4);
    CHECK(run("chinchilla --fit nope --compute 1e20").rc == 2);
}

TEST_CASE("llmsim plan and scaling --json", "[plan][scaling][cli][heavy]") {
    const auto p =
        run("plan --compute 1e21 --system dgx-h100 --gpus 16 --price-per-gpu-hour 2 "
            "--mtbf-node-hours 2000 --checkpoint-write-s 30 --json");
    REQUIRE(p.rc == 0);
    const auto j = nlohmann::json::parse(p.out);
    for (const char* k : {"chinchilla", "model", "layout", "training", "reliability"}) CHECK(j.contains(k));
    CHECK(j["training"]["days"].get<double>() > 0);
    CHECK(j["training"]["cost_usd"].get<double>() == Approx(2.0 * j["training"]["gpu_hours"].get<double>()));
    CHECK(j["reliability"]["goodput"].get<double>() < 1.0);
    // The planned layout is confirmed on the simulator: days from the step estimate gives for it (the closed
    // form's read up to 9% longer), tokens / (tokens/s).
    CHECK(j["layout"]["step_time_s"].get<double>() == j["layout"]["simulated_step_time_s"].get<double>());
    CHECK(j["layout"].contains("closed_form_step_time_s"));
    CHECK(j["training"]["days"].get<double>() ==
          Approx(j["training"]["tokens"].get<double>() / j["training"]["tokens_per_s"].get<double>() / 86400.0));
    CHECK(j["training"]["tokens_per_s"].get<double>() == Approx(j["layout"]["tokens_per_s"].get<double>()));
    // Days, GPU-hours and cost carry the best layout's step-time range.
    const auto& pr = j["layout"]["step_time_published_range"];
    const double days = j["training"]["days"].get<double>();
    CHECK(j["training"]["days_interval"][0].get<double>() == Approx(days * pr["low_ratio"].get<double>()));
    CHECK(j["training"]["days_interval"][1].get<double>() == Approx(days * pr["high_ratio"].get<double>()));
    CHECK(j["training"]["cost_usd_interval"][1].get<double>() ==
          Approx(2.0 * j["training"]["gpu_hours_interval"][1].get<double>()));
    // Without a stated MTBF, BLOOM's failure rate: Llama 3 405B's 54 days on 16,384 H100s logged 466
    // interruptions (419 unexpected; Llama Team 2024, Sec. 3.3.4), 8.6 (7.8) a day.
    const auto l3 = run("plan --days 54 --system dgx-h100 --gpus 16384 --json");
    REQUIRE(l3.rc == 0);
    const auto l3j = nlohmann::json::parse(l3.out);
    const auto r = l3j["reliability"];
    // Its batch is the budget's compute-optimal one (DeepSeek LLM's fit), a power of two in sequences: 67M
    // tokens at ~3.8e25 FLOPs, 16,384 sequences of 4096 (2M tokens left these GPUs at a quarter MFU).
    CHECK(l3j["layout"]["training"]["global_batch"] == 16384);
    CHECK(l3j["training"]["global_batch_source"] == "compute-optimal (DeepSeek LLM fit)");
    CHECK(l3j["layout"]["mfu"].get<double>() > 0.4);
    CHECK(j["layout"]["training"]["global_batch"] == 512);   // 2.2M tokens at 1e21 FLOPs
    CHECK(r["nodes"] == 2048);
    CHECK(r["node_mtbf_hours"].get<double>() == Approx(400.0 * 168 / 1.5 / 8));   // 8 GPUs a node
    CHECK(std::abs(r["interruptions_per_day"].get<double>() / (466.0 / 54) - 1) < 0.2);
    CHECK(std::abs(r["interruptions_per_day"].get<double>() / (419.0 / 54) - 1) < 0.2);
    CHECK(std::abs(r["expected_interruptions"].get<double>() / 466.0 - 1) < 0.2);
    CHECK_FALSE(r.contains("goodput"));   // no checkpoint write time: not priced
    CHECK(run("plan --days 54 --system dgx-h100 --gpus 64 --restart-s 60").rc == 2);
    // Weak scaling grows the batch from the first count that fits, whose weak efficiency is then 100% (2 GPUs
    // of a 70B model fit nothing; the batch grew from 2 and the 8-GPU reference read 28%).
    const auto w =
        run("scaling --model llama-3-70b --system dgx-h100 --gpus 2,8,16 --seq-len 4096 --global-batch 64 "
            "--json");
    REQUIRE(w.rc == 0);
    const auto wj = nlohmann::json::parse(w.out);
    CHECK(wj["reference_gpus"] == 8);
    CHECK(wj["sizes"][0]["weak_global_batch"].is_null());
    CHECK(wj["sizes"][1]["weak_global_batch"] == 64);
    CHECK(wj["sizes"][1]["weak_scaling_efficiency"].get<double>() == Approx(1.0));
    CHECK(wj["sizes"][2]["weak_global_batch"] == 128);
    // A chip without bf16 plans in fp16 unless told otherwise (it was refused as bf16).
    const auto v100 = run("plan --compute 1e21 --system dgx-v100 --gpus 64 --json");
    REQUIRE(v100.rc == 0);
    CHECK(nlohmann::json::parse(v100.out)["layout"]["training"]["precision"] == "fp16");
    // A plan whose model's search passes the layout limit says so in plan's flags, not search's.
    const auto huge = run("plan --days 1e9 --system dgx-h100 --gpus 2048");
    CHECK(huge.rc == 2);
    CHECK(huge.out.empty());
    CHECK(huge.err.find("--days: 1e+09: expected a budget whose plan searches at most 33554432 layouts") !=
          std::string::npos);
    CHECK(huge.err.find("--max-gpus") == std::string::npos);
    const auto s =
        run("scaling --model gpt3-1.3b --system dgx-a100-80gb --seq-len 2048 --global-batch 256 "
            "--gpus 8,16,32 --json");
    REQUIRE(s.rc == 0);
    const auto k = nlohmann::json::parse(s.out);
    REQUIRE(k["sizes"].size() == 3);
    CHECK(k["sizes"][0]["strong_scaling_efficiency"].get<double>() == Approx(1.0));
    CHECK(k["sizes"][2]["weak_global_batch"] == 1024);
}

using namespace llmsim;
using namespace llmsim::search;

TEST_CASE("search request: parallel block as constraints, search block, strict keys", "[search][spec]") {
    const Json j = Json::parse(R"({
        "model": "gpt3-1.3b", "system": "dgx-a100-80gb",
        "parallel": {"tp": [1, 2], "zero": 1, "schedule": ["1f1b"], "sequence_parallel": true},
        "training": {"seq_len": 2048, "recompute": ["selective", "full"], "micro_batch": 2},
        "search": {"max_gpus": 64, "memory_headroom": 0.1, "max_pp": 4, "objective": "cost", "top_k": 3,
                   "global_batch": "128:512"}
    })");
    const auto req = parse_search_request(j);
    CHECK(req.space.tp == std::vector<int>{1, 2});
    CHECK(req.space.zero == std::vector<int>{1});
    CHECK(req.space.schedules == std::vector<const ScheduleDef*>{find_schedule("1f1b")});
    CHECK(req.space.recompute == std::vector<Recompute>{Recompute::selective, Recompute::full});
    CHECK(req.space.micro_batch == std::vector<std::int64_t>{2});
    CHECK(req.space.global_batches == std::vector<std::int64_t>{128, 256, 512});
    CHECK(req.space.max_gpus == 64);
    CHECK(req.space.max_pp == 4);
    CHECK(req.options.objective == Objective::cost);
    CHECK(req.options.top_k == 3);
    CHECK(req.space.sequence_parallel == std::optional<bool>(true));
    const auto r = run_search(req.base, req.space, req.options);
    REQUIRE(!r.top.empty());
    for (const auto& e : r.top) {
        CHECK(e.c.zero == 1);
        CHECK(e.c.tp <= 2);
        CHECK(e.c.pp <= 4);
        CHECK(e.c.micro_batch == 2);
        CHECK(e.c.recompute != Recompute::none);
    }
    Json bad = j;
    bad["search"]["max_gpu"] = 8;
    bad["parallel"]["tp"] = "eight";
    try {
        parse_search_request(bad);
        FAIL("expected ConfigError");
    } catch (const ConfigError& e) {
        std::string all;
        for (const auto& l : e.problems()) all += l + "\n";
        CHECK(all.find("/search/max_gpu") != std::string::npos);
        CHECK(all.find("/parallel/tp") != std::string::npos);
    }
    CHECK(parse_batch_range("100:1000", "x") == std::vector<std::int64_t>{128, 256, 512});
    CHECK_THROWS_AS(parse_batch_range("9:15", "x"), ConfigError);
}

TEST_CASE("search request: parallel.framework goes to the base scenario; torchtitan admits FSDP with pipelines",
          "[search][spec]") {
    Json j = Json::parse(R"({
        "model": "gpt3-6.7b", "system": "dgx-h100", "gpus": 32,
        "parallel": {"pp": [2, 4], "zero": [3], "framework": "torchtitan"},
        "training": {"seq_len": 2048, "global_batch": 256}
    })");
    const auto req = parse_search_request(j);
    CHECK(req.base.parallel.framework == Framework::torchtitan);
    const auto r = run_search(req.base, req.space, req.options);
    REQUIRE(!r.top.empty());
    for (const auto& e : r.top) {
        CHECK(e.c.zero == 3);
        CHECK(e.c.pp >= 2);
    }
    // Without the framework the same space is refused by the zero_pp rule, counted as such.
    j["parallel"].erase("framework");
    const auto plain = parse_search_request(j);
    const auto none = run_search(plain.base, plain.space, plain.options);
    CHECK(none.top.empty());
    bool zero_pp = false;
    for (const auto& [reason, n] : none.rejected)
        zero_pp = zero_pp || (reason.find("ZeRO-2/3 with pipeline") == 0 && n > 0);
    CHECK(zero_pp);
    j["parallel"]["framework"] = "jax";
    CHECK_THROWS_WITH(parse_search_request(j), Catch::Contains("/parallel/framework: \"jax\""));
}

TEST_CASE("llmsim search: overlap policies searched, fixed by flags or keys, shown per result", "[search][cli]") {
    const std::string base =
        "search --model gpt3-175b --system dgx-a100-80gb --gpus 64 --seq-len 2048 --global-batch 64 --tp 8 --sp true "
        "--top-k 3 --confirm 0 --json";
    // Searched: TP overlap on where it acts (tp 8 with SP), param-gather overlap on.
    const auto a = run(base);
    REQUIRE(a.rc == 0);
    const auto ja = nlohmann::json::parse(a.out);
    REQUIRE(!ja["results"].empty());
    for (const auto& e : ja["results"]) {
        CHECK(e["parallel"]["tp_comm_overlap"] == true);
        CHECK(e["parallel"]["overlap_param_gather"] == true);
        CHECK(e["overlap"].get<std::string>().rfind("tp+", 0) == 0);
    }
    // Fixed off by the flag: every result has it off and is slower.
    const auto b = run(base + " --tp-comm-overlap false");
    REQUIRE(b.rc == 0);
    const auto jb = nlohmann::json::parse(b.out);
    for (const auto& e : jb["results"]) CHECK(e["parallel"]["tp_comm_overlap"] == false);
    CHECK(ja["results"][0]["step_time_s"].get<double>() < jb["results"][0]["step_time_s"].get<double>());
    // The same constraint from a scenario file.
    const std::string path = "test_search_cli_overlap.json";
    std::ofstream(path) << R"({"model": "gpt3-175b", "system": "dgx-a100-80gb", "gpus": 64,
        "parallel": {"tp": 8, "sequence_parallel": true, "tp_comm_overlap": false, "overlap_grad_reduce": false},
        "training": {"seq_len": 2048, "global_batch": 64}, "search": {"top_k": 3, "confirm": 0}})";
    const auto c = run("search --scenario " + path + " --json");
    std::remove(path.c_str());
    REQUIRE(c.rc == 0);
    const auto jc = nlohmann::json::parse(c.out);
    CHECK(jc["results"][0]["step_time_s"].get<double>() >= jb["results"][0]["step_time_s"].get<double>());
    for (const auto& e : jc["results"]) {
        CHECK(e["parallel"]["tp_comm_overlap"] == false);
        CHECK(e["parallel"]["overlap_grad_reduce"] == false);
    }
    // A bad value names the flag; exit 2, nothing on stdout.
    const auto d = run(base + " --overlap-grad-reduce maybe");
    CHECK(d.rc == 2);
    CHECK(d.out.empty());
    CHECK(d.err.find("--overlap-grad-reduce") != std::string::npos);
    // The text table shows the overlap column when the search chose the policies, not when all are fixed.
    const std::string text =
        "search --model gpt3-175b --system dgx-a100-80gb --gpus 64 --seq-len 2048 "
        "--global-batch 64 --tp 8 --top-k 2 --confirm 0";
    const auto t1 = run(text);
    REQUIRE(t1.rc == 0);
    CHECK(t1.out.find("overlap") != std::string::npos);
    const auto t2 = run(text + " --tp-comm-overlap true --overlap-grad-reduce true --overlap-param-gather true");
    REQUIRE(t2.rc == 0);
    CHECK(t2.out.find("overlap") == std::string::npos);
}

TEST_CASE("llmsim search on an RLHF scenario: the best layout's step is llmsim estimate's RLHF iteration",
          "[search][cli][rlhf]") {
    const std::string path = "test_search_cli_rlhf.json";
    const std::string model = R"("model": {"name": "opt-1.3b", "layers": 24, "hidden": 2048, "heads": 32,
        "ffn_hidden": 8192, "vocab": 50272, "mlp": "gelu"}, "system": "dgx-a100-80gb", "gpus": 8)";
    const std::string rlhf = R"("rlhf": {"enabled": true, "prompt_len": 256, "critic": {"name": "opt-350m",
        "layers": 24, "hidden": 1024, "heads": 16, "ffn_hidden": 4096, "vocab": 50272, "mlp": "gelu"}})";
    std::ofstream(path) << "{" << model << R"(, "training": {"seq_len": 512, "global_batch": 64, "precision": "fp16", )"
                        << rlhf << "}}";
    const auto r = run("search --scenario " + path + " --top-k 2 --json");
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["step"] == "rlhf_iteration");
    CHECK(j["confirmed_by_simulator"] == false);
    REQUIRE(!j["results"].empty());
    const auto& best = j["results"][0];
    // The same scenario with the found layout, estimated.
    std::ofstream(path) << "{" << model << R"(, "parallel": )" << best["parallel"].dump()
                        << R"(, "training": {"seq_len": 512, "global_batch": 64, "precision": "fp16", "micro_batch": )"
                        << best["training"]["micro_batch"].dump() << R"(, "recompute": )"
                        << best["training"]["recompute"].dump() << R"(, "offload": )"
                        << best["training"]["offload"].dump() << ", " << rlhf << "}}";
    const auto e = run("estimate --scenario " + path + " --json");
    std::remove(path.c_str());
    REQUIRE(e.rc == 0);
    const auto je = nlohmann::json::parse(e.out);
    CHECK(best["step_time_s"].get<double>() == Approx(je["rlhf"]["iteration_s"].get<double>()).epsilon(1e-12));
    CHECK(best["memory"]["total_bytes"].get<double>() ==
          Approx(je["memory"]["total_bytes"].get<double>()).epsilon(1e-12));
}

TEST_CASE("search: a layout too large without recompute is evaluated with the fewest recomputed layers that fit",
          "[search][cli]") {
    // GPT-3 175B on 512 A100-80GB without TP overlap (docs/search.md): the best layout recomputes 13 of 96 layers.
    const auto r =
        run("search --model gpt3-175b --system dgx-a100-80gb --gpus 512 --seq-len 2048 --global-batch 1536 --top-k 3 "
            "--tp-comm-overlap false --json");
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    const auto& best = j["results"][0];
    REQUIRE(best["training"].contains("recompute_num_layers"));
    const int n = best["training"]["recompute_num_layers"].get<int>();
    CHECK(best["training"]["recompute"] == "full");
    CHECK(best["layout"].get<std::string>().find(fmt::format("full({}/chunk)", n)) != std::string::npos);
    CHECK(best["memory"]["fits"] == true);
    // The simulator confirms the fast path's price.
    CHECK(best["simulated_step_time_s"].get<double>() == best["step_time_s"].get<double>());
    CHECK(best["closed_form_step_time_s"].get<double>() == Approx(best["step_time_s"].get<double>()).epsilon(0.02));
    // One layer fewer does not fit; the estimate of the same layout by flags gives the same step.
    const std::string layout =
        "estimate --model gpt3-175b --system dgx-a100-80gb --gpus 512 --seq-len 2048 --global-batch 1536 --tp " +
        std::to_string(best["parallel"]["tp"].get<int>()) + " --pp " +
        std::to_string(best["parallel"]["pp"].get<int>()) + " --cp " +
        std::to_string(best["parallel"]["cp"].get<int>()) + " --zero " +
        std::to_string(best["parallel"]["zero"].get<int>()) + " --sp " +
        (best["parallel"]["sequence_parallel"].get<bool>() ? "true" : "false") + " --micro-batch " +
        std::to_string(best["training"]["micro_batch"].get<int>()) + " --offload " +
        best["training"]["offload"].get<std::string>() + " --recompute full --json --fast --recompute-num-layers ";
    const auto same = nlohmann::json::parse(run(layout + std::to_string(n)).out);
    // (estimate --fast is the closed form: the search's confirmed rows keep its step as closed_form_step_time_s)
    CHECK(same["step_time_s"].get<double>() ==
          Approx(best.value("closed_form_step_time_s", best["step_time_s"].get<double>())).epsilon(1e-9));
    CHECK(same["memory"]["fits"] == true);
    // The search prices the default fp32 master weights and gradients (it does not assume the recipes'
    // memory levers, docs/search.md): one layer fewer does not fit with them; estimate may still fit it
    // with the levers, and then names them.
    const auto fewer = nlohmann::json::parse(run(layout + std::to_string(n - 1)).out);
    CHECK((fewer["memory"]["fits"] == false || !fewer["memory"]["assumed_levers"].empty()));
}

TEST_CASE("search: one-stage layouts too large without recompute try the fewest offloaded layers that fit",
          "[search][cli]") {
    // Llama 3 70B FP8 on 64 GB200 (NVLink-C2C host link): the FSDP layout NVIDIA's 25.09 recipe runs (tp 1, pp 1,
    // micro-batch 2, 40 of 80 layers offloaded) needs offload to fit; the search finds it.
    const std::string base =
        "search --model llama-3-70b --system gb200-nvl72 --gpus 64 --seq-len 8192 --global-batch 128 --precision fp8 "
        "--tp 1 --pp 1 --cp 1 --zero 3 --micro-batch 2 --recompute none --top-k 3 --json";
    const auto r = run(base + " --activation-offload true");
    REQUIRE(r.rc == 0);
    const auto best = nlohmann::json::parse(r.out)["results"][0];
    REQUIRE(best["training"].contains("activation_offload_layers"));
    const int n = best["training"]["activation_offload_layers"].get<int>();
    CHECK(n > 0);
    CHECK(n < 80);
    CHECK(best["layout"].get<std::string>().find(fmt::format("act-offload:{}", n)) != std::string::npos);
    // Not asked for (the default), nothing fits (exit 1, "no layout fits").
    const auto off = run(base);
    CHECK(off.rc == 1);
    // One layer fewer does not fit the GPU.
    const std::string est =
        "estimate --model llama-3-70b --system gb200-nvl72 --gpus 64 --seq-len 8192 --global-batch 128 --precision fp8 "
        "--zero 3 --micro-batch 2 --json --fast --activation-offload-layers ";
    const auto same = nlohmann::json::parse(run(est + std::to_string(n)).out);
    CHECK(same["memory"]["fits"] == true);
    // (estimate --fast is the closed form: the search's confirmed rows keep its step as closed_form_step_time_s)
    CHECK(same["step_time_s"].get<double>() ==
          Approx(best.value("closed_form_step_time_s", best["step_time_s"].get<double>())).epsilon(1e-9));
    const auto fewer = nlohmann::json::parse(run(est + std::to_string(n - 1)).out);   // as above
    CHECK((fewer["memory"]["fits"] == false || !fewer["memory"]["assumed_levers"].empty()));
}

TEST_CASE("llmsim search --qps max: each layout's capacity per GPU, best first, the same answer as estimate's",
          "[search][cli][capacity][heavy]") {
    const std::string deployment =
        "--model llama-3-8b --system dgx-h100 --input-len 1000 --output-len 250 --weight-precision fp8 "
        "--kv-precision fp8 --chunk 2048 --slo-ttft-p99 0.5 --slo-tpot-p99 0.03 --qps max --json";
    const auto r = run("search " + deployment + " --max-gpus 2");
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["results"].size() == 2);   // tp 1 and tp 2 in fp8 (the scenario's precision)
    for (std::size_t i = 1; i < j["results"].size(); ++i)
        CHECK(j["results"][i - 1]["slo_capacity_qps_per_gpu"].get<double>() >=
              j["results"][i]["slo_capacity_qps_per_gpu"].get<double>());
    for (const auto& row : j["results"])
        CHECK(row["slo_capacity_qps_per_gpu"].get<double>() ==
              Approx(row["slo_capacity_qps"].get<double>() / row["gpus"].get<double>()));
    // The one-GPU row is estimate's qps "max" on one GPU: one capacity search, not a second copy.
    const auto e = run("estimate " + deployment);
    REQUIRE(e.rc == 0);
    const double one = nlohmann::json::parse(e.out)["slo_capacity_qps"].get<double>();
    bool found = false;
    for (const auto& row : j["results"])
        if (row["gpus"] == 1) {
            CHECK(row["slo_capacity_qps"].get<double>() == Approx(one).epsilon(1e-12));
            found = true;
        }
    CHECK(found);
}
