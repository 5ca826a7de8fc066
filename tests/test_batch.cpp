// The batch room (batch/): sweep expansion, shards, the ordered thread pool, row formats and merge,
// with an evaluator written here (the CLI's estimate-based one is tested in test_cli).
#include <memory>
#include <sstream>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "batch/batch.hpp"
#include "hardware_db/errors.hpp"

using namespace llmsim;
using namespace llmsim::batch;

namespace {

Plan plan_of(const char* text) {
    Plan p;
    expand(Json::parse(text), "t.json#", ".", p);
    return p;
}

// Echoes the document; fails where parallel.tp is 3; the result is tp·gpus.
Outcome fake(const Item& it) {
    const int tp = it.doc["parallel"]["tp"].get<int>();
    if (tp == 3) throw ConfigError("t.json#/parallel/tp: 3: expected a divisor of heads");
    return {it.doc, {{"step_time_s", tp * it.doc["gpus"].get<int>()}}};
}

std::string run_text(const Plan& p, const std::vector<std::size_t>& idx, Format fmt, int threads,
                     RunSummary* sum = nullptr) {
    std::ostringstream out;
    RunOptions o;
    o.threads = threads;
    o.format = fmt;
    const auto s = run(p, idx, fake, o, out);
    if (sum) *sum = s;
    return out.str();
}

std::vector<std::size_t> all(const Plan& p) { return shard_indices(p.items.size(), Shard{}); }

}   // namespace

TEST_CASE("a sweep is the cartesian product over dotted paths, the last path fastest", "[batch]") {
    const Plan p = plan_of(R"({"model": "gpt3-175b", "sweep": {"parallel.tp": [1, 2, 4, 8], "gpus": [64, 128, 256]}})");
    REQUIRE(p.items.size() == 12);
    // Keys are taken in alphabetical order ("gpus" < "parallel.tp"): gpus slowest.
    CHECK(p.swept == std::vector<std::string>{"gpus", "parallel.tp"});
    CHECK(p.items[0].doc["gpus"] == 64);
    CHECK(p.items[0].doc["parallel"]["tp"] == 1);
    CHECK(p.items[1].doc["parallel"]["tp"] == 2);
    CHECK(p.items[4].doc["gpus"] == 128);
    CHECK(p.items[11].doc["gpus"] == 256);
    CHECK(p.items[11].doc["parallel"]["tp"] == 8);
    CHECK(p.items[5].swept == Json({{"gpus", 128}, {"parallel.tp", 2}}));
    CHECK_FALSE(p.items[0].doc.contains("sweep"));
    CHECK(p.items[0].doc["model"] == "gpt3-175b");
}

TEST_CASE("zip pairs lists element by element and multiplies the sweep", "[batch]") {
    const Plan p =
        plan_of(R"({"sweep": {"gpus": [8, 16]}, "zip": {"parallel.tp": [1, 2, 4], "parallel.pp": [4, 2, 1]}})");
    REQUIRE(p.items.size() == 6);
    for (const auto& it : p.items)
        CHECK(it.doc["parallel"]["tp"].get<int>() * it.doc["parallel"]["pp"].get<int>() == 4);
    CHECK(p.items[2].doc["parallel"]["tp"] == 4);
    CHECK(p.items[3].doc["gpus"] == 16);
    // Lists of different lengths, empty lists and paths through numbers are file errors naming the pointer.
    CHECK_THROWS_WITH(plan_of(R"({"zip": {"a": [1, 2], "b": [1]}})"), Catch::Contains("t.json#/zip/b: 1 values"));
    CHECK_THROWS_WITH(plan_of(R"({"sweep": {"gpus": []}})"), Catch::Contains("t.json#/sweep/gpus"));
    CHECK_THROWS_WITH(plan_of(R"({"gpus": 8, "sweep": {"gpus.x": [1]}})"), Catch::Contains("expected an object"));
    CHECK_THROWS_WITH(plan_of(R"({"scenarios": 3})"), Catch::Contains("t.json#/scenarios: 3"));
}

TEST_CASE("lists hold scenarios and sweeps, in order", "[batch]") {
    const Plan p =
        plan_of(R"({"scenarios": [{"gpus": 1}, {"gpus": 2, "sweep": {"parallel.tp": [1, 2]}}, {"gpus": 3}]})");
    REQUIRE(p.items.size() == 4);
    CHECK(p.items[0].origin == "t.json#/scenarios/0");
    CHECK(p.items[2].origin == "t.json#/scenarios/1/sweep[1]");
    CHECK(p.items[3].doc["gpus"] == 3);
}

