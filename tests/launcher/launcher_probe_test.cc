// The first-iteration probe of apps with a launcher (docs/reliability.md "Probe"), with real processes on
// loopback: coordinator, nodelets, the managed themis-launch the coordinator starts, themis-train (LibTorch).
// The probe's one-GPU lease goes to the launcher, which starts the app's first job on it with the job's
// real environment (typed THEMIS_HPARAMS with its iteration target, THEMIS_JOB_ID, the report socket).
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/faults/invariants.h"
#include "tests/integration/test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;

const std::string kBin = THEMIS_BIN_DIR;

// `args`: themis-train's options, as TOML strings after the program.
std::string train_spec(const std::string& name, const std::string& dir, const std::string& args,
                       const std::string& hyperparameters, int iterations) {
  return "name = \"" + name + "\"\ncommand = [\"" + kBin + "/themis-train\", " + args + "]\n"
         "hyperparameters = " + hyperparameters + "\nresources = { gpus_per_job = 2 }\n"
         "checkpoint = { dir = \"" + dir + "/ckpt/{app}/{job}\", grace_period = \"20s\" }\n"
         "[scheduler]\niterations = " + std::to_string(iterations) + "\nserial_iter_time = 0.01\n";
}

std::string submit(TestCluster& cluster, const std::string& name, const std::string& spec) {
  const auto r = cluster.ctl("alice", {"submit", "--parsable", cluster.write_file(name + ".toml", spec)});
  EXPECT_EQ(r.code, 0) << r.out;
  return r.first_stdout_line();
}

std::string diagnostics(TestCluster& cluster, const std::string& app) {
  const std::string host = cluster.sql("SELECT host FROM events WHERE kind = 'LauncherStarted' AND app_id = " + app +
                                       " ORDER BY id DESC LIMIT 1");
  return cluster.sql("SELECT group_concat(kind || ': ' || message, char(10)) FROM events WHERE app_id = " + app) + "\n" +
         read_text(cluster.dir() + "/" + host + "/launchers/" + app + "/launcher-1.log") + "\n" +
         read_text(cluster.coordinator_log());
}

TEST(LauncherProbe, AJobWithAUserErrorFailsItsAppInItsProbeBeforeAnyAuction) {
  // The probe lease (300 s) outlasts the wait below: the app can only fail by its job's exit.
  TestCluster cluster({{"node-a", "r1", {{0, 1}}}}, "60s", "probe_duration = \"300s\"\n");
  ASSERT_TRUE(cluster.start());
  // A typo in a hyper-parameter: themis-train rejects the model at start (exit 2, a user error).
  const std::string app =
      submit(cluster, "typo", train_spec("typo", cluster.dir(), "\"--hidden\", \"16\"", "{ model = [\"resnet_modle\"], lr = [0.05] }", 1000));
  // Probing from the start: waiting for its GPU, or already running on it when the launcher attached and a round
  // ran before this query (seen once under load: "running").
  const std::string probe = cluster.sql("SELECT probe FROM apps WHERE id = " + app);
  ASSERT_TRUE(probe == "waiting" || probe == "running") << probe;

  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT state FROM apps WHERE id = " + app) == "FAILED"; }, 90s))
      << diagnostics(cluster, app);
  EXPECT_EQ(cluster.sql("SELECT probe FROM apps WHERE id = " + app), "failed");
  const std::string why = cluster.sql("SELECT message FROM events WHERE kind = 'AppFailed' AND app_id = " + app);
  EXPECT_EQ(why.rfind("its probe failed: job 0: user_error: ", 0), 0U) << why;
  EXPECT_EQ(cluster.sql("SELECT class FROM job_failures WHERE app_id = " + app), "user_error");
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM events WHERE kind = 'ProbeFailed' AND app_id = " + app), "1");
  // The launcher started the job (one attempt, on one GPU, with its own environment); the worker read the
  // typed hyper-parameters and rejected the model.
  EXPECT_EQ(cluster.sql("SELECT group_concat(message, '; ') FROM events WHERE kind = 'LaunchRequested' AND app_id = " + app)
                .substr(0, 13),
            "attempt 1 on ")
      << diagnostics(cluster, app);
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM events WHERE kind = 'LaunchRequested' AND app_id = " + app), "1");
  EXPECT_EQ(cluster.sql("SELECT json_array_length(substr(message, 14)) FROM events WHERE kind = 'LaunchRequested' AND app_id = " +
                        app),
            "1");
  EXPECT_NE(cluster.sql("SELECT log_tail FROM jobs WHERE app_id = " + app).find("resnet_modle"), std::string::npos);
  // One lease, from the probe; no auction row: the app never bid or won anything else.
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM leases WHERE app_id = " + app), "1");
  EXPECT_EQ(cluster.sql("SELECT group_concat(coalesce(grant_kind, 'none')) FROM bids WHERE app_id = " + app), "probe");
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM leases WHERE app_id = " + app + " AND state = 'active'"), "0");
  const double seconds = std::stod(cluster.sql(
      "SELECT (SELECT ts FROM events WHERE kind = 'AppFailed' AND app_id = " + app +
      ") - (SELECT ts FROM events WHERE kind = 'ProbeStarted' AND app_id = " + app + ")"));
  std::printf("probe start to app failed: %.2f s (probe lease: 300 s)\n", seconds);
  const auto explain = cluster.ctl("alice", {"explain", app});
  EXPECT_NE(explain.out.find("its probe"), std::string::npos) << explain.out;
  for (const auto& violation : faults::check_invariants({cluster.db_path(), {std::stoll(app)}, true, cluster.dir()})) {
    ADD_FAILURE() << violation;
  }
}

