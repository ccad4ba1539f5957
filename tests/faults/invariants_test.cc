// The invariant checker must fail on broken states, or the fault matrix proves nothing: each case
// breaks one rule in a copy of a consistent database, or a live worker's database record.
#include "invariants.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "coordinator/store/database.h"
#include "test_cluster.h"
#include "tests/store/temp_dir.h"

namespace themis::faults {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  return all;
}

bool mentions(const std::vector<std::string>& violations, const std::string& text) {
  for (const auto& v : violations) {
    if (v.find(text) != std::string::npos) return true;
  }
  return false;
}

// Two hosts' worth of GPUs, a running app holding GPU 0 and a completed app: every rule holds.
void write_consistent_database(const std::string& path) {
  store::Database db(path);
  db.exec(R"sql(
    INSERT INTO hosts(id, name, rack, state, first_gpu, gpu_count, registered_at, last_heartbeat)
      VALUES (1, 'node-a', 'rack-1', 'up', 0, 2, 0, 0);
    INSERT INTO gpus(gpu, host_id, local_index, slot) VALUES (0, 1, 0, 0), (1, 1, 1, 0);
    INSERT INTO apps(id, name, owner, state, spec, gpus_per_job, max_concurrent_jobs, submitted_at)
      VALUES (1, 'train', 'alice', 'RUNNING', 'name = "train"', 1, 2, 0);
    INSERT INTO apps(id, name, owner, state, spec, gpus_per_job, max_concurrent_jobs, submitted_at, finished_at)
      VALUES (2, 'done', 'bob', 'COMPLETED', 'name = "done"', 1, 1, 0, 5);
    INSERT INTO jobs(app_id, job, state, attempt, command, placement, state_since) VALUES
      (1, 0, 'RUNNING', 1, '["true"]', '[0]', 1), (1, 1, 'PENDING', 0, '["true"]', '[]', 1),
      (2, 0, 'COMPLETED', 1, '["true"]', '[1]', 4);
    INSERT INTO rounds(id, started_at, finished_at, trigger, policy, free_gpus, apps, granted, idle, outcome)
      VALUES (1, 1, 1, 'test', 'themis', 2, 2, 2, 0, '{}');
    INSERT INTO leases(gpu, app_id, job, round_id, start, expiry, state) VALUES (0, 1, 0, 1, 1, 100, 'active');
    INSERT INTO leases(gpu, app_id, job, round_id, start, expiry, state, released_at, release_reason)
      VALUES (1, 2, 0, 1, 1, 100, 'released', 4, 'completed');
  )sql");
}

struct Corruption {
  const char* name;
  const char* sql;
  const char* expected;  // a violation must mention this
};

const Corruption kCorruptions[] = {
    {"second active lease on a GPU",
     "DROP INDEX leases_one_active_per_gpu; "
     "INSERT INTO leases(gpu, app_id, job, round_id, start, expiry, state) VALUES (0, 1, 1, 1, 2, 100, 'active');",
     "GPU 0 is leased 2 times at once"},
    {"lease of a pending job", "UPDATE jobs SET state = 'PENDING', placement = '[]' WHERE app_id = 1 AND job = 0;",
     "the job is PENDING"},
    {"lease of a stopping job", "UPDATE jobs SET state = 'STOPPING' WHERE app_id = 1 AND job = 0;", "the job is STOPPING"},
    {"running job without its lease", "UPDATE leases SET state = 'expired', released_at = 2 WHERE gpu = 0;",
     "job 1_0 is RUNNING on GPU 0 without an active lease"},
    {"lease outside the job's placement", "UPDATE jobs SET placement = '[1]' WHERE app_id = 1 AND job = 0;",
     "GPU not in the job's placement"},
    {"app lost", "DELETE FROM leases WHERE app_id = 2; DELETE FROM jobs WHERE app_id = 2; DELETE FROM apps WHERE id = 2;",
     "app 2 was submitted but is not in the database (lost)"},
    {"app duplicated",
     "INSERT INTO apps(id, name, owner, state, spec, gpus_per_job, max_concurrent_jobs, submitted_at) "
     "VALUES (3, 'train', 'alice', 'PENDING', 'name = \"train\"', 1, 2, 0); "
     "INSERT INTO jobs(app_id, job, state, command, state_since) VALUES (3, 0, 'PENDING', '[\"true\"]', 0);",
     "app 3 (PENDING) is in the database but was never submitted"},
    {"finished app with a running job", "UPDATE apps SET state = 'COMPLETED', finished_at = 9 WHERE id = 1;",
     "of its jobs are PENDING, STARTING or RUNNING"},
    {"finished app whose jobs did not all complete", "UPDATE jobs SET state = 'FAILED' WHERE app_id = 2;",
     "app 2 is COMPLETED but its jobs are 0 COMPLETED, 1 FAILED"},
    {"app left running after its last job", "UPDATE apps SET state = 'RUNNING', finished_at = NULL WHERE id = 2;",
     "app 2 is RUNNING but all 1 of its jobs have ended"},
    {"two running jobs on one GPU",
     "UPDATE jobs SET state = 'RUNNING', placement = '[0]', attempt = 1 WHERE app_id = 1 AND job = 1;",
     "GPU 0 is in the placement of 2 RUNNING jobs"},
    {"dangling foreign key",
     "INSERT INTO leases(gpu, app_id, job, round_id, start, expiry, state, released_at) "
     "VALUES (1, 1, 7, 1, 1, 2, 'expired', 2);",
     "PRAGMA foreign_key_check: leases"},
};

