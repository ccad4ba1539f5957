// The fault matrix, nodes (docs/reliability.md "Fault matrix: nodes, partitions, workers"): a real
// coordinator, real nodelets and real rank processes on loopback with CURVE.
//  - a nodelet SIGKILLed and started again under the same name: the ranks it left behind are stopped, the
//    job resumes from its checkpoint;
//  - a nodelet cut off from the coordinator by a TCP proxy: it fences itself (its ranks checkpoint and
//    exit) before the job starts again elsewhere, and after the link heals its GPUs are used again;
//  - a rank SIGKILLed from outside: the job's failure is classified, the gang goes down, and the app
//    fails or retries as the retry policy says.
// Each test checks the invariants (tests/faults/invariants.h) after the fault and at the end, and prints
// what the fault cost (FAULT-COST lines: recovery time, work lost).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tcp_proxy.h"
#include "tests/faults/invariants.h"
#include "tests/integration/test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// One rank: counts steps of 0.1 s up to $1, saving the step (rank 0) every 10 steps and on SIGTERM, the
// checkpoint signal. It starts a helper process in its group, as data loaders do; a rank whose nodelet
// dies leaves that helper behind.
constexpr const char* kRankScript = R"(target=$1
ckpt="$THEMIS_CHECKPOINT_DIR/step"
mkdir -p "$THEMIS_CHECKPOINT_DIR"
step=$(cat "$ckpt" 2>/dev/null || echo 0)
echo "resumed at step $step"
save() { if [ "$THEMIS_RANK" = 0 ]; then echo "$step" > "$ckpt.tmp" && mv "$ckpt.tmp" "$ckpt"; fi; }
trap 'save; echo "checkpointed at step $step"; exit 0' TERM
sleep 300 &
helper=$!
while [ "$step" -lt "$target" ]; do
  sleep 0.1
  step=$((step + 1))
  echo "step $step"
  if [ $((step % 10)) = 0 ]; then save; fi
done
save
kill $helper
echo "finished at step $step"
)";

class NodeletFaults : public ::testing::Test {
 protected:
  void make_cluster(const std::string& coordinator_settings = "") {
    cluster_ = std::make_unique<TestCluster>(
        std::vector<NodeSpec>{{"node-a", "rack-1", {{0, 1}}}, {"node-b", "rack-1", {{0, 1}}}}, "60s",
        coordinator_settings);
    script_ = cluster_->write_file("rank.sh", kRankScript);
    cluster_->start_coordinator();
  }
  // Starts `hosts` and waits until `up` hosts are up.
  void start_nodes(const std::vector<std::string>& hosts, int up) {
    for (const auto& h : hosts) cluster_->start_node(h);
    ASSERT_TRUE(cluster_->wait_for([&] { return up_hosts() == up; }, 60s))
        << read_text(cluster_->coordinator_log());
  }
  int up_hosts() { return std::stoi(cluster_->sql("SELECT count(*) FROM hosts WHERE state = 'up'")); }

