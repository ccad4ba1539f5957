#include <gtest/gtest.h>

#include <thread>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;

// Three nodelets with two virtual GPUs each, on two racks.
std::vector<NodeSpec> three_nodes() {
  return {{"node-a", "rack-1", {{0, 1}}}, {"node-b", "rack-1", {{0}, {1}}}, {"node-c", "rack-2", {{0, 1}}}};
}

std::string sleeper_spec(const std::string& name, int jobs, int gpus_per_job, const std::string& seconds = "60") {
  std::string values;
  for (int i = 0; i < jobs; ++i) values += (i ? ", " : "") + std::to_string(i);
  return "name = \"" + name + "\"\n"
         "command = [\"sh\", \"-c\", \"echo rank=$THEMIS_RANK world=$THEMIS_WORLD_SIZE dev=$CUDA_VISIBLE_DEVICES "
         "job=$THEMIS_JOB rdv=$THEMIS_RENDEZVOUS ckpt=$THEMIS_CHECKPOINT_DIR x={x}; exec sleep " + seconds + "\"]\n"
         "[hyperparameters]\nx = [" + values + "]\n"
         "[resources]\ngpus_per_job = " + std::to_string(gpus_per_job) + "\n"
         "[checkpoint]\ndir = \"/tmp/ckpt/{app}/{job}\"\ngrace_period = \"1s\"\n";
}

class ControlPlane : public ::testing::Test {
 protected:
  virtual std::string lease_duration() const { return "60s"; }
  virtual std::string settings() const { return ""; }
  void SetUp() override {
    cluster_ = std::make_unique<TestCluster>(three_nodes(), lease_duration(), settings());
    cluster_->start_coordinator();
    for (const auto& n : three_nodes()) cluster_->start_node(n.host);
    ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "3"; }, 10s))
        << read_text(cluster_->coordinator_log());
  }
  std::string submit(const std::string& user, const std::string& spec_text, const std::string& file) {
    const auto r = cluster_->ctl(user, {"submit", "--parsable", cluster_->write_file(file, spec_text)});
    EXPECT_EQ(r.code, 0) << r.out;
    return r.first_stdout_line();
  }
  std::unique_ptr<TestCluster> cluster_;
};

TEST_F(ControlPlane, SubmittedAppsGetLeasesAndWorkersWithTheirEnvironment) {
  const std::string app = submit("alice", sleeper_spec("sweep", 2, 2), "sweep.toml");
  ASSERT_EQ(app, "1");
  ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM jobs WHERE state = 'RUNNING'") == "2"; }, 10s))
      << read_text(cluster_->coordinator_log());
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM leases_active WHERE app = 1"), "4");
  EXPECT_EQ(cluster_->sql("SELECT gpus_held FROM apps_rho WHERE app = 1"), "4");
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM rounds_recent WHERE granted = 4"), "1");
  // A two-GPU job placed inside one machine: its two leases are on the same host.
  EXPECT_EQ(cluster_->sql("SELECT max(n) FROM (SELECT count(DISTINCT host) AS n FROM leases_active GROUP BY job)"), "1");
  // The rank logs carry the environment the nodelet set.
  const std::string host = cluster_->sql("SELECT host FROM leases_active WHERE job = 0 ORDER BY gpu LIMIT 1");
  ASSERT_TRUE(cluster_->wait_for([&] { return !read_text(cluster_->dir() + "/" + host + "/jobs/1/0/attempt-1/rank-1.log").empty(); }, 5s));
  const std::string log = read_text(cluster_->dir() + "/" + host + "/jobs/1/0/attempt-1/rank-1.log");
  EXPECT_NE(log.find("rank=1 world=2"), std::string::npos) << log;
  EXPECT_NE(log.find("job=1_0"), std::string::npos) << log;
  EXPECT_NE(log.find("rdv=tcp://127.0.0.1:"), std::string::npos) << log;
  EXPECT_NE(log.find("ckpt=/tmp/ckpt/1/0"), std::string::npos) << log;
  EXPECT_NE(log.find("x=0"), std::string::npos) << log;
  // themisctl sees the same thing.
  const auto leases = cluster_->ctl("bob", {"--json", "leases"});
  ASSERT_EQ(leases.code, 0) << leases.out;
  EXPECT_EQ(nlohmann::json::parse(leases.out)["items"].size(), 4u);
  const auto apps = cluster_->ctl("bob", {"apps"});
  EXPECT_NE(apps.out.find("sweep"), std::string::npos) << apps.out;
  const auto explain = cluster_->ctl("alice", {"explain", "1"});
  EXPECT_EQ(explain.code, 0);
  // Which GPUs it won depends on the order the nodelets registered in; explain must name exactly the
  // GPUs the app leases, and say how it got them.
  const std::string held = cluster_->sql("SELECT group_concat(gpu, ',') FROM (SELECT gpu FROM leases_active WHERE app = 1 ORDER BY gpu)");
  EXPECT_NE(explain.out.find("won [" + held + "] as leftover"), std::string::npos) << held << "\n" << explain.out;
}