TEST(FaultInvariants, ConsistentDatabasePassesAndEachCorruptionIsCaught) {
  TempDir dir;
  const std::string clean = dir.file("clean.db");
  write_consistent_database(clean);
  const InvariantInput input{clean, {1, 2}};
  const auto ok = check_invariants(input);
  EXPECT_TRUE(ok.empty()) << joined(ok);

  int n = 0;
  for (const auto& c : kCorruptions) {
    SCOPED_TRACE(c.name);
    const std::string copy = dir.file("corrupt-" + std::to_string(n++) + ".db");
    copy_database(clean, copy);
    {
      store::Database db(copy);
      db.exec("PRAGMA foreign_keys = OFF");
      db.exec(c.sql);
    }
    const auto violations = check_invariants({copy, {1, 2}});
    EXPECT_TRUE(mentions(violations, c.expected)) << "expected '" << c.expected << "' in:\n" << joined(violations);
  }
}

TEST(FaultInvariants, SubmittedIdsAreCheckedEvenWhenTheDatabaseIsFine) {
  TempDir dir;
  write_consistent_database(dir.file("clean.db"));
  EXPECT_TRUE(mentions(check_invariants({dir.file("clean.db"), {1, 2, 2}}), "app 2 was submitted twice"));
  EXPECT_TRUE(mentions(check_invariants({dir.file("clean.db"), {1}}), "app 2 (COMPLETED) is in the database but was never submitted"));
  EXPECT_TRUE(check_invariants({dir.file("clean.db"), {1}, /*only_submitted_apps=*/false}).empty());
}

TEST(FaultInvariants, UnreadableDatabaseIsAViolation) {
  TempDir dir;
  const auto violations = check_invariants({dir.file("missing.db"), {}});
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_NE(violations[0].find("cannot be checked"), std::string::npos) << violations[0];
}

// A real worker process: found under /proc with its job and GPU, accepted while its lease is active,
// and reported once the database (a corrupted copy) says its job no longer holds the GPU.
TEST(FaultInvariants, LiveWorkerWithoutALeaseIsCaught) {
  testing::TestCluster cluster({{"node-a", "rack-1", {{0, 1}}}});
  cluster.start_coordinator();
  cluster.start_node("node-a");
  const std::string spec = "name = \"sleeper\"\ncommand = [\"sh\", \"-c\", \"exec sleep 60\"]\n";
  const auto submitted = cluster.ctl("alice", {"submit", "--parsable", cluster.write_file("sleeper.toml", spec)});
  ASSERT_EQ(submitted.code, 0) << submitted.out;
  const std::int64_t app = std::stoll(submitted.first_stdout_line());
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT state FROM jobs WHERE app_id = " + std::to_string(app)) == "RUNNING"; },
                               30s))
      << testing::read_text(cluster.coordinator_log());
  ASSERT_TRUE(cluster.wait_for([&] { return !find_workers(cluster.dir()).empty(); }, 10s));

  const auto workers = find_workers(cluster.dir());
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].host, "node-a");
  EXPECT_EQ(workers[0].app, app);
  EXPECT_EQ(workers[0].job, 0);
  EXPECT_EQ(workers[0].attempt, 1);
  EXPECT_EQ(workers[0].rank, 0);
  ASSERT_EQ(workers[0].devices.size(), 1u);
  EXPECT_EQ(cluster.sql("SELECT placement FROM jobs WHERE app_id = " + std::to_string(app)),
            "[" + cluster.sql("SELECT g.gpu FROM gpus g JOIN hosts h ON h.id = g.host_id WHERE h.name = 'node-a' AND "
                              "g.local_index = " + std::to_string(workers[0].devices[0])) + "]");

  const auto live = check_invariants({cluster.db_path(), {app}, true, cluster.dir(), 5s});
  EXPECT_TRUE(live.empty()) << joined(live);

  TempDir copies;
  const std::string requeued = copies.file("requeued.db");
  copy_database(cluster.db_path(), requeued);
  {
    store::Database db(requeued);
    db.exec("UPDATE leases SET state = 'released', released_at = 1, release_reason = 'test' WHERE state = 'active'; "
            "UPDATE jobs SET state = 'PENDING', placement = '[]'; UPDATE apps SET state = 'PENDING'");
  }
  EXPECT_TRUE(check_database({requeued, {app}}).empty()) << joined(check_database({requeued, {app}}));
  const auto fenced = check_invariants({requeued, {app}, true, cluster.dir(), 300ms});
  EXPECT_TRUE(mentions(fenced, "still runs but its job is PENDING (still so after 300 ms)")) << joined(fenced);

  const std::string next_attempt = copies.file("next-attempt.db");
  copy_database(cluster.db_path(), next_attempt);
  {
    store::Database db(next_attempt);
    db.exec("UPDATE jobs SET attempt = 2");
  }
  const auto stale = check_invariants({next_attempt, {app}, true, cluster.dir(), 300ms});
  EXPECT_TRUE(mentions(stale, "of a fenced attempt still runs: the job is RUNNING on attempt 2")) << joined(stale);
}

}  // namespace
}  // namespace themis::faults
