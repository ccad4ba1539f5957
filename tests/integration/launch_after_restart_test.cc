// A launch the coordinator restarted before sending to its host (docs/reliability.md "Launches across a
// coordinator restart"), against a real coordinator and nodelet: the launch's environment comes from the
// launcher and is kept in memory only (its report keys are secret), so after the restart the launch waits in
// STARTING until the launcher, attaching again, sends it once more; the job then starts with that environment.
// Before, it went out as soon as the host was back, without the launcher's environment: no report endpoint, no
// keys, no job id.
#include <gtest/gtest.h>

#include <csignal>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "net/envelope.h"
#include "process.h"
#include "protocol_launcher.h"
#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;
using W = wire::Envelope::Body::Which;

const std::string kBin = THEMIS_BIN_DIR;

struct Answer {
  bool ack = false;
  std::string message;
};

// The app's launcher as the test drives it: bids for every offered GPU while `bidding`, keeps the last grant's lease of GPU 0,
// the jobs the last Attached named, and the answers to its launches.
class RestartLauncher {
 public:
  RestartLauncher(zmq::context_t& context, TestCluster& cluster, std::int64_t app) : launcher_(context, cluster, "alice", app) {}

  void pump() {
    launcher_.pump_all([&](const net::InMessage& in) {
      const auto body = in.envelope().getBody();
      switch (in.which()) {
        case W::OFFER: {
          if (!bidding) break;
          std::vector<std::int32_t> all;
          for (const auto g : body.getOffer().getGpus()) all.push_back(g);
          launcher_.bid_one_row(in, 2.0, 1.0, all);
          break;
        }
        case W::GRANT:
          for (const auto l : body.getGrant().getLeases()) lease_id = l.getId();
          break;
        case W::ATTACHED:
          ++attached;
          jobs.clear();
          for (const auto j : body.getAttached().getJobs()) jobs[j.getJob()] = std::string(j.getState()) + " " + std::to_string(j.getAttempt());
          break;
        case W::ACK: answers[in.request_id()] = {true, body.getAck().getMessage()}; break;
        case W::ERROR: answers[in.request_id()] = {false, body.getError().getMessage()}; break;
        default: break;
      }
    });
  }

  // Attaching again, as a launcher does when the coordinator it talks to restarted.
  void attach() {
    net::OutMessage out(next_request_++);
    out.body().initAttach().setApp(launcher_.app());
    launcher_.send(out);
  }

  // Job 0's attempt 1 on GPU 0, on the granted lease, with MARKER in its environment; returns the request id.
  std::uint64_t launch(const std::string& marker) {
    const std::uint64_t request = next_request_++;
    net::OutMessage out(request);
    auto msg = out.body().initLaunchJob();
    msg.setApp(launcher_.app());
    msg.setJob(0);
    msg.setAttempt(1);
    msg.initGpus(1).set(0, 0);
    msg.initLeases(1).set(0, lease_id);
    auto env = msg.initEnv(2);
    env[0].setName("MARKER");
    env[0].setValue(marker);
    env[1].setName("THEMIS_JOB_ID");
    env[1].setValue("job-0-attempt-1");
    launcher_.send(out);
    return request;
  }

  bool bidding = true;
  std::int64_t lease_id = 0;
  int attached = 0;
  std::map<std::int64_t, std::string> jobs;
  std::map<std::uint64_t, Answer> answers;

 private:
  ProtocolLauncher launcher_;
  std::uint64_t next_request_ = 100;
};

