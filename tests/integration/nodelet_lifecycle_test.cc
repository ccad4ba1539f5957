// A nodelet's start and stop as the coordinator and systemd see them: a clean stop is recorded as a host
// stop, not a loss; a nodelet that cannot reach the coordinator says so in its log, and tells systemd it
// is ready only once registered.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;

std::vector<NodeSpec> one_node() { return {{"n1", "rack-1", {{0}}}}; }

TEST(NodeletLifecycle, CleanStopIsRecordedAsHostStoppedNotAsALoss) {
  TestCluster cluster(one_node());
  cluster.start_coordinator();
  cluster.start_node("n1");
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT state FROM hosts WHERE name = 'n1'") == "up"; }, 10s))
      << read_text(cluster.coordinator_log());
  const auto r = cluster.ctl("alice", {"submit", "--parsable", cluster.write_file("sleep.toml",
      "name = \"sleeper\"\ncommand = [\"sh\", \"-c\", \"exec sleep 60\"]\n[checkpoint]\ngrace_period = \"1s\"\n")});
  ASSERT_EQ(r.code, 0) << r.out;
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT state FROM jobs WHERE app_id = 1") == "RUNNING"; }, 10s))
      << read_text(cluster.coordinator_log());
  const auto stopped_at = std::chrono::steady_clock::now();
  cluster.kill_node("n1", SIGTERM);  // as systemctl stop does
  // Recorded at once, well before the silence would be noticed (kHeartbeatLives x kHeartbeatMs = 5 s).
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM events WHERE kind = 'HostStopped' AND host = 'n1'") == "1"; },
                               3s))
      << read_text(cluster.coordinator_log()) << read_text(cluster.dir() + "/n1.log");
  EXPECT_LT(std::chrono::steady_clock::now() - stopped_at, 4s);
  EXPECT_EQ(cluster.sql("SELECT state FROM hosts WHERE name = 'n1'"), "down");
  // Its job and leases are handled as for a lost host, with the reason saying what happened.
  EXPECT_EQ(cluster.sql("SELECT state FROM jobs WHERE app_id = 1"), "PENDING");
  EXPECT_EQ(cluster.sql("SELECT message FROM events WHERE kind = 'NodeFail' AND app_id = 1"), "host stopped");
  EXPECT_NE(cluster.sql("SELECT reason FROM job_failures WHERE app_id = 1").find("host n1 stopped (its nodelet shut down)"),
            std::string::npos)
      << cluster.sql("SELECT reason FROM job_failures WHERE app_id = 1");
  EXPECT_NE(read_text(cluster.coordinator_log()).find("host n1 stopped (its nodelet shut down)"), std::string::npos);
  // And never as a loss, also once the heartbeat bound has passed.
  std::this_thread::sleep_for(std::chrono::milliseconds(TestCluster::kHeartbeatMs * TestCluster::kHeartbeatLives + 1000));
  EXPECT_EQ(cluster.sql("SELECT count(*) FROM events WHERE kind = 'HostDown'"), "0");
  EXPECT_EQ(read_text(cluster.coordinator_log()).find("missed"), std::string::npos) << read_text(cluster.coordinator_log());
}

// A datagram socket standing in for systemd's notify socket.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
    if (::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
      throw std::runtime_error("bind " + path + ": " + std::strerror(errno));
    }
  }
  ~NotifySocket() { ::close(fd_); }
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;
  // Everything received so far, datagrams separated by newlines.
  const std::string& received() {
    char buffer[4096];
    ssize_t n;
    while ((n = ::recv(fd_, buffer, sizeof(buffer), 0)) > 0) received_ += std::string(buffer, static_cast<std::size_t>(n)) + "\n";
    return received_;
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::string received_;
};

TEST(NodeletLifecycle, UnreachableCoordinatorIsLoggedAndReadyWaitsForRegistration) {
  TestCluster cluster(one_node());
  NotifySocket notify(cluster.dir() + "/notify");
  cluster.start_node("n1", {{"NOTIFY_SOCKET", cluster.dir() + "/notify"}});  // no coordinator yet
  const std::string log = cluster.dir() + "/n1.log";
  ASSERT_TRUE(cluster.wait_for([&] { return read_text(log).find("coordinator at " + cluster.endpoint() + ": cannot connect") !=
                                            std::string::npos; }, 5s))
      << read_text(log);
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(notify.received().find("READY=1"), std::string::npos) << notify.received();
  EXPECT_NE(notify.received().find("STATUS=connecting to " + cluster.endpoint()), std::string::npos) << notify.received();
  cluster.start_coordinator();
  ASSERT_TRUE(cluster.wait_for([&] { return notify.received().find("READY=1") != std::string::npos; }, 10s))
      << notify.received() << read_text(log);
  EXPECT_NE(read_text(log).find("registered as n1"), std::string::npos);
  EXPECT_NE(read_text(log).find("connected to the coordinator at " + cluster.endpoint() + " after"), std::string::npos)
      << read_text(log);
}

}  // namespace
}  // namespace themis::testing
