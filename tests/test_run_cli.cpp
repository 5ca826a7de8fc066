// llmsim run at scale and llmsim merge, end to end (the built binary): a sweep of N points gives N rows in
// order with the library's numbers, a failing scenario stays in its row while the others run (exit 1),
// training, serving and search scenarios share one file, shards partition the sweep and merge restores
// the unsharded output byte for byte (JSON lines and CSV, contiguous and strided).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "app/quantities.hpp"
#include "cost_models/memory.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/scenario.hpp"
#include "tests/cli_runner.hpp"

using namespace llmsim;
namespace fs = std::filesystem;

namespace {

test::Run llmsim_cli(const std::vector<std::string>& args) { return test::run_llmsim(args, "run-cli"); }

fs::path scenario_path(const char* name) { return fs::path(LLMSIM_SOURCE_DIR) / "scenarios" / name; }

// The Llama 3 70B example swept over tp (tp 3 does not divide 64 GPUs with pp 4, cp 2) and pp.
fs::path write_sweep(const fs::path& dir) {
    Json doc = parse_json_file(scenario_path("llama3-70b-h100-64.json").string());
    doc["sweep"] = {{"parallel.tp", {1, 2, 3, 4}}, {"parallel.pp", {2, 4}}};
    doc["parallel"].erase("vp");
    const auto p = dir / "sweep.json";
    std::ofstream(p) << doc.dump(2);
    return p;
}

std::string fmt_part(int k, const char* ext) { return "part" + std::to_string(k) + ext; }

std::vector<Json> lines_of(const std::string& text) {
    std::vector<Json> rows;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) rows.push_back(Json::parse(line));
    return rows;
}

}   // namespace

TEST_CASE("run: a sweep of N points gives N rows in order; a bad point stays in its row", "[cli][run]") {
    const auto dir = test::temp_dir("run-sweep");
    const auto sweep = write_sweep(dir);
    const auto out = dir / "rows.jsonl";
    const auto r = llmsim_cli({"run", sweep.string(), "--fast", "-o", out.string(), "-j", "2"});
    INFO(r.err);
    CHECK(r.rc == 1);   // one tp (3) fails for both pp values
    CHECK(r.out.find("8 scenarios (2 failed)") != std::string::npos);
    const auto rows = lines_of(test::slurp(out));
    REQUIRE(rows.size() == 8);
    Json base = parse_json_file(scenario_path("llama3-70b-h100-64.json").string());
    base["parallel"].erase("vp");
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Json& row = rows[i];
        INFO(row.dump());
        CHECK(row["index"] == i);
        CHECK(row["of"] == 8);
        const int pp = i < 4 ? 2 : 4, tp = std::vector<int>{1, 2, 3, 4}[i % 4];   // "parallel.pp" < "parallel.tp"
        CHECK(row["swept"]["parallel.tp"] == tp);
        CHECK(row["swept"]["parallel.pp"] == pp);
        if (tp == 3) {
            CHECK(row["ok"] == false);
            CHECK(row["error"].get<std::string>().find("/parallel") != std::string::npos);
            continue;
        }
        REQUIRE(row["ok"] == true);
        CHECK(row["scenario"]["parallel"]["tp"] == tp);
        CHECK(row["scenario"]["parallel"]["pp"] == pp);
        // The library's closed-form numbers for the same scenario.
        Json doc = base;
        doc["parallel"]["tp"] = tp;
        doc["parallel"]["pp"] = pp;
        Scenario s = parse_scenario(doc, scenario_path("").string());
        resolve_memory_levers(s);   // as every command does after reading a scenario
        const auto q = app::predicted_quantities(s, true);
        CHECK(row["result"]["step_time_s"].get<double>() == Approx(q.at("step_time_s")).epsilon(1e-12));
        CHECK(row["result"]["mfu"].get<double>() == Approx(q.at("mfu")).epsilon(1e-12));
    }
}