  std::int64_t submit(const std::string& name, int steps) {
    const std::string spec = "name = \"" + name + "\"\ncommand = [\"sh\", \"" + script_ + "\", \"" +
                             std::to_string(steps) + "\"]\n[resources]\ngpus_per_job = 2\n[checkpoint]\ndir = \"" +
                             cluster_->dir() + "/ckpt/{app}/{job}\"\ngrace_period = \"2s\"\n";
    const auto r = cluster_->ctl("alice", {"submit", "--parsable", cluster_->write_file(name + ".toml", spec)});
    EXPECT_EQ(r.code, 0) << r.out;
    const auto id = std::stoll(r.first_stdout_line());
    apps_.push_back(id);
    return id;
  }
  std::string job_state(std::int64_t app) {
    return cluster_->sql("SELECT state || ':' || attempt FROM jobs WHERE app_id = " + std::to_string(app) + " AND job = 0");
  }
  std::string lease_host(std::int64_t app) {
    return cluster_->sql("SELECT host FROM leases_active WHERE app = " + std::to_string(app) + " LIMIT 1");
  }
  std::string rank_log(const std::string& host, std::int64_t app, int attempt, int rank) {
    return read_text(cluster_->dir() + "/" + host + "/jobs/" + std::to_string(app) + "/0/attempt-" +
                     std::to_string(attempt) + "/rank-" + std::to_string(rank) + ".log");
  }
  // The last number after `label` in `log`, or -1.
  static int last_number(const std::string& log, const std::string& label) {
    const std::regex pattern(label + " ([0-9]+)");
    int value = -1;
    for (auto it = std::sregex_iterator(log.begin(), log.end(), pattern); it != std::sregex_iterator(); ++it) {
      value = std::stoi((*it)[1].str());
    }
    return value;
  }
  // Waits until the job runs and its rank 0 has passed `min_step`; returns the attempt that does. That is
  // 1 unless something failed before the test's fault: with the 0.3 s failure detection these tests use,
  // a coordinator whose disk stalls longer than that (seen under stress-ng's --hdd: a 511 ms commit) goes
  // unheard, and a nodelet fences itself as it must when it cannot tell that from a cut link
  // (docs/reliability.md, "Stress runs"). The production default (5 s x 3) is far above such stalls.
  int wait_running_with_checkpoint(std::int64_t app, int min_step) {
    int attempt = 0;
    EXPECT_TRUE(cluster_->wait_for([&] {
      const std::string host = lease_host(app);
      const std::string state = job_state(app);
      if (!state.starts_with("RUNNING:") || host.empty()) return false;
      attempt = std::stoi(state.substr(8));
      return last_number(rank_log(host, app, attempt, 0), "step") >= min_step;
    }, 60s)) << job_state(app) << "\n" << read_text(cluster_->coordinator_log());
    if (attempt > 1) std::printf("note: app %lld runs as attempt %d before the fault\n", static_cast<long long>(app), attempt);
    return attempt;
  }
  void expect_invariants(const std::string& when, std::chrono::milliseconds grace = 5000ms) {
    faults::InvariantInput input;
    input.db_path = cluster_->db_path();
    input.submitted_apps = apps_;
    input.cluster_dir = cluster_->dir();
    input.worker_grace = grace;
    const auto violations = faults::check_invariants(input);
    std::string all;
    for (const auto& v : violations) all += "  " + v + "\n";
    EXPECT_TRUE(violations.empty()) << when << ":\n" << all;
  }
  void wait_all_ended(const std::string& state, std::chrono::seconds timeout) {
    ASSERT_TRUE(cluster_->wait_for([&] {
      return cluster_->sql("SELECT count(*) FROM apps WHERE state = '" + state + "'") == std::to_string(apps_.size());
    }, timeout)) << cluster_->sql("SELECT group_concat(id || ':' || state) FROM apps") << "\n"
                 << read_text(cluster_->coordinator_log());
  }

  // Watches the job's rank processes in /proc until a later attempt runs and `old_attempt`'s are gone;
  // fails when both are alive at once, or when two attempts' processes share a GPU.
  struct Handover {
    double old_gone_s = -1;   // from the fault until no process of the old attempt was left
    double new_seen_s = -1;   // from the fault until the first process of a later attempt
    bool overlapped = false;
    std::string overlap;
  };
  Handover watch_handover(std::int64_t app, Clock::time_point fault, std::chrono::seconds timeout, int old_attempt = 1) {
    Handover h;
    while (seconds_since(fault) < static_cast<double>(timeout.count())) {
      const auto workers = faults::find_workers(cluster_->dir());
      bool old_alive = false, new_alive = false;
      std::map<std::pair<std::string, int>, std::int64_t> attempt_on_gpu;
      for (const auto& w : workers) {
        if (w.app != app) continue;
        old_alive |= w.attempt == old_attempt;
        new_alive |= w.attempt > old_attempt;
        for (const int d : w.devices) {
          const auto [it, fresh] = attempt_on_gpu.emplace(std::make_pair(w.host, d), w.attempt);
          if (!fresh && it->second != w.attempt && !h.overlapped) {
            h.overlapped = true;
            h.overlap = "attempts " + std::to_string(it->second) + " and " + std::to_string(w.attempt) + " on " + w.host +
                        " GPU " + std::to_string(d);
          }
        }
      }
      if (old_alive && new_alive && !h.overlapped) {
        h.overlapped = true;
        h.overlap = "processes of attempt " + std::to_string(old_attempt) + " and a later one alive at once";
      }
      if (!old_alive && h.old_gone_s < 0) h.old_gone_s = seconds_since(fault);
      if (old_alive) h.old_gone_s = -1;
      if (new_alive && h.new_seen_s < 0) h.new_seen_s = seconds_since(fault);
      if (h.new_seen_s >= 0 && h.old_gone_s >= 0) break;
      std::this_thread::sleep_for(10ms);
    }
    return h;
  }

