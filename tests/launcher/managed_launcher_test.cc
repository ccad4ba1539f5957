// Real processes on loopback with CURVE: the coordinator starts an app's launcher through a nodelet on
// submit (with a per-app key it enrols and hands over the encrypted channel), the launcher is killed
// with SIGKILL mid-training, the coordinator starts a new generation, which re-attaches, takes over the
// scheduler state, stops the job the dead launcher left running (checkpoint) and resumes it to the end.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "tests/faults/invariants.h"
#include "tests/integration/test_cluster.h"

namespace themis::testing {
namespace {

const std::string kBin = THEMIS_BIN_DIR;

// The pid of the themis-launch serving `app` of the coordinator at `endpoint`, or -1.
pid_t find_launcher(const std::string& endpoint, const std::string& app) {
  pid_t found = -1;
  DIR* proc = ::opendir("/proc");
  if (!proc) return found;
  while (const dirent* entry = ::readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in("/proc/" + name + "/cmdline");
    std::vector<std::string> args;
    for (std::string arg; std::getline(in, arg, '\0');) args.push_back(arg);
    if (args.empty() || args[0].find("themis-launch") == std::string::npos) continue;
    bool ours = false, this_app = false;
    for (std::size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "--coordinator" && args[i + 1] == endpoint) ours = true;
      if (args[i] == "--app" && args[i + 1] == app) this_app = true;
    }
    if (ours && this_app) found = static_cast<pid_t>(std::stol(name));
  }
  ::closedir(proc);
  return found;
}

TEST(ManagedLauncher, KilledLauncherIsRestartedByTheCoordinatorAndTheAppFinishes) {
  TestCluster cluster({{"node-a", "r1", {{0}}}, {"node-b", "r2", {{0}}}}, "60s");
  ASSERT_TRUE(cluster.start());

  const std::string spec =
      "name = \"managed\"\ncommand = [\"" + kBin +
      "/themis-train\", \"--model\", \"mlp\", \"--hidden\", \"16\", \"--batch-size\", \"8\", \"--checkpoint-every\", \"1000\"]\n"
      "hyperparameters = { lr = [\"0.05\"] }\nresources = { gpus_per_job = 1 }\n"
      "checkpoint = { dir = \"" + cluster.dir() + "/ckpt/{app}/{job}\", grace_period = \"20s\" }\n"
      "[scheduler]\niterations = 60000\nserial_iter_time = 0.001\n";
  const auto submitted = cluster.ctl("alice", {"submit", "--parsable", cluster.write_file("managed.toml", spec)});
  ASSERT_EQ(submitted.code, 0) << submitted.out;
  const std::string app = submitted.first_stdout_line();

  // The coordinator started generation 1 on a nodelet; it attached with its own key and runs the job.
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT state FROM jobs WHERE app_id = " + app) == "RUNNING"; },
                               std::chrono::seconds(90)))
      << read_text(cluster.coordinator_log());
  const std::string host = cluster.sql("SELECT host FROM events WHERE kind = 'LauncherStarted' AND app_id = " + app);
  ASSERT_FALSE(host.empty());
  EXPECT_NE(cluster.sql("SELECT message FROM events WHERE kind = 'LauncherAttached' AND app_id = " + app)
                .find("alice, generation 1"),
            std::string::npos);
  const std::string key_file = cluster.dir() + "/" + host + "/launchers/" + app + "/generation-1/launcher.key_secret";
  struct stat st {};
  ASSERT_EQ(::stat(key_file.c_str(), &st), 0) << key_file;
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  pid_t pid = -1;
  ASSERT_TRUE(cluster.wait_for([&] { return (pid = find_launcher(cluster.endpoint(), app)) > 0; }, std::chrono::seconds(10)));
  // Let the job make progress (a checkpoint, every 1000 iterations) before the launcher dies; the
  // rest of its 60000 iterations takes far longer than a restart.
  const std::string ckpt_dir = cluster.dir() + "/ckpt/" + app + "/0";
  auto has_checkpoint = [&] {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(ckpt_dir, ec)) {
      if (entry.path().extension() == ".thm" && entry.path().filename().string().rfind("ckpt-", 0) == 0) return true;
    }
    return false;
  };
  ASSERT_TRUE(cluster.wait_for(has_checkpoint, std::chrono::seconds(120)));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  // While generation 2 takes over, and at the end, the fault matrix's invariants hold (docs/reliability.md).
  const faults::InvariantInput invariants{cluster.db_path(), {std::stoll(app)}, true, cluster.dir()};
  ASSERT_TRUE(cluster.wait_for([&] {
    return cluster.sql("SELECT count(*) FROM events WHERE kind = 'LauncherAttached' AND app_id = " + app +
                       " AND message LIKE '%generation 2%'") == "1";
  }, std::chrono::seconds(120)));
  for (const auto& violation : faults::check_invariants(invariants)) ADD_FAILURE() << "after the takeover: " << violation;

  const bool done = cluster.wait_for(
      [&] { return cluster.sql("SELECT state FROM apps WHERE id = " + app) == "COMPLETED"; }, std::chrono::seconds(300));
  const std::string host2 = cluster.sql("SELECT host FROM events WHERE kind = 'LauncherStarted' AND app_id = " + app +
                                        " ORDER BY id DESC LIMIT 1");
  const std::string log2 = read_text(cluster.dir() + "/" + host2 + "/launchers/" + app + "/launcher-2.log");
  ASSERT_TRUE(done) << "app: " << cluster.sql("SELECT state FROM apps WHERE id = " + app) << "\n"
                    << cluster.sql("SELECT group_concat(kind || ': ' || message, char(10)) FROM events WHERE app_id = " + app)
                    << "\n" << log2;

  EXPECT_EQ(cluster.sql("SELECT count(*) FROM events WHERE kind = 'LauncherStarted' AND app_id = " + app), "2");
  EXPECT_NE(cluster.sql("SELECT message FROM events WHERE kind = 'LauncherExited' AND app_id = " + app).find("signal 9"),
            std::string::npos);
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM events WHERE kind = 'LauncherAttached' AND app_id = " + app +
                        " AND message LIKE '%generation 2%'"),
            "1");
  // The job the dead launcher left running was stopped with a checkpoint and resumed from it.
  EXPECT_NE(log2.find("left running by an earlier launcher"), std::string::npos) << log2;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(log2, m, std::regex("resumed from iteration ([0-9]+)"))) << log2;
  EXPECT_GT(std::stoi(m[1]), 0);
  EXPECT_NE(log2.find("completed at iteration 60000"), std::string::npos) << log2;
  // Generation 2 exits by itself once the app finished; nothing of the app keeps running.
  EXPECT_TRUE(cluster.wait_for([&] { return find_launcher(cluster.endpoint(), app) < 0; }, std::chrono::seconds(30)));
  for (const auto& violation : faults::check_invariants(invariants)) ADD_FAILURE() << "at the end: " << violation;
}

