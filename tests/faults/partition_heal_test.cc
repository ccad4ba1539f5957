// The fault matrix, a partition that heals between D and 2D (docs/reliability.md "Fault matrix: nodes,
// partitions, workers"; D = heartbeat interval × lives, net/fencing.h): the coordinator has declared the
// host down (after D), but the nodelet has not fenced its ranks yet (at 2D). It registers again with the
// ranks of the lost attempt still running; the coordinator stops them ("no lease") and keeps the lost job
// out of rounds until past the fence deadline. Meanwhile the host's GPUs are free in the database and
// another app waiting for GPUs is granted them: its ranks must not start beside the old ones while these
// checkpoint. Real coordinator, nodelet and rank processes on loopback with CURVE; the cut is a TCP proxy.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tcp_proxy.h"
#include "tests/faults/invariants.h"
#include "tests/integration/test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Heartbeats every 100 ms with 40 lives: D = 4 s, so a heal right after the coordinator declares the host
// down lands about 4 s before the nodelet would fence (2D), even on a loaded 2-core box.
constexpr int kLives = 40;
constexpr double kDownBoundS = 0.1 * kLives;

// One rank: counts steps of 0.1 s up to $1, saving the step (rank 0) every 10 steps. Its checkpoint on
// SIGTERM takes 2 s, as a real model's does: the window in which a careless launch would share its GPU.
constexpr const char* kRankScript = R"(target=$1
ckpt="$THEMIS_CHECKPOINT_DIR/step"
mkdir -p "$THEMIS_CHECKPOINT_DIR"
step=$(cat "$ckpt" 2>/dev/null || echo 0)
echo "resumed at step $step"
save() { if [ "$THEMIS_RANK" = 0 ]; then echo "$step" > "$ckpt.tmp" && mv "$ckpt.tmp" "$ckpt"; fi; }
trap 'echo "checkpointing at step $step"; sleep 2; save; echo "checkpointed at step $step"; exit 0' TERM
while [ "$step" -lt "$target" ]; do
  sleep 0.1
  step=$((step + 1))
  echo "step $step"
  if [ $((step % 10)) = 0 ]; then save; fi
done
save
echo "finished at step $step"
)";

// The last number after `label` in `log`, or -1.
int last_number(const std::string& log, const std::string& label) {
  const std::regex pattern(label + " ([0-9]+)");
  int value = -1;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), pattern); it != std::sregex_iterator(); ++it) {
    value = std::stoi((*it)[1].str());
  }
  return value;
}