  std::unique_ptr<TestCluster> cluster_;
  std::string script_;
  std::vector<std::int64_t> apps_;
};

TEST_F(NodeletFaults, KilledNodeletRestartedUnderItsNameLeavesNoRankOfTheLostLeaseRunning) {
  make_cluster("heartbeat_lives = 3\n");  // the figures in docs/reliability.md: D = 0.3 s
  start_nodes({"node-a", "node-b"}, 2);
  const auto app = submit("victim", 60);
  ASSERT_EQ(wait_running_with_checkpoint(app, 15), 1) << "a failure before the fault";
  const std::string victim = lease_host(app);
  const auto fault = Clock::now();
  cluster_->kill_node(victim, SIGKILL);
  // The rank's helper outlives the nodelet: it is not the nodelet's child.
  bool orphan = false;
  for (const auto& w : faults::find_workers(cluster_->dir())) orphan |= w.app == app && w.attempt == 1;
  EXPECT_TRUE(orphan) << "expected the rank's helper process to outlive its nodelet";
  cluster_->start_node(victim);
  const auto handover = watch_handover(app, fault, 60s);
  EXPECT_FALSE(handover.overlapped) << handover.overlap;
  ASSERT_GE(handover.old_gone_s, 0) << "ranks of attempt 1 still run";
  ASSERT_GE(handover.new_seen_s, 0) << job_state(app) << "\n" << read_text(cluster_->coordinator_log());
  EXPECT_LE(handover.old_gone_s, handover.new_seen_s);
  EXPECT_NE(read_text(cluster_->dir() + "/" + victim + ".log").find("processes of an earlier run of this nodelet"),
            std::string::npos);
  ASSERT_TRUE(cluster_->wait_for([&] { return job_state(app) == "RUNNING:2"; }, 60s)) << job_state(app);
  const double recovered_s = seconds_since(fault);
  const std::string host2 = lease_host(app);
  expect_invariants("after the restart");
  wait_all_ended("COMPLETED", 40s);
  const int reached = last_number(rank_log(victim, app, 1, 0), "step");
  const int resumed = last_number(rank_log(host2, app, 2, 0), "resumed at step");
  EXPECT_GE(resumed, 10);  // from a checkpoint, not from zero
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM events WHERE kind IN ('WorkersLost', 'NodeFail')"), "1");
  std::printf("FAULT-COST nodelet-kill-restart: old ranks gone %.2f s, attempt 2 ranks up %.2f s, job RUNNING again "
              "%.2f s after the kill (on %s); work lost %d steps of 0.1 s (reached %d, resumed at %d)\n",
              handover.old_gone_s, handover.new_seen_s, recovered_s, host2 == victim ? "the same host" : "the other host",
              reached - resumed, reached, resumed);
  expect_invariants("at the end");
}

