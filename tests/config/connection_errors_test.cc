// Errors a person meets at the command line, against real processes: themisctl's three ways of not reaching
// the coordinator (no TCP connection, key not enrolled, server key mismatch), each said clearly within about
// 2 s, its host:port form, its list of commands; themis-coordinator's --check-config and enroll; the nodelet's
// --check-config. docs/admin.md "Errors and exit codes".
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "test_cluster.h"
#include "tests/config/free_port.h"

namespace themis::testing {
namespace {

using Clock = std::chrono::steady_clock;
const std::string kBin = THEMIS_BIN_DIR;

long long ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}


class ThemisctlConnection : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new TestCluster({});
    cluster_->start_coordinator();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  // themisctl whoami with these keys against `endpoint`; a long --timeout-ms, so an answer within ~2 s can only
  // come from the connection monitor.
  static Output whoami(const std::string& endpoint, const std::string& user, const std::string& server_key_owner,
                       const std::string& command = "whoami") {
    return run_command({kBin + "/themisctl", "--coordinator", endpoint, "--key", cluster_->key(user, true), "--server-key",
                        cluster_->key(server_key_owner, false), "--timeout-ms", "20000", command});
  }
  static TestCluster* cluster_;
};
TestCluster* ThemisctlConnection::cluster_ = nullptr;

// A bound of the "about 2 s" in the docs with room for a loaded test machine.
constexpr long long kPromptMs = 4500;

TEST_F(ThemisctlConnection, EnrolledKeyIsAnsweredAndHostPortIsAccepted) {
  const std::string host_port = cluster_->endpoint().substr(std::string("tcp://").size());
  const auto r = whoami(host_port, "alice", "coordinator");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.first_stdout_line(), "user:alice");
}

TEST_F(ThemisctlConnection, UnenrolledKeyIsSaidSo) {
  const auto start = Clock::now();
  const auto r = whoami(cluster_->endpoint(), "mallory", "coordinator");
  const auto took = ms_since(start);
  EXPECT_EQ(r.code, 77) << r.out;
  EXPECT_NE(r.out.find("themisctl: key not enrolled: the coordinator at " + cluster_->endpoint().substr(6) + " refused this key"),
            std::string::npos)
      << r.out;
  EXPECT_LT(took, kPromptMs) << r.out;
}

TEST_F(ThemisctlConnection, WrongServerKeyIsSaidSo) {
  const auto start = Clock::now();
  const auto r = whoami(cluster_->endpoint(), "alice", "mallory");  // pins mallory's key as the server's
  const auto took = ms_since(start);
  EXPECT_EQ(r.code, 78) << r.out;
  EXPECT_NE(r.out.find("server key mismatch"), std::string::npos) << r.out;
  EXPECT_LT(took, kPromptMs) << r.out;
}

TEST_F(ThemisctlConnection, InsecureClientAgainstACurveCoordinatorIsSaidSo) {
  const auto start = Clock::now();
  const auto r = run_command({kBin + "/themisctl", "--insecure", "--coordinator", cluster_->endpoint(), "--timeout-ms", "20000",
                              "whoami"});
  EXPECT_EQ(r.code, 78) << r.out;
  EXPECT_NE(r.out.find("security mismatch: this client runs without CURVE (--insecure) and " + cluster_->endpoint().substr(6) +
                       " requires it"),
            std::string::npos)
      << r.out;
  EXPECT_LT(ms_since(start), kPromptMs) << r.out;
}