TEST_CASE("a run yields one row per scenario in order; a failing one does not stop the others", "[batch]") {
    const Plan p = plan_of(R"({"gpus": 10, "sweep": {"parallel.tp": [1, 2, 3, 4, 5, 6, 7, 8]}})");
    RunSummary sum;
    const std::string one = run_text(p, all(p), Format::jsonl, 1, &sum);
    CHECK(sum.rows == 8);
    CHECK(sum.failed == 1);
    std::istringstream in(one);
    std::string line;
    std::size_t i = 0;
    while (std::getline(in, line)) {
        const Json j = Json::parse(line);
        CHECK(j["index"] == i);
        CHECK(j["of"] == 8);
        const int tp = static_cast<int>(i) + 1;
        CHECK(j["scenario"]["parallel"]["tp"] == tp);
        if (tp == 3) {
            CHECK(j["ok"] == false);
            CHECK(j["error"].get<std::string>().find("expected a divisor") != std::string::npos);
        } else {
            CHECK(j["result"]["step_time_s"] == 10 * tp);
        }
        ++i;
    }
    CHECK(i == 8);
    // The bytes do not depend on the thread count.
    CHECK(run_text(p, all(p), Format::jsonl, 4) == one);
    CHECK(run_text(p, all(p), Format::csv, 3) == run_text(p, all(p), Format::csv, 1));
}

