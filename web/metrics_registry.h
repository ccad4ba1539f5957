#pragma once
// Metrics in the Prometheus text format (version 0.0.4): counters, gauges and histograms with labels,
// safe to update from one thread (a daemon's loop) while another renders them (its HTTP server).
// Every update takes one mutex for a map look-up; the loop updates a few series per turn at most.
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace themis::web {

using Labels = std::vector<std::pair<std::string, std::string>>;

enum class MetricType { kCounter, kGauge, kHistogram };

class MetricsRegistry {
 public:
  // Declares a family (once; the order of declaration is the order of the text) and the names of its labels,
  // which every update gives in that order. A name or label that breaks Prometheus' naming rules, a counter
  // not ending in _total, or a second declaration throws std::invalid_argument.
  void declare_counter(const std::string& name, const std::string& help, std::vector<std::string> label_names = {});
  void declare_gauge(const std::string& name, const std::string& help, std::vector<std::string> label_names = {});
  // `bucket_bounds`: the upper bounds, increasing; the +Inf bucket is added.
  void declare_histogram(const std::string& name, const std::string& help, std::vector<double> bucket_bounds,
                         std::vector<std::string> label_names = {});

  // Updates; a name not declared with that type, or labels other than the declared ones, throw
  // std::logic_error (a programming error).
  void add(const std::string& counter, double by = 1, const Labels& labels = {});
  void set(const std::string& gauge, double value, const Labels& labels = {});
  void observe(const std::string& histogram, double value, const Labels& labels = {});
  // Drops every series of a family (e.g. a gauge refilled at each scrape).
  void clear(const std::string& name);

  // The value of a counter or gauge series; nullopt when it has none yet.
  std::optional<double> value(const std::string& name, const Labels& labels = {}) const;
  // Every series of a counter or gauge family, as (labels, value).
  std::vector<std::pair<Labels, double>> series(const std::string& name) const;

  // HELP and TYPE lines then the samples of each family. A counter or histogram without labels that never
  // moved shows as 0; a gauge never set has no sample (its value is unknown, not 0).
  std::string render() const;

 private:
  struct Series {
    Labels labels;
    double value = 0;                     // counter, gauge
    std::vector<std::uint64_t> buckets;   // histogram: per bound, not cumulative; the last is +Inf
    double sum = 0;
    std::uint64_t count = 0;
  };
  struct Family {
    MetricType type = MetricType::kGauge;
    std::string help;
    std::vector<double> bounds;
    std::vector<std::string> label_names;
    std::map<std::string, Series> series;  // by rendered labels
  };
  void declare(const std::string& name, MetricType type, const std::string& help, std::vector<double> bounds,
               std::vector<std::string> label_names);
  Series& series_of(const std::string& name, MetricType type, const Labels& labels);

  mutable std::mutex mutex_;
  std::vector<std::string> order_;
  std::map<std::string, Family> families_;
};

// A sample value as Prometheus writes it: integers without a decimal point, +Inf, -Inf, NaN.
std::string format_metric_value(double value);
// {a="x",b="y"} with \\, \" and \n escaped; "" when there are no labels.
std::string format_labels(const Labels& labels);

}  // namespace themis::web
