#include "sim/svg_plot.h"

#include <algorithm>
#include <cstdio>

namespace themis::sim {
namespace {

constexpr double kWidth = 640, kHeight = 400, kLeft = 60, kRight = 150, kTop = 20, kBottom = 50;
const char* const kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string header(const std::string& title) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kWidth) + "\" height=\"" + num(kHeight) +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n<title>" + title + "</title>\n" +
         "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
}

std::string text(double x, double y, const std::string& s, const char* anchor = "middle") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\">" + s + "</text>\n";
}

std::string axes(const std::string& xlabel, const std::string& ylabel, double xmax, double ymax) {
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  std::string out = "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(kTop + h) + "\" x2=\"" + num(kLeft + w) + "\" y2=\"" +
                    num(kTop + h) + "\" stroke=\"black\"/>\n<line x1=\"" + num(kLeft) + "\" y1=\"" + num(kTop) +
                    "\" x2=\"" + num(kLeft) + "\" y2=\"" + num(kTop + h) + "\" stroke=\"black\"/>\n";
  for (int k = 0; k <= 4; ++k) {
    const double fx = k / 4.0;
    if (xmax > 0) out += text(kLeft + fx * w, kTop + h + 15, num(fx * xmax));
    out += text(kLeft - 5, kTop + h - fx * h + 4, num(fx * ymax), "end");
  }
  out += text(kLeft + w / 2, kHeight - 10, xlabel);
  out += "<text x=\"15\" y=\"" + num(kTop + h / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 15 " +
         num(kTop + h / 2) + ")\">" + ylabel + "</text>\n";
  return out;
}

}  // namespace

std::string rho_cdf_svg(const std::vector<RunSummary>& summaries) {
  double xmax = 0;
  for (const RunSummary& s : summaries)
    if (!s.rho_sorted.empty()) xmax = std::max(xmax, s.rho_sorted.back());
  if (xmax <= 0) xmax = 1;
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  std::string out = header("Finish-time fairness: CDF of rho per policy") + axes("rho (finish-time fairness)", "fraction of apps", xmax, 1.0);
  for (std::size_t p = 0; p < summaries.size(); ++p) {
    const auto& v = summaries[p].rho_sorted;
    const char* colour = kColours[p % 10];
    std::string points = num(kLeft) + "," + num(kTop + h);
    for (std::size_t k = 0; k < v.size(); ++k) {
      const double x = kLeft + v[k] / xmax * w;
      points += " " + num(x) + "," + num(kTop + h - static_cast<double>(k) / static_cast<double>(v.size()) * h);
      points += " " + num(x) + "," + num(kTop + h - static_cast<double>(k + 1) / static_cast<double>(v.size()) * h);
    }
    out += "<polyline fill=\"none\" stroke=\"" + std::string(colour) + "\" stroke-width=\"1.5\" points=\"" + points + "\"/>\n";
    const double ly = kTop + 15 + 18 * static_cast<double>(p);
    out += "<line x1=\"" + num(kWidth - kRight + 10) + "\" y1=\"" + num(ly - 4) + "\" x2=\"" + num(kWidth - kRight + 30) +
           "\" y2=\"" + num(ly - 4) + "\" stroke=\"" + colour + "\" stroke-width=\"2\"/>\n";
    out += text(kWidth - kRight + 35, ly, summaries[p].policy, "start");
  }
  return out + "</svg>\n";
}

std::string bar_svg(const std::string& title, const std::string& ylabel, const std::vector<std::string>& names,
                    const std::vector<double>& values) {
  double ymax = 0;
  for (double v : values) ymax = std::max(ymax, v);
  if (ymax <= 0) ymax = 1;
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  std::string out = header(title) + axes("", ylabel, 0, ymax);
  const double slot = w / static_cast<double>(std::max<std::size_t>(1, values.size()));
  for (std::size_t p = 0; p < values.size(); ++p) {
    const double bh = values[p] / ymax * h;
    const double x = kLeft + slot * static_cast<double>(p) + slot * 0.15;
    out += "<rect x=\"" + num(x) + "\" y=\"" + num(kTop + h - bh) + "\" width=\"" + num(slot * 0.7) + "\" height=\"" +
           num(bh) + "\" fill=\"" + kColours[p % 10] + "\"/>\n";
    out += text(x + slot * 0.35, kTop + h - bh - 4, num(values[p]));
    out += text(x + slot * 0.35, kTop + h + 30, names[p]);
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
  double xmax = 0, ymax = 0;
  for (double x : xs) xmax = std::max(xmax, x);
  for (const Series& s : series)
    for (double y : s.values) ymax = std::max(ymax, y);
  if (xmax <= 0) xmax = 1;
  if (ymax <= 0) ymax = 1;
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  std::string out = header(title) + axes(xlabel, ylabel, xmax, ymax);
  for (std::size_t p = 0; p < series.size(); ++p) {
    const char* colour = kColours[p % 10];
    std::string points;
    for (std::size_t k = 0; k < xs.size() && k < series[p].values.size(); ++k) {
      const double x = kLeft + xs[k] / xmax * w, y = kTop + h - series[p].values[k] / ymax * h;
      points += (k ? " " : "") + num(x) + "," + num(y);
      out += "<circle cx=\"" + num(x) + "\" cy=\"" + num(y) + "\" r=\"3\" fill=\"" + colour + "\"/>\n";
    }
    out += "<polyline fill=\"none\" stroke=\"" + std::string(colour) + "\" stroke-width=\"1.5\" points=\"" + points + "\"/>\n";
    const double ly = kTop + 15 + 18 * static_cast<double>(p);
    out += "<line x1=\"" + num(kWidth - kRight + 10) + "\" y1=\"" + num(ly - 4) + "\" x2=\"" + num(kWidth - kRight + 30) +
           "\" y2=\"" + num(ly - 4) + "\" stroke=\"" + colour + "\" stroke-width=\"2\"/>\n";
    out += text(kWidth - kRight + 35, ly, series[p].name, "start");
  }
  return out + "</svg>\n";
}

}  // namespace themis::sim
