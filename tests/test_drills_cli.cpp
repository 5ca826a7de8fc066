// `llmsim calc`, `drill` and `explain` end to end: the numbers the library computes, the grading line,
// JSON exports, strict flags (exit 2, nothing on stdout).
#include <cstdlib>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"

using llmsim::test::run_llmsim;
using Json = nlohmann::json;

TEST_CASE("calc allreduce prints the ring, pipelined-tree and textbook-tree times", "[cli][calc]") {
    const auto r = run_llmsim({"calc", "allreduce", "--params", "175B", "--ranks", "1024", "--GBps", "100"}, "drills");
    REQUIRE(r.rc == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find("= 6.99 s") != std::string::npos);
    CHECK(r.out.find("= 7 s") != std::string::npos);
    CHECK(r.out.find("= 70 s") != std::string::npos);
    const auto j =
        run_llmsim({"calc", "allreduce", "--bytes", "350GB", "--ranks", "1024", "--GBps", "100", "--json"}, "drills");
    REQUIRE(j.rc == 0);
    const Json doc = Json::parse(j.out);
    CHECK(doc["answer"]["value"].get<double>() == Approx(2.0 * 1023 / 1024 * 3.5));
    CHECK(doc["steps"][2]["value"].get<double>() == Approx(70.0));
    CHECK(doc["answer"]["unit"] == "s");
}

TEST_CASE("calc subcommands run and reject bad input with exit 2", "[cli][calc]") {
    const std::vector<std::vector<std::string>> ok{
        {"calc", "gemm", "--gpu", "h100-sxm", "--m", "4096", "--n", "4096", "--k", "4096"},
        {"calc", "bubble", "--p", "8", "--m", "32", "--v", "2", "--schedule", "interleaved"},
        {"calc", "amdahl", "--serial", "0.1", "--p", "8"},
        {"calc", "gustafson", "--serial", "0.1", "--p", "8"},
        {"calc", "scaling", "--p1", "8", "--t1", "100", "--p2", "32", "--t2", "30"},
        {"calc", "train-time", "--params", "70B", "--tokens", "1.4T", "--gpus", "1024", "--gpu", "h100-sxm", "--mfu",
         "0.4", "--usd-per-gpu-hour", "2"},
        {"calc", "chinchilla", "--params", "70B"},
        {"calc", "checkpointing", "--layers", "50", "--layer-bytes", "0.64GB"},
        {"calc", "activations", "--model", "llama-3-70b", "--seq", "8192", "--tp", "8", "--sp"},
        {"calc", "kv", "--model", "llama-3-70b", "--gpu", "h100-sxm", "--context", "8192", "--batch", "8",
         "--kv-precision", "int8"},
        {"calc", "decode", "--model", "llama-2-7b", "--gpu", "h100-sxm"},
        {"calc", "littles-law", "--rate", "20", "--latency", "3"},
        {"calc", "speculative", "--alpha", "0.8", "--k", "4"},
        {"calc", "lora", "--model", "llama-2-70b", "--qlora"},
        {"calc", "rlhf", "--model", "llama-2-7b"},
        {"calc", "flops", "--model", "llama-3-8b"},
        {"calc", "mfu", "--model", "llama-3-70b", "--gpu", "h100-sxm", "--gpus", "1024", "--tokens-per-s", "1e6"},
        {"calc", "params", "--model", "llama-3-70b"},
        {"calc", "memory", "--model", "llama-3-70b", "--dp", "64", "--zero", "3"},
        {"calc", "tp-comm", "--model", "llama-3-70b", "--tp", "8"},
        {"calc", "fsdp", "--params", "70B", "--ranks", "64"},
        {"calc", "grad-accum", "--global-batch", "1024", "--micro-batch", "2", "--dp", "64"},
    };
    for (const auto& args : ok) {
        INFO(args[1]);
        const auto r = run_llmsim(args, "drills");
        CHECK(r.rc == 0);
        CHECK(r.err.empty());
        CHECK(r.out.find("<- answer") != std::string::npos);
        CHECK(r.out.find("n/a") == std::string::npos);
    }
    const std::vector<std::vector<std::string>> bad{
        {"calc", "allreduce", "--bytes", "lots", "--ranks", "8", "--GBps", "100"},
        {"calc", "allreduce", "--bytes", "1GB", "--params", "1B", "--ranks", "8", "--GBps", "100"},
        {"calc", "allreduce", "--bytes", "1GB", "--ranks", "1", "--GBps", "100"},
        {"calc", "bubble", "--p", "8", "--m", "8", "--schedule", "nope"},
        {"calc", "bubble", "--p", "8", "--m", "8", "--v", "2"},
        {"calc", "speculative", "--alpha", "1"},
        {"calc", "kv", "--model", "nope", "--gpu", "h100-sxm"},
        {"calc", "kv", "--model", "llama-2-7b", "--gpu", "h100-sxm", "--kv-precision", "int3"},
        {"calc", "grad-accum", "--global-batch", "100", "--dp", "64"},
        {"calc", "train-time", "--params", "70B", "--tokens", "1T", "--gpus", "8", "--mfu", "0.4"},
        {"calc", "gemm", "--gpu", "h100-sxm", "--m", "1e300", "--n", "1e300", "--k", "1e300"},
        {"calc", "scaling", "--p1", "8", "--t1", "inf", "--p2", "16", "--t2", "1"},
        {"calc", "allreduce", "--bytes", "1e400", "--ranks", "8", "--GBps", "100"},
        {"calc", "allreduce", "--bytes", "nan", "--ranks", "8", "--GBps", "100"},
        {"calc", "allreduce", "--bytes", "1GB", "--ranks", "8", "--GBps", "inf"},
    };
    for (const auto& args : bad) {
        std::string all;
        for (const auto& a : args) all += a + " ";
        INFO(all);
        const auto r = run_llmsim(args, "drills");
        CHECK(r.rc == 2);
        CHECK(r.out.empty());
        CHECK(r.err.find("error:") != std::string::npos);
    }
}

