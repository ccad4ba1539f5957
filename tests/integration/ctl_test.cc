// themisctl's list commands against a real coordinator and nodelet: the REASON of `apps` is explain's
// verdict, PROGRESS comes from the launcher's report, -o/--json and the filters work anywhere on the
// line, and `history` accounts for finished apps.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "protocol_launcher.h"
#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::vector<NodeSpec> one_node() { return {{"node-a", "rack-1", {{0, 1}}}}; }

std::string app_spec(const std::string& name, int jobs, const std::string& command) {
  std::string values;
  for (int i = 0; i < jobs; ++i) values += (i ? ", " : "") + std::to_string(i);
  return "name = \"" + name + "\"\ncommand = " + command + "\n[hyperparameters]\nx = [" + values + "]\n"
         "[resources]\ngpus_per_job = 1\n[checkpoint]\ngrace_period = \"1s\"\n";
}

class Ctl : public ::testing::Test {
 protected:
  // Two GPUs; admission admits apps while their demand is at most 3 GPUs (1.5 × 2).
  void SetUp() override {
    cluster_ = std::make_unique<TestCluster>(one_node(), "60s", "[admission]\nmax_demand_ratio = 1.5\n");
    cluster_->start_coordinator();
    cluster_->start_node("node-a");
    ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "1"; }, 20s))
        << read_text(cluster_->coordinator_log());
  }
  std::string submit(const std::string& user, const std::string& spec) {
    const auto r = cluster_->ctl(user, {"submit", "--parsable", cluster_->write_file("spec" + std::to_string(++specs_) + ".toml", spec)});
    EXPECT_EQ(r.code, 0) << r.out;
    return r.first_stdout_line();
  }
  json ctl_json(const std::vector<std::string>& args) {
    const auto r = cluster_->ctl("alice", args);
    EXPECT_EQ(r.code, 0) << r.out << read_text(cluster_->coordinator_log());
    return json::parse(r.stdout_text);
  }
  bool wait_sql(const std::string& query, const std::string& expected) {
    return cluster_->wait_for([&] { return cluster_->sql(query) == expected; }, 30s);
  }
  static json item(const json& doc, int app) {
    for (const auto& i : doc["items"]) {
      if (i["app"] == app) return i;
    }
    return json();
  }
  std::unique_ptr<TestCluster> cluster_;
  int specs_ = 0;
};

