// Drills (`llmsim drill`): interview-style questions with realistic numbers (models and GPUs from the
// database), graded within a stated tolerance, each followed by the worked solution that `llmsim calc`
// prints for the same inputs. Deterministic for a seed on every platform: std::mt19937_64 and our own
// integer/choice draws (the standard distributions differ between libraries).
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hardware_db/specs.hpp"

namespace llmsim::drills {

// What questions draw from: the database's models and accelerators (cli/ passes them in).
struct Bank {
    std::vector<ModelSpec> models;       // dense and MoE; topics pick what fits
    std::vector<AcceleratorSpec> gpus;   // with a bf16 peak and HBM
};

enum class Difficulty { easy, medium, hard };
[[nodiscard]] bool difficulty_from_string(std::string_view s, Difficulty& out);
// Relative tolerance a numeric answer gets: easy 10%, medium 5%, hard 2%.
[[nodiscard]] double tolerance_for(Difficulty d);

struct Question {
    std::string topic;
    std::string text;
    double answer = 0;                  // numeric: in `unit`; multiple choice: index of the right choice
    std::string unit;                   // "GB", "s", "%", "x", ...; "choice" for multiple choice
    double tolerance = 0.05;            // relative (numeric); 0 for multiple choice
    std::vector<std::string> choices;   // multiple choice: "a) ...", in order
    std::string solution;               // the worked solution (render() of the calc), or the reasoning
    bool multiple_choice() const { return !choices.empty(); }
    // The expected answer as text: "6.99 s", "b".
    std::string answer_text() const;
};

// Portable draws over std::mt19937_64 (same sequence on every standard library).
class Rng {
public:
    explicit Rng(std::uint64_t seed) : g_(seed) {}
    std::int64_t integer(std::int64_t lo, std::int64_t hi);   // uniform in [lo, hi]
    double real(double lo, double hi);                        // uniform in [lo, hi)
    template <class T>
    const T& pick(std::span<const T> v) {
        return v[static_cast<std::size_t>(integer(0, static_cast<std::int64_t>(v.size()) - 1))];
    }
    template <class T>
    const T& pick(const std::vector<T>& v) {
        return pick(std::span<const T>(v));
    }

private:
    std::mt19937_64 g_;
};

struct TopicDef {
    std::string_view name;
    std::string_view summary;
    Question (*generate)(Rng& rng, const Bank& bank, Difficulty d);
};

// Every topic, in the order a session cycles through them.
[[nodiscard]] std::span<const TopicDef> topics();
[[nodiscard]] const TopicDef* find_topic(std::string_view name);
// "params, memory, ..." for help texts and errors.
[[nodiscard]] std::string topic_names();

struct SessionOptions {
    std::uint64_t seed = 1;
    int count = 10;
    std::vector<std::string> topics;   // empty: all, cycled in a seeded order
    Difficulty difficulty = Difficulty::medium;
};
// The questions of one session (ConfigError for an unknown topic or an empty bank).
[[nodiscard]] std::vector<Question> make_session(const Bank& bank, const SessionOptions& o);

struct Grade {
    bool parsed = false;   // the answer could be read (a number with a known unit, or a choice)
    bool correct = false;
    double given = 0;   // the answer in the question's unit (numeric), or the choice index
};
// Accepts "350 GB", "350", "3.5e11" (bytes), "326 GiB", "1.2 s", "1200 ms", "41%", "0.41", "2.4x",
// "175B", "1.75e11"; a bare number is read in the question's unit or in its base unit (bytes,
// seconds, a fraction, a count). Multiple choice: the letter, its number or the choice's text.
[[nodiscard]] Grade grade(const Question& q, std::string_view answer);

}   // namespace llmsim::drills
