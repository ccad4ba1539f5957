// web::MetricsRegistry: the Prometheus text it renders, and what it refuses.
#include "web/metrics_registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <thread>

namespace themis::web {
namespace {

TEST(MetricsRegistry, RendersCountersGaugesAndLabelsWithHelpAndType) {
  MetricsRegistry r;
  r.declare_counter("themis_things_total", "Things.");
  r.declare_gauge("themis_gpus", "GPUs by state.", {"state"});
  r.add("themis_things_total", 2);
  r.add("themis_things_total");
  r.set("themis_gpus", 3, {{"state", "free"}});
  r.set("themis_gpus", 1.5, {{"state", "leased"}});
  EXPECT_EQ(r.render(),
            "# HELP themis_things_total Things.\n# TYPE themis_things_total counter\nthemis_things_total 3\n"
            "# HELP themis_gpus GPUs by state.\n# TYPE themis_gpus gauge\n"
            "themis_gpus{state=\"free\"} 3\nthemis_gpus{state=\"leased\"} 1.5\n");
  EXPECT_EQ(r.value("themis_gpus", {{"state", "free"}}), 3);
  EXPECT_EQ(r.value("themis_gpus", {{"state", "down"}}), std::nullopt);
}

TEST(MetricsRegistry, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  MetricsRegistry r;
  r.declare_histogram("themis_turn_seconds", "Turns.", {0.25, 0.5, 1});
  for (const double v : {0.125, 0.25, 0.375, 0.75, 7.0}) r.observe("themis_turn_seconds", v);  // a bound counts in its bucket
  EXPECT_EQ(r.render(),
            "# HELP themis_turn_seconds Turns.\n# TYPE themis_turn_seconds histogram\n"
            "themis_turn_seconds_bucket{le=\"0.25\"} 2\nthemis_turn_seconds_bucket{le=\"0.5\"} 3\n"
            "themis_turn_seconds_bucket{le=\"1\"} 4\nthemis_turn_seconds_bucket{le=\"+Inf\"} 5\n"
            "themis_turn_seconds_sum 8.5\nthemis_turn_seconds_count 5\n");
}

TEST(MetricsRegistry, AFamilyThatNeverMovedShowsZeroUnlessItIsAnUnsetGaugeOrHasLabels) {
  MetricsRegistry r;
  r.declare_counter("a_total", "A.");
  r.declare_gauge("b", "B.");
  r.declare_counter("c_total", "C.", {"host"});
  r.declare_histogram("d_seconds", "D.", {1});
  EXPECT_EQ(r.render(),
            "# HELP a_total A.\n# TYPE a_total counter\na_total 0\n# HELP b B.\n# TYPE b gauge\n"
            "# HELP c_total C.\n# TYPE c_total counter\n# HELP d_seconds D.\n# TYPE d_seconds histogram\n"
            "d_seconds_bucket{le=\"1\"} 0\nd_seconds_bucket{le=\"+Inf\"} 0\nd_seconds_sum 0\nd_seconds_count 0\n");
}

TEST(MetricsRegistry, EscapesLabelValuesAndHelp) {
  MetricsRegistry r;
  r.declare_gauge("themis_app_rho", "ρ per app\\name\nsecond line", {"name"});
  r.set("themis_app_rho", 1.25, {{"name", "a \"quoted\"\\back\nslash"}});
  EXPECT_EQ(r.render(),
            "# HELP themis_app_rho ρ per app\\\\name\\nsecond line\n# TYPE themis_app_rho gauge\n"
            "themis_app_rho{name=\"a \\\"quoted\\\"\\\\back\\nslash\"} 1.25\n");
}

TEST(MetricsRegistry, FormatsSpecialValuesAsPrometheusDoes) {
  EXPECT_EQ(format_metric_value(0.1), "0.1");
  EXPECT_EQ(format_metric_value(42), "42");
  EXPECT_EQ(format_metric_value(-3), "-3");
  EXPECT_EQ(format_metric_value(1795635938.7604206), "1795635938.7604206");
  EXPECT_EQ(format_metric_value(INFINITY), "+Inf");
  EXPECT_EQ(format_metric_value(-INFINITY), "-Inf");
  EXPECT_EQ(format_metric_value(NAN), "NaN");
}

TEST(MetricsRegistry, RefusesNamesAgainstTheConventionsAndMisuse) {
  MetricsRegistry r;
  EXPECT_THROW(r.declare_counter("themis_rounds", "no _total"), std::invalid_argument);
  EXPECT_THROW(r.declare_gauge("themis_rounds_total", "a gauge named like a counter"), std::invalid_argument);
  EXPECT_THROW(r.declare_gauge("9lives", "starts with a digit"), std::invalid_argument);
  EXPECT_THROW(r.declare_gauge("themis-gpus", "a dash"), std::invalid_argument);
  EXPECT_THROW(r.declare_gauge("g", "bad label", {"__reserved"}), std::invalid_argument);
  EXPECT_THROW(r.declare_histogram("h_seconds", "le is the histogram's", {1}, {"le"}), std::invalid_argument);
  EXPECT_THROW(r.declare_histogram("h_seconds", "bounds must increase", {1, 1}), std::invalid_argument);
  r.declare_gauge("themis_gpus", "GPUs.", {"state"});
  EXPECT_THROW(r.declare_gauge("themis_gpus", "again"), std::invalid_argument);
  EXPECT_THROW(r.add("themis_gpus", 1, {{"state", "free"}}), std::logic_error);  // a gauge, not a counter
  EXPECT_THROW(r.set("themis_gpus", 1), std::logic_error);                        // its label is missing
  EXPECT_THROW(r.set("themis_gpus", 1, {{"host", "a"}}), std::logic_error);       // not its label
  EXPECT_THROW(r.set("undeclared", 1), std::logic_error);
  r.declare_counter("c_total", "C.");
  EXPECT_THROW(r.add("c_total", -1), std::logic_error);
  EXPECT_EQ(r.render().find("themis_gpus{"), std::string::npos);  // the refused updates left nothing behind
}

// The loop updates while the HTTP thread renders: each render sees whole updates (run under TSan to see more).
TEST(MetricsRegistry, UpdatesFromOneThreadWhileAnotherRenders) {
  MetricsRegistry r;
  r.declare_counter("n_total", "N.");
  r.declare_histogram("t_seconds", "T.", {0.5});
  std::thread writer([&] {
    for (int i = 0; i < 20000; ++i) {
      r.add("n_total");
      r.observe("t_seconds", 0.25);
    }
  });
  for (int i = 0; i < 200; ++i) {
    const std::string text = r.render();
    EXPECT_NE(text.find("n_total "), std::string::npos);
  }
  writer.join();
  EXPECT_EQ(r.value("n_total"), 20000);
  EXPECT_NE(r.render().find("t_seconds_count 20000\n"), std::string::npos);
}

}  // namespace
}  // namespace themis::web
