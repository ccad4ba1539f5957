// Real processes on loopback with CURVE: a coordinator, two nodelets on two racks with one virtual GPU
// each, two apps, each with its own themis-launch, training with themis-train (LibTorch, Gloo, CPU).
// "wide" needs both GPUs (a 2-rank gang across the racks); "small" needs one. With leases of 3 s the
// auction soon hands a GPU to "small" (its ρ grows while it waits), which takes a GPU from "wide": wide's
// launcher stops its job (checkpoint), and once "small" finishes, resumes it from the checkpoint.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <regex>
#include <string>

#include "tests/integration/test_cluster.h"

namespace themis::testing {
namespace {

const std::string kBin = THEMIS_BIN_DIR;

std::string spec(const std::string& name, const std::string& dir, int gpus_per_job, int iterations) {
  return "name = \"" + name + "\"\n" + "command = [\"" + kBin +
         "/themis-train\", \"--model\", \"mlp\", \"--hidden\", \"16\", \"--batch-size\", \"8\"]\n"
         "hyperparameters = { lr = [\"0.05\"] }\n"
         "resources = { gpus_per_job = " + std::to_string(gpus_per_job) + " }\n"
         "checkpoint = { dir = \"" + dir + "/ckpt/{app}/{job}\", grace_period = \"20s\" }\n"
         "[scheduler]\nlauncher = \"foreground\"\niterations = " + std::to_string(iterations) +
         "\nserial_iter_time = 0.01\n";
}

// Submits `text` as alice's app `name`; returns its id.
std::string submit_spec(TestCluster& cluster, const std::string& name, const std::string& text) {
  const auto r = cluster.ctl("alice", {"submit", "--parsable", cluster.write_file(name + ".toml", text)});
  EXPECT_EQ(r.code, 0) << r.out;
  return r.first_stdout_line();
}

// The app's themis-launch, run by hand, logging to launcher-<app>.log in the cluster's directory.
Process start_launcher(TestCluster& cluster, const std::string& app) {
  return Process({kBin + "/themis-launch", "--coordinator", cluster.endpoint(), "--key", cluster.key("alice", true),
                  "--server-key", cluster.key("coordinator", false), "--app", app},
                 cluster.dir() + "/launcher-" + app + ".log");
}

TEST(LauncherIntegration, PreemptedJobResumesFromItsCheckpointAndEveryAppFinishes) {
  TestCluster cluster({{"node-a", "r1", {{0}}}, {"node-b", "r2", {{0}}}}, "3s");
  ASSERT_TRUE(cluster.start());

  auto submit = [&](const std::string& name, int gpus, int iterations) {
    return submit_spec(cluster, name, spec(name, cluster.dir(), gpus, iterations));
  };
  auto launcher = [&](const std::string& app) { return start_launcher(cluster, app); };
  // Long enough that the small app, waiting, overtakes its ρ while it still runs (about 20 s alone).
  const std::string wide = submit("wide", 2, 12000);
  Process wide_launcher = launcher(wide);
  // The small app arrives once the wide job trains, so that its preemption has progress to checkpoint.
  ASSERT_TRUE(cluster.wait_for([&] { return read_text(cluster.dir() + "/launcher-" + wide + ".log").find("attempt 1 started") !=
                                            std::string::npos; },
                               std::chrono::seconds(60)))
      << read_text(cluster.dir() + "/launcher-" + wide + ".log");
  const std::string small = submit("small", 1, 300);
  Process small_launcher = launcher(small);

  const bool done = cluster.wait_for(
      [&] { return cluster.sql("SELECT count(*) FROM apps WHERE state = 'COMPLETED'") == "2"; }, std::chrono::seconds(150));
  const std::string wide_log = read_text(cluster.dir() + "/launcher-" + wide + ".log");
  ASSERT_TRUE(done) << "apps: " << cluster.sql("SELECT group_concat(name || ' ' || state, ', ') FROM apps") << "\n"
                    << wide_log << read_text(cluster.dir() + "/launcher-" + small + ".log")
                    << read_text(cluster.coordinator_log());
  EXPECT_EQ(wide_launcher.wait(), 0);
  EXPECT_EQ(small_launcher.wait(), 0);

  // The wide job was stopped with a checkpoint and resumed from it on a later attempt.
  EXPECT_GE(std::stoi(cluster.sql("SELECT attempt FROM jobs WHERE app_id = " + wide)), 2);
  EXPECT_NE(wide_log.find("preempted (checkpointed)"), std::string::npos) << wide_log << read_text(cluster.coordinator_log());
  std::smatch m;
  ASSERT_TRUE(std::regex_search(wide_log, m, std::regex("resumed from iteration ([0-9]+)"))) << wide_log;
  EXPECT_GT(std::stoi(m[1]), 0);
  EXPECT_NE(wide_log.find("completed at iteration 12000"), std::string::npos) << wide_log;
  // Every job ran on GPUs leased to its app: the coordinator refused nothing. (A refused launch writes no
  // LaunchRequested event, so counting those would count the small job's accepted attempts instead: under
  // load it may be preempted and started again, which is not a refusal.)
  const std::string small_log = read_text(cluster.dir() + "/launcher-" + small + ".log");
  EXPECT_EQ(small_log.find("refused"), std::string::npos) << small_log;
  EXPECT_EQ(wide_log.find("refused"), std::string::npos) << wide_log;
  EXPECT_GE(std::stoi(cluster.sql("SELECT count(*) FROM events WHERE kind = 'LaunchRequested' AND app_id = " + small)), 1)
      << cluster.sql("SELECT group_concat(printf('%.3f', ts) || ' ' || kind || ' ' || coalesce(job, '') || ' ' || message, '\n') "
                     "FROM events WHERE app_id = " + small);
}

// A launcher gives back leased GPUs that no job of its app runs on and none waits for (docs/launcher.md, "Idle
// GPUs"). "halving" runs successive halving over two one-GPU jobs on both GPUs; after its first phase one job
// goes on alone for 30 s, while "waiter", submitted once both GPUs were leased to halving, wants one GPU. The
// leases last 120 s: without the give-back the waiter would start only when they end, after halving is done.
// The jobs are paced (10 ms per iteration) so that the phases last wall time, whatever the machine's load.
TEST(LauncherIntegration, AGpuNoJobUsesIsGivenBackAndAWaitingAppRunsOnItBeforeTheLeaseEnds) {
  TestCluster cluster({{"node-a", "r1", {{0}}}, {"node-b", "r2", {{0}}}}, "120s");
  ASSERT_TRUE(cluster.start());
  auto paced_spec = [&](const std::string& name, const std::string& rates, const std::string& scheduler) {
    return "name = \"" + name + "\"\ncommand = [\"" + kBin +
           "/themis-train\", \"--model\", \"mlp\", \"--hidden\", \"16\", \"--batch-size\", \"8\", "
           "\"--min-iteration-seconds\", \"0.01\"]\n"
           "hyperparameters = { lr = [" + rates + "] }\nresources = { gpus_per_job = 1 }\n"
           "checkpoint = { dir = \"" + cluster.dir() + "/ckpt/{app}/{job}\", grace_period = \"20s\" }\n"
           "[scheduler]\nlauncher = \"foreground\"\n" + scheduler + "serial_iter_time = 0.01\n";
  };
  auto submit = [&](const std::string& name, const std::string& text) { return submit_spec(cluster, name, text); };
  auto launcher = [&](const std::string& app) { return start_launcher(cluster, app); };
  const std::string halving = submit("halving", paced_spec("halving", "\"0.05\", \"0.4\"",
                                                           "kind = \"successive-halving\"\nphase_iterations = [100, 3000]\n"));
  Process halving_launcher = launcher(halving);
  ASSERT_TRUE(cluster.wait_for([&] {
    return cluster.sql("SELECT count(*) FROM leases WHERE state = 'active' AND app_id = " + halving) == "2";
  }, std::chrono::seconds(60))) << read_text(cluster.dir() + "/launcher-" + halving + ".log");
  const std::string waiter = submit("waiter", paced_spec("waiter", "\"0.05\"", "iterations = 200\n"));
  Process waiter_launcher = launcher(waiter);

  const bool waiter_done = cluster.wait_for(
      [&] { return cluster.sql("SELECT state FROM apps WHERE id = " + waiter) == "COMPLETED"; }, std::chrono::seconds(100));
  const std::string halving_state = cluster.sql("SELECT state FROM apps WHERE id = " + halving);
  const std::string halving_log = read_text(cluster.dir() + "/launcher-" + halving + ".log");
  ASSERT_TRUE(waiter_done) << halving_log << read_text(cluster.dir() + "/launcher-" + waiter + ".log")
                           << read_text(cluster.coordinator_log());
  EXPECT_NE(halving_state, "COMPLETED") << "the waiter ran while halving's second phase ran, on the GPU it gave back";
  const std::string given_back = cluster.sql(
      "SELECT count(*) FROM leases WHERE app_id = " + halving + " AND state = 'released' AND released_at < expiry "
      "AND release_reason LIKE 'given back by its launcher%'");
  EXPECT_GE(std::stoi(given_back), 1) << cluster.sql("SELECT group_concat(gpu || ' ' || state || ' ' || "
                                                    "coalesce(release_reason, ''), '; ') FROM leases");
  EXPECT_NE(cluster.sql("SELECT count(*) FROM events WHERE kind = 'LeaseReleased' AND app_id = " + halving), "0");
  EXPECT_NE(halving_log.find("giving back GPUs"), std::string::npos) << halving_log;
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT state FROM apps WHERE id = " + halving) == "COMPLETED"; },
                               std::chrono::seconds(100)))
      << halving_log << read_text(cluster.coordinator_log());
  EXPECT_EQ(halving_launcher.wait(), 0);
  EXPECT_EQ(waiter_launcher.wait(), 0);
  const std::string waiter_log = read_text(cluster.dir() + "/launcher-" + waiter + ".log");
  EXPECT_EQ(waiter_log.find("refused"), std::string::npos) << waiter_log;
  EXPECT_EQ(halving_log.find("refused"), std::string::npos) << halving_log;
}

}  // namespace
}  // namespace themis::testing