TEST(LaunchAfterRestart, AStartingLaunchWaitsForItsLauncherToSendItAgainAndStartsWithItsEnvironment) {
  // One GPU, 60 s leases, the app offered every round; hosts are not given up for 10 s, so the nodelet's absence
  // across the two restarts below loses no lease.
  const std::vector<NodeSpec> node{{"node-a", "rack-1", {{0}}}};
  TestCluster cluster(node, "60s", "fairness_knob = 0\nfilter = \"fixed\"\nprobe_duration = \"0s\"\nheartbeat_lives = 100\n");
  cluster.start_coordinator();
  cluster.start_node("node-a");
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "1"; }, 20s))
      << read_text(cluster.coordinator_log());
  const std::string out_file = cluster.dir() + "/job-env.txt";
  const std::string spec = "name = \"env\"\ncommand = [\"sh\", \"-c\", \"echo \\\"$THEMIS_JOB_ID $MARKER\\\" > " + out_file +
                           "; sleep 120\"]\n[resources]\ngpus_per_job = 1\n[checkpoint]\ngrace_period = \"1s\"\n"
                           "[scheduler]\nlauncher = \"foreground\"\n";
  const auto submitted = cluster.ctl("alice", {"submit", "--parsable", cluster.write_file("env.toml", spec)});
  ASSERT_EQ(submitted.code, 0) << submitted.out;
  const std::int64_t app = std::stoll(submitted.out);
  const std::string job_state = "SELECT state || ' ' || attempt FROM jobs WHERE app_id = " + std::to_string(app) + " AND job = 0";

  zmq::context_t context(1);
  RestartLauncher launcher(context, cluster, app);
  ASSERT_TRUE(cluster.wait_for([&] { return launcher.pump(), launcher.lease_id > 0; }, 20s)) << read_text(cluster.coordinator_log());

  // The host goes away with the coordinator; the launch is asked for while it is away, so it waits in STARTING.
  cluster.kill_coordinator(SIGKILL);
  cluster.kill_node("node-a", SIGKILL);
  cluster.start_coordinator();
  launcher.attach();
  ASSERT_TRUE(cluster.wait_for([&] { return launcher.pump(), launcher.attached >= 2; }, 20s)) << read_text(cluster.coordinator_log());
  const std::uint64_t first = launcher.launch("one");
  ASSERT_TRUE(cluster.wait_for([&] { return launcher.pump(), launcher.answers.count(first) > 0; }, 10s));
  ASSERT_TRUE(launcher.answers[first].ack) << launcher.answers[first].message;
  EXPECT_EQ(cluster.sql(job_state), "STARTING 1");

  // The coordinator restarts before the launch went out, and the host comes back: the launch waits.
  cluster.kill_coordinator(SIGKILL);
  cluster.start_coordinator();
  cluster.start_node("node-a");
  ASSERT_TRUE(cluster.wait_for([&] {
    return cluster.sql(job_state) != "STARTING 1" ||
           read_text(cluster.coordinator_log()).find("waiting for its launcher to send the launch again") != std::string::npos;
  }, 20s)) << read_text(cluster.coordinator_log());
  EXPECT_EQ(cluster.sql(job_state), "STARTING 1") << "launched without its launcher's environment";
  const auto explained = cluster.ctl("alice", {"explain", std::to_string(app)});
  EXPECT_NE(explained.out.find("Job " + std::to_string(app) + "_0 attempt 1 waits for its launcher to send its launch again"),
            std::string::npos)
      << explained.out;

  // The launcher attaches again, is told the attempt is STARTING, and sends the launch again: it starts with it.
  launcher.attach();
  ASSERT_TRUE(cluster.wait_for([&] { return launcher.pump(), launcher.attached >= 3; }, 20s)) << read_text(cluster.coordinator_log());
  EXPECT_EQ(launcher.jobs[0], "STARTING 1");
  const std::uint64_t again = launcher.launch("one");
  ASSERT_TRUE(cluster.wait_for([&] { return launcher.pump(), launcher.answers.count(again) > 0; }, 10s));
  EXPECT_TRUE(launcher.answers[again].ack) << launcher.answers[again].message;
  ASSERT_TRUE(cluster.wait_for([&] { return read_text(out_file).find('\n') != std::string::npos; }, 20s))
      << read_text(cluster.coordinator_log());
  EXPECT_EQ(read_text(out_file), "job-0-attempt-1 one\n");
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql(job_state) == "RUNNING 1"; }, 20s)) << read_text(cluster.coordinator_log());

  // Once it went out, the same launch again changes nothing.
  const std::uint64_t repeat = launcher.launch("two");
  ASSERT_TRUE(cluster.wait_for([&] { return launcher.pump(), launcher.answers.count(repeat) > 0; }, 10s));
  EXPECT_TRUE(launcher.answers[repeat].ack) << launcher.answers[repeat].message;
  EXPECT_EQ(launcher.answers[repeat].message, "attempt 1 is already RUNNING");
  EXPECT_EQ(cluster.sql(job_state), "RUNNING 1");
}

