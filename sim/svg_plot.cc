#include "sim/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace themis::sim {
namespace {

constexpr double kWidth = 640, kHeight = 420, kLeft = 70, kRight = 150, kTop = 40, kBottom = 50;
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;
const char* const kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string tick_label(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string text(double x, double y, const std::string& s, const char* anchor = "middle") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\">" + s + "</text>\n";
}

// The title is drawn on the image (a <title> element alone shows only as a tooltip).
std::string header(const std::string& title) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kWidth) + "\" height=\"" + num(kHeight) +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n<title>" + title + "</title>\n" +
         "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" +
         "<text x=\"" + num(kWidth / 2) + "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">" +
         title + "</text>\n";
}

// A legend in the right margin, outside the plot, one row per series: it hides no line.
std::string legend_row(std::size_t p, const std::string& name) {
  const double ly = kTop + 15 + 18 * static_cast<double>(p);
  const char* colour = kColours[p % 10];
  return "<line x1=\"" + num(kWidth - kRight + 10) + "\" y1=\"" + num(ly - 4) + "\" x2=\"" + num(kWidth - kRight + 30) +
         "\" y2=\"" + num(ly - 4) + "\" stroke=\"" + colour + "\" stroke-width=\"2\"/>\n" +
         text(kWidth - kRight + 35, ly, name, "start");
}

std::string x_axis_ticks(const Axis& a) {
  std::string out;
  for (double t : a.ticks) out += text(kLeft + a.fraction(t) * kPlotW, kTop + kPlotH + 15, tick_label(t));
  return out;
}

std::string axes(const std::string& xlabel, const std::string& ylabel, const Axis& y) {
  std::string out = "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(kTop + kPlotH) + "\" x2=\"" + num(kLeft + kPlotW) +
                    "\" y2=\"" + num(kTop + kPlotH) + "\" stroke=\"black\"/>\n<line x1=\"" + num(kLeft) + "\" y1=\"" +
                    num(kTop) + "\" x2=\"" + num(kLeft) + "\" y2=\"" + num(kTop + kPlotH) + "\" stroke=\"black\"/>\n";
  for (double t : y.ticks) out += text(kLeft - 5, kTop + kPlotH - y.fraction(t) * kPlotH + 4, tick_label(t), "end");
  out += text(kLeft + kPlotW / 2, kHeight - 10, xlabel);
  const std::string label = y.log ? ylabel + " (log scale)" : ylabel;
  out += "<text x=\"15\" y=\"" + num(kTop + kPlotH / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 15 " +
         num(kTop + kPlotH / 2) + ")\">" + label + "</text>\n";
  return out;
}

}  // namespace

double Axis::fraction(double v) const {
  if (log) {
    const double clamped = std::max(v, lo);
    return (std::log10(clamped) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  }
  return (v - lo) / (hi - lo);
}

Axis make_axis(const std::vector<double>& values) {
  double top = 0;
  double bottom = std::numeric_limits<double>::infinity();
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    top = std::max(top, v);
    if (v > 0) bottom = std::min(bottom, v);
  }
  Axis a;
  if (top <= 0) top = 1;
  if (std::isfinite(bottom) && top / bottom > 10) {
    // Log axis: decades, with 2 and 5 between them while there are few decades.
    a.log = true;
    a.lo = std::pow(10.0, std::floor(std::log10(bottom)));
    a.hi = std::pow(10.0, std::ceil(std::log10(top)));
    const bool fine = a.hi / a.lo <= 1000;
    for (double d = a.lo; d <= a.hi * 1.0001; d *= 10)
      for (double m : {1.0, 2.0, 5.0})
        if ((m == 1.0 || fine) && d * m <= a.hi * 1.0001) a.ticks.push_back(d * m);
    return a;
  }
  // Linear from 0: a step of 1, 2 or 5 × 10^k giving 4–8 ticks, the top rounded up to a tick.
  const double raw = top / 5;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  double step = decade;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * decade >= raw) {
      step = m * decade;
      break;
    }
  a.hi = std::ceil(top / step - 1e-9) * step;
  for (int k = 0; k * step <= a.hi + step * 1e-9; ++k) a.ticks.push_back(k * step);
  return a;
}