TEST_CASE("drill --answers grades without a prompt and ends with the score", "[cli][drill]") {
    const auto ex = run_llmsim({"drill", "--seed", "11", "--count", "6", "--json"}, "drills");
    REQUIRE(ex.rc == 0);
    const Json doc = Json::parse(ex.out);
    REQUIRE(doc["questions"].size() == 6);
    std::string right, wrong;
    for (const auto& q : doc["questions"]) {
        for (const char* k : {"topic", "question", "answer", "unit", "tolerance", "solution"}) CHECK(q.contains(k));
        const std::string a = q["answer"].is_string()
                                  ? q["answer"].get<std::string>()
                                  : std::to_string(q["answer"].get<double>()) + " " + q["unit"].get<std::string>();
        right += a + ";";
        wrong += std::string(q["answer"].is_string() ? "zzz" : "-1") + ";";
    }
    const auto r = run_llmsim({"drill", "--seed", "11", "--count", "6", "--answers", right}, "drills");
    REQUIRE(r.rc == 0);
    CHECK(r.out.substr(r.out.rfind("score:")) == "score: 6/6\n");
    const auto w = run_llmsim({"drill", "--seed", "11", "--count", "6", "--answers", wrong}, "drills");
    REQUIRE(w.rc == 0);
    CHECK(w.out.substr(w.out.rfind("score:")) == "score: 0/6\n");
    // The same seed, the same questions.
    const auto again = run_llmsim({"drill", "--seed", "11", "--count", "6", "--json"}, "drills");
    CHECK(Json::parse(again.out) == doc);
    const auto topic = run_llmsim({"drill", "--seed", "3", "--topic", "bubble", "--count", "2", "--json"}, "drills");
    const Json topics = Json::parse(topic.out);   // named: a range-for over a temporary's member dangles
    for (const auto& q : topics["questions"]) CHECK(q["topic"] == "bubble");
    const auto bad = run_llmsim({"drill", "--topic", "nope"}, "drills");
    CHECK(bad.rc == 2);
    CHECK(bad.out.empty());
    const auto badd = run_llmsim({"drill", "--difficulty", "extreme"}, "drills");
    CHECK(badd.rc == 2);
}