TEST_F(ControlPlane, FinishedAndFailedJobsReleaseTheirLeasesWithExitStatusAndLogTail) {
  submit("alice", "name = \"ok\"\ncommand = [\"sh\", \"-c\", \"echo fine\"]\n", "ok.toml");
  submit("alice", "name = \"boom\"\ncommand = [\"sh\", \"-c\", \"echo about to fail; echo CUDA out of memory >&2; exit 3\"]\n",
         "boom.toml");
  ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM apps WHERE state IN ('COMPLETED','FAILED')") == "2"; }, 10s))
      << read_text(cluster_->coordinator_log());
  EXPECT_EQ(cluster_->sql("SELECT state FROM apps WHERE name = 'ok'"), "COMPLETED");
  EXPECT_EQ(cluster_->sql("SELECT state FROM apps WHERE name = 'boom'"), "FAILED");
  EXPECT_EQ(cluster_->sql("SELECT exit_code FROM jobs WHERE app_id = 2"), "3");
  EXPECT_NE(cluster_->sql("SELECT log_tail FROM jobs WHERE app_id = 2").find("CUDA out of memory"), std::string::npos);
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM leases_active"), "0");
}

// Lost hosts are what these tests are about: three lives of 100 ms, as the test name says.
class LostHost : public ControlPlane {
 protected:
  std::string settings() const override { return "heartbeat_lives = 3\n"; }
};

TEST_F(LostHost, KilledNodeletLosesItsLeasesAfterThreeHeartbeatsAndTheJobIsReauctioned) {
  submit("alice", sleeper_spec("two", 2, 2), "two.toml");
  ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM jobs WHERE state = 'RUNNING'") == "2"; }, 10s));
  const std::string victim = cluster_->sql("SELECT host FROM leases_active WHERE job = 0 LIMIT 1");
  const std::string spare = cluster_->sql(
      "SELECT h.name FROM hosts h WHERE NOT EXISTS (SELECT 1 FROM leases_active l WHERE l.host = h.name)");
  ASSERT_FALSE(spare.empty());
  const auto killed_at = std::chrono::steady_clock::now();
  cluster_->kill_node(victim, SIGKILL);
  ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT state FROM hosts WHERE name = '" + victim + "'") == "down"; }, 5s));
  const auto detected = std::chrono::steady_clock::now() - killed_at;
  // Down once silent for three lives of 100 ms, counted from the last heartbeat heard, which came up to one
  // interval before the kill (more when the nodelet ran late): so not before 200 ms less that lateness (235 ms
  // was seen under stress-ng, against a bound of 250 ms that assumed a heartbeat at the kill), and well within
  // two seconds. 150 ms still tells three lives from one.
  EXPECT_GE(detected, 150ms);
  EXPECT_LT(detected, 2s);
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM leases_active WHERE host = '" + victim + "'"), "0");
  // Re-auctioned onto the spare host, as attempt 2.
  ASSERT_TRUE(cluster_->wait_for([&] {
    return cluster_->sql("SELECT count(*) FROM leases_active WHERE job = 0 AND host = '" + spare + "'") == "2" &&
           cluster_->sql("SELECT state || ':' || attempt FROM jobs WHERE app_id = 1 AND job = 0") == "RUNNING:2";
  }, 10s)) << read_text(cluster_->coordinator_log());
  EXPECT_NE(cluster_->sql("SELECT count(*) FROM events WHERE kind = 'NodeFail'"), "0");
  // The other job was never disturbed.
  EXPECT_EQ(cluster_->sql("SELECT attempt FROM jobs WHERE app_id = 1 AND job = 1"), "1");
}