TEST_F(Ctl, AppsReasonIsExplainsVerdictAndProgressIsTheLaunchersReport) {
  submit("alice", app_spec("hog", 2, "[\"sleep\", \"120\"]"));
  ASSERT_TRUE(wait_sql("SELECT count(*) FROM jobs WHERE app_id = 1 AND state = 'RUNNING'", "2")) << read_text(cluster_->coordinator_log());
  submit("bob", app_spec("waiter", 1, "[\"sleep\", \"120\"]"));   // demand 3: admitted, no GPU free
  submit("alice", app_spec("late", 1, "[\"sleep\", \"120\"]"));   // demand 4: queued by admission
  zmq::context_t context(1);
  ProtocolLauncher launcher(context, *cluster_, "alice", 1);
  ASSERT_TRUE(cluster_->wait_for([&] { return launcher.pump_all([](const net::InMessage&) {}); }, 10s));
  net::OutMessage status(2);
  auto s = status.body().initAppStatus();
  s.setApp(1);
  s.setRho(1.25);
  s.setProgress(0.24);
  s.setIterationsDone(1200);
  s.setIterationsPlanned(5000);
  s.setPhase("train");
  launcher.send(status);
  ASSERT_TRUE(cluster_->wait_for([&] { return item(ctl_json({"apps", "-o", "json"}), 1)["progress"] == "1200/5000 train"; }, 10s))
      << ctl_json({"apps", "-o", "json"}).dump();

  const json apps = ctl_json({"apps", "--json"});  // --json after the subcommand
  ASSERT_EQ(apps["items"].size(), 3u) << apps.dump();
  for (const auto& a : apps["items"]) {
    const json verdict = ctl_json({"explain", a["app"].dump(), "-o", "json"})["verdict"];
    if (a["state"] == "PENDING" || a["state"] == "QUEUED") {
      EXPECT_EQ(a["reason"], verdict["reason"]) << a.dump() << "\n" << verdict.dump();
    } else {
      EXPECT_TRUE(a["reason"].is_null()) << a.dump();
    }
  }
  EXPECT_EQ(item(apps, 2)["state"], "PENDING");
  EXPECT_EQ(item(apps, 2)["reason"], "Resources");
  EXPECT_EQ(item(apps, 2)["progress"], "waiting");
  EXPECT_EQ(item(apps, 3)["state"], "QUEUED");
  EXPECT_EQ(item(apps, 3)["reason"], "Admission");
  EXPECT_EQ(item(apps, 3)["progress"], "queued");
  EXPECT_TRUE(item(apps, 3)["admission"].get<std::string>().find("exceed cap 3") != std::string::npos) << apps.dump();

  const auto table = cluster_->ctl("alice", {"apps"});
  ASSERT_EQ(table.code, 0) << table.out;
  EXPECT_NE(table.stdout_text.find("PROGRESS"), std::string::npos) << table.stdout_text;
  EXPECT_NE(table.stdout_text.find("1200/5000 train"), std::string::npos) << table.stdout_text;
  const auto late = table.stdout_text.find("late");
  ASSERT_NE(late, std::string::npos) << table.stdout_text;
  EXPECT_NE(table.stdout_text.substr(late, table.stdout_text.find('\n', late) - late).find("Admission"), std::string::npos)
      << table.stdout_text;
  const auto wide = cluster_->ctl("alice", {"-o", "wide", "apps"});
  EXPECT_NE(wide.stdout_text.find("ADMISSION"), std::string::npos) << wide.out;
  EXPECT_EQ(table.stdout_text.find("ADMISSION"), std::string::npos) << table.stdout_text;

  // Filters, after the subcommand like the output flag.
  auto ids = [](const json& doc) {
    std::vector<int> v;
    for (const auto& i : doc["items"]) v.push_back(i["app"].get<int>());
    return v;
  };
  EXPECT_EQ(ids(ctl_json({"apps", "--user", "bob", "-o", "json"})), std::vector<int>{2});
  EXPECT_EQ(ids(ctl_json({"apps", "--state", "queued,pending", "-ojson"})), (std::vector<int>{2, 3}));
  EXPECT_EQ(ids(ctl_json({"apps", "--since", "1h", "--json"})), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(ids(ctl_json({"apps", "--since", "2099-01-01", "--json"})), std::vector<int>{});
  EXPECT_EQ(ctl_json({"leases", "--user", "bob", "--json"})["items"].size(), 0u);
  EXPECT_EQ(ctl_json({"leases", "--user", "alice", "--json"})["items"].size(), 2u);
  EXPECT_EQ(ctl_json({"hosts", "--state", "up", "--json"})["items"].size(), 1u);

  // Usage errors name what is wrong, exit 2.
  const auto bad_output = cluster_->ctl("alice", {"apps", "-o", "yaml"});
  EXPECT_EQ(bad_output.code, 2);
  EXPECT_NE(bad_output.out.find("'yaml'"), std::string::npos) << bad_output.out;
  const auto bad_state = cluster_->ctl("alice", {"apps", "--state", "sleeping"});
  EXPECT_EQ(bad_state.code, 2);
  EXPECT_NE(bad_state.out.find("'SLEEPING'"), std::string::npos) << bad_state.out;
  EXPECT_EQ(cluster_->ctl("alice", {"whoami", "--watch"}).code, 2);
}

TEST_F(Ctl, WatchRedrawsAListUntilInterrupted) {
  submit("alice", app_spec("watched", 1, "[\"sleep\", \"120\"]"));
  // -o json under --watch: one document per redraw, one per line. SIGINT after 3 s at 0.2 s a redraw: about
  // 15 documents, at least 3 however loaded the machine.
  const Output watched = run_command({"/usr/bin/timeout", "-s", "INT", "3", std::string(THEMIS_BIN_DIR) + "/themisctl",
                                      "--coordinator", cluster_->endpoint(), "--key", cluster_->key("alice", true),
                                      "--server-key", cluster_->key("coordinator", false), "apps", "--watch", "0.2",
                                      "-o", "json"});
  int documents = 0;
  std::istringstream lines(watched.stdout_text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    const json doc = json::parse(line);
    EXPECT_EQ(doc["items"].at(0)["name"], "watched") << line;
    ++documents;
  }
  EXPECT_GE(documents, 3) << watched.out;
}

TEST_F(Ctl, HistoryListsFinishedAppsWithTotalsPerUser) {
  submit("alice", app_spec("quick", 2, "[\"true\"]"));
  ASSERT_TRUE(wait_sql("SELECT state FROM apps WHERE id = 1", "COMPLETED")) << read_text(cluster_->coordinator_log());
  submit("bob", app_spec("sleepy", 1, "[\"sleep\", \"120\"]"));
  ASSERT_TRUE(wait_sql("SELECT state FROM jobs WHERE app_id = 2", "RUNNING")) << read_text(cluster_->coordinator_log());
  submit("alice", app_spec("running", 1, "[\"sleep\", \"120\"]"));
  ASSERT_EQ(cluster_->ctl("bob", {"cancel", "2"}).code, 0);
  ASSERT_TRUE(wait_sql("SELECT state FROM apps WHERE id = 2", "CANCELLED")) << read_text(cluster_->coordinator_log());

  const json h = ctl_json({"history", "-o", "json"});
  ASSERT_EQ(h["items"].size(), 2u) << h.dump();  // app 3 has not finished
  EXPECT_EQ(h["items"][0]["app"], 2);
  EXPECT_EQ(h["items"][0]["state"], "CANCELLED");
  EXPECT_EQ(h["items"][0]["exit"], "-");
  EXPECT_EQ(h["items"][1]["app"], 1);
  EXPECT_EQ(h["items"][1]["exit"], "0:0");
  EXPECT_EQ(h["items"][1]["jobs"], 2);
  const double jct = std::stod(cluster_->sql("SELECT finished_at - submitted_at FROM apps WHERE id = 1"));
  EXPECT_NEAR(h["items"][1]["jct_s"].get<double>(), jct, 0.001);
  const double gpu_hours = std::stod(cluster_->sql(
      "SELECT sum(min(coalesce(released_at, expiry), expiry) - start) / 3600.0 FROM leases WHERE app_id = 2"));
  EXPECT_NEAR(h["items"][0]["gpu_hours"].get<double>(), gpu_hours, 0.0001);
  EXPECT_GT(gpu_hours, 0);
  ASSERT_EQ(h["totals"].size(), 2u) << h.dump();
  for (const auto& t : h["totals"]) {
    EXPECT_EQ(t["apps"], 1) << t.dump();
    EXPECT_EQ(t["user"] == "alice" ? t["completed"] : t["cancelled"], 1) << t.dump();
  }

  EXPECT_EQ(ctl_json({"history", "--user", "alice", "--json"})["items"].size(), 1u);
  EXPECT_EQ(ctl_json({"history", "--state", "cancelled", "--json"})["items"].size(), 1u);
  EXPECT_EQ(ctl_json({"history", "--since", "1h", "--json"})["items"].size(), 2u);
  EXPECT_EQ(ctl_json({"history", "--until", "2000-01-01", "--json"})["totals"].size(), 0u);
  const auto table = cluster_->ctl("alice", {"history", "--since", "1h"});
  ASSERT_EQ(table.code, 0) << table.out;
  EXPECT_NE(table.stdout_text.find("GPU_HOURS"), std::string::npos) << table.stdout_text;
  EXPECT_NE(table.stdout_text.find("Per user, apps that finished from 1h"), std::string::npos) << table.stdout_text;
  const auto backwards = cluster_->ctl("alice", {"history", "--since", "1h", "--until", "2h"});
  EXPECT_EQ(backwards.code, 65) << backwards.out;
}

TEST_F(Ctl, LogsStreamAJobsOutputFromItsNodeletToItsOwnerAndAdmins) {
  submit("alice", app_spec("talker", 1, "[\"sh\", \"-c\", \"echo first-line; sleep 3; echo last-line\"]"));
  ASSERT_TRUE(wait_sql("SELECT state FROM jobs WHERE app_id = 1", "RUNNING")) << read_text(cluster_->coordinator_log());
  Output first;
  ASSERT_TRUE(cluster_->wait_for([&] {
    first = cluster_->ctl("alice", {"logs", "1"});
    return first.code == 0 && first.stdout_text == "first-line\n";
  }, 10s)) << first.out;
  const auto bob = cluster_->ctl("bob", {"logs", "1/0"});
  EXPECT_EQ(bob.code, 77) << bob.out;
  EXPECT_EQ(bob.out.find("first-line"), std::string::npos) << bob.out;
  const auto root = cluster_->ctl("root", {"logs", "1_0"});
  EXPECT_EQ(root.code, 0) << root.out;
  EXPECT_NE(root.stdout_text.find("first-line"), std::string::npos) << root.out;
  // -f follows the output until the attempt ends: it returns with the line written 3 s after the first.
  const auto followed = cluster_->ctl("alice", {"logs", "1", "-f"});
  EXPECT_EQ(followed.code, 0) << followed.out;
  EXPECT_EQ(followed.stdout_text, "first-line\nlast-line\n");
  ASSERT_TRUE(wait_sql("SELECT state FROM apps WHERE id = 1", "COMPLETED")) << read_text(cluster_->coordinator_log());
  const auto after = cluster_->ctl("alice", {"logs", "1"});  // the job has ended: read where it ran
  EXPECT_EQ(after.code, 0) << after.out;
  EXPECT_EQ(after.stdout_text, "first-line\nlast-line\n");
  EXPECT_EQ(cluster_->ctl("alice", {"logs", "1/5"}).code, 102);
  EXPECT_EQ(cluster_->ctl("alice", {"logs", "1", "--attempt", "9"}).code, 102);
  EXPECT_EQ(cluster_->ctl("alice", {"logs", "one"}).code, 2);
}

}  // namespace
}  // namespace themis::testing
