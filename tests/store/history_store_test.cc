// store::finished_apps and store::user_totals on a database written by hand: JCT, GPU-hours from the
// leases (released early, or ended at expiry), exit status, the period and the owner filter.
#include "coordinator/store/history_store.h"

#include <gtest/gtest.h>

#include "coordinator/store/database.h"
#include "tests/store/temp_dir.h"

namespace themis::store {
namespace {

class History : public ::testing::Test {
 protected:
  void SetUp() override {
    db_.exec("INSERT INTO hosts(id, name, rack, state, first_gpu, gpu_count, registered_at, last_heartbeat) "
             "VALUES (1, 'n1', 'r1', 'up', 0, 2, 0, 0)");
    db_.exec("INSERT INTO gpus(gpu, host_id, local_index, slot) VALUES (0, 1, 0, 0), (1, 1, 1, 0)");
    db_.exec("INSERT INTO rounds(id, started_at, finished_at, trigger, policy, free_gpus, apps, granted, idle, outcome) "
             "VALUES (1, 0, 0, 't', 'p', 2, 1, 2, 0, '{}')");
    // 1: alice, completed at 1000 after 900 s; 2 GPUs for 1800 s each (one released early, one to expiry): 1 GPU-hour.
    app(1, "alice", "COMPLETED", 100, 1000, 0.5);
    job(1, 0, "COMPLETED", "0", "NULL");
    db_.exec("INSERT INTO leases(gpu, app_id, job, round_id, start, expiry, state, released_at) VALUES "
             "(0, 1, 0, 1, 0, 3600, 'released', 1800), (1, 1, 0, 1, 0, 1800, 'expired', NULL)");
    // 2: bob, failed at 2000 (job 1 killed by signal 9); 3: alice, cancelled at 3000; 4: alice, still running.
    app(2, "bob", "FAILED", 1500, 2000, 2.0);
    job(2, 0, "COMPLETED", "0", "NULL");
    job(2, 1, "FAILED", "-1", "9");
    app(3, "alice", "CANCELLED", 2500, 3000, 1.5);
    app(4, "alice", "RUNNING", 2500, -1, 1.0);
  }
  void app(int id, const std::string& owner, const std::string& state, double submitted, double finished, double rho) {
    db_.exec("INSERT INTO apps(id, name, owner, state, spec, gpus_per_job, max_concurrent_jobs, submitted_at, finished_at, rho) "
             "VALUES (" + std::to_string(id) + ", 'app" + std::to_string(id) + "', '" + owner + "', '" + state + "', '', 1, 1, " +
             std::to_string(submitted) + ", " + (finished < 0 ? std::string("NULL") : std::to_string(finished)) + ", " +
             std::to_string(rho) + ")");
  }
  void job(int app_id, int job, const std::string& state, const std::string& code, const std::string& signal) {
    db_.exec("INSERT INTO jobs(app_id, job, state, command, state_since, exit_code, exit_signal) VALUES (" + std::to_string(app_id) +
             ", " + std::to_string(job) + ", '" + state + "', '[]', 0, " + code + ", " + signal + ")");
  }
  testing::TempDir dir_;
  Database db_{dir_.file("themis.db")};
};

TEST_F(History, FinishedAppsNewestFirstWithJctGpuHoursAndExit) {
  const auto items = finished_apps(db_, {});
  ASSERT_EQ(items.size(), 3u) << items.dump();  // the running app is not history
  EXPECT_EQ(items[0]["app"], 3);
  EXPECT_EQ(items[0]["exit"], "-");
  EXPECT_EQ(items[1]["app"], 2);
  EXPECT_EQ(items[1]["exit"], "-1:9");
  EXPECT_EQ(items[1]["jct_s"], 500.0);
  EXPECT_EQ(items[1]["jobs"], 2);
  EXPECT_EQ(items[2]["app"], 1);
  EXPECT_EQ(items[2]["exit"], "0:0");
  EXPECT_EQ(items[2]["jct_s"], 900.0);
  EXPECT_EQ(items[2]["gpu_hours"], 1.0);
  EXPECT_EQ(items[2]["rho"], 0.5);
  EXPECT_EQ(items[2]["finished"], "1970-01-01T00:16:40Z");
}

TEST_F(History, PeriodAndOwner) {
  HistoryPeriod period;
  period.since = 1000;  // inclusive
  period.until = 3000;  // exclusive
  auto items = finished_apps(db_, period);
  ASSERT_EQ(items.size(), 2u) << items.dump();
  EXPECT_EQ(items[0]["app"], 2);
  EXPECT_EQ(items[1]["app"], 1);
  period.user = "alice";
  items = finished_apps(db_, period);
  ASSERT_EQ(items.size(), 1u) << items.dump();
  EXPECT_EQ(items[0]["app"], 1);
}

TEST_F(History, PerUserTotals) {
  const auto totals = user_totals(db_, {});
  ASSERT_EQ(totals.size(), 2u) << totals.dump();
  EXPECT_EQ(totals[0]["user"], "alice");  // most GPU-hours first
  EXPECT_EQ(totals[0]["apps"], 2);
  EXPECT_EQ(totals[0]["completed"], 1);
  EXPECT_EQ(totals[0]["cancelled"], 1);
  EXPECT_EQ(totals[0]["gpu_hours"], 1.0);
  EXPECT_EQ(totals[0]["mean_jct_s"], 700.0);  // (900 + 500) / 2
  EXPECT_EQ(totals[0]["mean_rho"], 1.0);
  EXPECT_EQ(totals[1]["user"], "bob");
  EXPECT_EQ(totals[1]["failed"], 1);
  EXPECT_EQ(totals[1]["gpu_hours"], 0.0);
}

}  // namespace
}  // namespace themis::store
