#include "cli/plot.hpp"

#include "cli/common.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "hardware_db/errors.hpp"

namespace llmsim::cli::plot {

namespace {

// Tableau 10: distinguishable, colour-blind aware.
constexpr const char* kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
const char* colour(std::size_t i) { return kColours[i % std::size(kColours)]; }

constexpr double kWidth = 1000, kHeight = 520, kLeft = 90, kRight = 300, kTop = 56, kBottom = 64;
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;

std::string esc(const std::string& s) {
    std::string o;
    for (char c : s) {
        switch (c) {
            case '&': o += "&amp;"; break;
            case '<': o += "&lt;"; break;
            case '>': o += "&gt;"; break;
            case '"': o += "&quot;"; break;
            default: o += c;
        }
    }
    return o;
}

// A tick label: thousands separators on integers, 3 significant digits otherwise.
std::string tick_text(double v) {
    if (v == 0) return "0";
    const double a = std::fabs(v);
    if (a >= 1e6 || a < 1e-3) return fmt::format("{:.3g}", v);
    if (std::fabs(v - std::round(v)) < 1e-9 * std::max(1.0, a)) {
        std::string s = fmt::format("{:.0f}", std::fabs(v));
        for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
        return v < 0 ? "-" + s : s;
    }
    return fmt::format("{:.3g}", v);
}

// Ticks 1, 2 or 5 × 10^k apart covering [lo, hi]; the range grows to whole ticks.
std::vector<double> nice_ticks(double& lo, double& hi) {
    if (!(hi > lo)) hi = lo + (lo == 0 ? 1 : std::fabs(lo));
    const double raw = (hi - lo) / 5;
    const double mag = std::pow(10, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * mag >= raw) {
            step = m * mag;
            break;
        }
    lo = std::floor(lo / step + 1e-9) * step;
    hi = std::ceil(hi / step - 1e-9) * step;
    std::vector<double> t;
    for (double v = lo; v <= hi + step * 1e-6; v += step) t.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
    return t;
}

std::string header(const std::string& title) {
    return fmt::format(
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
               "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"13\">\n"
               "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n",
               kWidth, kHeight) +
           fmt::format(
               "<text x=\"{}\" y=\"30\" font-size=\"{:.1f}\" font-weight=\"bold\" "
               "text-anchor=\"middle\">{}</text>\n",
               kWidth / 2, std::min(16.0, (kWidth - 20) / (0.62 * static_cast<double>(title.size()))), esc(title));
}

std::string axis_labels(const std::string& x, const std::string& y) {
    return fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kLeft + kPlotW / 2, kHeight - 18,
                       esc(x)) +
           fmt::format("<text transform=\"translate(22 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                       kTop + kPlotH / 2, esc(y));
}

// Legend entries at the right: a swatch (square or line) and the name.
std::string legend(const std::vector<std::string>& names, bool lines, const std::vector<std::size_t>& colours = {}) {
    std::string s;
    double y = kTop + 8;
    const double x = kLeft + kPlotW + 20;
    for (std::size_t n = 0; n < names.size(); ++n, y += 22) {
        const std::size_t i = n < colours.size() ? colours[n] : n;
        if (lines)
            s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"3\"/>\n", x, y,
                             x + 22, y, colour(i));
        else
            s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\"/>\n", x, y - 7, colour(i));
        s += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", x + 30, y + 4, esc(names[n]));
    }
    return s;
}

std::string frame() {
    return fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", kLeft,
                       kTop, kPlotW, kPlotH);
}

template <class Fy>
std::string y_grid(const std::vector<double>& ticks, const Fy& fy) {
    std::string s;
    for (double t : ticks) {
        const double y = fy(t);
        s += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", kLeft, y,
                         kLeft + kPlotW, y);
        s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6, y + 4, tick_text(t));
    }
    return s;
}

// Vertical grid lines and labels at each x tick.
template <class Fx>
std::string x_grid(const std::vector<double>& ticks, const Fx& fx) {
    std::string s;
    for (double t : ticks) {
        const double x = fx(t);
        s += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#eee\"/>\n", x, kTop, x,
                         kTop + kPlotH);
        s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x, kTop + kPlotH + 18,
                         tick_text(t));
    }
    return s;
}

bool finite(double v) { return std::isfinite(v); }

}   // namespace