TEST(ManagedLauncher, CancellingALauncherAppEndsItStopsItsLauncherAndFreesItsGpus) {
  TestCluster cluster({{"node-a", "r1", {{0}}}}, "60s");
  ASSERT_TRUE(cluster.start());
  const std::string spec =
      "name = \"to-cancel\"\ncommand = [\"" + kBin +
      "/themis-train\", \"--model\", \"mlp\", \"--hidden\", \"16\", \"--batch-size\", \"8\"]\n"
      "hyperparameters = { lr = [\"0.05\"] }\nresources = { gpus_per_job = 1 }\n"
      "checkpoint = { dir = \"" + cluster.dir() + "/ckpt/{app}/{job}\", grace_period = \"20s\" }\n"
      "[scheduler]\niterations = 10000000\nserial_iter_time = 0.001\n";
  const auto submitted = cluster.ctl("alice", {"submit", "--parsable", cluster.write_file("cancel.toml", spec)});
  ASSERT_EQ(submitted.code, 0) << submitted.out;
  const std::string app = submitted.first_stdout_line();
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT state FROM jobs WHERE app_id = " + app) == "RUNNING"; },
                               std::chrono::seconds(90)))
      << read_text(cluster.coordinator_log());
  ASSERT_GT(find_launcher(cluster.endpoint(), app), 0);

  const auto cancelled = cluster.ctl("alice", {"cancel", app});
  ASSERT_EQ(cancelled.code, 0) << cancelled.out;
  EXPECT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT state FROM apps WHERE id = " + app) == "CANCELLED"; },
                               std::chrono::seconds(30)));
  EXPECT_TRUE(cluster.wait_for(
      [&] { return cluster.sql("SELECT count(*) FROM jobs WHERE app_id = " + app + " AND state IN ('STARTING','RUNNING','STOPPING')") == "0"; },
      std::chrono::seconds(60)));
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM leases WHERE app_id = " + app + " AND state = 'active'"), "0");
  EXPECT_TRUE(cluster.wait_for([&] { return find_launcher(cluster.endpoint(), app) < 0; }, std::chrono::seconds(60)));
}

}  // namespace
}  // namespace themis::testing
