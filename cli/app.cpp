#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/flag_checks.hpp"
#include "hardware_db/errors.hpp"

namespace llmsim::cli {

// CLI11's help with descriptions wrapped at 80 columns under their column (CLI11 2.1 prints each
// description on one line).
class WrappingFormatter : public CLI::Formatter {
public:
    static constexpr std::size_t kWidth = 80;
    std::string make_option_desc(const CLI::Option* opt) const override { return wrap(opt->get_description()); }
    std::string make_subcommand(const CLI::App* sub) const override {
        std::stringstream out;
        CLI::detail::format_help(out, sub->get_display_name(true), wrap(sub->get_description()), column_width_);
        return out.str();
    }
    std::string make_description(const CLI::App* app) const override {
        const std::string d = CLI::Formatter::make_description(app);
        return d.empty() ? d : joined(d.ends_with('\n') ? d.substr(0, d.size() - 1) : d, kWidth) + "\n";
    }
    std::string make_footer(const CLI::App* app) const override {
        const std::string& f = app->get_footer();
        return f.empty() ? f : joined(f, kWidth) + "\n";
    }

private:
    // `text` wrapped at `width` columns, its lines joined by newlines (none after the last).
    static std::string joined(const std::string& text, std::size_t width) {
        const auto lines = wrap_lines(text, width);
        std::string out;
        for (std::size_t i = 0; i < lines.size(); ++i) out += (i == 0 ? "" : "\n") + lines[i];
        return out;
    }
    std::string wrap(const std::string& text) const {
        return joined(text, kWidth - std::min(kWidth - 20, column_width_));
    }
};

// `--wide` on every command (and its subcommands): text tables at their natural width instead of
// fitting 80 columns.
static void add_wide_flag(CLI::App* cmd) {
    cmd->add_flag_callback(
        "--wide", [] { set_table_width(0); },
        "Text tables at their full width (default: text columns wrap to fit 80 columns)");
    for (CLI::App* sub : cmd->get_subcommands([](CLI::App*) { return true; })) add_wide_flag(sub);
}

static void register_all(CLI::App& app, Context& ctx) {
    for (const auto& c : commands()) {
        CLI::App* cmd = app.add_subcommand(std::string(c.name), std::string(c.summary));
        c.setup(cmd, ctx);
        add_wide_flag(cmd);
    }
}

// A mistyped subcommand or flag: the nearest names (edit distance), one line each; empty when the
// command line has nothing mistyped that a name is near.
static std::vector<std::string> suggestions(const CLI::App& app, int argc, char** argv) {
    std::vector<std::string> out;
    if (argc < 2) return out;
    const std::string first = argv[1];
    const CLI::App* sub = nullptr;
    for (const auto* s : app.get_subcommands([](const CLI::App*) { return true; }))
        if (s->get_name() == first) sub = s;
    if (sub == nullptr) {
        if (first.rfind('-', 0) == 0) return out;
        std::vector<std::string> names;
        for (const auto& c : commands()) names.emplace_back(c.name);
        const auto near = closest_names(first, names);
        out.push_back(
            fmt::format("'{}': not a command{} (llmsim --help lists them)", first,
                        near.empty() ? std::string() : "; closest: " + fmt::format("{}", fmt::join(near, ", "))));
        return out;
    }
    // Nested subcommands (`calibrate fit`, `hw show`): the innermost named on the line.
    std::string path = first;
    int i0 = 2;
    for (bool deeper = true; deeper && i0 < argc;) {
        deeper = false;
        for (const auto* s : sub->get_subcommands([](const CLI::App*) { return true; }))
            if (s->get_name() == argv[i0]) {
                sub = s;
                path += " " + s->get_name();
                ++i0;
                deeper = true;
                break;
            }
    }
    std::vector<std::string> flags;
    for (const auto* o : sub->get_options())
        for (const auto& l : o->get_lnames()) flags.push_back("--" + l);
    for (int i = i0; i < argc; ++i) {
        std::string a = argv[i];
        if (a.rfind("--", 0) != 0 || a == "--") continue;
        a = a.substr(0, a.find('='));
        if (std::find(flags.begin(), flags.end(), a) != flags.end()) continue;
        const auto near = closest_names(a, flags);
        out.push_back(
            fmt::format("{}: not a flag of `llmsim {}`{}", a, first,
                        near.empty() ? std::string() : "; closest: " + fmt::format("{}", fmt::join(near, ", "))));
    }
    return out;
}

int run(int argc, char** argv) {
    CLI::App app{"llmsim: analytical performance and capacity planning for LLM training and serving", "llmsim"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("llmsim ") + LLMSIM_VERSION);
    app.formatter(std::make_shared<WrappingFormatter>());   // before the subcommands, which copy it
    Context ctx;
    register_all(app, ctx);
    require_plain_values(app);
    if (argc <= 1) {   // no subcommand: show what there is
        std::cout << app.help();
        return 0;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        // Flag errors name the flag, the value and what was expected; exit code 2 like bad JSON.
        std::fflush(stdout);
        const auto hints = suggestions(app, argc, argv);
        // A flag given twice ("--qps: At Most 1 required but received 2"): its values and what is expected.
        const std::string what = e.what();
        const auto twice = what.find(": At Most 1 required but received ");
        if (hints.empty() && twice != std::string::npos && what.rfind("--", 0) == 0) {
            const std::string flag = what.substr(0, twice);
            std::vector<std::string> values;
            for (int i = 1; i < argc; ++i) {
                const std::string a = argv[i];
                if (a == flag && i + 1 < argc)
                    values.push_back(argv[i + 1]);
                else if (a.rfind(flag + "=", 0) == 0)
                    values.push_back(a.substr(flag.size() + 1));
            }
            std::cerr << fmt::format("error: {}: given {} times ({}): expected it once\n", flag,
                                     values.empty() ? what.substr(twice + 35) : std::to_string(values.size()),
                                     fmt::join(values, ", "));
            return 2;
        }
        if (hints.empty()) std::cerr << "error: " << e.what() << "\n";
        for (const auto& h : hints) std::cerr << "error: " << h << "\n";
        return 2;
    } catch (const ConfigError& e) {
        for (const auto& line : e.problems()) std::cerr << "error: " << line << "\n";
        return 2;
    } catch (const WriteError& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "internal error: " << e.what() << "\n";
        return 1;
    }
    // What went to stdout must have arrived (stdout on a full disk or /dev/full exited 0).
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
        const int err = errno;
        std::cerr << "error: stdout: cannot be written" << (err ? fmt::format(" ({})", std::strerror(err)) : "")
                  << "\n";
        return 1;
    }
    return ctx.exit_code;
}

}   // namespace llmsim::cli