TEST_F(NodeletFaults, PartitionedNodeletFencesItsRanksBeforeTheJobRunsElsewhereAndIsUsedAgainAfterTheHeal) {
  make_cluster("heartbeat_lives = 3\n");  // the figures in docs/reliability.md: D = 0.3 s
  const int coordinator_port = std::stoi(cluster_->endpoint().substr(cluster_->endpoint().rfind(':') + 1));
  faults::TcpProxy proxy(coordinator_port);
  std::string config = read_text(cluster_->dir() + "/node-a.toml");
  const auto at = config.find(cluster_->endpoint());
  ASSERT_NE(at, std::string::npos);
  config.replace(at, cluster_->endpoint().size(), proxy.endpoint());
  cluster_->write_file("node-a.toml", config);
  start_nodes({"node-a"}, 1);  // alone, so the app lands on the node behind the proxy
  const auto app = submit("cut-off", 120);  // still running on node-b when the second app comes
  const int first = wait_running_with_checkpoint(app, 15);
  const int next = first + 1;
  ASSERT_GE(first, 1);
  ASSERT_EQ(lease_host(app), "node-a");
  start_nodes({"node-b"}, 2);

  const auto fault = Clock::now();
  proxy.partition();
  const auto handover = watch_handover(app, fault, 60s, first);
  EXPECT_FALSE(handover.overlapped) << handover.overlap;
  ASSERT_GE(handover.old_gone_s, 0) << "the partitioned node's ranks still run";
  ASSERT_GE(handover.new_seen_s, 0) << job_state(app) << "\n" << read_text(cluster_->coordinator_log());
  EXPECT_LT(handover.old_gone_s, handover.new_seen_s);
  const std::string down_at = cluster_->sql("SELECT ts FROM events WHERE kind = 'HostDown' AND host = 'node-a'");
  ASSERT_FALSE(down_at.empty());
  const std::string running_next = "RUNNING:" + std::to_string(next);
  ASSERT_TRUE(cluster_->wait_for([&] { return job_state(app) == running_next; }, 60s)) << job_state(app);
  const double recovered_s = seconds_since(fault);
  EXPECT_EQ(lease_host(app), "node-b");
  const std::string node_log = read_text(cluster_->dir() + "/node-a.log");
  EXPECT_NE(node_log.find("fencing, stopping 2 workers"), std::string::npos) << node_log;
  // The fenced ranks got their checkpoint signal: the next attempt resumes where they stopped.
  const std::string old_log = rank_log("node-a", app, first, 0);
  const int checkpointed = last_number(old_log, "checkpointed at step");
  EXPECT_GE(checkpointed, 15) << old_log;
  ASSERT_TRUE(cluster_->wait_for([&] { return last_number(rank_log("node-b", app, next, 0), "resumed at step") >= 0; }, 10s));
  const int resumed = last_number(rank_log("node-b", app, next, 0), "resumed at step");
  EXPECT_EQ(resumed, checkpointed);
  expect_invariants("during the partition");

  proxy.heal();
  const auto healed = Clock::now();
  ASSERT_TRUE(cluster_->wait_for([&] { return up_hosts() == 2; }, 60s))
      << read_text(cluster_->coordinator_log()) << "\n--- node-a ---\n" << read_text(cluster_->dir() + "/node-a.log");
  const double rejoined_s = seconds_since(healed);
  // The healed node takes the next app: node-b's GPUs are held.
  const auto second = submit("after-heal", 10);
  ASSERT_TRUE(cluster_->wait_for([&] { return !lease_host(second).empty(); }, 60s))
      << cluster_->sql("SELECT group_concat(app_id || '_' || job || ':' || state || ':' || reason || ':' || attempt, ' ') FROM jobs")
      << "\n" << cluster_->sql("SELECT group_concat(kind || ' ' || coalesce(app_id, '') || ' ' || message, char(10)) FROM events")
      << "\n--- node-a ---\n" << read_text(cluster_->dir() + "/node-a.log");
  ASSERT_EQ(job_state(app), running_next);
  EXPECT_EQ(lease_host(second), "node-a");
  wait_all_ended("COMPLETED", 40s);
  std::printf("FAULT-COST partition: node declared down at +%.2f s, its ranks gone %.2f s, attempt 2 ranks up "
              "%.2f s, job RUNNING again %.2f s after the cut; work lost %d steps (checkpointed %d, resumed %d); "
              "re-registered %.2f s after the heal\n",
              std::stod(down_at) - (std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() -
                                    seconds_since(fault)),
              handover.old_gone_s, handover.new_seen_s, recovered_s, checkpointed - resumed, checkpointed, resumed,
              rejoined_s);
  expect_invariants("at the end");
}

