// llmsim drill: interview questions with the database's models and GPUs (app/drills/drill), graded, each
// followed by its worked solution. Interactive by default; --answers grades without a prompt; --json
// exports the questions.
#include <iostream>
#include <memory>
#include <random>
#include <string>

#include <fmt/format.h>

#include "app/drills/drill.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "hardware_db/database.hpp"
#include "hardware_db/errors.hpp"

namespace llmsim::cli {

namespace {

drills::Bank builtin_bank() {
    const auto& db = Database::builtin();
    drills::Bank b;
    for (const auto& n : db.model_names()) b.models.push_back(db.model(n));
    for (const auto& n : db.accelerator_names()) {
        auto a = db.accelerator(n);
        if (a.peak(Precision::bf16) > 0 && a.hbm_GBps > 0 && a.hbm_capacity_bytes > 0) b.gpus.push_back(std::move(a));
    }
    return b;
}

std::vector<std::string> split_answers(const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (c == ';') {
            out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}

struct DrillFlags {
    std::optional<std::uint64_t> seed;
    std::string topic, difficulty = "medium";
    int count = 10;
    std::optional<std::string> answers;
    bool json = false, list = false;
};

void print_question(std::size_t i, std::size_t n, const drills::Question& q) {
    std::cout << fmt::format("\nQ{}/{} [{}]\n", i + 1, n, q.topic) << fit_text("  " + q.text + "\n");
}

}   // namespace

void setup_drill(CLI::App* cmd, Context& ctx) {
    auto f = std::make_shared<DrillFlags>();
    cmd->add_option("--seed", f->seed, "Seed of the session (the same seed gives the same questions)");
    cmd->add_option("--topic", f->topic, "Comma-separated topics (default: all; --list-topics)");
    cmd->add_option("--count", f->count, "Questions")->check(CLI::Range(1, 10000));
    cmd->add_option("--difficulty", f->difficulty, "easy (10% tolerance), medium (5%), hard (2%)");
    cmd->add_option("--answers", f->answers, "Grade these answers, separated by ';', without prompting");
    cmd->add_flag("--json", f->json, "Export the questions (with --answers: and the grades) as JSON");
    cmd->add_flag("--list-topics", f->list, "List the topics (with --json: as JSON)");
    cmd->callback([f, &ctx] {
        if (f->list) {
            if (f->json) {
                Json arr = Json::array();
                for (const auto& t : drills::topics()) arr.push_back({{"name", t.name}, {"summary", t.summary}});
                print_json(Json{{"topics", arr}});
            } else {
                for (const auto& t : drills::topics()) std::cout << fmt::format("{:<18} {}\n", t.name, t.summary);
            }
            ctx.exit_code = 0;
            return;
        }
        drills::SessionOptions o;
        if (!drills::difficulty_from_string(f->difficulty, o.difficulty))
            throw ConfigError(fmt::format("--difficulty: {}: expected easy, medium or hard", f->difficulty));
        o.seed = f->seed ? *f->seed : std::random_device{}();
        o.count = f->count;
        o.topics = split_list(f->topic);
        const auto qs = drills::make_session(builtin_bank(), o);
        std::vector<std::string> given;
        if (f->answers) given = split_answers(*f->answers);
        // More answers than questions: the grading would drop some without a word (fewer are graded as blank).
        // A trailing ';' leaves an empty last answer, not one more.
        while (given.size() > qs.size() && given.back().find_first_not_of(" \t") == std::string::npos) given.pop_back();
        if (given.size() > qs.size())
            throw ConfigError(
                fmt::format("--answers: {} answers: expected at most {}, one per question of the "
                            "session (';' between them)",
                            given.size(), qs.size()));

        if (f->json) {
            Json arr = Json::array();
            int score = 0;
            for (std::size_t i = 0; i < qs.size(); ++i) {
                const auto& q = qs[i];
                Json j{{"topic", q.topic},
                       {"question", q.text},
                       {"unit", q.unit},
                       {"tolerance", q.tolerance},
                       {"solution", q.solution}};
                if (q.multiple_choice()) {
                    j["answer"] = q.answer_text();
                    j["choices"] = q.choices;
                } else {
                    j["answer"] = q.answer;
                }
                if (f->answers) {
                    const auto g = drills::grade(q, i < given.size() ? given[i] : "");
                    j["given"] = i < given.size() ? given[i] : "";
                    j["correct"] = g.correct;
                    score += g.correct ? 1 : 0;
                }
                arr.push_back(j);
            }
            Json out{{"seed", o.seed}, {"difficulty", f->difficulty}, {"questions", arr}};
            if (f->answers) out["score"] = {{"correct", score}, {"total", qs.size()}};
            print_json(out);
            ctx.exit_code = 0;
            return;
        }

        std::cout << wrap_text(fmt::format("llmsim drill: {} questions, {} (seed {}; `--seed {}` repeats this session)",
                                           qs.size(), f->difficulty, o.seed, o.seed));
        int score = 0;
        std::size_t asked = 0;
        for (std::size_t i = 0; i < qs.size(); ++i) {
            const auto& q = qs[i];
            print_question(i, qs.size(), q);
            drills::Grade g;
            std::string answer;
            if (f->answers) {
                answer = i < given.size() ? given[i] : "";
                std::cout << "  your answer: " << answer << "\n";
                g = drills::grade(q, answer);
            } else {
                for (int attempt = 0; attempt < 3; ++attempt) {
                    std::cout << "> " << std::flush;
                    if (!std::getline(std::cin, answer)) {
                        std::cout << "\n";
                        std::cout << fmt::format("score: {}/{}\n", score, asked);
                        ctx.exit_code = 0;
                        return;
                    }
                    g = drills::grade(q, answer);
                    if (g.parsed || answer.empty()) break;
                    std::cout << (q.multiple_choice()
                                      ? "  answer with a letter\n"
                                      : fmt::format("  could not read that; answer like \"12.3 {}\"\n", q.unit));
                }
            }
            ++asked;
            score += g.correct ? 1 : 0;
            if (g.correct)
                std::cout << fmt::format("  correct (expected {})", q.answer_text());
            else
                std::cout << fmt::format("  wrong: expected {}{}", q.answer_text(),
                                         q.multiple_choice() ? "" : fmt::format(" (±{:g}%)", 100 * q.tolerance));
            std::cout << fmt::format("  — running score {}/{}\n", score, asked);
            std::cout << "  worked solution:\n";
            std::string indented;
            std::string line;
            for (char c : q.solution) {
                line += c;
                if (c == '\n') {
                    indented += "    " + line;
                    line.clear();
                }
            }
            if (!line.empty()) indented += "    " + line + "\n";
            std::cout << fit_text(indented);
        }
        std::cout << fmt::format("score: {}/{}\n", score, asked);
        ctx.exit_code = 0;
    });
}

}   // namespace llmsim::cli