TEST_F(ControlPlane, CoordinatorKilledWithSigkillRecoversAppsLeasesAndKeepsScheduling) {
  submit("alice", sleeper_spec("survivor", 2, 2), "s.toml");
  ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM jobs WHERE state = 'RUNNING'") == "2"; }, 10s));
  const std::string leases_before = cluster_->sql("SELECT group_concat(lease_id || '@' || gpu) FROM leases_active");
  const std::string rounds_before = cluster_->sql("SELECT count(*) FROM rounds");
  cluster_->kill_coordinator(SIGKILL);
  cluster_->start_coordinator();
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM apps"), "1");
  EXPECT_EQ(cluster_->sql("SELECT group_concat(lease_id || '@' || gpu) FROM leases_active"), leases_before);
  // Nodelets re-register and report their workers; nothing is restarted.
  ASSERT_TRUE(cluster_->wait_for([&] {
    return cluster_->sql("SELECT count(DISTINCT host) FROM events WHERE kind = 'HostUp'") == "3";
  }, 10s)) << read_text(cluster_->coordinator_log());
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(cluster_->sql("SELECT group_concat(state || ':' || attempt) FROM jobs"), "RUNNING:1,RUNNING:1");
  EXPECT_EQ(cluster_->sql("SELECT group_concat(lease_id || '@' || gpu) FROM leases_active"), leases_before);
  // Rounds go on: a new app gets the two free GPUs.
  submit("bob", sleeper_spec("later", 1, 2), "later.toml");
  ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM leases_active WHERE app = 2") == "2"; }, 10s))
      << read_text(cluster_->coordinator_log());
  EXPECT_GT(std::stoi(cluster_->sql("SELECT count(*) FROM rounds")), std::stoi(rounds_before));
}

TEST_F(ControlPlane, UnenrolledKeyIsRefused) {
  const auto r = cluster_->ctl("mallory", {"apps"});
  EXPECT_EQ(r.code, 77) << r.out;  // the ZAP handler refused the handshake, and themisctl says so
  EXPECT_NE(r.out.find("key not enrolled"), std::string::npos) << r.out;
  EXPECT_NE(read_text(cluster_->coordinator_log()).find("rejected unenrolled key"), std::string::npos);
  const auto plain = run_command({std::string(THEMIS_BIN_DIR) + "/themisctl", "--coordinator", cluster_->endpoint(),
                                  "--insecure", "--timeout-ms", "1000", "apps"});
  EXPECT_EQ(plain.code, 78) << plain.out;  // no CURVE at all: the mechanisms differ
  EXPECT_NE(plain.out.find("security mismatch"), std::string::npos) << plain.out;
}

