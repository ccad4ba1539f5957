// Admission control with real processes: apps over the demand cap wait as QUEUED with their reason,
// and are admitted first come, first served as capacity frees (docs/reliability.md).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "coordinator/admission.h"
#include "coordinator/store/database.h"
#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;

TEST(Admission, AppsOverTheDemandCapQueueWithAReasonAndAreAdmittedInOrder) {
  const std::vector<NodeSpec> nodes = {{"node-a", "rack-1", {{0, 1}}}, {"node-b", "rack-1", {{0, 1}}}};
  TestCluster cluster(nodes);
  cluster.write_file("themis.toml", read_text(cluster.dir() + "/themis.toml") + "\n[admission]\nmax_demand_ratio = 1.0\n");
  cluster.start_coordinator();
  for (const auto& n : nodes) cluster.start_node(n.host);
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "2"; }, 20s));
  auto submit = [&](const std::string& name, int gpus, const std::string& seconds) {
    const std::string spec = "name = \"" + name + "\"\ncommand = [\"sh\", \"-c\", \"exec sleep " + seconds +
                             "\"]\n[resources]\ngpus_per_job = " + std::to_string(gpus) + "\n";
    const auto r = cluster.ctl("alice", {"submit", "--parsable", cluster.write_file(name + ".toml", spec)});
    EXPECT_EQ(r.code, 0) << r.out;
    return r.first_stdout_line();
  };
  // Four GPUs, cap 4: the first app (3 GPUs) is admitted; the second (2) would make 5; the third (1)
  // fits on its own but waits behind the second.
  const std::string first = submit("first", 3, "4");
  const std::string second = submit("second", 2, "60");
  const std::string third = submit("third", 1, "60");
  EXPECT_EQ(cluster.sql("SELECT admission FROM apps WHERE id = " + first), "");
  EXPECT_EQ(cluster.sql("SELECT admission FROM apps WHERE id = " + second), "queued: admission (demand 5 GPUs would exceed cap 4)");
  EXPECT_EQ(cluster.sql("SELECT admission FROM apps WHERE id = " + third), "queued: admission (demand 6 GPUs would exceed cap 4)");
  const auto apps = cluster.ctl("bob", {"apps"});
  ASSERT_EQ(apps.code, 0) << apps.out;
  EXPECT_NE(apps.out.find("QUEUED"), std::string::npos) << apps.out;
  EXPECT_NE(apps.out.find("Admission"), std::string::npos) << apps.out;
  const auto wide = cluster.ctl("bob", {"apps", "-o", "wide"});  // the admission text is a wide column
  EXPECT_NE(wide.out.find("queued: admission (demand 5 GPUs would exceed cap 4)"), std::string::npos) << wide.out;
  const auto show = cluster.ctl("alice", {"--json", "show", second});
  const auto doc = nlohmann::json::parse(show.out);
  EXPECT_EQ(doc["app"]["state"], "QUEUED");
  EXPECT_EQ(doc["app"]["reason"], "Admission");  // as `apps` says it
  EXPECT_EQ(doc["app"]["admission"], "queued: admission (demand 5 GPUs would exceed cap 4)");
  const auto shown = cluster.ctl("alice", {"show", second});
  EXPECT_NE(shown.out.find("Admission"), std::string::npos) << shown.out;
  // The first app runs; the queued ones hold nothing while a GPU stays free.
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT state FROM jobs WHERE app_id = " + first) == "RUNNING"; }, 20s))
      << read_text(cluster.coordinator_log());
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM leases_active WHERE app <> " + first), "0");
  // When it finishes, both are admitted in order and run.
  ASSERT_TRUE(cluster.wait_for([&] {
    return cluster.sql("SELECT count(*) FROM jobs WHERE app_id IN (" + second + "," + third + ") AND state = 'RUNNING'") == "2";
  }, 40s)) << read_text(cluster.coordinator_log());
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM apps WHERE admission IS NOT NULL"), "0");
  EXPECT_EQ(cluster.sql("SELECT group_concat(app_id) FROM (SELECT app_id FROM events WHERE kind = 'Admitted' ORDER BY id)"),
            second + "," + third);
}

