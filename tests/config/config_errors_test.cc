// Configuration errors: unknown sections and keys in themis.toml named with file:line:column and a "did you
// mean", the reserved keys and the [users] table accepted, policy names, the checks a start makes
// (net::Preflight), enrollment names and the host:port form of an endpoint.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <zmq.hpp>

#include "coordinator/config.h"
#include "coordinator/config_check.h"
#include "core/closest_name.h"
#include "net/authorized_keys.h"
#include "net/curve_keys.h"
#include "net/endpoint.h"
#include "net/preflight.h"
#include "nodelet/config_check.h"
#include "nodelet/nodelet.h"
#include "tests/store/temp_dir.h"
#include "tests/config/free_port.h"

namespace themis {
namespace {

using testing::free_port;

class ConfigFile : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    const std::string path = dir_.file("themis.toml");
    std::ofstream(path) << text;
    return path;
  }
  std::string coordinator_error(const std::string& text) {
    try {
      coordinator::load_coordinator_config(write(text));
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  }
  std::string nodelet_error(const std::string& text) {
    try {
      nodelet::load_nodelet_config(write(text));
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  }
  testing::TempDir dir_;
};

TEST_F(ConfigFile, UnknownSectionIsAnErrorWithItsPositionAndASuggestion) {
  const auto path = dir_.file("themis.toml");
  EXPECT_EQ(coordinator_error("[cluster]\ncoordinator = \"tcp://a:7310\"\n\n[coordinatr]\nlisten = \"tcp://*:1\"\n"),
            path + ":4:2: [coordinatr]: unknown section (did you mean [coordinator]?); sections: cluster, coordinator, "
                   "nodelet, retry, admission, users, cli");
  // The nodelet reads the same file and refuses it the same way.
  EXPECT_EQ(nodelet_error("[nodlet]\nhost = \"n1\"\n").rfind(path + ":1:2: [nodlet]: unknown section (did you mean [nodelet]?)", 0), 0u)
      << nodelet_error("[nodlet]\nhost = \"n1\"\n");
  // Nothing close: no suggestion, the list of sections.
  const auto far = coordinator_error("[scheduler]\n");
  EXPECT_NE(far.find(":1:2: [scheduler]: unknown section; sections: cluster,"), std::string::npos) << far;
  // A top-level key that is not a section.
  EXPECT_NE(coordinator_error("policy = \"themis\"\n").find(":1:1: policy: unknown key"), std::string::npos);
}

TEST_F(ConfigFile, UnknownKeyIsAnErrorWithItsPositionAndASuggestion) {
  const auto c = coordinator_error("[coordinator]\nseed = 1\n  lisen = \"tcp://*:7310\"\n");
  EXPECT_EQ(c.rfind(dir_.file("themis.toml") + ":3:3: coordinator.lisen: unknown key (did you mean 'listen'?); known keys: listen,", 0), 0u) << c;
  const auto n = nodelet_error("[nodelet]\nslots = [[0]]\nwork_dri = \"/tmp\"\n");
  EXPECT_NE(n.find(":3:1: nodelet.work_dri: unknown key (did you mean 'work_dir'?)"), std::string::npos) << n;
  const auto cluster = coordinator_error("[cluster]\ncoordinator_kye = \"/k\"\n");
  EXPECT_NE(cluster.find(":2:1: cluster.coordinator_kye: unknown key (did you mean 'coordinator_key'?)"), std::string::npos) << cluster;
  // A syntax error also carries its column.
  EXPECT_NE(coordinator_error("[coordinator]\nseed = = 1\n").find("themis.toml:2:"), std::string::npos);
}

TEST_F(ConfigFile, ReservedKeysAndTheUsersTableAreAccepted) {
  EXPECT_EQ(coordinator_error("[coordinator]\nhttp_listen = \"127.0.0.1:9310\"\nreject_infeasible = true\n\n"
                              "[users]\nalice = \"alice\"\n\"bob.smith\" = \"bsmith\"\n\n[nodelet]\nallow_root_jobs = false\n"
                              "http_listen = \"127.0.0.1:9311\"\n\n[cli]\noutput = \"table\"\n"),
            "");
  EXPECT_EQ(nodelet_error("[nodelet]\nslots = [[0]]\nallow_root_jobs = false\nhttp_listen = \"127.0.0.1:9311\"\n\n"
                          "[users]\nalice = \"alice\"\n"),
            "");
  EXPECT_NE(coordinator_error("[users]\nalice = 3\n").find(":2:9: users.alice: must be a string"), std::string::npos);
}

TEST_F(ConfigFile, ContentionAheadIsABoolean) {
  EXPECT_EQ(coordinator_error("[coordinator]\ncontention_ahead = false\n"), "");
  EXPECT_EQ(coordinator_error("[coordinator]\ncontention_ahead = true\n"), "");
  EXPECT_NE(coordinator_error("[coordinator]\ncontention_ahead = \"no\"\n")
                .find(":2:20: coordinator.contention_ahead: must be true or false"),
            std::string::npos)
      << coordinator_error("[coordinator]\ncontention_ahead = \"no\"\n");
}

TEST_F(ConfigFile, SolverThreadsIsACountWithinRange) {
  EXPECT_EQ(coordinator_error("[coordinator]\nsolver_threads = 2\n"), "");
  EXPECT_EQ(coordinator_error("[coordinator]\nsolver_threads = 0\n"), "");
  for (const char* bad : {"-1", "65", "\"2\"", "1.5"})
    EXPECT_NE(coordinator_error(std::string("[coordinator]\nsolver_threads = ") + bad + "\n")
                  .find(":2:18: coordinator.solver_threads: must be an integer in 0..64"),
              std::string::npos)
        << bad;
}

TEST_F(ConfigFile, UnknownPolicyListsTheValidOnes) {
  const auto e = coordinator_error("[coordinator]\npolicy = \"themsi\"\n");
  EXPECT_NE(e.find(":2:10: coordinator.policy: unknown policy 'themsi' (did you mean 'themis'?); policies: themis, gandiva,"),
            std::string::npos)
      << e;
  EXPECT_EQ(coordinator_error("[coordinator]\npolicy = \"tiresias\"\n"), "");
  EXPECT_EQ(coordinator_error("[coordinator]\npolicy = \"max-min\"\n"), "");
}

// Baselines that need what apps do not report to the coordinator are refused there, saying why, instead of
// running on answers of 0 (every app tied).
TEST_F(ConfigFile, APolicyThatNeedsWhatAppsDoNotReportIsRefusedSayingWhy) {
  const auto e = coordinator_error("[coordinator]\npolicy = \"srtf\"\n");
  EXPECT_NE(e.find(":2:10: coordinator.policy: 'srtf' needs each app's remaining time on any GPU count, which apps do not "
                   "report; it runs in themis-sim only (the coordinator runs themis, gandiva, tiresias, max-min, fifo)"),
            std::string::npos)
      << e;
  for (const char* policy : {"srsf", "optimus", "slaq", "gavel-ftf"})
    EXPECT_NE(coordinator_error(std::string("[coordinator]\npolicy = \"") + policy + "\"\n").find("runs in themis-sim only"),
              std::string::npos)
        << policy;
}

TEST(ClosestName, SuggestsOnlyNearNames) {
  const std::vector<std::string> names{"listen", "database", "coordinator"};
  EXPECT_EQ(closest_name("lisen", names), "listen");
  EXPECT_EQ(closest_name("databsae", names), "database");  // a swap of neighbours counts one
  EXPECT_EQ(closest_name("coordinatr", names), "coordinator");
  EXPECT_EQ(closest_name("xyz", names), std::nullopt);
  EXPECT_EQ(did_you_mean("colour", names), "");
}

// ------------------------------------------------------------------ the checks a start makes


class StartupCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    net::write_certificate(dir_.path(), "coordinator", net::generate_curve_keypair(), false);
    std::ofstream(dir_.file("authorized_keys")) << "";
    config_.listen = "tcp://127.0.0.1:" + std::to_string(free_port());
    config_.database = dir_.file("themis.db");
    config_.authorized_keys = dir_.file("authorized_keys");
    config_.secret_key = dir_.file("coordinator.key_secret");
  }
  static std::string messages(const net::Preflight& check) { return check.report(); }
  testing::TempDir dir_;
  coordinator::CoordinatorConfig config_;
};