TEST(LauncherProbe, AGoodJobPassesItsProbeOnOneGpuThenFinishesOnItsWholeGang) {
  TestCluster cluster({{"node-a", "r1", {{0}}}, {"node-b", "r2", {{0}}}}, "60s", "probe_duration = \"2s\"\n");
  ASSERT_TRUE(cluster.start());
  // The CNN's iterations (batches of 256) are slow enough that the job still runs when its 2-s probe ends.
  const std::string app = submit(cluster, "good", train_spec("good", cluster.dir(), "\"--model\", \"cnn\", \"--batch-size\", \"256\"",
                                                             "{ lr = [0.05] }", 600));

  ASSERT_TRUE(cluster.wait_for([&] {
    const auto s = cluster.sql("SELECT state FROM apps WHERE id = " + app);
    return s == "COMPLETED" || s == "FAILED";
  }, 240s)) << diagnostics(cluster, app);
  ASSERT_EQ(cluster.sql("SELECT state || ' ' || probe FROM apps WHERE id = " + app), "COMPLETED passed")
      << diagnostics(cluster, app);
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM events WHERE app_id = " + app + " AND kind IN ('ProbeStarted','ProbePassed')"), "2");
  // Its first attempt ran alone on one GPU (the probe); the last on the whole gang of two.
  EXPECT_EQ(cluster.sql("SELECT json_array_length(substr(message, instr(message, ' on ') + 4)) FROM events "
                        "WHERE kind = 'LaunchRequested' AND app_id = " + app + " ORDER BY id LIMIT 1"),
            "1")
      << diagnostics(cluster, app);
  EXPECT_EQ(cluster.sql("SELECT json_array_length(substr(message, instr(message, ' on ') + 4)) FROM events "
                        "WHERE kind = 'LaunchRequested' AND app_id = " + app + " ORDER BY id DESC LIMIT 1"),
            "2")
      << diagnostics(cluster, app);
  // The probe grant first; then the app took part in rounds like any other.
  EXPECT_EQ(cluster.sql("SELECT grant_kind FROM bids WHERE app_id = " + app + " ORDER BY round_id LIMIT 1"), "probe");
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM bids WHERE app_id = " + app + " AND grant_kind = 'probe'"), "1");
  EXPECT_GT(std::stoi(cluster.sql("SELECT count(*) FROM bids WHERE app_id = " + app + " AND grant_kind <> 'probe'")), 0);
  const std::string log = read_text(cluster.dir() + "/" +
                                    cluster.sql("SELECT host FROM events WHERE kind = 'LauncherStarted' AND app_id = " + app) +
                                    "/launchers/" + app + "/launcher-1.log");
  EXPECT_NE(log.find("for the app's probe"), std::string::npos) << log;
  EXPECT_NE(log.find("completed at iteration 600"), std::string::npos) << diagnostics(cluster, app);
  for (const auto& violation : faults::check_invariants({cluster.db_path(), {std::stoll(app)}, true, cluster.dir()})) {
    ADD_FAILURE() << violation;
  }
}

TEST(LauncherProbe, AShortJobPassesItsProbeAndTheAppCompetesForTheRest) {
  // Two one-GPU jobs; the probe lease (300 s) outlasts the test: only the job's completion ends the probe.
  TestCluster cluster({{"node-a", "r1", {{0, 1}}}}, "60s", "probe_duration = \"300s\"\n");
  ASSERT_TRUE(cluster.start());
  std::string spec = train_spec("pair", cluster.dir(), "\"--hidden\", \"16\", \"--batch-size\", \"8\"",
                                "{ lr = [0.05, 0.1] }", 300);
  spec.replace(spec.find("gpus_per_job = 2"), 16, "gpus_per_job = 1");
  const std::string app = submit(cluster, "pair", spec);

  ASSERT_TRUE(cluster.wait_for([&] {
    const auto s = cluster.sql("SELECT state || ' ' || probe FROM apps WHERE id = " + app);
    return s == "COMPLETED passed" || s.rfind("FAILED", 0) == 0;
  }, 120s)) << diagnostics(cluster, app);
  EXPECT_EQ(cluster.sql("SELECT state || ' ' || probe FROM apps WHERE id = " + app), "COMPLETED passed");
  // The probe passes at the first of two signs, whichever the coordinator reads first: the job's completion,
  // or the launcher's first report of iterations done (a 300-iteration job often reports before it ends).
  const std::string passed = cluster.sql("SELECT message FROM events WHERE kind = 'ProbePassed' AND app_id = " + app);
  EXPECT_TRUE(passed == "its job completed during the probe" ||
              passed == "its job trained on one GPU (the launcher reports iterations done); the app now competes for GPUs")
      << passed;
  EXPECT_EQ(cluster.sql("SELECT group_concat(state, ' ') FROM jobs WHERE app_id = " + app), "COMPLETED COMPLETED");
  // The probe ran one job; the other was launched only after the app competed.
  EXPECT_EQ(cluster.sql("SELECT grant_kind FROM bids WHERE app_id = " + app + " ORDER BY round_id LIMIT 1"), "probe");
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM events e WHERE kind = 'LaunchRequested' AND app_id = " + app +
                        " AND id < (SELECT id FROM events WHERE kind = 'ProbePassed' AND app_id = " + app + ")"),
            "1");
  for (const auto& violation : faults::check_invariants({cluster.db_path(), {std::stoll(app)}, true, cluster.dir()})) {
    ADD_FAILURE() << violation;
  }
}

}  // namespace
}  // namespace themis::testing