std::string line_chart(const LineChart& c) {
    double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = c.y.log ? xlo : 0, yhi = -xlo;
    std::set<double> xs;
    auto shown = [&](double x, double y) {
        return finite(x) && finite(y) && !(c.x.log && x <= 0) && !(c.y.log && y <= 0);
    };
    for (const auto& s : c.series)
        for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
            if (!shown(s.x[i], s.y[i])) continue;
            xlo = std::min(xlo, s.x[i]);
            xhi = std::max(xhi, s.x[i]);
            ylo = std::min(ylo, s.y[i]);
            yhi = std::max(yhi, s.y[i]);
            xs.insert(s.x[i]);
        }
    if (c.reference && !(c.y.log && *c.reference <= 0)) {
        yhi = std::max(yhi, *c.reference);
        if (c.y.log) ylo = std::min(ylo, *c.reference);
    }
    if (xs.empty()) xlo = 0, xhi = 1, ylo = c.y.log ? 1 : 0, yhi = c.y.log ? 10 : 1;
    std::vector<double> yt;
    if (c.y.log) {   // whole decades around the data; 2 and 5 between them when it spans at most two
        ylo = std::pow(10, std::floor(std::log10(ylo)));
        yhi = std::pow(10, std::ceil(std::log10(yhi)));
        if (!(yhi > ylo)) yhi = ylo * 10;
        const bool fine = yhi / ylo <= 100.5;
        for (double d = ylo; d <= yhi * 1.0001; d *= 10)
            for (double m : {1.0, 2.0, 5.0})
                if ((m == 1.0 || fine) && d * m <= yhi * 1.0001) yt.push_back(d * m);
    } else {
        yhi *= 1.05;
        yt = nice_ticks(ylo, yhi);
    }
    std::vector<double> xt;
    auto fx = [&](double v) {
        if (c.x.log) {
            const double a = std::log2(xlo), b = std::log2(xhi);
            return kLeft + (b > a ? (std::log2(v) - a) / (b - a) : 0.5) * kPlotW;
        }
        return kLeft + (v - xlo) / (xhi - xlo) * kPlotW;
    };
    if (c.x.log) {
        xt.assign(xs.begin(), xs.end());
        if (xt.size() > 12) {   // thin out
            std::vector<double> kept;
            const std::size_t every = (xt.size() + 11) / 12;
            for (std::size_t i = 0; i < xt.size(); i += every) kept.push_back(xt[i]);
            xt = kept;
        }
    } else {
        xt = nice_ticks(xlo, xhi);
    }
    auto fy = [&](double v) {
        const double f = c.y.log ? std::log10(v / ylo) / std::log10(yhi / ylo) : (v - ylo) / (yhi - ylo);
        return kTop + kPlotH - f * kPlotH;
    };

    std::string s = header(c.title) + y_grid(yt, fy);
    s += x_grid(xt, fx);
    s += frame();
    if (c.reference) {
        const double y = fy(*c.reference);
        s += fmt::format(
            "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#555\" stroke-dasharray=\"6 4\"/>\n", kLeft,
            y, kLeft + kPlotW, y);
        s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" fill=\"#555\">{}</text>\n", kLeft + 6, y - 5,
                         esc(c.reference_label));
    }
    if (c.reference_x && finite(*c.reference_x) && *c.reference_x >= xlo && *c.reference_x <= xhi &&
        !(c.x.log && *c.reference_x <= 0)) {
        const double x = fx(*c.reference_x);
        s += fmt::format(
            "<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#555\" stroke-dasharray=\"6 4\"/>\n", x,
            kTop, x, kTop + kPlotH);
        s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" fill=\"#555\" text-anchor=\"end\">{}</text>\n", x - 6, kTop + 16,
                         esc(c.reference_x_label));
    }
    std::vector<std::string> names;
    for (std::size_t k = 0; k < c.series.size(); ++k) {
        const auto& se = c.series[k];
        names.push_back(se.name);
        std::string pts;
        s += fmt::format("<g class=\"series\" data-name=\"{}\">\n", esc(se.name));
        for (std::size_t i = 0; i < se.x.size() && i < se.y.size(); ++i) {
            if (!shown(se.x[i], se.y[i])) continue;
            const double x = fx(se.x[i]), y = fy(se.y[i]);
            pts += fmt::format("{:.1f},{:.1f} ", x, y);
            if (c.scatter && k == 0)   // open rings, so the series drawn over them stays visible
                s += fmt::format(
                    "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"7\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", x,
                    y, colour(k));
            else
                s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"/>\n", x, y,
                                 c.scatter ? 4 : 3.5, colour(k));
        }
        if (!pts.empty() && !(c.scatter && k == 0))
            s += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n", pts,
                             colour(k), c.scatter ? 1 : 2.5, c.scatter ? " stroke-dasharray=\"3 3\"" : "");
        s += "</g>\n";
    }
    s += legend(names, !c.scatter);
    s += axis_labels(c.x.label + (c.x.log ? " (log scale)" : ""), c.y.label + (c.y.log ? " (log scale)" : ""));
    return s + "</svg>\n";
}

