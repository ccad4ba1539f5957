// Fault matrix, coordinator crash: a real coordinator, three nodelets with virtual GPUs and apps whose
// workers are real processes; the coordinator is SIGKILLed at seeded random moments (so the kills land
// in every phase of its 1.5 s lease rounds), restarted on the same database, and the invariants checked
// after each recovery (docs/reliability.md "Fault matrix: coordinator crash").
//   THEMIS_FAULT_POINTS  kills (default 8; scripts/fault-matrix runs 50)
//   THEMIS_FAULT_SEED    seed of the kill delays and the apps (default 20261125)
//   THEMIS_FAULT_REPORT  where to write one line per kill (tab-separated) and a summary; the coordinator's
//                        log is copied beside it (.coordinator.log)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "invariants.h"
#include "test_cluster.h"

namespace themis::faults {
namespace {

using namespace std::chrono_literals;
using testing::TestCluster;
using Clock = std::chrono::steady_clock;

long long env_number(const char* name, long long fallback) {
  const char* value = std::getenv(name);
  if (!value || !*value) return fallback;
  try {
    return std::stoll(value);
  } catch (const std::exception&) {
    throw std::invalid_argument(std::string(name) + "='" + value + "': expected a whole number");
  }
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

long long ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

std::string lines(const std::vector<std::string>& items) {
  std::string all;
  for (const auto& item : items) all += "  " + item + "\n";
  return all;
}

std::vector<testing::NodeSpec> three_nodes() {
  return {{"node-a", "rack-1", {{0, 1}}}, {"node-b", "rack-1", {{0, 1}}}, {"node-c", "rack-2", {{0, 1}}}};
}

// One rank: `iterations` steps of 0.1 s, a checkpoint every 5 steps and on SIGTERM (the coordinator's
// preemption), resumed from the checkpoint by the next attempt. Rank 0 logs every step it runs to
// `executed`, so steps run twice (work lost) can be counted. Each rank holds a lock on its GPU: a rank that
// finds the GPU's lock taken writes to $FAULT_OVERLAPS (two workers on one GPU), then waits for it.
std::string worker_script(int iterations) {
  return R"sh(d="$THEMIS_CHECKPOINT_DIR"; mkdir -p "$d"; r="$THEMIS_RANK"
w=$(readlink /proc/$$/fd/1); w="${w%%/jobs/*}"
exec 9>>"$w/gpu-$CUDA_VISIBLE_DEVICES.lock"
if ! flock -n 9; then echo "$THEMIS_JOB_ID attempt $THEMIS_ATTEMPT rank $r: GPU $CUDA_VISIBLE_DEVICES of $w busy" >> "$FAULT_OVERLAPS"; flock 9; fi
i=$(cat "$d/step.$r" 2>/dev/null || echo 0)
save() { echo "$i" > "$d/step.$r.tmp" && mv "$d/step.$r.tmp" "$d/step.$r"; }
trap 'save; exit 143' TERM
while [ "$i" -lt )sh" + std::to_string(iterations) + R"sh( ]; do
  sleep 0.1; i=$((i + 1))
  if [ "$r" = 0 ]; then echo "$THEMIS_ATTEMPT $i" >> "$d/executed"; fi
  if [ $((i % 5)) = 0 ]; then save; fi
done
save)sh";
}

struct KillPoint {
  int point = 0;
  long long delay_ms = 0;
  double killed_at = 0;             // unix seconds
  std::string last_log;             // the coordinator's last log line before the kill
  std::string last_round;           // newest round in the database at the kill
  long long since_round_ms = -1;    // how long after that round started
  long long answer_ms = 0;          // kill -> themisctl answers the restarted coordinator
  long long recovery_ms = 0;        // kill -> answers and a round ran (or nothing was left to schedule)
  std::vector<std::string> violations;
};

class CoordinatorCrash : public ::testing::Test {
 protected:
  void SetUp() override {
    points_ = static_cast<int>(env_number("THEMIS_FAULT_POINTS", 8));
    seed_ = static_cast<std::uint64_t>(env_number("THEMIS_FAULT_SEED", 20261125));
    rng_.seed(seed_);
    std::cout << "coordinator crash: THEMIS_FAULT_POINTS=" << points_ << " THEMIS_FAULT_SEED=" << seed_ << std::endl;
    // 100 ms heartbeats with 20 lives: a loaded 2-core box stalls processes for longer than 3 heartbeats,
    // which would mark hosts down for reasons that are not the fault under test.
    cluster_ = std::make_unique<TestCluster>(three_nodes(), "1500ms", "heartbeat_lives = 20\n");
    cluster_->start_coordinator();
    for (const auto& n : three_nodes()) cluster_->start_node(n.host);
    ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "3"; }, 30s))
        << testing::read_text(cluster_->coordinator_log());
    overlaps_ = cluster_->dir() + "/overlaps";
  }

  void submit(const std::string& name, int jobs, int gpus_per_job, int iterations) {
    std::ostringstream spec;
    spec << "name = \"" << name << "\"\ncommand = [\"sh\", \"-c\", " << nlohmann::json(worker_script(iterations)).dump() << "]\n"
         << "[env]\nFAULT_OVERLAPS = \"" << overlaps_ << "\"\n"
         << "[resources]\ngpus_per_job = " << gpus_per_job << "\n"
         << "[checkpoint]\ndir = \"" << cluster_->dir() << "/checkpoints/{app}/{job}\"\ngrace_period = \"5s\"\n"
         << "[hyperparameters]\nseed = [";
    for (int j = 0; j < jobs; ++j) spec << (j ? ", " : "") << j;
    spec << "]\n";
    const auto user = apps_.size() % 2 ? "bob" : "alice";
    const auto r = cluster_->ctl(user, {"submit", "--parsable", cluster_->write_file(name + ".toml", spec.str())});
    ASSERT_EQ(r.code, 0) << r.out;
    apps_.push_back(std::stoll(r.first_stdout_line()));
    required_steps_ += static_cast<long long>(jobs) * iterations;
  }

  std::string last_log_line() {
    std::istringstream log(testing::read_text(cluster_->coordinator_log()));
    std::string line, last;
    while (std::getline(log, line)) {
      if (!line.empty()) last = line;
    }
    return last;
  }

  bool apps_active() { return cluster_->sql("SELECT count(*) FROM apps WHERE state IN ('PENDING','RUNNING')") != "0"; }

  std::string diagnostics() {
    return "seed " + std::to_string(seed_) + "\njobs: " +
           cluster_->sql("SELECT group_concat(app_id || '_' || job || ':' || state || ':' || reason || ':' || attempt, ' ') FROM jobs") +
           "\nleases: " + cluster_->sql("SELECT group_concat(gpu || ':' || app_id || '_' || job, ' ') FROM leases WHERE state = 'active'") +
           "\nfailed attempts:\n" +
           cluster_->sql("SELECT group_concat(app_id || '_' || job || ' attempt ' || attempt || ' at ' || printf('%.3f', ts) || ': ' || "
                         "class || ' ' || decision || ': ' || reason, char(10)) FROM job_failures WHERE class <> 'preemption'") +
           "\nhost and worker events:\n" +
           cluster_->sql("SELECT group_concat(printf('%.3f', ts) || ' ' || kind || ' ' || coalesce(app_id || '_' || job, '') || ' ' || "
                         "coalesce(host, '') || ' ' || message, char(10)) FROM events WHERE kind IN ('HostDown','HostUp','NodeFail','WorkersLost')") +
           "\n--- coordinator log (end) ---\n" + tail(testing::read_text(cluster_->coordinator_log()), 6000);
  }

  static std::string tail(const std::string& text, std::size_t n) { return text.size() > n ? text.substr(text.size() - n) : text; }

  KillPoint kill_and_recover(int point) {
    KillPoint k;
    k.point = point;
    k.delay_ms = std::uniform_int_distribution<long long>(0, 3000)(rng_);
    std::this_thread::sleep_for(std::chrono::milliseconds(k.delay_ms));
    const auto kill_time = Clock::now();
    k.killed_at = unix_now();
    cluster_->kill_coordinator(SIGKILL);
    k.last_log = last_log_line();
    k.last_round = cluster_->sql("SELECT max(id) FROM rounds");
    if (!k.last_round.empty()) {
      const double started = std::stod(cluster_->sql("SELECT started_at FROM rounds WHERE id = " + k.last_round));
      k.since_round_ms = static_cast<long long>((k.killed_at - started) * 1000.0);
    }
    const double restart = unix_now();
    cluster_->start_coordinator();
    k.answer_ms = ms_since(kill_time);
    const bool recovered = cluster_->wait_for([&] {
      return cluster_->sql("SELECT count(*) FROM rounds WHERE started_at >= " + std::to_string(restart)) != "0" || !apps_active();
    }, 30s);
    k.recovery_ms = ms_since(kill_time);
    if (!recovered) k.violations.push_back("no round within 30 s of the restart");
    const auto v = check_invariants({cluster_->db_path(), apps_, true, cluster_->dir(), 15s});
    k.violations.insert(k.violations.end(), v.begin(), v.end());
    return k;
  }

  // Events caused by the crash: hosts marked down or jobs found without workers, between two kills.
  std::string crash_events(double from, double to) {
    return cluster_->sql("SELECT count(*) FROM events WHERE kind IN ('HostDown','NodeFail','WorkersLost') AND ts >= " +
                         std::to_string(from) + " AND ts < " + std::to_string(to));
  }

  long long executed_steps() {
    long long lines = 0;
    for (const auto app : apps_) {
      for (int job = 0;; ++job) {
        std::ifstream in(cluster_->dir() + "/checkpoints/" + std::to_string(app) + "/" + std::to_string(job) + "/executed");
        if (!in) break;
        std::string line;
        while (std::getline(in, line)) ++lines;
      }
    }
    return lines;
  }

  int points_ = 8;
  std::uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  std::unique_ptr<TestCluster> cluster_;
  std::vector<std::int64_t> apps_;
  long long required_steps_ = 0;
  std::string overlaps_;
};