TEST_CASE("run: training, serving and search scenarios in one list", "[cli][run]") {
    const auto dir = test::temp_dir("run-kinds");
    Json list = {{"scenarios",
                  {parse_json_file(scenario_path("gpt3-175b-a100-1024.json").string()),
                   parse_json_file(scenario_path("llama3-8b-h100-serving-fp8.json").string()),
                   {{"model", "llama-3-8b"},
                    {"system", "dgx-h100"},
                    {"gpus", 8},
                    {"training", {{"seq_len", 4096}, {"global_batch", 64}}},
                    {"search", {{"top_k", 3}}}}}}};
    const auto file = dir / "list.json";
    std::ofstream(file) << list.dump();
    const auto r = llmsim_cli({"run", file.string(), "--fast", "-o", "-"});
    INFO(r.err);
    REQUIRE(r.rc == 0);
    const auto rows = lines_of(r.out);
    REQUIRE(rows.size() == 3);
    CHECK(rows[0]["result"].contains("step_time_s"));
    CHECK(rows[1]["result"].contains("ttft_s"));
    CHECK(rows[2]["result"].contains("layout"));
    CHECK(rows[2]["scenario"]["gpus"] == 8);
    // The table on a terminal-less stdout names each kind.
    const auto t = llmsim_cli({"run", file.string(), "--fast"});
    CHECK(t.rc == 0);
    CHECK(t.out.find("serving") != std::string::npos);
    CHECK(t.out.find("search") != std::string::npos);
}

TEST_CASE("run --shard K/N partitions a sweep and merge restores it byte for byte", "[cli][run]") {
    const auto dir = test::temp_dir("run-shard");
    const auto sweep = write_sweep(dir);
    for (const char* ext : {".jsonl", ".csv"})
        for (const bool strided : {false, true}) {
            INFO(ext << (strided ? " strided" : " contiguous"));
            const auto whole = dir / (std::string("whole") + ext);
            llmsim_cli({"run", sweep.string(), "--fast", "-o", whole.string()});
            std::vector<std::string> merge_args{"merge"};
            std::size_t rows = 0;
            for (int k = 1; k <= 3; ++k) {
                const auto part = dir / fmt_part(k, ext);
                std::vector<std::string> args{"run", sweep.string(), "--fast", "--shard", std::to_string(k) + "/3",
                                              "-o",  part.string(),  "-j",     "1"};
                if (strided) args.push_back("--strided");
                llmsim_cli(args);
                const std::string text = test::slurp(part);
                rows += static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) -
                        (std::string(ext) == ".csv" ? 1 : 0);
                merge_args.push_back(part.string());
            }
            CHECK(rows == 8);
            std::reverse(merge_args.begin() + 1, merge_args.end());
            const auto m = llmsim_cli(merge_args);
            INFO(m.err);
            CHECK(m.rc == 0);
            CHECK(m.out == test::slurp(whole));
        }
    // A missing shard is an error naming the gap (exit 2, nothing on stdout).
    const auto m = llmsim_cli({"merge", (dir / fmt_part(1, ".jsonl")).string()});
    CHECK(m.rc == 2);
    CHECK(m.out.empty());
    CHECK(m.err.find("rows missing") != std::string::npos);
    const auto bad = llmsim_cli({"run", sweep.string(), "--shard", "4/3"});
    CHECK(bad.rc == 2);
    CHECK(bad.err.find("--shard") != std::string::npos);
}

TEST_CASE("merge --json prints the shards' rows as run --json prints the whole run, byte for byte", "[cli][run]") {
    const auto dir = test::temp_dir("merge-json");
    const auto sweep = write_sweep(dir);
    const auto whole = llmsim_cli({"run", sweep.string(), "--fast", "--json", "-j", "1"});
    REQUIRE(whole.rc == 1);   // tp 3 does not divide the layout: its row says why, the others run
    std::vector<std::string> merge_args{"merge", "--json"};
    for (int k = 1; k <= 2; ++k) {
        const auto part = dir / fmt_part(k, ".jsonl");
        llmsim_cli({"run", sweep.string(), "--fast", "--shard", std::to_string(k) + "/2", "-o", part.string()});
        merge_args.push_back(part.string());
    }
    const auto m = llmsim_cli(merge_args);
    INFO(m.err);
    CHECK(m.rc == 0);
    CHECK(m.out == whole.out);
    CHECK(Json::parse(m.out)["results"].size() == 8);
    // To a file too; CSV pieces are refused before anything is written (exit 2, nothing on stdout, no file).
    const auto file = dir / "merged.json";
    merge_args.insert(merge_args.end(), {"-o", file.string()});
    REQUIRE(llmsim_cli(merge_args).rc == 0);
    CHECK(test::slurp(file) == whole.out);
    const auto csv = dir / "whole.csv";
    llmsim_cli({"run", sweep.string(), "--fast", "-o", csv.string()});
    const auto out = dir / "refused.json";
    const auto refused = llmsim_cli({"merge", "--json", csv.string(), "-o", out.string()});
    CHECK(refused.rc == 2);
    CHECK(refused.out.empty());
    CHECK(refused.err.find("--json: the pieces are CSV rows") != std::string::npos);
    CHECK_FALSE(fs::exists(out));
}