// "" when every stored admission decision is what one plan of the whole queue, made now from the database,
// decides: no queued app would be admitted, and every queued app has that plan's reason. The coordinator
// decides a new arrival alone, after the queue, only while that gives the same answer.
std::string disagreement_with_a_whole_plan(const TestCluster& cluster, double max_demand_ratio) {
  store::Database db(cluster.db_path(), /*read_only=*/true);
  const std::string demand =
      "a.gpus_per_job * min(a.max_concurrent_jobs, (SELECT count(*) FROM jobs j WHERE j.app_id = a.id "
      "AND j.state NOT IN ('COMPLETED','FAILED','CANCELLED')))";
  coordinator::AdmissionInput input;
  std::map<std::int64_t, std::string> stored;
  auto queued = db.prepare("SELECT a.id, a.admission, " + demand +
                           " FROM apps a WHERE a.state = 'PENDING' AND a.admission IS NOT NULL ORDER BY a.id");
  while (queued.step()) {
    input.queue.push_back({queued.int64(0), queued.int64(2)});
    stored[queued.int64(0)] = queued.text(1);
  }
  auto admitted = db.prepare("SELECT coalesce(sum(" + demand +
                             "), 0) FROM apps a WHERE a.state IN ('PENDING','RUNNING') AND a.admission IS NULL");
  admitted.step();
  input.admitted_demand_gpus = admitted.int64(0);
  auto gpus = db.prepare("SELECT count(*) FROM gpus g JOIN hosts h ON h.id = g.host_id WHERE h.state = 'up'");
  gpus.step();
  input.cluster_gpus = gpus.int64(0);
  const auto plan = coordinator::plan_admission({max_demand_ratio}, input);
  if (!plan.admit.empty()) return "app " + std::to_string(plan.admit.front()) + " waits but would be admitted";
  for (const auto& w : plan.wait) {
    if (stored[w.app] != w.reason) {
      return "app " + std::to_string(w.app) + ": stored '" + stored[w.app] + "', a whole plan says '" + w.reason + "'";
    }
  }
  return "";
}

// Arrivals behind a waiting queue are decided without re-planning it; a cancelled queued app, a cancelled
// admitted app and a new round each change what the apps behind them are told, and every answer stays the
// one a plan of the whole queue gives.
TEST(Admission, EveryDecisionIsWhatAPlanOfTheWholeQueueGives) {
  const std::vector<NodeSpec> nodes = {{"node-a", "rack-1", {{0, 1}}}, {"node-b", "rack-1", {{0, 1}}}};
  TestCluster cluster(nodes);
  cluster.write_file("themis.toml", read_text(cluster.dir() + "/themis.toml") + "\n[admission]\nmax_demand_ratio = 1.0\n");
  cluster.start_coordinator();
  for (const auto& n : nodes) cluster.start_node(n.host);
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "2"; }, 20s));
  auto submit = [&](const std::string& name, int gpus, int jobs, int max_concurrent) {
    std::string values;
    for (int j = 0; j < jobs; ++j) values += (j ? ", " : "") + std::to_string(j);
    const std::string spec = "name = \"" + name + "\"\ncommand = [\"sleep\", \"600\"]\nmax_concurrent_jobs = " +
                             std::to_string(max_concurrent) + "\n[resources]\ngpus_per_job = " + std::to_string(gpus) +
                             "\n[checkpoint]\ngrace_period = \"1s\"\n[hyperparameters]\nx = [" + values + "]\n";
    const auto r = cluster.ctl("alice", {"submit", "--parsable", cluster.write_file(name + ".toml", spec)});
    EXPECT_EQ(r.code, 0) << r.out;
    return r.first_stdout_line();
  };
  auto admission = [&](const std::string& app) { return cluster.sql("SELECT admission FROM apps WHERE id = " + app); };
  auto reason = [](int demand) { return "queued: admission (demand " + std::to_string(demand) + " GPUs would exceed cap 4)"; };
  auto consistent = [&] { return disagreement_with_a_whole_plan(cluster, 1.0); };

  // Cap 4. a: 3 jobs, 2 at a time, 1 GPU each: demand 2, admitted. b (3) would make 5 and waits; c
  // (2 jobs, 2 GPUs) and d (1) wait behind it, each counting everything ahead.
  const std::string a = submit("a", 1, 3, 2);
  const std::string b = submit("b", 3, 1, 1);
  const std::string c = submit("c", 1, 2, 2);
  const std::string d = submit("d", 1, 1, 1);
  EXPECT_EQ(admission(a), "");
  EXPECT_EQ(admission(b), reason(5));
  EXPECT_EQ(admission(c), reason(7));
  EXPECT_EQ(admission(d), reason(8));
  EXPECT_EQ(consistent(), "");

  // c leaves the queue: d's demand no longer counts c's, and the next arrival counts neither.
  ASSERT_EQ(cluster.ctl("alice", {"cancel", c}).code, 0);
  ASSERT_TRUE(cluster.wait_for([&] { return admission(d) == reason(6); }, 20s)) << admission(d);
  EXPECT_EQ(consistent(), "");
  const std::string e = submit("e", 1, 1, 1);
  EXPECT_EQ(admission(e), reason(7));
  EXPECT_EQ(consistent(), "");

  // a ends: b and d fit again (3 + 1 = 4), e would make 5, and the next arrival waits behind e.
  ASSERT_EQ(cluster.ctl("alice", {"cancel", a}).code, 0);
  ASSERT_TRUE(cluster.wait_for([&] { return admission(b) == "" && admission(d) == ""; }, 40s))
      << admission(b) << " / " << admission(d) << "\n" << read_text(cluster.coordinator_log());
  EXPECT_EQ(admission(e), reason(5));
  EXPECT_EQ(consistent(), "");
  const std::string f = submit("f", 1, 1, 1);
  EXPECT_EQ(admission(f), reason(6));
  EXPECT_EQ(consistent(), "");
  EXPECT_EQ(cluster.sql("SELECT group_concat(app_id) FROM (SELECT app_id FROM events WHERE kind = 'Admitted' ORDER BY id)"),
            b + "," + d);
}

}  // namespace
}  // namespace themis::testing