// A stopped coordinator accepts the TCP connection (the kernel does) but never answers the handshake: that is
// not a key mismatch, and the request waits for --timeout-ms as one that may still be delivered.
TEST_F(ThemisctlConnection, StoppedCoordinatorIsNotCalledAKeyMismatch) {
  cluster_->signal_coordinator(SIGSTOP);
  const auto r = run_command({kBin + "/themisctl", "--coordinator", cluster_->endpoint(), "--key", cluster_->key("alice", true),
                              "--server-key", cluster_->key("coordinator", false), "--timeout-ms", "1500", "whoami"});
  cluster_->signal_coordinator(SIGCONT);
  EXPECT_EQ(r.code, 69) << r.out;
  EXPECT_NE(r.out.find("no answer from " + cluster_->endpoint() + " within 1500 ms (connected, but the CURVE handshake never "
                       "completed"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("mismatch"), std::string::npos) << r.out;
}

TEST_F(ThemisctlConnection, NothingListeningIsSaidSoWithoutRetries) {
  const std::string address = "127.0.0.1:" + std::to_string(free_port());
  const auto start = Clock::now();
  // submit retries lost answers; a connection that never came up sent nothing, so it is not retried.
  const auto spec = cluster_->write_file("app.toml", "name = \"x\"\n");
  const auto r = run_command({kBin + "/themisctl", "--coordinator", address, "--key", cluster_->key("alice", true),
                              "--server-key", cluster_->key("coordinator", false), "--timeout-ms", "20000", "submit", spec});
  const auto took = ms_since(start);
  EXPECT_EQ(r.code, 69) << r.out;
  EXPECT_NE(r.out.find("themisctl: cannot connect to " + address + ": connection refused"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("attempt"), std::string::npos) << r.out;
  EXPECT_LT(took, kPromptMs) << r.out;
}

TEST_F(ThemisctlConnection, UnresolvableHostIsSaidSo) {
  const auto start = Clock::now();
  const auto r = whoami("no-such-host.invalid:7310", "alice", "coordinator");
  EXPECT_EQ(r.code, 69) << r.out;
  EXPECT_NE(r.out.find("cannot connect to no-such-host.invalid:7310: cannot resolve host 'no-such-host.invalid'"), std::string::npos)
      << r.out;
  EXPECT_LT(ms_since(start), kPromptMs) << r.out;
}

TEST_F(ThemisctlConnection, BadEndpointIsAUsageError) {
  const auto r = whoami("sched01:http", "alice", "coordinator");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--coordinator: 'sched01:http' is not an endpoint"), std::string::npos) << r.out;
}

TEST(Themisctl, UnknownCommandListsTheCommands) {
  const auto r = run_command({kBin + "/themisctl", "--coordinator", "127.0.0.1:1", "whoamii"});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("themisctl: unknown command 'whoamii' (did you mean 'whoami'?)"), std::string::npos) << r.out;
  for (const std::string command : {"submit", "apps", "show", "cancel", "explain", "nodes", "leases", "rounds", "keygen", "sql"}) {
    EXPECT_NE(r.out.find("\n  " + command + " "), std::string::npos) << command << " missing from:\n" << r.out;
  }
  // A flag before the command takes no value: the word after it is still the command.
  const auto after_flag = run_command({kBin + "/themisctl", "--json", "whoamii"});
  EXPECT_EQ(after_flag.code, 2);
  EXPECT_NE(after_flag.out.find("unknown command 'whoamii'"), std::string::npos) << after_flag.out;
  const auto none = run_command({kBin + "/themisctl", "--json"});
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.out.find("Commands:"), std::string::npos) << none.out;
}

TEST(Themisctl, HelpNamesThemisctlInItsUsageLines) {
  // The arguments reach CLI11 without argv[0], so the name is given; without it the lines read "Usage: [OPTIONS]".
  const auto top = run_command({kBin + "/themisctl", "--help"});
  EXPECT_EQ(top.code, 0) << top.out;
  EXPECT_NE(top.out.find("Usage: themisctl [OPTIONS] SUBCOMMAND"), std::string::npos) << top.out;
  const auto apps = run_command({kBin + "/themisctl", "apps", "--help"});
  EXPECT_EQ(apps.code, 0) << apps.out;
  EXPECT_NE(apps.out.find("Usage: themisctl apps [OPTIONS]"), std::string::npos) << apps.out;
}

// ------------------------------------------------------------------ the daemons' checks and exit codes

class DaemonChecks : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_.file(name)) << text;
    return dir_.file(name);
  }
  std::string coordinator_config(const std::string& extra) {
    run_command({kBin + "/themisctl", "keygen", "coordinator", "--dir", dir_.path()});
    write("authorized_keys", "");
    return write("themis.toml", "[coordinator]\nlisten = \"tcp://127.0.0.1:" + std::to_string(port_) + "\"\ndatabase = \"" +
                                    dir_.file("themis.db") + "\"\nauthorized_keys = \"" + dir_.file("authorized_keys") +
                                    "\"\nsecret_key = \"" + dir_.file("coordinator.key_secret") + "\"\n" + extra);
  }
  TempDir dir_;
  int port_ = free_port();
};

