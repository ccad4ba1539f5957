#include "web/metrics_registry.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace themis::web {

namespace {

bool valid_name(const std::string& name, bool allow_colon) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':');
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string escape_help(const std::string& help) {
  std::string out;
  for (const char c : help) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

const char* type_name(MetricType type) {
  switch (type) {
    case MetricType::kCounter: return "counter";
    case MetricType::kGauge: return "gauge";
    case MetricType::kHistogram: return "histogram";
  }
  return "untyped";
}

}  // namespace

std::string format_metric_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
    return buffer;
  }
  char buffer[32];
  const auto written = std::to_chars(buffer, buffer + sizeof buffer, value);  // the shortest exact form
  return std::string(buffer, written.ptr);
}

std::string format_labels(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (i) out += ',';
    out += labels[i].first + "=\"";
    for (const char c : labels[i].second) {
      if (c == '\\') out += "\\\\";
      else if (c == '"') out += "\\\"";
      else if (c == '\n') out += "\\n";
      else out += c;
    }
    out += '"';
  }
  return out + "}";
}

void MetricsRegistry::declare(const std::string& name, MetricType type, const std::string& help, std::vector<double> bounds,
                              std::vector<std::string> label_names) {
  if (!valid_name(name, true)) throw std::invalid_argument("metric name " + name + ": not a Prometheus metric name");
  if (type == MetricType::kCounter && !ends_with(name, "_total")) {
    throw std::invalid_argument("metric name " + name + ": a counter's name ends in _total");
  }
  if (type != MetricType::kCounter && ends_with(name, "_total")) {
    throw std::invalid_argument("metric name " + name + ": only a counter's name ends in _total");
  }
  if (!std::is_sorted(bounds.begin(), bounds.end()) || std::adjacent_find(bounds.begin(), bounds.end()) != bounds.end()) {
    throw std::invalid_argument("metric " + name + ": bucket bounds must increase");
  }
  for (const std::string& label : label_names) {
    if (!valid_name(label, false) || label.rfind("__", 0) == 0 || (type == MetricType::kHistogram && label == "le")) {
      throw std::invalid_argument("metric " + name + ": bad label name " + label);
    }
  }
  const std::lock_guard lock(mutex_);
  if (families_.count(name)) throw std::invalid_argument("metric " + name + ": declared twice");
  families_[name] = Family{type, help, std::move(bounds), std::move(label_names), {}};
  order_.push_back(name);
}

void MetricsRegistry::declare_counter(const std::string& name, const std::string& help, std::vector<std::string> label_names) {
  declare(name, MetricType::kCounter, help, {}, std::move(label_names));
}
void MetricsRegistry::declare_gauge(const std::string& name, const std::string& help, std::vector<std::string> label_names) {
  declare(name, MetricType::kGauge, help, {}, std::move(label_names));
}
void MetricsRegistry::declare_histogram(const std::string& name, const std::string& help, std::vector<double> bucket_bounds,
                                        std::vector<std::string> label_names) {
  declare(name, MetricType::kHistogram, help, std::move(bucket_bounds), std::move(label_names));
}

MetricsRegistry::Series& MetricsRegistry::series_of(const std::string& name, MetricType type, const Labels& labels) {
  const auto family = families_.find(name);
  if (family == families_.end() || family->second.type != type) {
    throw std::logic_error("metric " + name + ": not declared as a " + type_name(type));
  }
  const auto& names = family->second.label_names;
  const bool as_declared = labels.size() == names.size() &&
                           std::equal(labels.begin(), labels.end(), names.begin(),
                                      [](const auto& label, const std::string& declared) { return label.first == declared; });
  if (!as_declared) throw std::logic_error("metric " + name + ": labels other than the declared ones");
  auto [it, inserted] = family->second.series.try_emplace(format_labels(labels));
  if (inserted) {
    it->second.labels = labels;
    if (type == MetricType::kHistogram) it->second.buckets.assign(family->second.bounds.size() + 1, 0);
  }
  return it->second;
}

void MetricsRegistry::add(const std::string& counter, double by, const Labels& labels) {
  if (!(by >= 0)) throw std::logic_error("metric " + counter + ": a counter only grows");
  const std::lock_guard lock(mutex_);
  series_of(counter, MetricType::kCounter, labels).value += by;
}

void MetricsRegistry::set(const std::string& gauge, double value, const Labels& labels) {
  const std::lock_guard lock(mutex_);
  series_of(gauge, MetricType::kGauge, labels).value = value;
}

void MetricsRegistry::observe(const std::string& histogram, double value, const Labels& labels) {
  const std::lock_guard lock(mutex_);
  Series& s = series_of(histogram, MetricType::kHistogram, labels);
  const auto& bounds = families_.at(histogram).bounds;
  const auto bucket = std::lower_bound(bounds.begin(), bounds.end(), value) - bounds.begin();  // first bound >= value
  ++s.buckets[static_cast<std::size_t>(bucket)];
  s.sum += value;
  ++s.count;
}

void MetricsRegistry::clear(const std::string& name) {
  const std::lock_guard lock(mutex_);
  const auto family = families_.find(name);
  if (family == families_.end()) throw std::logic_error("metric " + name + ": not declared");
  family->second.series.clear();
}

std::optional<double> MetricsRegistry::value(const std::string& name, const Labels& labels) const {
  const std::lock_guard lock(mutex_);
  const auto family = families_.find(name);
  if (family == families_.end()) return std::nullopt;
  const auto it = family->second.series.find(format_labels(labels));
  if (it == family->second.series.end()) return std::nullopt;
  return it->second.value;
}

std::vector<std::pair<Labels, double>> MetricsRegistry::series(const std::string& name) const {
  const std::lock_guard lock(mutex_);
  std::vector<std::pair<Labels, double>> out;
  const auto family = families_.find(name);
  if (family == families_.end()) return out;
  for (const auto& [key, s] : family->second.series) out.emplace_back(s.labels, s.value);
  return out;
}

std::string MetricsRegistry::render() const {
  const std::lock_guard lock(mutex_);
  std::string out;
  for (const std::string& name : order_) {
    const Family& f = families_.at(name);
    out += "# HELP " + name + " " + escape_help(f.help) + "\n# TYPE " + name + " " + type_name(f.type) + "\n";
    if (f.type != MetricType::kHistogram) {
      if (f.series.empty() && f.label_names.empty() && f.type == MetricType::kCounter) out += name + " 0\n";
      for (const auto& [key, s] : f.series) out += name + key + " " + format_metric_value(s.value) + "\n";
      continue;
    }
    auto write_histogram = [&](const Series& s) {
      std::uint64_t cumulative = 0;
      for (std::size_t b = 0; b <= f.bounds.size(); ++b) {
        cumulative += s.buckets.empty() ? 0 : s.buckets[b];
        Labels with_le = s.labels;
        with_le.emplace_back("le", b < f.bounds.size() ? format_metric_value(f.bounds[b]) : "+Inf");
        out += name + "_bucket" + format_labels(with_le) + " " + std::to_string(cumulative) + "\n";
      }
      out += name + "_sum" + format_labels(s.labels) + " " + format_metric_value(s.sum) + "\n";
      out += name + "_count" + format_labels(s.labels) + " " + std::to_string(s.count) + "\n";
    };
    if (f.series.empty() && f.label_names.empty()) write_histogram(Series{});
    for (const auto& [key, s] : f.series) write_histogram(s);
  }
  return out;
}

}  // namespace themis::web