class PartitionHealed : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<TestCluster>(std::vector<NodeSpec>{{"node-a", "rack-1", {{0, 1}}}}, "60s",
                                             "heartbeat_lives = " + std::to_string(kLives) + "\n");
    script_ = cluster_->write_file("rank.sh", kRankScript);
    cluster_->start_coordinator();
    const int coordinator_port = std::stoi(cluster_->endpoint().substr(cluster_->endpoint().rfind(':') + 1));
    proxy_ = std::make_unique<faults::TcpProxy>(coordinator_port);
    std::string node = read_text(cluster_->dir() + "/node-a.toml");
    const auto at = node.find(cluster_->endpoint());
    ASSERT_NE(at, std::string::npos);
    node.replace(at, cluster_->endpoint().size(), proxy_->endpoint());
    cluster_->write_file("node-a.toml", node);
    cluster_->start_node("node-a");
    ASSERT_TRUE(cluster_->wait_for([&] { return sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "1"; }, 60s))
        << read_text(cluster_->coordinator_log());
  }

  std::string sql(const std::string& query) { return cluster_->sql(query); }
  std::int64_t submit(const std::string& name, int steps) {
    const std::string spec = "name = \"" + name + "\"\ncommand = [\"sh\", \"" + script_ + "\", \"" + std::to_string(steps) +
                             "\"]\n[resources]\ngpus_per_job = 2\n[checkpoint]\ndir = \"" + cluster_->dir() +
                             "/ckpt/{app}/{job}\"\ngrace_period = \"10s\"\n";
    const auto r = cluster_->ctl("alice", {"submit", "--parsable", cluster_->write_file(name + ".toml", spec)});
    EXPECT_EQ(r.code, 0) << r.out;
    const auto id = std::stoll(r.first_stdout_line());
    apps_.push_back(id);
    return id;
  }
  std::string job_state(std::int64_t app) {
    return sql("SELECT state || ':' || attempt FROM jobs WHERE app_id = " + std::to_string(app) + " AND job = 0");
  }
  std::string rank_log(std::int64_t app, int attempt, int rank) {
    return read_text(cluster_->dir() + "/node-a/jobs/" + std::to_string(app) + "/0/attempt-" + std::to_string(attempt) +
                     "/rank-" + std::to_string(rank) + ".log");
  }
  std::string diagnostics() {
    return "jobs: " + sql("SELECT group_concat(app_id || '_' || job || ' ' || state || ':' || attempt || ' ' || reason, ', ') FROM jobs") +
           "\nevents:\n" + sql("SELECT group_concat(kind || ' ' || coalesce(app_id, '') || ' ' || coalesce(host, '') || ' ' || message, char(10)) FROM events") +
           "\n--- coordinator ---\n" + read_text(cluster_->coordinator_log()) + "\n--- node-a ---\n" +
           read_text(cluster_->dir() + "/node-a.log");
  }
  std::vector<std::string> invariants(std::chrono::milliseconds grace) {
    faults::InvariantInput input(cluster_->db_path(), apps_, true, cluster_->dir(), grace);
    return faults::check_invariants(input);
  }

  std::unique_ptr<TestCluster> cluster_;
  std::unique_ptr<faults::TcpProxy> proxy_;
  std::string script_;
  std::vector<std::int64_t> apps_;
};

// What /proc showed from the cut until both apps ended, sampled every 10 ms.
struct Watch {
  double old_gone_s = -1;      // no rank process of the lost attempt left
  double waiting_up_s = -1;    // the first rank process of the app that got the healed host's GPUs
  double relaunched_s = -1;    // the first rank process of the lost job's next attempt
  std::string shared;          // the first sample in which two attempts' processes shared a GPU
  int samples = 0;
};