TEST_F(StartupCheck, AGoodConfigPasses) {
  const auto check = coordinator::check_coordinator_startup(config_);
  EXPECT_TRUE(check.ok()) << check.report();
  EXPECT_EQ(check.exit_code(), 0);
}

TEST_F(StartupCheck, MissingSecretKeyIsPermanentAndNamesTheFile) {
  config_.secret_key = dir_.file("missing.key_secret");
  const auto check = coordinator::check_coordinator_startup(config_);
  EXPECT_EQ(check.exit_code(), net::kExitConfig);
  EXPECT_NE(check.report().find("coordinator.secret_key: cannot read " + dir_.file("missing.key_secret") + ": No such file"),
            std::string::npos)
      << check.report();
}

TEST_F(StartupCheck, SecretKeyUnreadableByTheServiceUserIsPermanent) {
  // The usual mistake: the key is root's, mode 0600, and the service runs as another user. As root, the check
  // runs in a child that has become nobody.
  ASSERT_EQ(::chmod(config_.secret_key.c_str(), 0600), 0);
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
  if (::geteuid() != 0) {
    ASSERT_EQ(::chmod(config_.secret_key.c_str(), 0), 0);
  }
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(2);
    const auto check = coordinator::check_coordinator_startup(config_);
    const std::string report = check.report();
    if (::write(pipe_fds[1], report.data(), report.size()) < 0) ::_exit(3);
    ::_exit(check.exit_code() == net::kExitConfig ? 0 : 1);
  }
  ::close(pipe_fds[1]);
  std::string report;
  char buffer[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof(buffer))) > 0;) report.append(buffer, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << report;
  EXPECT_NE(report.find("coordinator.secret_key: cannot read " + config_.secret_key + ": Permission denied (running as uid"),
            std::string::npos)
      << report;
}