class WorkerKilled : public NodeletFaults {
 protected:
  // Kills rank 0's own process (its process-group leader) of the app's attempt 1.
  Clock::time_point kill_rank0(std::int64_t app) {
    for (const auto& w : faults::find_workers(cluster_->dir())) {
      if (w.app == app && w.attempt == 1 && w.rank == 0 && ::getpgid(w.pid) == w.pid) {
        const auto at = Clock::now();
        ::kill(w.pid, SIGKILL);
        return at;
      }
    }
    ADD_FAILURE() << "no rank 0 process of app " << app;
    return Clock::now();
  }
  // Seconds from `fault` until no process of attempt 1 is left.
  double gang_down_s(std::int64_t app, Clock::time_point fault) {
    while (seconds_since(fault) < 20) {
      bool alive = false;
      for (const auto& w : faults::find_workers(cluster_->dir())) alive |= w.app == app && w.attempt == 1;
      if (!alive) return seconds_since(fault);
      std::this_thread::sleep_for(10ms);
    }
    return -1;
  }
};

TEST_F(WorkerKilled, OutsideSigkillIsClassedOutOfMemoryAndTheGangAndAppFailWithoutRetry) {
  make_cluster();
  start_nodes({"node-a", "node-b"}, 2);
  const auto app = submit("killed", 100);
  ASSERT_EQ(wait_running_with_checkpoint(app, 5), 1) << "a failure before the fault";
  const auto fault = kill_rank0(app);
  const double gang_s = gang_down_s(app, fault);
  EXPECT_GE(gang_s, 0) << "the other rank still runs";
  wait_all_ended("FAILED", 60s);
  const double failed_s = seconds_since(fault);
  EXPECT_EQ(cluster_->sql("SELECT reason FROM jobs WHERE app_id = " + std::to_string(app)), "OutOfMemory");
  EXPECT_EQ(cluster_->sql("SELECT class || ':' || exit_signal || ':' || decision FROM job_failures WHERE app_id = " +
                          std::to_string(app)),
            "out_of_memory:9:failed");
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM leases_active"), "0");
  std::printf("FAULT-COST worker-sigkill (default policy): gang down %.2f s, app FAILED %.2f s after the kill\n", gang_s,
              failed_s);
  expect_invariants("at the end");
}

TEST_F(WorkerKilled, OutsideSigkillIsRetriedFromTheCheckpointWhenThePolicyAllowsIt) {
  // The table ends the [coordinator] settings, so they are all given before it.
  make_cluster("probe_duration = \"0s\"\n\n[retry.out_of_memory]\nmax_retries = 1\nbackoff = \"1s\"\n");
  start_nodes({"node-a", "node-b"}, 2);
  const auto app = submit("killed-once", 40);
  ASSERT_EQ(wait_running_with_checkpoint(app, 12), 1) << "a failure before the fault";
  const std::string host1 = lease_host(app);
  const auto fault = kill_rank0(app);
  const double gang_s = gang_down_s(app, fault);
  EXPECT_GE(gang_s, 0) << "the other rank still runs";
  ASSERT_TRUE(cluster_->wait_for([&] { return job_state(app) == "RUNNING:2"; }, 60s))
      << job_state(app) << "\n" << read_text(cluster_->coordinator_log());
  const double recovered_s = seconds_since(fault);
  const std::string host2 = lease_host(app);
  expect_invariants("after the retry started");
  wait_all_ended("COMPLETED", 60s);
  const int reached = last_number(rank_log(host1, app, 1, 0), "step");
  const int resumed = last_number(rank_log(host2, app, 2, 0), "resumed at step");
  EXPECT_GE(resumed, 10);
  EXPECT_EQ(cluster_->sql("SELECT class || ':' || decision FROM job_failures WHERE app_id = " + std::to_string(app)),
            "out_of_memory:retry");
  std::printf("FAULT-COST worker-sigkill (1 retry, 1 s back-off): gang down %.2f s, job RUNNING again %.2f s after the "
              "kill; work lost %d steps (reached %d, resumed at %d)\n",
              gang_s, recovered_s, reached - resumed, reached, resumed);
  expect_invariants("at the end");
}

}  // namespace
}  // namespace themis::testing