TEST_F(DaemonChecks, CoordinatorCheckConfig) {
  const auto good = coordinator_config("");
  auto r = run_command({kBin + "/themis-coordinator", "-c", good, "--check-config"});
  EXPECT_EQ(r.code, 0) << r.out;
  // A typo in policy: permanent, with the valid names.
  const auto bad_policy = coordinator_config("policy = \"themsi\"\n");
  r = run_command({kBin + "/themis-coordinator", "-c", bad_policy, "--check-config"});
  EXPECT_EQ(r.code, 78) << r.out;
  EXPECT_NE(r.out.find("coordinator.policy: unknown policy 'themsi' (did you mean 'themis'?); policies: themis,"), std::string::npos) << r.out;
  // The same config starts no coordinator either: 78, which the unit does not restart.
  r = run_command({kBin + "/themis-coordinator", "-c", bad_policy});
  EXPECT_EQ(r.code, 78) << r.out;
  // A section misspelt.
  r = run_command({kBin + "/themis-coordinator", "-c", write("typo.toml", "[coordinatr]\n"), "--check-config"});
  EXPECT_EQ(r.code, 78) << r.out;
  EXPECT_NE(r.out.find("typo.toml:1:2: [coordinatr]: unknown section (did you mean [coordinator]?)"), std::string::npos) << r.out;
}

TEST_F(DaemonChecks, CoordinatorOnABusyPortSaysWhichEndpointAndExitsTransient) {
  const auto config = coordinator_config("");
  const int holder = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port_));
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(holder, 1), 0);
  for (const bool check_only : {true, false}) {
    std::vector<std::string> argv{kBin + "/themis-coordinator", "-c", config};
    if (check_only) argv.push_back("--check-config");
    const auto r = run_command(argv);
    EXPECT_EQ(r.code, 75) << r.out;
    EXPECT_NE(r.out.find("coordinator.listen: cannot bind tcp://127.0.0.1:" + std::to_string(port_) + ": Address already in use"),
              std::string::npos)
        << r.out;
  }
  ::close(holder);
}

TEST_F(DaemonChecks, CoordinatorCheckConfigCatchesAMissingKey) {
  const auto config = coordinator_config("");
  std::filesystem::remove(dir_.file("coordinator.key_secret"));
  const auto r = run_command({kBin + "/themis-coordinator", "-c", config, "--check-config"});
  EXPECT_EQ(r.code, 78) << r.out;
  EXPECT_NE(r.out.find("coordinator.secret_key: cannot read " + dir_.file("coordinator.key_secret")), std::string::npos) << r.out;
}

TEST_F(DaemonChecks, NodeletCheckConfigCatchesAMissingSecretKey) {
  run_command({kBin + "/themisctl", "keygen", "coordinator", "--dir", dir_.path()});
  const auto config = write("themis.toml", "[cluster]\ncoordinator = \"tcp://127.0.0.1:7310\"\ncoordinator_key = \"" +
                                               dir_.file("coordinator.key") + "\"\n\n[nodelet]\nhost = \"n1\"\nslots = [[0]]\n"
                                               "work_dir = \"" + dir_.file("work") + "\"\nsecret_key = \"" +
                                               dir_.file("n1.key_secret") + "\"\n");
  auto r = run_command({kBin + "/themis-nodelet", "-c", config, "--check-config"});
  EXPECT_EQ(r.code, 78) << r.out;
  EXPECT_NE(r.out.find("nodelet.secret_key: cannot read " + dir_.file("n1.key_secret") + ": No such file or directory"),
            std::string::npos)
      << r.out;
  run_command({kBin + "/themisctl", "keygen", "n1", "--dir", dir_.path()});
  r = run_command({kBin + "/themis-nodelet", "-c", config, "--check-config"});
  EXPECT_EQ(r.code, 0) << r.out;
  // An unknown section in the shared file stops the nodelet too.
  std::ofstream(config, std::ios::app) << "\n[nodlet]\n";
  r = run_command({kBin + "/themis-nodelet", "-c", config, "--check-config"});
  EXPECT_EQ(r.code, 78) << r.out;
  EXPECT_NE(r.out.find("[nodlet]: unknown section (did you mean [nodelet]?)"), std::string::npos) << r.out;
}

TEST_F(DaemonChecks, EnrollChecksTheNameAndNeedsNoConfigWithFile) {
  run_command({kBin + "/themisctl", "keygen", "alice", "--dir", dir_.path()});
  const std::string missing_config = dir_.file("no-themis.toml");
  auto r = run_command({kBin + "/themis-coordinator", "-c", missing_config, "enroll", "bad name", dir_.file("alice.key"),
                        "--file", dir_.file("authorized_keys")});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("enroll: principal name 'bad name' is not valid: 1 to 128 characters of A-Z a-z 0-9 . _ -"), std::string::npos)
      << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir_.file("authorized_keys")));
  r = run_command({kBin + "/themis-coordinator", "-c", missing_config, "enroll", "alice", dir_.file("alice.key"), "--file",
                   dir_.file("authorized_keys")});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(read_text(dir_.file("authorized_keys")).find("alice "), std::string::npos);
}

}  // namespace
}  // namespace themis::testing
