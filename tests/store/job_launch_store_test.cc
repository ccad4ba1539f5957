// What a launcher's LaunchJob and StopJob check (coordinator/store/job_launch_store.h), on a real SQLite file.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "coordinator/store/database.h"
#include "coordinator/store/job_launch_store.h"
#include "tests/store/temp_dir.h"

namespace themis::store {
namespace {

class JobLaunchStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_.exec("INSERT INTO hosts(id, name, rack, state, first_gpu, gpu_count, registered_at, last_heartbeat) "
             "VALUES (1, 'h1', 'r1', 'up', 0, 2, 0, 0), (2, 'h2', 'r1', 'up', 2, 2, 0, 0)");
    db_.exec("INSERT INTO gpus(gpu, host_id, local_index, slot) VALUES (0, 1, 0, 0), (1, 1, 1, 0), (2, 2, 0, 1), "
             "(3, 2, 1, 1)");
    db_.exec("INSERT INTO apps(id, name, owner, state, spec, gpus_per_job, max_concurrent_jobs, submitted_at) "
             "VALUES (1, 'a', 'alice', 'RUNNING', '', 1, 2, 0), (2, 'b', 'bob', 'RUNNING', '', 1, 2, 0)");
    db_.exec("INSERT INTO jobs(app_id, job, state, command, state_since, attempt, placement) VALUES "
             "(1, 0, 'RUNNING', '[]', 0, 2, '[0,2]'), (1, 1, 'PENDING', '[]', 0, 0, '[]'), "
             "(2, 0, 'STOPPING', '[]', 0, 3, '[1]')");
    db_.exec("INSERT INTO rounds(id, started_at, finished_at, trigger, policy, free_gpus, apps, granted, idle, outcome) "
             "VALUES (1, 0, 0, 'test', 'themis', 4, 2, 4, 0, '{}')");
  }
  void lease(int id, int gpu, int app, const std::string& state, double expiry, const char* released = "NULL",
             const char* reason = "NULL") {
    db_.exec("INSERT INTO leases(id, gpu, app_id, job, round_id, start, expiry, state, released_at, release_reason) "
             "VALUES (" + std::to_string(id) + ", " + std::to_string(gpu) + ", " + std::to_string(app) + ", 0, 1, 0, " +
             std::to_string(expiry) + ", '" + state + "', " + released + ", " + reason + ")");
  }
  testing::TempDir dir_;
  Database db_{dir_.file("t.db")};
  JobLaunchStore store_{db_};
};

TEST_F(JobLaunchStoreTest, AGpuIsLeasedToTheAppOnlyByItsOwnActiveUnexpiredLease) {
  lease(1, 0, 1, "active", 100);                     // app 1's, live
  lease(2, 1, 2, "active", 100);                     // another app's
  lease(3, 2, 1, "active", 10);                      // app 1's, expired at 10
  lease(4, 3, 1, "released", 100, "5", "'preempted'");  // app 1's, released early
  EXPECT_TRUE(store_.gpu_leased_to(1, 0, 50));
  EXPECT_FALSE(store_.gpu_leased_to(1, 1, 50));
  EXPECT_TRUE(store_.gpu_leased_to(2, 1, 50));
  EXPECT_FALSE(store_.gpu_leased_to(1, 2, 50));
  EXPECT_TRUE(store_.gpu_leased_to(1, 2, 9.5));  // the same lease before its expiry
  EXPECT_FALSE(store_.gpu_leased_to(1, 3, 50));
  EXPECT_FALSE(store_.gpu_leased_to(1, 0, 100));  // expiry is exclusive
}

TEST_F(JobLaunchStoreTest, ALeaseIsFoundOnlyAsTheAppsLeaseOfItsGpuWithHowItEnded) {
  lease(3, 2, 1, "active", 10);
  lease(4, 3, 1, "released", 100, "5", "'preempted'");
  const auto expired = store_.lease_of(3, 1, 2);
  ASSERT_TRUE(expired);
  EXPECT_EQ(expired->state, "active");
  EXPECT_EQ(expired->expiry, 10);
  EXPECT_FALSE(expired->released_at);
  EXPECT_EQ(expired->release_reason, "");
  const auto released = store_.lease_of(4, 1, 3);
  ASSERT_TRUE(released);
  EXPECT_EQ(released->state, "released");
  EXPECT_EQ(released->released_at, 5);
  EXPECT_EQ(released->release_reason, "preempted");
  EXPECT_FALSE(store_.lease_of(4, 2, 3));  // not app 2's
  EXPECT_FALSE(store_.lease_of(4, 1, 2));  // not a lease of GPU 2
}

TEST_F(JobLaunchStoreTest, JobsAndPlacementsAsALaunchAndAStopSeeThem) {
  const auto running = store_.job_attempt(1, 0);
  ASSERT_TRUE(running);
  EXPECT_EQ(running->state, "RUNNING");
  EXPECT_EQ(running->attempt, 2);
  EXPECT_FALSE(store_.job_attempt(1, 7));
  EXPECT_TRUE(store_.other_job_on_gpu(1, 1, 2));   // job 0 of app 1 runs on GPU 2
  EXPECT_FALSE(store_.other_job_on_gpu(1, 0, 2));  // the job itself
  EXPECT_FALSE(store_.other_job_on_gpu(1, 1, 1));  // app 2's job is on GPU 1, not app 1's
  EXPECT_TRUE(store_.stop_ordered(2, 0, 3));
  EXPECT_FALSE(store_.stop_ordered(2, 0, 2));  // an earlier attempt
  EXPECT_FALSE(store_.stop_ordered(1, 0, 2));  // running, not stopping
  const auto ranks = store_.ranks_on_host(1, 0, "h2");
  EXPECT_EQ(ranks.attempt, 2);
  EXPECT_EQ(ranks.ranks, std::vector<std::uint32_t>{1});  // GPU 2 is rank 1 of placement [0,2]
  EXPECT_TRUE(store_.ranks_on_host(2, 0, "h2").ranks.empty());
}

TEST_F(JobLaunchStoreTest, AssigningALeaseToAJobTouchesOnlyTheAppsActiveLeaseOfThatGpu) {
  lease(1, 0, 1, "active", 100);
  lease(2, 0, 1, "expired", 50);
  lease(3, 1, 2, "active", 100);
  store_.assign_lease_to_job(1, 0, 1);
  store_.assign_lease_to_job(1, 1, 1);  // GPU 1 is app 2's: nothing changes
  auto st = db_.prepare("SELECT group_concat(id || ':' || job, ' ') FROM (SELECT * FROM leases ORDER BY id)");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.text(0), "1:1 2:0 3:0");
}

}  // namespace
}  // namespace themis::store
