// A launcher's placement slowdowns on the wire (AppStatus.slowdowns), through a real coordinator and nodelets:
// the coordinator hands them to the policy's app model, so they are in every round record from then on (where the
// leftover's placement rule and the machine hold read them, docs/arbiter.md), a malformed list is logged and
// ignored with the last good one kept, and every recorded round still replays to the plan the coordinator applied.
// The records carry each app's leased GPU-seconds too (its attained service, which Tiresias orders by).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "policy/arbiter/policies/registry.h"
#include "protocol_launcher.h"
#include "recorded_rounds.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// `summary` differs per status, so that the coordinator records each (a LauncherStatus event) and the test can
// tell when it has taken one in.
void send_status(ProtocolLauncher& launcher, const std::vector<double>& slowdowns, const std::string& summary) {
  net::OutMessage out(7);
  auto status = out.body().initAppStatus();
  status.setApp(launcher.app());
  status.setRho(1.5);
  status.setDemand(0);
  status.setPhase("train");
  status.setSummary(summary);
  auto list = status.initSlowdowns(static_cast<unsigned>(slowdowns.size()));
  for (unsigned i = 0; i < slowdowns.size(); ++i) list.set(i, slowdowns[i]);
  launcher.send(out);
}

TEST(PlacementSlowdowns, ALaunchersSlowdownsReachTheRoundRecordsAndAMalformedListIsIgnored) {
  TestCluster cluster({{"node-a", "rack-1", {{0, 1}}}, {"node-b", "rack-1", {{0, 1}}}});
  ASSERT_TRUE(cluster.start()) << read_text(cluster.coordinator_log());
  auto submit = [&](const std::string& name) { return cluster.submit("alice", name, one_gpu_sleeper(name, 120)); };
  const std::string app = submit("measured");
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM jobs WHERE state = 'RUNNING'") == "1"; }, 30s))
      << read_text(cluster.coordinator_log());
  zmq::context_t context(1);
  ProtocolLauncher launcher(context, cluster, "alice", std::stoll(app));
  ASSERT_TRUE(cluster.wait_for([&] { return launcher.pump_all([](const net::InMessage&) {}); }, 10s));

  // The slowdowns of the app in the last round record that lists it, as JSON ("null": none there).
  auto recorded = [&] {
    return cluster.sql("SELECT coalesce((SELECT json_extract(value, '$.slowdowns') FROM round_records, json_each(opened, '$.apps') "
                       "WHERE json_extract(value, '$.id') = " + app + " ORDER BY round_id DESC LIMIT 1), 'null')");
  };
  auto taken_in = [&](const std::string& summary) {
    return cluster.wait_for([&] {
      return cluster.sql("SELECT count(*) FROM events WHERE kind = 'LauncherStatus' AND app_id = " + app +
                         " AND json_extract(message, '$.summary') = '" + summary + "'") == "1";
    }, 10s);
  };
  send_status(launcher, {1.0, 1.0, 2.5, 3.0}, "first");
  ASSERT_TRUE(taken_in("first")) << read_text(cluster.coordinator_log());
  // A round opens when another app arrives; its record carries the reported slowdowns.
  submit("second");
  ASSERT_TRUE(cluster.wait_for([&] { return recorded() == "[1.0,1.0,2.5,3.0]"; }, 20s))
      << recorded() << "\n" << read_text(cluster.coordinator_log());

  send_status(launcher, {1.0, 0.5, 2.0, 2.0}, "second");
  ASSERT_TRUE(cluster.wait_for([&] {
    return read_text(cluster.coordinator_log()).find("app " + app + ": AppStatus slowdowns: value 1 (machine) is 0.500000, "
                                                     "expected a finite number >= 1; ignored") != std::string::npos;
  }, 10s)) << read_text(cluster.coordinator_log());
  const std::string rounds_before = cluster.sql("SELECT count(*) FROM round_records");
  submit("third");
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM round_records") != rounds_before; }, 20s))
      << read_text(cluster.coordinator_log());
  EXPECT_EQ(recorded(), "[1.0,1.0,2.5,3.0]");
  // The app has held one GPU since its job started: its attained service is that lease time so far.
  const double attained = std::stod(cluster.sql(
      "SELECT json_extract(value, '$.attained_service') FROM round_records, json_each(opened, '$.apps') WHERE "
      "json_extract(value, '$.id') = " + app + " ORDER BY round_id DESC LIMIT 1"));
  const double held_for = std::stod(cluster.sql(
      "SELECT (SELECT max(json_extract(opened, '$.now')) FROM round_records) - min(start) FROM leases WHERE app_id = " + app));
  EXPECT_GT(attained, 0);
  EXPECT_NEAR(attained, held_for, 1e-6);
  EXPECT_EQ(cluster.ctl("alice", {"apps"}).code, 0);  // the coordinator still answers

  // Every recorded round replays to the plan the coordinator applied, slowdowns and all.
  arbiter::policies::PolicySettings settings;  // the coordinator's defaults
  settings.lease = 60;
  const int replayed = expect_recorded_rounds_replay(cluster, settings);
  EXPECT_GE(replayed, 3);
}

}  // namespace
}  // namespace themis::testing