std::string stacked_bars(const StackedBars& c) {
    double yhi = 0, ylo = 0;
    for (const auto& v : c.values) {
        double sum = 0;
        for (double x : v) sum += std::max(0.0, finite(x) ? x : 0.0);
        yhi = std::max(yhi, sum);
    }
    if (c.limit) yhi = std::max(yhi, *c.limit);
    yhi *= 1.05;
    const auto yt = nice_ticks(ylo, yhi);
    auto fy = [&](double v) { return kTop + kPlotH - (v - ylo) / (yhi - ylo) * kPlotH; };
    std::string s = header(c.title) + y_grid(yt, fy) + frame();
    const double n = static_cast<double>(std::max<std::size_t>(c.categories.size(), 1));
    const double slot = kPlotW / n, bar = std::min(80.0, slot * 0.7);
    for (std::size_t i = 0; i < c.categories.size(); ++i) {
        const double x = kLeft + slot * (static_cast<double>(i) + 0.5);
        double base = 0;
        for (std::size_t p = 0; p < c.parts.size() && i < c.values.size() && p < c.values[i].size(); ++p) {
            const double v = std::max(0.0, finite(c.values[i][p]) ? c.values[i][p] : 0.0);
            if (v <= 0) continue;
            s += fmt::format(
                "<rect class=\"part\" data-part=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
                "fill=\"{}\"/>\n",
                esc(c.parts[p]), x - bar / 2, fy(base + v), bar, fy(base) - fy(base + v), colour(p));
            base += v;
        }
        s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x, kTop + kPlotH + 18,
                         esc(c.categories[i]));
    }
    if (c.limit) {
        const double y = fy(*c.limit);
        s += fmt::format(
            "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#c00\" stroke-dasharray=\"6 4\" "
            "stroke-width=\"2\"/>\n",
            kLeft, y, kLeft + kPlotW, y);
        s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" fill=\"#c00\" text-anchor=\"end\">{}</text>\n",
                         kLeft + kPlotW - 6, y - 6, esc(c.limit_label));
    }
    // The legend lists the top part first, as the bars stack.
    std::vector<std::string> names;
    std::vector<std::size_t> colours;
    for (std::size_t i = c.parts.size(); i-- > 0;) {
        bool any = false;
        for (const auto& v : c.values) any |= i < v.size() && v[i] > 0;
        if (!any) continue;   // a part no bar has (no EP in a dense model) stays out of the legend
        names.push_back(c.parts[i]);
        colours.push_back(i);
    }
    s += legend(names, false, colours);
    s += axis_labels("", c.y_label);
    return s + "</svg>\n";
}

std::string gantt(const Gantt& g) {
    double xhi = 0;
    for (const auto& b : g.bars) xhi = std::max(xhi, finite(b.end) ? b.end : 0.0);
    double xlo = 0;
    const auto xt = nice_ticks(xlo, xhi);
    const double lanes = static_cast<double>(std::max<std::size_t>(g.lanes.size(), 1));
    const double lane_h = kPlotH / lanes;
    auto fx = [&](double v) { return kLeft + (v - xlo) / (xhi - xlo) * kPlotW; };
    std::string s = header(g.title);
    s += x_grid(xt, fx);
    for (std::size_t l = 0; l < g.lanes.size(); ++l)
        s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6,
                         kTop + lane_h * (static_cast<double>(l) + 0.5) + 4, esc(g.lanes[l]));
    for (const auto& b : g.bars) {
        if (!finite(b.start) || !finite(b.end) || b.end <= b.start) continue;
        s += fmt::format(
            "<rect class=\"task\" data-kind=\"{}\" x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" "
            "fill=\"{}\"/>\n",
            esc(g.kinds[static_cast<std::size_t>(b.kind)]), fx(b.start), kTop + lane_h * (b.lane + 0.15),
            std::max(0.5, fx(b.end) - fx(b.start)), lane_h * 0.7, colour(static_cast<std::size_t>(b.kind)));
    }
    s += frame() + legend(g.kinds, false) + axis_labels(g.x_label, "");
    return s + "</svg>\n";
}

void write(const std::string& path, const std::string& svg) {
    std::ofstream out(path, std::ios::binary);
    if (!out) throw ConfigError(fmt::format("--plot: {}: cannot be written", path));
    out << svg;
    check_written(out, path, "--plot");
}

}   // namespace llmsim::cli::plot