TEST_F(ControlPlane, UsersCancelOnlyTheirOwnAppsAdminsAny) {
  submit("alice", sleeper_spec("mine", 1, 1), "mine.toml");
  submit("alice", sleeper_spec("mine-too", 1, 1), "mine2.toml");
  const auto denied = cluster_->ctl("bob", {"cancel", "1"});
  EXPECT_EQ(denied.code, 77) << denied.out;
  EXPECT_NE(denied.out.find("belongs to alice"), std::string::npos) << denied.out;
  EXPECT_EQ(cluster_->ctl("bob", {"cancel", "99"}).code, 102);
  EXPECT_EQ(cluster_->ctl("alice", {"cancel", "1"}).code, 0);
  EXPECT_EQ(cluster_->ctl("root", {"cancel", "2"}).code, 0);
  ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT group_concat(state) FROM apps") == "CANCELLED,CANCELLED"; }, 30s))
      << cluster_->sql("SELECT group_concat(app_id || '_' || job || ':' || state || ':' || attempt) FROM jobs") << "\n"
      << read_text(cluster_->coordinator_log()) << read_text(cluster_->dir() + "/node-a.log")
      << read_text(cluster_->dir() + "/node-b.log") << read_text(cluster_->dir() + "/node-c.log");
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM leases_active"), "0");
  // A node key cannot submit.
  const auto node = cluster_->ctl("node-a", {"submit", cluster_->write_file("x.toml", sleeper_spec("x", 1, 1))});
  EXPECT_EQ(node.code, 77) << node.out;
}

TEST_F(ControlPlane, BadSpecsAreRejectedWithTheirLocation) {
  const auto r = cluster_->ctl("alice", {"submit", cluster_->write_file("bad.toml", "name = \"x\"\ncommand = [\"true\"]\ngpus = 3\n")});
  EXPECT_EQ(r.code, 65) << r.out;
  EXPECT_NE(r.out.find("bad.toml:3:1: gpus: unknown key"), std::string::npos) << r.out;
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM apps"), "0");
}

class ShortLeases : public ControlPlane {
 protected:
  std::string lease_duration() const override { return "1s"; }
};

TEST_F(ShortLeases, ExpiringLeasesAreRenewedWhenUncontestedAndPreemptedForAWaitingApp) {
  submit("alice", sleeper_spec("first", 3, 2), "first.toml");
  ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM jobs WHERE state = 'RUNNING'") == "3"; }, 10s));
  // Alone on the cluster: every expiry renews in place, nothing restarts.
  ASSERT_TRUE(cluster_->wait_for([&] { return std::stoi(cluster_->sql("SELECT count(*) FROM events WHERE kind = 'LeaseRenewed'")) >= 3; }, 5s))
      << read_text(cluster_->coordinator_log());
  const auto history = [&] {
    return cluster_->sql("SELECT group_concat(printf('%.3f', ts) || ' ' || kind || ' ' || coalesce(app_id, '') || '_' || "
                         "coalesce(job, '') || ' ' || coalesce(host, '') || ' ' || message, char(10)) FROM events") +
           "\n" + read_text(cluster_->coordinator_log());
  };
  EXPECT_EQ(cluster_->sql("SELECT group_concat(attempt) FROM jobs WHERE app_id = 1"), "1,1,1") << history();
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM leases_active"), "6");
  // A second app arrives while every GPU is leased: at the next expiries it gets GPUs and a job of
  // the first app is preempted (stopped within its grace period, back to PENDING).
  submit("bob", sleeper_spec("second", 1, 2), "second.toml");
  EXPECT_EQ(cluster_->sql("SELECT reason FROM jobs WHERE app_id = 2"), "New");
  ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT state FROM jobs WHERE app_id = 2") == "RUNNING"; }, 15s))
      << read_text(cluster_->coordinator_log());
  EXPECT_NE(cluster_->sql("SELECT count(*) FROM events WHERE kind = 'LeaseExpired' AND app_id = 1"), "0") << history();
  EXPECT_NE(cluster_->sql("SELECT count(*) FROM events WHERE kind = 'Requeued' AND app_id = 1"), "0");
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM leases_active WHERE app = 2"), "2");
}

}  // namespace
}  // namespace themis::testing
