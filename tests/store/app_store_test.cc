// The SQL of client requests (coordinator/store/app_store.h, query_store.h, log_relay_store.h) on a real
// SQLite file made by the migrations.
#include <gtest/gtest.h>

#include <string>

#include "coordinator/store/app_store.h"
#include "coordinator/store/database.h"
#include "coordinator/store/lease_release_store.h"
#include "coordinator/store/log_relay_store.h"
#include "coordinator/store/query_store.h"
#include "tests/store/temp_dir.h"

namespace themis::store {
namespace {

class AppStoreTest : public ::testing::Test {
 protected:
  // What a submit of a two-job app with `token` writes.
  std::int64_t submit(const std::string& owner, const std::optional<std::string>& token) {
    const std::int64_t app = apps_.insert_app({.name = "resnet",
                                               .owner = owner,
                                               .spec = "name = \"resnet\"",
                                               .gpus_per_job = 2,
                                               .max_concurrent_jobs = 1,
                                               .workdir = "/w",
                                               .env_json = R"({"A":"1"})",
                                               .checkpoint_dir = "/ckpt/{app}",
                                               .grace_ms = 5000,
                                               .submitted_at = 100,
                                               .submit_token = token});
    apps_.insert_job(app, 0, R"({"lr":0.1})", R"(["train","--lr","0.1"])", 100);
    apps_.insert_job(app, 1, R"({"lr":0.01})", R"(["train","--lr","0.01"])", 100);
    apps_.mark_probe_waiting(app);
    apps_.set_admission(app, "new");
    return app;
  }
  std::string column(const std::string& sql) {
    auto st = db_.prepare(sql);
    EXPECT_TRUE(st.step()) << sql;
    return st.is_null(0) ? "NULL" : st.text(0);
  }
  testing::TempDir dir_;
  Database db_{dir_.file("t.db")};
  AppStore apps_{db_};
  QueryStore queries_{db_};
  LeaseReleaseStore releases_{db_};
  LogRelayStore logs_{db_};
};

TEST_F(AppStoreTest, ASubmitWritesAnAppAndItsJobsReadableBack) {
  const std::int64_t app = submit("alice", "tok-1");
  const std::int64_t other = submit("bob", std::nullopt);
  EXPECT_NE(app, other);
  EXPECT_EQ(column("SELECT name || ' ' || owner || ' ' || state || ' ' || gpus_per_job || ' ' || max_concurrent_jobs || ' ' || "
                   "workdir || ' ' || env || ' ' || checkpoint_dir || ' ' || grace_ms || ' ' || probe || ' ' || admission "
                   "FROM apps WHERE id = " + std::to_string(app)),
            R"(resnet alice PENDING 2 1 /w {"A":"1"} /ckpt/{app} 5000 waiting new)");
  EXPECT_EQ(column("SELECT submit_token FROM apps WHERE id = " + std::to_string(other)), "NULL");  // no token stored as NULL
  EXPECT_EQ(column("SELECT group_concat(job || ':' || state || ':' || reason || ':' || command, ' ') FROM "
                   "(SELECT * FROM jobs WHERE app_id = " + std::to_string(app) + " ORDER BY job)"),
            R"(0:PENDING:New:["train","--lr","0.1"] 1:PENDING:New:["train","--lr","0.01"])");

  // A repeated submit finds the app by (owner, token) and only by both.
  const auto earlier = apps_.app_of_token("alice", "tok-1");
  ASSERT_TRUE(earlier);
  EXPECT_EQ(earlier->app, app);
  EXPECT_EQ(earlier->name, "resnet");
  EXPECT_EQ(earlier->spec, "name = \"resnet\"");
  EXPECT_EQ(earlier->jobs, 2u);
  EXPECT_FALSE(apps_.app_of_token("bob", "tok-1"));
  EXPECT_FALSE(apps_.app_of_token("alice", "tok-2"));
  EXPECT_FALSE(apps_.submit_repeat_recorded(app));
  db_.prepare("INSERT INTO events(ts, kind, app_id, message) VALUES (1, 'SubmitRepeated', ?, 'again')").bind(1, app).run();
  EXPECT_TRUE(apps_.submit_repeat_recorded(app));
  EXPECT_FALSE(apps_.submit_repeat_recorded(other));

  const auto ownership = apps_.ownership(app);
  ASSERT_TRUE(ownership);
  EXPECT_EQ(ownership->owner, "alice");
  EXPECT_EQ(ownership->state, "PENDING");
  EXPECT_FALSE(apps_.ownership(app + 100));
  EXPECT_EQ(logs_.app_owner(other), "bob");

  // themisctl show reads the same rows back, typed as stored.
  const auto jobs = queries_.jobs_of_app(app);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[1]["job"], 1);
  EXPECT_EQ(jobs[1]["state"], "PENDING");
  EXPECT_EQ(jobs[1]["attempt"], 0);
  EXPECT_TRUE(jobs[1]["retry_at"].is_null());
  const auto row = queries_.app_row(app);
  ASSERT_EQ(row.size(), 1u);
  EXPECT_EQ(row[0]["owner"], "alice");
  EXPECT_TRUE(queries_.app_row(app + 100).empty());
}

TEST_F(AppStoreTest, ACancelStopsOnlyActiveJobsAndReleasesOnlyActiveLeases) {
  const std::int64_t app = submit("alice", std::nullopt);
  db_.exec("INSERT INTO hosts(id, name, rack, state, first_gpu, gpu_count, registered_at, last_heartbeat) "
           "VALUES (1, 'h1', 'r', 'up', 0, 2, 0, 0)");
  db_.exec("INSERT INTO gpus(gpu, host_id, local_index, slot) VALUES (0, 1, 0, 0), (1, 1, 1, 1)");
  db_.exec("INSERT INTO rounds(id, started_at, finished_at, trigger, policy, free_gpus, apps, granted, idle, outcome) "
           "VALUES (1, 0, 0, 't', 'p', 2, 1, 2, 0, '{}')");
  db_.prepare("INSERT INTO leases(gpu, app_id, job, round_id, start, expiry, state) VALUES (0, ?1, 0, 1, 0, 50, 'active'), "
              "(1, ?1, 0, 1, 0, 50, 'expired')")
      .bind(1, app)
      .run();
  EXPECT_EQ(queries_.free_gpus(), 1);
  EXPECT_EQ(queries_.next_lease_expiry(), "1970-01-01T00:00:50Z");
  db_.prepare("UPDATE jobs SET state = 'COMPLETED' WHERE app_id = ? AND job = 1").bind(1, app).run();
  EXPECT_EQ(apps_.cancellable_jobs(app), std::vector<std::int64_t>{0});

  releases_.release_app(app, 60, "app cancelled");
  EXPECT_EQ(column("SELECT group_concat(gpu || ':' || state || ':' || coalesce(release_reason, '-'), ' ') FROM "
                   "(SELECT * FROM leases ORDER BY gpu)"),
            "0:released:app cancelled 1:expired:-");
  EXPECT_EQ(queries_.free_gpus(), 2);
  EXPECT_FALSE(queries_.next_lease_expiry());

  // An ended app has nothing to stop: a cancel of it changes no job (the request itself is acknowledged).
  db_.prepare("UPDATE jobs SET state = 'CANCELLED' WHERE app_id = ?").bind(1, app).run();
  db_.prepare("UPDATE apps SET state = 'CANCELLED' WHERE id = ?").bind(1, app).run();
  EXPECT_TRUE(apps_.cancellable_jobs(app).empty());
  EXPECT_EQ(apps_.ownership(app)->state, "CANCELLED");
}

TEST_F(AppStoreTest, ALogReadFindsWhereAnEndedAttemptRan) {
  const std::int64_t app = submit("alice", std::nullopt);
  db_.exec("INSERT INTO hosts(id, name, rack, state, first_gpu, gpu_count, registered_at, last_heartbeat) "
           "VALUES (1, 'h1', 'r', 'up', 0, 1, 0, 0), (2, 'h2', 'r', 'up', 1, 2, 0, 0)");
  db_.exec("INSERT INTO gpus(gpu, host_id, local_index, slot) VALUES (0, 1, 0, 0), (1, 2, 0, 1), (2, 2, 1, 2)");
  db_.exec("INSERT INTO rounds(id, started_at, finished_at, trigger, policy, free_gpus, apps, granted, idle, outcome) "
           "VALUES (1, 0, 0, 't', 'p', 3, 1, 1, 0, '{}'), (2, 1, 1, 't', 'p', 3, 1, 2, 0, '{}')");
  db_.prepare("INSERT INTO leases(gpu, app_id, job, round_id, start, expiry, state) VALUES (0, ?1, 0, 1, 0, 1, 'expired'), "
              "(2, ?1, 0, 2, 1, 2, 'expired'), (1, ?1, 0, 2, 1, 2, 'expired')")
      .bind(1, app)
      .run();
  EXPECT_EQ(logs_.latest_attempt(app, 0)->attempt, 0u);
  EXPECT_FALSE(logs_.latest_attempt(app, 7));
  db_.prepare("UPDATE jobs SET attempt = 2, state = 'RUNNING', placement = '[1,2]' WHERE app_id = ? AND job = 0").bind(1, app).run();
  EXPECT_EQ(logs_.latest_attempt(app, 0)->placement_json, "[1,2]");
  EXPECT_FALSE(logs_.attempt_ended(app, 0, 2));
  EXPECT_TRUE(logs_.attempt_ended(app, 0, 1));  // an earlier attempt
  EXPECT_TRUE(logs_.attempt_ended(app, 7, 2));  // no such job
  EXPECT_EQ(logs_.last_lease_gpus(app, 0), (std::vector<GpuIndex>{1, 2}));  // the last round's, in GPU order
  EXPECT_TRUE(logs_.last_lease_gpus(app, 1).empty());
  EXPECT_EQ(logs_.host_of_gpu(2), "h2");
  EXPECT_EQ(logs_.host_of_gpu(9), "");
}

}  // namespace
}  // namespace themis::store
