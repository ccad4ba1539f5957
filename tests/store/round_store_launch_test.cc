// What a launch reads (store::RoundStore::starting_jobs and gpu_seat) on a real SQLite file made by the migrations.
#include <gtest/gtest.h>

#include <string>

#include "coordinator/store/database.h"
#include "coordinator/store/round_store.h"
#include "tests/store/temp_dir.h"

namespace themis::store {
namespace {

TEST(RoundStoreLaunch, StartingJobsCarryTheirLaunchAndASeatCountsOtherJobsOnItsGpu) {
  testing::TempDir dir;
  Database db(dir.file("t.db"));
  db.exec("INSERT INTO hosts(id, name, rack, state, first_gpu, gpu_count, registered_at, last_heartbeat) "
          "VALUES (1, 'h1', 'r', 'up', 0, 2, 0, 0)");
  db.exec("INSERT INTO gpus(gpu, host_id, local_index, slot) VALUES (0, 1, 0, 0), (1, 1, 1, 1)");
  db.exec("INSERT INTO apps(id, name, owner, state, spec, gpus_per_job, max_concurrent_jobs, workdir, env, checkpoint_dir, "
          "grace_ms, submitted_at) VALUES (1, 'a', 'alice', 'RUNNING', '', 1, 2, '/w', '{\"A\":\"1\"}', '/c/{job}', 700, 0), "
          "(2, 'b', 'bob', 'RUNNING', '', 1, 1, '', '{}', '', 0, 0)");
  db.exec("INSERT INTO jobs(app_id, job, state, attempt, placement, command, hparams, state_since) VALUES "
          "(2, 0, 'STARTING', 1, '[1]', '[\"y\"]', '{}', 0), (1, 1, 'STARTING', 3, '[1]', '[\"x\"]', '{\"lr\":1}', 0), "
          "(1, 0, 'STOPPING', 2, '[0]', '[\"x\"]', '{}', 0)");
  RoundStore store(db);

  const auto starting = store.starting_jobs();
  ASSERT_EQ(starting.size(), 2u);  // the STOPPING job is not launched
  EXPECT_EQ(starting[0].app, 1);   // by app, then job
  EXPECT_EQ(starting[0].job, 1);
  EXPECT_EQ(starting[0].attempt, 3);
  EXPECT_EQ(starting[0].placement_json, "[1]");
  EXPECT_EQ(starting[0].command_json, "[\"x\"]");
  EXPECT_EQ(starting[0].hparams_json, "{\"lr\":1}");
  EXPECT_EQ(starting[0].workdir, "/w");
  EXPECT_EQ(starting[0].env_json, "{\"A\":\"1\"}");
  EXPECT_EQ(starting[0].checkpoint_dir, "/c/{job}");
  EXPECT_EQ(starting[0].grace_ms, 700);
  EXPECT_EQ(starting[0].owner, "alice");
  EXPECT_EQ(starting[1].app, 2);

  const auto seat = store.gpu_seat(1, 1, 1);
  ASSERT_TRUE(seat);
  EXPECT_EQ(seat->host, "h1");
  EXPECT_EQ(seat->local_index, 1u);
  EXPECT_EQ(seat->other_jobs, 1);                  // app 2's job 0 is placed there too
  EXPECT_EQ(store.gpu_seat(1, 1, 0)->other_jobs, 1);  // app 1's own STOPPING job 0 still occupies GPU 0
  EXPECT_EQ(store.gpu_seat(1, 0, 0)->other_jobs, 0);  // a job does not count itself
  EXPECT_FALSE(store.gpu_seat(1, 1, 5));
}

}  // namespace
}  // namespace themis::store