TEST_F(PartitionHealed, OldRanksAreStoppedBeforeAnyNewLeaseHolderStartsOnTheirGpus) {
  const auto victim = submit("cut-off", 120);
  ASSERT_TRUE(cluster_->wait_for([&] { return job_state(victim) == "RUNNING:1" && last_number(rank_log(victim, 1, 0), "step") >= 15; }, 60s))
      << diagnostics();
  // Waits for GPUs the victim holds; it gets them when the host comes back.
  const auto waiting = submit("waiting", 20);
  ASSERT_TRUE(cluster_->wait_for([&] { return job_state(waiting) == "PENDING:0"; }, 30s)) << diagnostics();

  const auto cut = Clock::now();
  proxy_->partition();
  ASSERT_TRUE(cluster_->wait_for([&] { return sql("SELECT count(*) FROM events WHERE kind = 'HostDown'") == "1"; }, 60s))
      << diagnostics();
  const double down_s = seconds_since(cut);
  proxy_->heal();
  const double healed_s = seconds_since(cut);

  // The invariants, sampled by a thread of their own: a check waits out a worker's grace period, and /proc
  // must be read every 10 ms meanwhile.
  std::atomic<bool> ended{false};
  std::mutex violations_mutex;
  std::vector<std::string> violations;
  std::thread sampler([&] {
    while (!ended) {
      const auto found = invariants(5000ms);
      const std::lock_guard<std::mutex> lock(violations_mutex);
      for (const auto& v : found) violations.push_back("at +" + std::to_string(seconds_since(cut)) + " s: " + v);
      std::this_thread::sleep_for(200ms);
    }
  });
  Watch watch;
  while (seconds_since(cut) < 90 && !ended) {
    std::map<std::pair<std::string, int>, std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>>> on_gpu;
    bool old_alive = false;
    const double t = seconds_since(cut);
    for (const auto& w : faults::find_workers(cluster_->dir())) {
      old_alive |= w.app == victim && w.attempt == 1;
      if (w.app == waiting && watch.waiting_up_s < 0) watch.waiting_up_s = t;
      if (w.app == victim && w.attempt >= 2 && watch.relaunched_s < 0) watch.relaunched_s = t;
      for (const int d : w.devices) on_gpu[{w.host, d}].insert({w.app, w.job, w.attempt});
    }
    for (const auto& [gpu, attempts] : on_gpu) {
      if (attempts.size() < 2 || !watch.shared.empty()) continue;
      watch.shared = "at +" + std::to_string(t) + " s, " + gpu.first + " device " + std::to_string(gpu.second) + ":";
      for (const auto& [app, job, attempt] : attempts) {
        watch.shared += " " + std::to_string(app) + "_" + std::to_string(job) + " attempt " + std::to_string(attempt);
      }
    }
    if (!old_alive && watch.old_gone_s < 0) watch.old_gone_s = t;
    if (++watch.samples % 50 == 0) ended = sql("SELECT count(*) FROM apps WHERE state = 'COMPLETED'") == "2";
    std::this_thread::sleep_for(10ms);
  }
  const bool completed = ended;
  ended = true;
  sampler.join();
  EXPECT_TRUE(watch.shared.empty()) << "two attempts' ranks shared a GPU " << watch.shared << "\n" << diagnostics();
  EXPECT_TRUE(violations.empty()) << ::testing::PrintToString(violations);
  ASSERT_TRUE(completed) << diagnostics();

  // The heal came before the nodelet's own fence: the coordinator's order stopped the old ranks.
  const std::string node_log = read_text(cluster_->dir() + "/node-a.log");
  EXPECT_EQ(node_log.find("fencing"), std::string::npos) << node_log;
  EXPECT_LT(healed_s, 2 * kDownBoundS);
  EXPECT_NE(read_text(cluster_->coordinator_log()).find("runs " + std::to_string(victim) + "_0 attempt 1 rank 0 without a lease"),
            std::string::npos);
  ASSERT_GE(watch.old_gone_s, 0);
  ASSERT_GE(watch.waiting_up_s, 0);
  ASSERT_GE(watch.relaunched_s, 0);
  EXPECT_LE(watch.old_gone_s, watch.waiting_up_s);
  EXPECT_LE(watch.old_gone_s, watch.relaunched_s);
  // The app was not lost: its job went on from the checkpoint the stop order made.
  EXPECT_EQ(job_state(victim), "COMPLETED:2");
  const int reached = last_number(rank_log(victim, 1, 0), "step");
  const int checkpointed = last_number(rank_log(victim, 1, 0), "checkpointed at step");
  const int resumed = last_number(rank_log(victim, 2, 0), "resumed at step");
  EXPECT_GE(checkpointed, 15) << rank_log(victim, 1, 0);
  EXPECT_EQ(resumed, checkpointed);
  const auto final_violations = invariants(5000ms);
  EXPECT_TRUE(final_violations.empty()) << ::testing::PrintToString(final_violations);
  std::printf("FAULT-COST partition healed between D and 2D (D = %.1f s): host declared down at +%.2f s, healed at "
              "+%.2f s; old ranks gone at +%.2f s; the other app's ranks up at +%.2f s; the lost job's attempt 2 up at "
              "+%.2f s; work lost %d steps of 0.1 s (reached %d, checkpointed %d, resumed %d); %d samples of /proc\n",
              kDownBoundS, down_s, healed_s, watch.old_gone_s, watch.waiting_up_s, watch.relaunched_s, reached - resumed,
              reached, checkpointed, resumed, watch.samples);
}

}  // namespace
}  // namespace themis::testing