// The same with a real themis-launch: its launch waits in STARTING while the job it preempts checkpoints (a
// stand-in app that stops bidding, whose rank takes 6 s over SIGTERM); the coordinator is SIGKILLed and restarted
// in that window. The launcher, told it is not attached, attaches again and sends its launch again, and the rank
// starts with the launcher's job id and report endpoint.
TEST(LaunchAfterRestart, ARealLauncherSendsItsWaitingLaunchAgainAfterTheCoordinatorRestarts) {
  const std::vector<NodeSpec> node{{"node-a", "rack-1", {{0}}}};
  TestCluster cluster(node, "3s", "fairness_knob = 0\nfilter = \"fixed\"\nprobe_duration = \"0s\"\n");
  cluster.start_coordinator();
  cluster.start_node("node-a");
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "1"; }, 20s))
      << read_text(cluster.coordinator_log());
  auto submit = [&](const std::string& name, const std::string& spec) {
    const auto r = cluster.ctl("alice", {"submit", "--parsable", cluster.write_file(name + ".toml", spec)});
    EXPECT_EQ(r.code, 0) << r.out;
    return std::stoll(r.out);
  };
  const std::string slow_stop = "trap 'sleep 6; exit 143' TERM; sleep 300 & wait; sleep 300";
  const std::int64_t holder = submit("holder", "name = \"holder\"\ncommand = [\"sh\", \"-c\", \"" + slow_stop +
                                                   "\"]\n[resources]\ngpus_per_job = 1\n[checkpoint]\ngrace_period = \"20s\"\n"
                                                   "[scheduler]\nlauncher = \"foreground\"\n");
  zmq::context_t context(1);
  RestartLauncher stand_in(context, cluster, holder);
  ASSERT_TRUE(cluster.wait_for([&] { return stand_in.pump(), stand_in.lease_id > 0; }, 20s)) << read_text(cluster.coordinator_log());
  const std::uint64_t held = stand_in.launch("holder");
  const std::string holder_job = "SELECT state FROM jobs WHERE app_id = " + std::to_string(holder) + " AND job = 0";
  ASSERT_TRUE(cluster.wait_for([&] { return stand_in.pump(), cluster.sql(holder_job) == "RUNNING"; }, 20s))
      << (stand_in.answers.count(held) ? stand_in.answers[held].message : "") << read_text(cluster.coordinator_log());

  const std::string out_file = cluster.dir() + "/job-env.txt";
  const std::int64_t app = submit("env", "name = \"env\"\ncommand = [\"sh\", \"-c\", \"echo \\\"$THEMIS_JOB_ID $THEMIS_REPORT_ENDPOINT\\\" > " +
                                             out_file + "; sleep 1\"]\n[resources]\ngpus_per_job = 1\n"
                                             "[scheduler]\nlauncher = \"foreground\"\niterations = 10\nserial_iter_time = 0.01\n");
  const std::string launcher_log = cluster.dir() + "/launcher.log";
  Process launcher({kBin + "/themis-launch", "--coordinator", cluster.endpoint(), "--key", cluster.key("alice", true),
                    "--server-key", cluster.key("coordinator", false), "--app", std::to_string(app)},
                   launcher_log);
  stand_in.bidding = false;  // at its lease's end the GPU goes to the launcher's app; the holder's rank stops slowly
  const std::string job_state = "SELECT state || ' ' || attempt FROM jobs WHERE app_id = " + std::to_string(app) + " AND job = 0";
  ASSERT_TRUE(cluster.wait_for([&] { return stand_in.pump(), cluster.sql(job_state) == "STARTING 1"; }, 30s))
      << read_text(launcher_log) << read_text(cluster.coordinator_log());
  ASSERT_EQ(cluster.sql(holder_job), "STOPPING") << "the launch waits for the holder's rank";

  cluster.kill_coordinator(SIGKILL);
  cluster.start_coordinator();
  ASSERT_TRUE(cluster.wait_for([&] { return read_text(out_file).find('\n') != std::string::npos; }, 30s))
      << read_text(launcher_log) << read_text(cluster.coordinator_log());
  const std::string started = read_text(out_file);
  EXPECT_EQ(started.rfind(std::to_string(app) + "_0@1 tcp://", 0), 0U)
      << "the rank's THEMIS_JOB_ID and THEMIS_REPORT_ENDPOINT: " << started;
  EXPECT_NE(read_text(launcher_log).find("sent its launch again"), std::string::npos) << read_text(launcher_log);
  EXPECT_NE(read_text(cluster.coordinator_log()).find("its launcher sent the launch again"), std::string::npos)
      << read_text(cluster.coordinator_log());
  launcher.kill_and_wait(SIGTERM);
}

}  // namespace
}  // namespace themis::testing