TEST_F(StartupCheck, APublicKeyWhereTheSecretOneBelongsIsPermanent) {
  config_.secret_key = dir_.file("coordinator.key");
  const auto check = coordinator::check_coordinator_startup(config_);
  EXPECT_EQ(check.exit_code(), net::kExitConfig);
  EXPECT_NE(check.report().find("no secret-key in certificate"), std::string::npos) << check.report();
}

TEST_F(StartupCheck, BusyPortIsTransientAndNamesTheEndpoint) {
  zmq::context_t context(1);
  zmq::socket_t holder(context, zmq::socket_type::router);
  holder.set(zmq::sockopt::linger, 0);
  holder.bind(config_.listen);
  const auto check = coordinator::check_coordinator_startup(config_);
  EXPECT_EQ(check.exit_code(), net::kExitTempFail);
  EXPECT_EQ(check.report(), "error (transient): coordinator.listen: cannot bind " + config_.listen + ": Address already in use\n");
  // The check releases what it bound: once the holder closes, the port is free again.
  holder.close();
  context.close();
  EXPECT_TRUE(coordinator::check_coordinator_startup(config_).ok());
  EXPECT_TRUE(coordinator::check_coordinator_startup(config_).ok()) << "the first check kept the port";
}

TEST_F(StartupCheck, AnAddressNotOnThisHostIsPermanent) {
  config_.listen = "tcp://192.0.2.1:7310";  // TEST-NET-1: never a local address
  const auto check = coordinator::check_coordinator_startup(config_);
  EXPECT_EQ(check.exit_code(), net::kExitConfig);
  EXPECT_NE(check.report().find("coordinator.listen: cannot bind tcp://192.0.2.1:7310: "), std::string::npos) << check.report();
}