TEST_CASE("CSV rows: header, swept columns, result columns, quoted scenario", "[batch]") {
    const Plan p = plan_of(R"({"gpus": 10, "name": "a, \"b\"", "sweep": {"parallel.tp": [2, 3]}})");
    const std::string csv = run_text(p, all(p), Format::csv, 2);
    const std::string header = csv.substr(0, csv.find('\n'));
    CHECK(header.rfind("index,of,origin,ok,error,parallel.tp,step_time_s,", 0) == 0);
    CHECK(header.substr(header.size() - 9) == ",scenario");
    CHECK(csv.find("\n0,2,t.json#/sweep[0],true,,2,20,") != std::string::npos);
    CHECK(csv.find("\n1,2,t.json#/sweep[1],false,t.json#/parallel/tp: 3: expected a divisor of heads,3,,") !=
          std::string::npos);
    CHECK(csv.find(R"("{""gpus"":10,""name"":""a, \""b\"""",)") != std::string::npos);
}

TEST_CASE("shards partition a run exactly and merge restores it byte for byte", "[batch]") {
    for (const std::size_t total : {0u, 1u, 7u, 64u, 101u})
        for (const int n : {1, 2, 3, 8})
            for (const bool strided : {false, true}) {
                std::vector<int> seen(total, 0);
                for (int k = 1; k <= n; ++k)
                    for (auto i : shard_indices(total, Shard{k, n, strided})) ++seen[i];
                for (std::size_t i = 0; i < total; ++i) CHECK(seen[i] == 1);
            }
    const Plan p = plan_of(R"({"sweep": {"gpus": [1, 2, 3, 4, 5], "parallel.tp": [1, 2, 3]}})");
    for (const Format fmt : {Format::jsonl, Format::csv}) {
        const std::string whole = run_text(p, all(p), fmt, 2);
        for (const bool strided : {false, true}) {
            std::vector<std::pair<std::string, std::string>> pieces;
            for (int k = 4; k >= 1; --k)   // any order
                pieces.emplace_back(std::to_string(k),
                                    run_text(p, shard_indices(p.items.size(), Shard{k, 4, strided}), fmt, 2));
            CHECK(merge(pieces) == whole);
            // A piece missing or given twice is an error.
            auto short_pieces = pieces;
            short_pieces.pop_back();
            CHECK_THROWS_WITH(merge(short_pieces), Catch::Contains("rows missing"));
            pieces.push_back(pieces.front());
            CHECK_THROWS_WITH(merge(pieces), Catch::Contains("appears twice"));
        }
    }
}

TEST_CASE("--shard K/N is read strictly", "[batch]") {
    CHECK(parse_shard("2/8").k == 2);
    CHECK(parse_shard("2/8").n == 8);
    for (const char* bad : {"0/4", "5/4", "1/0", "a/b", "3", "1/2/3", ""})
        CHECK_THROWS_WITH(parse_shard(bad), Catch::Contains("--shard"));
    CHECK(format_of("x.csv") == Format::csv);
    CHECK(format_of("x.jsonl") == Format::jsonl);
}

TEST_CASE("a sweep beyond kMaxRunScenarios is refused before it is expanded", "[batch]") {
    Json big = {{"sweep", {{"a", Json::array()}, {"b", Json::array()}, {"c", {1, 2}}}}};
    for (int i = 0; i < 2048; ++i) {
        big["sweep"]["a"].push_back(i);
        big["sweep"]["b"].push_back(i);
    }
    Plan p;
    CHECK_THROWS_WITH(expand(big, "t.json#", ".", p), Catch::Contains("t.json#/sweep: more than 4194304 scenarios"));
    CHECK(p.items.empty());
}

TEST_CASE("merge streams its pieces: rows in run order, nothing written when a piece is bad (issue 34)", "[batch]") {
    // merge read every piece whole (up to 64 GiB); merge_files opens each piece as a stream, checks them all
    // in a first pass and writes in a second, holding one row per piece.
    const std::vector<std::string> names = {"a.jsonl", "b.jsonl"};
    const std::vector<std::string> good = {"{\"index\":0,\"of\":3,\"x\":1}\n{\"index\":2,\"of\":3,\"x\":3}\n",
                                           "{\"index\":1,\"of\":3,\"x\":2}\n"};
    int opened = 0;
    auto open_from = [&](const std::vector<std::string>& texts) {
        return [&opened, texts](std::size_t i) -> std::unique_ptr<std::istream> {
            ++opened;
            return std::make_unique<std::istringstream>(texts[i]);
        };
    };
    std::ostringstream out;
    merge_files(names, open_from(good), out);
    CHECK(out.str() ==
          "{\"index\":0,\"of\":3,\"x\":1}\n{\"index\":1,\"of\":3,\"x\":2}\n{\"index\":2,\"of\":3,\"x\":3}\n");
    CHECK(opened == 4);   // two passes over two pieces
    // Rows out of the order llmsim run writes them, and a row missing: errors, and nothing written.
    const std::vector<std::string> bad = {"{\"index\":2,\"of\":3}\n{\"index\":0,\"of\":3}\n", "\n"};
    std::ostringstream none;
    CHECK_THROWS_WITH(merge_files(names, open_from(bad), none),
                      Catch::Contains("a.jsonl:2: row 0 after row 2: expected rows in the order llmsim run writes") &&
                          Catch::Contains("rows missing"));
    CHECK(none.str().empty());
}

TEST_CASE("merge refuses a piece cut short, a row that is not JSON and pieces without a row", "[batch]") {
    // Each was merged with exit 0: a last row cut mid-way was copied as it was (corrupt JSON lines or CSV), and
    // the empty shard of a one-scenario run merged alone gave an empty output.
    const std::vector<std::string> names = {"a.jsonl", "b.jsonl"};
    auto merged = [&](std::vector<std::string> texts) {
        std::ostringstream out;
        try {
            merge_files(
                names, [&](std::size_t i) { return std::make_unique<std::istringstream>(texts[i]); }, out);
        } catch (const ConfigError& e) {
            CHECK(out.str().empty());
            return std::string(e.what());
        }
        return std::string("merged: ") + out.str();
    };
    CHECK(merged({"{\"index\":0,\"of\":2,\"x\":1}\n", "{\"index\":1,\"of\":2,\"x\""})
              .find("b.jsonl:1: the last line ends without a newline (the piece was cut short?)") != std::string::npos);
    CHECK(merged({"{\"index\":0,\"of\":2,\"x\":1}\n", "{\"index\":1,\"of\":2,\"x\"\n"})
              .find("b.jsonl:1: not a JSON row of llmsim run") != std::string::npos);
    CHECK(merged({"index,of,x\n0,2,1\n", "index,of,x\n1,2,"}).find("b.jsonl:2: the last line ends without a newline") !=
          std::string::npos);
    CHECK(merged({"", "\n"}).find("no piece holds a row (2 pieces)") != std::string::npos);
    CHECK(merged({"index,of,x\n", "index,of,x\n"}).find("no piece holds a row") != std::string::npos);
    // A shard that ran nothing beside one that ran the row merges.
    CHECK(merged({"", "{\"index\":0,\"of\":1,\"x\":1}\n"}) == "merged: {\"index\":0,\"of\":1,\"x\":1}\n");
}

TEST_CASE("a sweep is built on demand: a shard of a 2^22-point sweep builds only its slice (issue 34)", "[batch]") {
    // 2^22 points: expanded ahead this held 2^22 documents (gigabytes) before one shard ran.
    Json values = Json::array();
    for (int i = 0; i < 64; ++i) values.push_back(i + 1);
    Json doc = {{"model", "m"},
                {"sweep",
                 {{"a", values},
                  {"b", values},
                  {"c", values},
                  {"d", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}}}};
    Plan p;
    expand(doc, "big.json#", ".", p);
    REQUIRE(p.items.size() == (std::size_t{1} << 22));
    const Item last = p.items[p.items.size() - 1];
    CHECK(last.swept == Json({{"a", 64}, {"b", 64}, {"c", 64}, {"d", 16}}));
    CHECK(last.origin == "big.json#/sweep[4194303]");
    const Item mid = p.items[16 * 64 + 16 + 1];   // a = 1, b = 2, c = 2, d = 2
    CHECK(mid.doc["a"] == 1);
    CHECK(mid.doc["b"] == 2);
    CHECK(mid.doc["c"] == 2);
    CHECK(mid.doc["d"] == 2);
    CHECK(p.items.any_swept_number());
    // One shard of 65,536: 64 rows, each built when it runs.
    const auto idx = shard_indices(p.items.size(), Shard{65536, 65536, false});
    REQUIRE(idx.size() == 64);
    std::ostringstream out;
    RunOptions o;
    o.threads = 2;
    const auto sum = run(
        p, idx,
        [](const Item& it) {
            return Outcome{it.doc, {{"ok", true}}};
        },
        o, out);
    CHECK(sum.rows == 64);
    CHECK(sum.failed == 0);
    // A sweep beyond 2^22 points is still an input error.
    doc["sweep"]["e"] = {1, 2};
    Plan q;
    CHECK_THROWS_WITH(expand(doc, "big.json#", ".", q), Catch::Contains("more than 4194304 scenarios"));
}
