// Self-contained SVG charts for --plot FILE.svg (docs/plots/): line and scatter charts, stacked bars
// and a Gantt timeline, each with a title, labelled axes (units in the labels) and a legend. No
// scripts, fonts or images from outside: the file opens in any browser and converts with rsvg-convert.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/estimate.hpp"
#include "app/search/search.hpp"
#include "cost_models/memory.hpp"

namespace llmsim::cli::plot {

struct Series {
    std::string name;
    std::vector<double> x, y;
};

struct Axis {
    std::string label;   // with its unit: "step time (s)"
    bool log = false;    // x: log2 scale (GPU counts, rates), ticks at the data's x values;
                         // y: log10 scale (latencies spanning decades), ticks at 1, 2, 5 x 10^k
};

struct LineChart {
    std::string title;
    Axis x, y;
    std::vector<Series> series;
    bool scatter = false;                // markers only (a Pareto front: markers joined by a step line)
    std::optional<double> reference;     // a horizontal dashed line (say 100% efficiency) ...
    std::string reference_label;         // ... and its label
    std::optional<double> reference_x;   // a vertical dashed line at this x (a capacity knee) ...
    std::string reference_x_label;       // ... and its label
};
std::string line_chart(const LineChart& c);

// One bar per category, each split into `parts` (values[category][part], all in the y unit).
struct StackedBars {
    std::string title, y_label;
    std::vector<std::string> categories, parts;
    std::vector<std::vector<double>> values;
    std::optional<double> limit;   // a dashed line across (capacity)
    std::string limit_label;
};
std::string stacked_bars(const StackedBars& c);

// Lanes (pipeline stages) of bars in time.
struct Gantt {
    std::string title, x_label;   // x in the unit of the bars' times
    std::vector<std::string> lanes, kinds;
    struct Bar {
        int lane = 0, kind = 0;
        double start = 0, end = 0;
    };
    std::vector<Bar> bars;
};
std::string gantt(const Gantt& g);

// Writes `svg` to `path`; ConfigError naming --plot when it cannot be written.
void write(const std::string& path, const std::string& svg);

}   // namespace llmsim::cli::plot

// The charts of the subcommands (cli/charts.cpp), built from the libraries' structs.
namespace llmsim::cli::plot {

// memory --plot: the memory of each pipeline stage's GPU, stacked by component, against capacity.
std::string memory_chart(const Scenario& s, const MemoryBreakdown& m);
// estimate --plot: where the step goes (closed form and, when played, the simulator), stacked.
std::string step_chart(const Scenario& s, const app::TrainingEstimate& e);
// estimate --plot-timeline: the played step, one lane per pipeline stage.
std::string timeline_chart(const Scenario& s, const sim::StepSimulator& played);
// search --plot: every reported layout and the Pareto front, tokens/s per GPU against memory per GPU.
std::string pareto_chart(const Scenario& base, const search::SearchResult& r);

}   // namespace llmsim::cli::plot