TEST_F(CoordinatorCrash, SigkillAtSeededPointsKeepsTheInvariantsAndEveryAppCompletes) {
  // Long apps keep the GPUs contended (rounds preempt and renew) through all the kills; each point adds a
  // short app, so kills also land while new jobs are placed and launched.
  const int long_steps = 40 + 25 * points_;
  submit("long-a", 2, 1, long_steps);
  submit("long-b", 2, 1, long_steps);
  submit("wide", 1, 2, long_steps);
  std::vector<KillPoint> kills;
  for (int point = 1; point <= points_; ++point) {
    const int gpus = std::uniform_int_distribution<int>(1, 3)(rng_) == 3 ? 2 : 1;
    const int jobs = std::uniform_int_distribution<int>(1, 2)(rng_);
    submit("short-" + std::to_string(point), jobs, gpus, std::uniform_int_distribution<int>(10, 30)(rng_));
    kills.push_back(kill_and_recover(point));
    const auto& k = kills.back();
    std::cout << "point " << k.point << ": delay " << k.delay_ms << " ms, round " << k.last_round << " (+" << k.since_round_ms
              << " ms), recovered in " << k.recovery_ms << " ms, " << k.violations.size() << " violations; last log: " << k.last_log
              << std::endl;
    EXPECT_TRUE(k.violations.empty()) << "seed " << seed_ << " point " << point << ":\n"
                                      << lines(k.violations)
                                      << diagnostics();
  }
  const bool all_ended = cluster_->wait_for([&] { return !apps_active(); }, std::chrono::seconds(120 + 4 * points_));
  EXPECT_TRUE(all_ended) << diagnostics();
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM apps WHERE state = 'COMPLETED'"), std::to_string(apps_.size())) << diagnostics();
  const auto final_violations = check_invariants({cluster_->db_path(), apps_, true, cluster_->dir(), 15s});
  EXPECT_TRUE(final_violations.empty()) << lines(final_violations);
  const std::string overlaps = testing::read_text(overlaps_);
  EXPECT_TRUE(overlaps.empty()) << "workers found their GPU taken:\n" << overlaps;

  // The figures: recovery per kill, and what the crashes cost.
  std::vector<long long> recovery;
  for (const auto& k : kills) recovery.push_back(k.recovery_ms);
  std::sort(recovery.begin(), recovery.end());
  const long long executed = executed_steps();
  std::ostringstream report;
  report << "point\tdelay_ms\tlast_round\tms_after_round_start\tanswer_ms\trecovery_ms\tcrash_events\tviolations\tlast_log\n";
  for (std::size_t i = 0; i < kills.size(); ++i) {
    const auto& k = kills[i];
    const double next = i + 1 < kills.size() ? kills[i + 1].killed_at : unix_now();
    report << k.point << '\t' << k.delay_ms << '\t' << k.last_round << '\t' << k.since_round_ms << '\t' << k.answer_ms << '\t'
           << k.recovery_ms << '\t' << crash_events(k.killed_at, next) << '\t' << k.violations.size() << '\t' << k.last_log << '\n';
  }
  report << "# seed " << seed_ << ", " << kills.size() << " kills, " << apps_.size() << " apps";
  if (!recovery.empty()) {
    report << ", recovery p50 " << recovery[(recovery.size() - 1) / 2] << " ms, max " << recovery.back() << " ms";
  }
  report << "\n# steps required " << required_steps_ << ", executed " << executed << " (work lost: " << executed - required_steps_
         << " steps of 0.1 s), preemptions "
         << cluster_->sql("SELECT count(*) FROM job_failures WHERE class = 'preemption'") << ", node failures "
         << cluster_->sql("SELECT count(*) FROM job_failures WHERE class = 'node_failure'") << ", attempts "
         << cluster_->sql("SELECT sum(attempt) FROM jobs") << " for " << cluster_->sql("SELECT count(*) FROM jobs") << " jobs\n";
  std::cout << report.str();
  if (const char* path = std::getenv("THEMIS_FAULT_REPORT"); path && *path) {
    std::ofstream out(path);
    out << report.str();
    EXPECT_TRUE(out.good()) << "cannot write the report to " << path;
    std::error_code error;
    std::filesystem::copy_file(cluster_->coordinator_log(), std::string(path) + ".coordinator.log",
                               std::filesystem::copy_options::overwrite_existing, error);
    EXPECT_FALSE(error) << "cannot copy the coordinator's log beside " << path << ": " << error.message();
  }
}

}  // namespace
}  // namespace themis::faults
