// llmsim._core: the library behind `import llmsim` (python/llmsim/__init__.py wraps it; docs/python.md).
// Strings in, JSON text out: a scenario arrives as a path or as JSON text, and each function returns
// exactly what the CLI's --json prints for it (report/: one definition), which the Python layer parses.
// Work runs with the GIL released; a check the simulator polls (sim/interrupt.hpp) and the progress
// callbacks take the GIL back every 50 ms to run Python's signal handlers, so Ctrl-C stops a long
// simulation with KeyboardInterrupt. Bad input raises llmsim.ScenarioError with the CLI's lines. The
// module never prints. It sits on the library (report/, app/, sim/, batch/), never on cli/.
#include <chrono>
#include <exception>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "app/serving.hpp"
#include "app/validate.hpp"
#include "batch/batch.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/scenario.hpp"
#include "report/calc.hpp"
#include "report/estimate.hpp"
#include "report/results.hpp"
#include "report/run.hpp"
#include "report/scenario_input.hpp"
#include "report/search.hpp"
#include "report/search_request.hpp"
#include "report/validate.hpp"
#include "sim/interrupt.hpp"
#include "sim/serving.hpp"
#include "sim/step_sim.hpp"

namespace py = pybind11;

namespace llmsim::python {

namespace {

// A pending Ctrl-C: the check runs Python's signal handlers (main thread only; elsewhere a no-op) at
// most every 50 ms and keeps the exception they raised for the caller to restore.
struct Signals {
    std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
    bool raised = false;
    PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
};

bool check_signals(void* context) {
    auto& s = *static_cast<Signals*>(context);
    if (s.raised) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now - s.last < std::chrono::milliseconds(50)) return false;
    s.last = now;
    const py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
        PyErr_Fetch(&s.type, &s.value, &s.traceback);
        s.raised = true;
    }
    return s.raised;
}

// Runs `work` without the GIL, interruptible; returns its text or raises what a signal handler raised.
template <class Work>
std::string interruptible(Work&& work) {
    Signals signals;
    std::string out;
    std::exception_ptr failure;
    {
        const py::gil_scoped_release release;
        const sim::InterruptScope scope(check_signals, &signals);
        try {
            out = work();
        } catch (const sim::Interrupted&) {
            // signals.raised holds the exception
        } catch (...) {
            failure = std::current_exception();   // raised once the GIL is held again
        }
    }
    // A Ctrl-C wins over what the work threw after it (the handler's exception is never lost).
    if (signals.raised) {
        PyErr_Restore(signals.type, signals.value, signals.traceback);
        throw py::error_already_set();
    }
    if (failure) std::rethrow_exception(failure);
    return out;
}

// A scenario or run document: read from `source` when it is a path (its folder resolves relative paths
// inside it, and problems name it), else parsed from it as JSON text with `base_dir` and `origin` given
// (the Python layer passes the path a document it changed came from; empty: problems name pointers alone).
struct Document {
    Json doc;
    std::string base_dir = ".";
    std::string origin;
};
Document read_document(const std::string& source, bool is_path, const std::string& base_dir,
                       const std::string& origin) {
    Document d;
    if (is_path) {
        d.doc = parse_json_file(source);
        d.base_dir = directory_of(source);
        d.origin = source;
    } else {
        d.doc = parse_json_text(source, origin.empty() ? "scenario" : origin);
        d.base_dir = base_dir.empty() ? "." : base_dir;
        d.origin = origin;
    }
    return d;
}

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// A document as the library reads it (strict: duplicate keys, malformed JSON and unreadable files are
// problems), for the Python layer to change before estimating it.
std::string read_json(const std::string& source, bool is_path) {
    return dump(read_document(source, is_path, ".", "").doc);
}

std::string estimate(const std::string& source, bool is_path, const std::string& base_dir, const std::string& origin,
                     bool fast) {
    return interruptible([&] {
        const Document d = read_document(source, is_path, base_dir, origin);
        const Scenario s = report::read_scenario(d.doc, d.base_dir, d.origin);
        app::EstimateOptions o;
        o.fast = fast;
        sim::StepSimulator simulator;
        std::optional<report::Estimate> e;
        try {
            e.emplace(report::run_estimate(s, o, simulator));
        } catch (const ConfigError& err) {   // a work limit names an input: the file's pointer
            throw report::locate(err, d.origin);
        }
        return dump(report::estimate_json(s, *e, o));
    });
}

std::string memory(const std::string& source, bool is_path, const std::string& base_dir, const std::string& origin) {
    return interruptible([&] {
        const Document d = read_document(source, is_path, base_dir, origin);
        return dump(report::memory_document(report::read_scenario(d.doc, d.base_dir, d.origin)));
    });
}

std::string flops(const std::string& source, bool is_path, const std::string& base_dir, const std::string& origin) {
    return interruptible([&] {
        const Document d = read_document(source, is_path, base_dir, origin);
        return dump(report::flops_document(report::read_scenario(d.doc, d.base_dir, d.origin)));
    });
}