TEST_F(StartupCheck, DatabaseDirectoryMustExistAndBeWritable) {
  config_.database = dir_.file("no-such-dir/themis.db");
  auto check = coordinator::check_coordinator_startup(config_);
  EXPECT_EQ(check.exit_code(), net::kExitConfig);
  EXPECT_NE(check.report().find("coordinator.database: directory " + dir_.file("no-such-dir") + " does not exist"), std::string::npos)
      << check.report();
  if (::geteuid() == 0) return;  // root writes anywhere
  ASSERT_EQ(::mkdir(dir_.file("read-only").c_str(), 0500), 0);
  config_.database = dir_.file("read-only/themis.db");
  check = coordinator::check_coordinator_startup(config_);
  EXPECT_EQ(check.exit_code(), net::kExitConfig);
  EXPECT_NE(check.report().find("coordinator.database: cannot write in directory " + dir_.file("read-only") + ": Permission denied"),
            std::string::npos)
      << check.report();
}

TEST_F(StartupCheck, NodeletNeedsItsSecretKeyAndTheCoordinatorKey) {
  nodelet::NodeletConfig n;
  n.host = "n1";
  n.slots = {{0}};
  n.work_dir = dir_.file("work");
  n.coordinator_key = dir_.file("coordinator.key");
  n.secret_key = dir_.file("n1.key_secret");  // never written
  auto check = nodelet::check_nodelet_startup(n);
  EXPECT_EQ(check.exit_code(), net::kExitConfig);
  EXPECT_EQ(check.report(), "error: nodelet.secret_key: cannot read " + dir_.file("n1.key_secret") + ": No such file or directory\n");
  net::write_certificate(dir_.path(), "n1", net::generate_curve_keypair(), false);
  check = nodelet::check_nodelet_startup(n);
  EXPECT_TRUE(check.ok()) << check.report();
  n.coordinator_key = dir_.file("nope.key");
  n.coordinator = "sched01:7310";
  check = nodelet::check_nodelet_startup(n);
  EXPECT_NE(check.report().find("cluster.coordinator: 'sched01:7310' is not an endpoint"), std::string::npos) << check.report();
  EXPECT_NE(check.report().find("cluster.coordinator_key: cannot read " + dir_.file("nope.key")), std::string::npos) << check.report();
}

// ------------------------------------------------------------------ names and endpoints

TEST(PrincipalName, DocumentedCharacterSet) {
  for (const std::string& good : std::vector<std::string>{"alice", "gpu01", "gpu01.lab.example", "_svc", "a-b_c.d", std::string(128, 'x')}) {
    EXPECT_TRUE(net::is_valid_principal_name(good)) << good;
  }
  for (const std::string& bad : std::vector<std::string>{"", "bad name", "-rf", ".hidden", "a/b", "a:b", "tab\tbed", "é", std::string(129, 'x')}) {
    EXPECT_FALSE(net::is_valid_principal_name(bad)) << bad;
  }
  testing::TempDir dir;
  EXPECT_THROW(net::append_authorized_key(dir.file("authorized_keys"), {"bad name", net::generate_curve_keypair().public_key,
                                                                        net::Role::kUser}),
               std::invalid_argument);
}

TEST(Endpoint, HostPortGetsTheTcpScheme) {
  EXPECT_EQ(net::normalize_endpoint("127.0.0.1:7310"), "tcp://127.0.0.1:7310");
  EXPECT_EQ(net::normalize_endpoint("sched01:7311"), "tcp://sched01:7311");
  EXPECT_EQ(net::normalize_endpoint("sched01"), "tcp://sched01:7310");
  EXPECT_EQ(net::normalize_endpoint("[::1]:7310"), "tcp://[::1]:7310");
  EXPECT_EQ(net::normalize_endpoint("tcp://sched01:7310"), "tcp://sched01:7310");
  EXPECT_EQ(net::normalize_endpoint("ipc:///run/themis.sock"), "ipc:///run/themis.sock");
  for (const std::string bad : {":7310", "sched01:", "sched01:http", "sched01:70000", "::1:7310"}) {
    EXPECT_THROW(net::normalize_endpoint(bad), std::invalid_argument) << bad;
  }
  EXPECT_EQ(net::endpoint_address("tcp://sched01:7310"), "sched01:7310");
}

}  // namespace
}  // namespace themis
