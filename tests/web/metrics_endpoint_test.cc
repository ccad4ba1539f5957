// /metrics of a real coordinator and nodelet (docs/admin.md "Metrics and dashboard"): scraped over HTTP,
// its values checked against the database and the nodelet's configuration, and the text checked by promtool.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/store/temp_dir.h"
#include "web_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;
const std::string kBin = THEMIS_BIN_DIR;

// promtool (Debian's prometheus package) lints the text; CI installs it (scripts/install-deps).
void expect_promtool_accepts(const std::string& text, TestCluster& cluster, const std::string& name) {
  const std::string promtool = find_program("promtool");
  if (promtool.empty()) {
    if (std::getenv("CI")) ADD_FAILURE() << "promtool is not installed (scripts/install-deps installs prometheus)";
    return;
  }
  const std::string file = cluster.write_file(name + ".prom", text);
  const auto checked = run_command({"/bin/sh", "-c", "\"$0\" check metrics < \"$1\"", promtool, file});
  EXPECT_EQ(checked.code, 0) << name << ": " << checked.out << "\n" << text;
  EXPECT_EQ(checked.out, "") << name << ": promtool has remarks";
}

double sum_of_states(const std::string& text, const std::string& name, std::initializer_list<const char*> states) {
  double sum = 0;
  for (const char* state : states) {
    const double v = sample_value(text, name + "{state=\"" + state + "\"}");
    EXPECT_GE(v, 0) << name << " has no state " << state << " in\n" << text;
    sum += v;
  }
  return sum;
}

TEST(MetricsEndpoint, CoordinatorAndNodeletServeRealFiguresThatPromtoolAccepts) {
  WebCluster web;
  TestCluster& cluster = *web.cluster;

  const auto first = http_get(web.coordinator_port, "/metrics");
  ASSERT_EQ(first.status, 200) << read_text(cluster.coordinator_log());
  EXPECT_NE(first.headers.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << first.headers;
  // Every GPU the nodelet declares is registered, and all are free before any app.
  EXPECT_EQ(sum_of_states(first.body, "themis_gpus", {"leased", "idle", "free", "down"}), WebCluster::kGpus);
  EXPECT_EQ(sample_value(first.body, "themis_gpus{state=\"free\"}"), WebCluster::kGpus);
  EXPECT_EQ(sample_value(first.body, "themis_hosts{state=\"up\"}"), 1);
  EXPECT_GE(sample_value(first.body, "themis_loop_turn_duration_seconds_count"), 1);
  const double missed = sample_value(first.body, "themis_host_missed_heartbeats{host=\"node-a\"}");
  EXPECT_GE(missed, 0);
  EXPECT_LE(missed, 10);  // 100 ms heartbeats; a loaded test machine may delay a few
  EXPECT_EQ(sample_value(first.body, "themis_rounds_total"), std::stod(cluster.sql("SELECT count(*) FROM rounds")));

  const auto node = http_get(web.nodelet_port, "/metrics");
  ASSERT_EQ(node.status, 200) << read_text(cluster.dir() + "/node-a.log");
  EXPECT_EQ(sample_value(node.body, "themis_nodelet_gpus"), WebCluster::kGpus);
  EXPECT_EQ(sample_value(node.body, "themis_nodelet_workers"), 0);
  EXPECT_EQ(sample_value(node.body, "themis_nodelet_connected"), 1);
  EXPECT_EQ(sample_value(node.body, "themis_nodelet_fenced"), 0);
  EXPECT_GE(sample_value(node.body, "themis_nodelet_registrations_sent_total"), 1);
  const double beats = sample_value(node.body, "themis_nodelet_heartbeats_sent_total");
  EXPECT_TRUE(cluster.wait_for(
      [&] { return sample_value(http_get(web.nodelet_port, "/metrics").body, "themis_nodelet_heartbeats_sent_total") > beats; },
      5s));

  // A round grants the app 2 GPUs: rounds_total counts it, the GPUs and ρ show it.
  const double rounds_before = sample_value(first.body, "themis_rounds_total");
  const std::string app = web.submit("sleeper-a", 2);
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM jobs WHERE state = 'RUNNING'") == "1"; }, 15s))
      << read_text(cluster.coordinator_log());
  std::string text;
  ASSERT_TRUE(cluster.wait_for(
      [&] {
        text = http_get(web.coordinator_port, "/metrics").body;
        return sample_value(text, "themis_rounds_total") == std::stod(cluster.sql("SELECT count(*) FROM rounds"));
      },
      5s))
      << text;
  EXPECT_GT(sample_value(text, "themis_rounds_total"), rounds_before);
  EXPECT_GE(sample_value(text, "themis_round_duration_seconds_count"), 1);
  EXPECT_EQ(sample_value(text, "themis_gpus{state=\"leased\"}"), 2) << text;
  EXPECT_EQ(sample_value(text, "themis_gpus{state=\"free\"}"), WebCluster::kGpus - 2);
  EXPECT_EQ(sample_value(text, "themis_leases_active"), 2);
  EXPECT_EQ(sample_value(text, "themis_apps{state=\"RUNNING\"}"), 1);
  EXPECT_EQ(sample_value(text, "themis_jobs{state=\"RUNNING\"}"), 1);
  const std::string labels = "{app=\"" + app + "\",name=\"sleeper-a\"}";
  EXPECT_EQ(sample_value(text, "themis_app_gpus" + labels), 2);
  const double rho = std::stod(cluster.sql("SELECT rho FROM apps WHERE id = " + app));
  EXPECT_NEAR(sample_value(text, "themis_app_rho" + labels), rho, 1e-9 * rho) << text;
  EXPECT_TRUE(cluster.wait_for(
      [&] { return sample_value(http_get(web.nodelet_port, "/metrics").body, "themis_nodelet_workers") == 2; }, 5s));

  expect_promtool_accepts(text, cluster, "coordinator");
  expect_promtool_accepts(http_get(web.nodelet_port, "/metrics").body, cluster, "nodelet");
}

TEST(MetricsEndpoint, AWildcardHttpListenIsAConfigurationError) {
  const TempDir dir;
  const std::string config = dir.file("themis.toml");
  std::ofstream(config) << "[coordinator]\ndatabase = \"" << dir.file("themis.db") << "\"\nhttp_listen = \"0.0.0.0:9310\"\n"
                        << "[nodelet]\nhost = \"node-b\"\nslots = [[0]]\nhttp_listen = \"[::]:9311\"\n";
  const auto checked = run_command({kBin + "/themis-coordinator", "-c", config, "--check-config"});
  EXPECT_EQ(checked.code, 78) << checked.out;
  EXPECT_NE(checked.out.find("coordinator.http_listen: \"0.0.0.0:9310\": a wildcard address"), std::string::npos) << checked.out;
  const auto node_checked = run_command({kBin + "/themis-nodelet", "-c", config, "--check-config"});
  EXPECT_EQ(node_checked.code, 78) << node_checked.out;
  EXPECT_NE(node_checked.out.find("nodelet.http_listen: \"[::]:9311\": a wildcard address"), std::string::npos) << node_checked.out;
}

}  // namespace
}  // namespace themis::testing
