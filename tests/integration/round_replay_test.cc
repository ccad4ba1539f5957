// The coordinator and themis-sim run the same rounds. A real coordinator with real nodelets (virtual
// GPUs on two racks) runs a seeded scenario of jobs of known durations; it records every round's
// snapshots, random state and plan (round_records). Each record, replayed through the round planner,
// gives the plan the coordinator applied, and the leases in the database are that plan's. A round that
// was settled on the snapshot it opened on is also run through planner::plan_round, themis-sim's round
// path, with the same result. Wall-clock jitter changes which rounds happen, never what a round decides.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "core/rng.h"
#include "policy/arbiter/policies/registry.h"
#include "policy/planner/round_planner.h"
#include "policy/planner/round_record.h"
#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::string job_spec(const std::string& name, int jobs, int gpus_per_job, const std::string& seconds) {
  std::string values;
  for (int i = 0; i < jobs; ++i) values += (i ? ", " : "") + std::to_string(i);
  return "name = \"" + name + "\"\ncommand = [\"sh\", \"-c\", \"exec sleep " + seconds + "\"]\n"
         "[hyperparameters]\nx = [" + values + "]\n"
         "[resources]\ngpus_per_job = " + std::to_string(gpus_per_job) + "\n"
         "[checkpoint]\ngrace_period = \"1s\"\n";
}

struct Record {
  std::int64_t round = 0;
  json opened, rng_state, settled, plan;
};

std::vector<Record> read_records(const std::string& db_path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT round_id, opened, rng_state, settled, plan FROM round_records ORDER BY round_id", -1, &st,
                               nullptr),
            SQLITE_OK);
  std::vector<Record> out;
  const auto text = [&](int c) { return std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, c))); };
  while (sqlite3_step(st) == SQLITE_ROW) {
    out.push_back({sqlite3_column_int64(st, 0), json::parse(text(1)), json::parse(text(2)), json::parse(text(3)), json::parse(text(4))});
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

// A plan without its instants: each lease's length instead of its start and expiry.
json timeless(json plan) {
  plan.erase("now");
  for (json& lease : plan.at("leases")) {
    lease["length_ms"] = std::llround((lease.at("expiry").get<double>() - lease.at("start").get<double>()) * 1000);
    lease.erase("start");
    lease.erase("expiry");
  }
  return plan;
}

// What settle_round reads of a snapshot: all but the clock and the apps' answers to the policy.
json settling_state(json snapshot) {
  snapshot.erase("now");
  for (json& app : snapshot.at("apps")) {
    app.erase("rho");
    app.erase("demand");
    app.erase("bid");
  }
  return snapshot;
}

TEST(RoundReplay, EveryRecordedRoundReplaysToThePlanTheCoordinatorApplied) {
  // Two racks; three-second leases so that rounds renew, preempt and hand over GPUs while jobs run.
  TestCluster cluster({{"node-a", "rack-1", {{0, 1}}}, {"node-b", "rack-1", {{0}, {1}}}, {"node-c", "rack-2", {{0, 1}}}}, "3s",
                      "seed = 7\nprobe_duration = \"0s\"\n");
  cluster.start_coordinator();
  for (const char* node : {"node-a", "node-b", "node-c"}) cluster.start_node(node);
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "3"; }, 20s));
  const std::vector<std::string> specs = {job_spec("wide", 2, 2, "5"), job_spec("narrow", 3, 1, "4"), job_spec("one", 1, 1, "7"),
                                          job_spec("pair", 1, 2, "3")};
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto r = cluster.ctl(i % 2 ? "bob" : "alice", {"submit", "--parsable", cluster.write_file("a" + std::to_string(i) + ".toml", specs[i])});
    ASSERT_EQ(r.code, 0) << r.out;
  }
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM apps WHERE state = 'COMPLETED'") == "4"; }, 120s))
      << cluster.sql("SELECT group_concat(name || ' ' || state, ', ') FROM apps") << "\n" << read_text(cluster.coordinator_log());

  const std::vector<Record> records = read_records(cluster.db_path());
  ASSERT_GE(records.size(), 3u);
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM rounds"), std::to_string(records.size()));
  // The coordinator's policy as its configuration builds it (coordinator/policy_factory.cc), without the
  // wall-clock budget, which these small auctions never reach.
  arbiter::policies::PolicySettings settings;
  settings.filter = "offer-bounded";
  settings.lease = 3;
  int renewals = 0, preemptions = 0, starts = 0, same_state = 0;
  for (const Record& r : records) {
    SCOPED_TRACE("round " + std::to_string(r.round));
    const auto state = r.rng_state.get<std::array<std::uint64_t, 4>>();
    auto policy = arbiter::policies::make_policy("themis", settings);
    const planner::RoundPlan replayed = planner::replay_round(r.opened, state, r.settled, *policy);
    EXPECT_EQ(planner::plan_to_json(replayed), r.plan);
    // What the database holds for the round is the plan's leases, with their expiries.
    const std::string stored = cluster.sql(
        "SELECT coalesce(group_concat(gpu || ':' || app_id || ':' || job || ':' || printf('%.6f', expiry), ' '), '') "
        "FROM (SELECT * FROM leases WHERE round_id = " + std::to_string(r.round) + " ORDER BY gpu)");
    std::vector<std::tuple<GpuIndex, std::int64_t, std::int64_t, double>> planned;
    for (const json& l : r.plan.at("leases")) planned.emplace_back(l.at("gpu"), l.at("app"), l.at("job"), l.at("expiry"));
    std::sort(planned.begin(), planned.end());
    std::string expected;
    char buf[64];
    for (const auto& [gpu, app, job, expiry] : planned) {
      std::snprintf(buf, sizeof buf, "%.6f", expiry);
      expected += (expected.empty() ? "" : " ") + std::to_string(gpu) + ":" + std::to_string(app) + ":" + std::to_string(job) + ":" + buf;
    }
    EXPECT_EQ(stored, expected);
    // themis-sim's round path, plan_round on one snapshot, where nothing but the clock moved between the
    // round's opening and its settling: the same plan, its leases as long, from the later instant.
    if (settling_state(r.settled) == settling_state(r.opened)) {
      ++same_state;
      const auto snapshot = planner::snapshot_from_json(r.opened);
      Rng rng = Rng::from_state(state);
      auto sim_policy = arbiter::policies::make_policy("themis", settings);
      EXPECT_EQ(timeless(planner::plan_to_json(planner::plan_round(snapshot->snapshot, *sim_policy, rng))), timeless(r.plan));
    }
    renewals += static_cast<int>(r.plan.at("renewed_jobs").size());
    preemptions += static_cast<int>(r.plan.at("preempted").size());
    starts += static_cast<int>(r.plan.at("starts").size());
  }
  std::printf("round replay: %zu rounds, %d job starts, %d renewals, %d preemptions, %d compared with plan_round\n",
              records.size(), starts, renewals, preemptions, same_state);
  EXPECT_GE(starts, 7);  // every job started at least once
  EXPECT_GE(same_state, 1);
}

}  // namespace
}  // namespace themis::testing