// `llmsim search --scenario FILE --json`: the layout search of a training scenario, or the capacity
// search (fewest GPUs meeting the SLO) of a serving one. top_k 0, confirm -1, max_gpus 0: the defaults.
std::string search(const std::string& source, bool is_path, const std::string& base_dir, const std::string& origin,
                   int top_k, int confirm, int threads, int max_gpus) {
    return interruptible([&] {
        const Document d = read_document(source, is_path, base_dir, origin);
        if (d.doc.is_object() && d.doc.contains("inference")) {
            const Scenario s = report::read_scenario(d.doc, d.base_dir, d.origin);
            return dump(report::serving_search_json(s, max_gpus > 0 ? max_gpus : 64, threads));
        }
        search::SearchRequest req;
        try {
            req = search::parse_search_request(d.doc, d.base_dir);
        } catch (const ConfigError& e) {
            throw report::locate(e, d.origin);
        }
        if (threads > 0) req.options.threads = threads;
        if (top_k > 0) req.options.top_k = top_k;
        req.options.confirm = confirm >= 0 ? confirm : (req.options.confirm > 0 ? req.options.confirm : 5);
        req.options.confirm_step_time = report::simulated_step_time;
        // Called on this thread while the workers evaluate: a Ctrl-C is noted here and raised when they
        // finish (the evaluation has no stopping point of its own), before the simulator confirms.
        req.options.progress = [](double) { (void)sim::interrupt_requested(); };
        const auto res = search::run_search(req.base, req.space, req.options);
        sim::check_interrupt();
        return dump(report::search_result_json(req.base, res, req.options));
    });
}

std::string validate(const std::vector<std::string>& files) {
    return interruptible([&] {
        const auto cases = report::read_validation_cases(files);
        const auto rep = app::run_validation(cases, [](std::size_t, std::size_t) { sim::check_interrupt(); });
        return dump(report::validation_json(rep));
    });
}

// `llmsim calc NAME ARGS... --json`: `args` NAME's flags as a command line gives them.
std::string calc(const std::string& name, const std::vector<std::string>& args) {
    return interruptible([&] { return dump(report::run_calc(name, args)); });
}

// `llmsim run SOURCE [--fast] [-j THREADS] [--shard SHARD [--strided]] -o x.jsonl|x.csv`: the rows'
// text in `format` ("jsonl" or "csv").
std::string run(const std::string& source, bool is_path, const std::string& base_dir, const std::string& origin,
                bool fast, int threads, const std::string& shard_text, bool strided, const std::string& format) {
    return interruptible([&] {
        batch::Plan plan;
        if (is_path) {
            plan = batch::expand_files({source});
        } else {
            const Document d = read_document(source, false, base_dir, origin);
            batch::expand(d.doc, (origin.empty() ? std::string("sweep") : origin) + "#", d.base_dir, plan);
        }
        batch::Shard shard;
        if (!shard_text.empty()) shard = batch::parse_shard(shard_text);
        shard.strided = strided;
        const auto indices = batch::shard_indices(plan.items.size(), shard);
        app::EstimateOptions opt;
        opt.fast = fast;
        batch::RunOptions ro;
        ro.threads = threads;
        ro.format = format == "csv" ? batch::Format::csv : batch::Format::jsonl;
        ro.progress = [](double) { sim::check_interrupt(); };
        std::ostringstream out;
        batch::run(
            plan, indices, [opt](const batch::Item& item) { return report::evaluate_row(item, opt); }, ro, out);
        return out.str();
    });
}

}   // namespace

}   // namespace llmsim::python

PYBIND11_MODULE(_core, m) {
    using namespace llmsim::python;
    m.doc() = "llmsim's library (use the llmsim package: it takes dicts and returns dicts)";
    // pybind11's translator type takes the exception_ptr by value.
    py::register_exception_translator([](std::exception_ptr p) {   // NOLINT(performance-unnecessary-value-param)
        try {
            if (p) std::rethrow_exception(p);
        } catch (const llmsim::ConfigError& e) {
            const py::object cls = py::module_::import("llmsim._errors").attr("ScenarioError");
            py::list problems;
            for (const auto& line : e.problems()) problems.append(line);
            PyErr_SetObject(cls.ptr(), py::make_tuple(problems).ptr());
        }
    });
    m.def("estimate", &estimate, py::arg("source"), py::arg("is_path"), py::arg("base_dir"), py::arg("origin"),
          py::arg("fast"));
    m.def("memory", &memory, py::arg("source"), py::arg("is_path"), py::arg("base_dir"), py::arg("origin"));
    m.def("flops", &flops, py::arg("source"), py::arg("is_path"), py::arg("base_dir"), py::arg("origin"));
    m.def("search", &search, py::arg("source"), py::arg("is_path"), py::arg("base_dir"), py::arg("origin"),
          py::arg("top_k"), py::arg("confirm"), py::arg("threads"), py::arg("max_gpus"));
    m.def("validate", &validate, py::arg("files"));
    m.def("read_json", &read_json, py::arg("source"), py::arg("is_path"));
    m.def("directory_of", &llmsim::directory_of, py::arg("path"));
    m.def("calc", &calc, py::arg("name"), py::arg("args"));
    m.def("run", &run, py::arg("source"), py::arg("is_path"), py::arg("base_dir"), py::arg("origin"), py::arg("fast"),
          py::arg("threads"), py::arg("shard"), py::arg("strided"), py::arg("format"));
#ifdef LLMSIM_VERSION
    m.attr("__version__") = LLMSIM_VERSION;
#endif
}