std::string rho_cdf_svg(const std::vector<RunSummary>& summaries) {
  std::vector<double> all;
  for (const RunSummary& s : summaries) all.insert(all.end(), s.rho_sorted.begin(), s.rho_sorted.end());
  const Axis x = make_axis(all);
  Axis y;
  y.ticks = {0, 0.25, 0.5, 0.75, 1};
  std::string out = header("Finish-time fairness: CDF of rho per policy") +
                    axes(x.log ? "rho (finish-time fairness, log scale)" : "rho (finish-time fairness)", "fraction of apps", y) +
                    x_axis_ticks(x);
  for (std::size_t p = 0; p < summaries.size(); ++p) {
    const auto& v = summaries[p].rho_sorted;
    const double x0 = v.empty() ? 0 : x.fraction(v.front());
    std::string points = num(kLeft + x0 * kPlotW) + "," + num(kTop + kPlotH);
    for (std::size_t k = 0; k < v.size(); ++k) {
      const double px = kLeft + x.fraction(v[k]) * kPlotW;
      points += " " + num(px) + "," + num(kTop + kPlotH - static_cast<double>(k) / static_cast<double>(v.size()) * kPlotH);
      points += " " + num(px) + "," + num(kTop + kPlotH - static_cast<double>(k + 1) / static_cast<double>(v.size()) * kPlotH);
    }
    out += "<polyline fill=\"none\" stroke=\"" + std::string(kColours[p % 10]) + "\" stroke-width=\"1.5\" points=\"" + points + "\"/>\n";
    out += legend_row(p, summaries[p].policy);
  }
  return out + "</svg>\n";
}

std::string bar_svg(const std::string& title, const std::string& ylabel, const std::vector<std::string>& names,
                    const std::vector<double>& values) {
  const Axis y = make_axis(values);
  std::string out = header(title) + axes("", ylabel, y);
  const double slot = kPlotW / static_cast<double>(std::max<std::size_t>(1, values.size()));
  for (std::size_t p = 0; p < values.size(); ++p) {
    const double bh = std::max(0.0, y.fraction(values[p])) * kPlotH;
    const double x = kLeft + slot * static_cast<double>(p) + slot * 0.15;
    out += "<rect x=\"" + num(x) + "\" y=\"" + num(kTop + kPlotH - bh) + "\" width=\"" + num(slot * 0.7) + "\" height=\"" +
           num(bh) + "\" fill=\"" + kColours[p % 10] + "\"/>\n";
    out += text(x + slot * 0.35, kTop + kPlotH - bh - 4, num(values[p]));
    out += text(x + slot * 0.35, kTop + kPlotH + 30, names[p]);
  }
  return out + "</svg>\n";
}

std::string gpu_time_svg(const std::vector<RunSummary>& summaries) {
  std::vector<std::string> names;
  std::vector<double> values;
  for (const RunSummary& s : summaries) {
    names.push_back(s.policy);
    values.push_back(s.gpu_time / 3600);
  }
  return bar_svg("Total GPU time per policy", "GPU time (GPU-hours)", names, values);
}

std::string max_rho_svg(const std::vector<RunSummary>& summaries) {
  std::vector<std::string> names;
  std::vector<double> values;
  for (const RunSummary& s : summaries) {
    names.push_back(s.policy);
    values.push_back(s.max_rho);
  }
  return bar_svg("Maximum finish-time fairness rho per policy", "max rho", names, values);
}

std::string line_svg(const std::string& title, const std::string& xlabel, const std::string& ylabel,
                     const std::vector<double>& xs, const std::vector<Series>& series) {
  std::vector<double> all;
  for (const Series& s : series) all.insert(all.end(), s.values.begin(), s.values.end());
  const Axis x = make_axis(xs);
  const Axis y = make_axis(all);
  std::string out = header(title) + axes(x.log ? xlabel + " (log scale)" : xlabel, ylabel, y) + x_axis_ticks(x);
  for (std::size_t p = 0; p < series.size(); ++p) {
    const char* colour = kColours[p % 10];
    std::string points;
    for (std::size_t k = 0; k < xs.size() && k < series[p].values.size(); ++k) {
      const double px = kLeft + x.fraction(xs[k]) * kPlotW, py = kTop + kPlotH - y.fraction(series[p].values[k]) * kPlotH;
      points += (k ? " " : "") + num(px) + "," + num(py);
      out += "<circle cx=\"" + num(px) + "\" cy=\"" + num(py) + "\" r=\"3\" fill=\"" + colour + "\"/>\n";
    }
    out += "<polyline fill=\"none\" stroke=\"" + std::string(colour) + "\" stroke-width=\"1.5\" points=\"" + points + "\"/>\n";
    out += legend_row(p, series[p].name);
  }
  return out + "</svg>\n";
}

}  // namespace themis::sim