TEST_CASE("drill --list-topics: one line per topic, or with --json the same topics as JSON", "[cli][drill]") {
    const auto text = run_llmsim({"drill", "--list-topics"}, "drills");
    REQUIRE(text.rc == 0);
    const auto json = run_llmsim({"drill", "--list-topics", "--json"}, "drills");
    REQUIRE(json.rc == 0);
    const auto j = nlohmann::json::parse(json.out);
    REQUIRE(j["topics"].is_array());
    std::size_t lines = 0;
    for (const char c : text.out) lines += c == '\n';
    CHECK(j["topics"].size() == lines);
    CHECK(j["topics"][0]["name"] == "params");
    CHECK(text.out.find(j["topics"][0]["summary"].get<std::string>()) != std::string::npos);
}

TEST_CASE("drill reads answers from stdin interactively", "[cli][drill]") {
    const auto dir = llmsim::test::temp_dir("drills-stdin");
    const std::string cmd = llmsim::test::shell_quote(LLMSIM_BINARY) +
                            " drill --seed 5 --count 2 --topic chinchilla > " + (dir / "out.txt").string() +
                            " 2>&1 <<'EOF'\nnot a number\n1\n1e30\nEOF\n";
    REQUIRE(std::system(cmd.c_str()) == 0);
    const std::string out = llmsim::test::slurp(dir / "out.txt");
    CHECK(out.find("could not read that") != std::string::npos);
    CHECK(out.find("running score 0/1") != std::string::npos);
    CHECK(out.substr(out.rfind("score:")) == "score: 0/2\n");
}

TEST_CASE("explain names the binding constraint and recommends a lever", "[cli][explain]") {
    const auto r = run_llmsim(
        {"explain", "--scenario", std::string(LLMSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-a100-1024.json"}, "drills");
    REQUIRE(r.rc == 0);
    CHECK(r.out.find("binding constraint: time") != std::string::npos);
    CHECK(r.out.find("first action:") != std::string::npos);
    const auto j =
        run_llmsim({"explain", "--scenario", std::string(LLMSIM_SOURCE_DIR) + "/scenarios/llama3-70b-h100-64.json",
                    "--tp", "1", "--dp", "8", "--sp", "false", "--zero", "0", "--json"},
                   "drills");
    REQUIRE(j.rc == 0);
    const Json doc = Json::parse(j.out);
    CHECK(doc["binding"] == "memory");
    CHECK(doc["recommended"].is_string());
    CHECK(doc["levers"].size() > 3);
}

TEST_CASE("explain on serving scenarios: the binding constraint, every lever re-run, the first action; --json",
          "[cli][explain][serving]") {
    const std::string chat = std::string(LLMSIM_SOURCE_DIR) + "/scenarios/llama31-70b-chat-slo.json";
    const auto r = run_llmsim({"explain", "--scenario", chat, "--tp", "8", "--gpus", "16"}, "drills");
    REQUIRE(r.rc == 0);
    CHECK(r.err.empty());
    // Half the time carries a prefill (compute-bound): that binds before decode HBM.
    CHECK(r.out.find("binding constraint: compute:") != std::string::npos);
    CHECK(r.out.find("FP8 KV cache") != std::string::npos);
    CHECK(r.out.find("first action: ") != std::string::npos);
    const auto j = run_llmsim({"explain", "--scenario", chat, "--json"}, "drills");
    REQUIRE(j.rc == 0);
    const Json doc = Json::parse(j.out);
    CHECK(doc["binding"] == "memory");
    CHECK(doc["serving"]["fits"] == false);
    CHECK(doc["recommended"].is_string());
    CHECK(doc["levers"].size() > 5);
    CHECK(doc["scenario"]["inference"]["qps"] == 20);
    for (const auto& l : doc["levers"])
        if (l["lever"] == doc["recommended"]) CHECK(l["fits"] == true);
    const auto st =
        run_llmsim({"explain", "--scenario",
                    std::string(LLMSIM_SOURCE_DIR) + "/scenarios/llama3-8b-h100-serving-fp8.json", "--json"},
                   "drills");
    REQUIRE(st.rc == 0);
    const Json sd = Json::parse(st.out);
    CHECK(sd["binding"] == "HBM");
    CHECK(sd["binding_quantity"] == "TPOT");
    CHECK(sd["binding_value"].get<double>() == Approx(sd["serving"]["tpot_s"].get<double>()));
    // Training flags on a serving scenario are refused (exit 2, nothing on stdout).
    const auto bad = run_llmsim({"explain", "--scenario", chat, "--recompute", "full"}, "drills");
    CHECK(bad.rc == 2);
    CHECK(bad.out.empty());
}
