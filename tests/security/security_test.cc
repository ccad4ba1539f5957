// Security checks against real processes with CURVE on: who gets an answer, what the insecure mode
// refuses, what one user may see and do with another's app, that `themisctl sql` cannot write, and the
// modes keys are created with. docs/reliability.md, "Security checks".
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>
#include <zmq.hpp>

#include "net/curve_keys.h"
#include "net/envelope.h"
#include "net/socket_security.h"
#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
const std::string kBin = THEMIS_BIN_DIR;

// How a raw client connects: no CURVE at all, or CURVE with a client key and the server key it pins.
struct ClientSecurity {
  std::optional<net::CurveKeyPair> own;  // nullopt: a plain (NULL mechanism) client
  std::string server_public_key;
};

// Sends one Envelope built by `fill` and waits up to `wait` for an answer; nullopt when none came.
std::optional<std::string> exchange(const std::string& endpoint, const ClientSecurity& security,
                                    const std::function<void(wire::Envelope::Body::Builder)>& fill,
                                    std::chrono::milliseconds wait) {
  zmq::context_t context(1);
  zmq::socket_t socket(context, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  if (security.own) net::make_curve_client(socket, *security.own, security.server_public_key);
  socket.connect(endpoint);
  net::OutMessage out(42);
  fill(out.body());
  auto frame = out.to_frame();
  socket.send(frame, zmq::send_flags::none);
  zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, wait);
  if (!(item.revents & ZMQ_POLLIN)) return std::nullopt;
  zmq::message_t reply;
  if (!socket.recv(reply, zmq::recv_flags::dontwait)) return std::nullopt;
  return reply.to_string();
}

void whoami(wire::Envelope::Body::Builder body) { body.initQuery().setKind(wire::QueryKind::WHOAMI); }

// The ErrorReply in `reply` ("" when it is not one), as "<code>: <message>".
std::string error_of(const std::string& reply) {
  const zmq::message_t frame(reply.data(), reply.size());
  wire::ErrorCode code{};
  std::string error;
  const auto in = net::InMessage::parse(frame, &code, &error);
  if (!in) return "unparsable reply: " + error;
  if (in->which() != wire::Envelope::Body::Which::ERROR) return "";
  const auto e = in->envelope().getBody().getError();
  return std::to_string(static_cast<int>(e.getCode())) + ": " + e.getMessage().cStr();
}

std::string denied_prefix() { return std::to_string(static_cast<int>(wire::ErrorCode::DENIED)) + ": "; }

// Runs a daemon that must refuse to start; kills it after `limit` (a daemon that serves fails the test).
Output run_until_exit(const std::vector<std::string>& argv, const std::string& log, std::chrono::seconds limit) {
  Process process(argv, log);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (process.running() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(50ms);
  const bool still_running = process.running();
  if (still_running) process.kill_and_wait(SIGKILL);
  return {still_running ? -1 : process.wait(), read_text(log), ""};
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

net::CurveKeyPair keys_of(const TestCluster& cluster, const std::string& name) {
  return net::read_certificate(cluster.key(name, true));
}

// ------------------------------------------------------------------ endpoints

class Endpoints : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<TestCluster>(std::vector<NodeSpec>{{"node-a", "rack-1", {{0, 1}}}});
    cluster_->start_coordinator();
    server_key_ = net::read_certificate(cluster_->key("coordinator", false)).public_key;
  }
  std::unique_ptr<TestCluster> cluster_;
  std::string server_key_;
};

TEST_F(Endpoints, CoordinatorAnswersOnlyEnrolledCurveClients) {
  // The control: an enrolled user over CURVE is answered, with the identity the ZAP handler gave it.
  const auto answer = exchange(cluster_->endpoint(), {keys_of(*cluster_, "alice"), server_key_}, whoami, 10s);
  ASSERT_TRUE(answer.has_value()) << read_text(cluster_->coordinator_log());
  EXPECT_EQ(error_of(*answer), "");
  EXPECT_NE(answer->find("\"principal\":\"alice\""), std::string::npos);

  EXPECT_FALSE(exchange(cluster_->endpoint(), {std::nullopt, ""}, whoami, 3s).has_value()) << "plain client answered";
  EXPECT_FALSE(exchange(cluster_->endpoint(), {keys_of(*cluster_, "mallory"), server_key_}, whoami, 3s).has_value())
      << "unenrolled key answered";
  const auto wrong_server = net::read_certificate(cluster_->key("mallory", false)).public_key;
  EXPECT_FALSE(exchange(cluster_->endpoint(), {keys_of(*cluster_, "alice"), wrong_server}, whoami, 3s).has_value())
      << "a client pinning another server key was answered";
}

TEST_F(Endpoints, OnlyNodeKeysRegisterAndOnlyUnderTheirOwnName) {
  auto register_host = [](const std::string& host) {
    return [host](wire::Envelope::Body::Builder body) {
      auto reg = body.initRegister();
      reg.setHost(host);
      reg.setRack("rack-1");
      reg.initSlots(1)[0].initGpus(1)[0].setLocalIndex(0);
    };
  };
  const auto as_user = exchange(cluster_->endpoint(), {keys_of(*cluster_, "alice"), server_key_}, register_host("alice"), 10s);
  ASSERT_TRUE(as_user.has_value());
  EXPECT_EQ(error_of(*as_user).rfind(denied_prefix(), 0), 0u) << error_of(*as_user);
  const auto other_host = exchange(cluster_->endpoint(), {keys_of(*cluster_, "node-a"), server_key_}, register_host("node-z"), 10s);
  ASSERT_TRUE(other_host.has_value());
  EXPECT_EQ(error_of(*other_host).rfind(denied_prefix(), 0), 0u) << error_of(*other_host);
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM hosts"), "0");
  // The node's own name is accepted (the control).
  const auto own = exchange(cluster_->endpoint(), {keys_of(*cluster_, "node-a"), server_key_}, register_host("node-a"), 10s);
  ASSERT_TRUE(own.has_value());
  EXPECT_EQ(error_of(*own), "");
  EXPECT_EQ(cluster_->sql("SELECT name FROM hosts"), "node-a");
}

// ------------------------------------------------------------------ insecure mode

// A config for an insecure coordinator: no keys at all.
std::string insecure_config(const TempDir& dir) {
  std::ofstream(dir.file("themis.toml")) << "[coordinator]\ninsecure = true\ndatabase = \"" << dir.file("insecure.db") << "\"\n";
  return dir.file("themis.toml");
}

TEST(InsecureMode, RefusesEveryNonLoopbackEndpoint) {
  TempDir dir;
  const auto config = insecure_config(dir);
  for (const std::string listen : {"tcp://0.0.0.0:17311", "tcp://*:17311", "tcp://192.0.2.1:17311",
                                   "tcp://127.0.0.1;192.0.2.1:17311"}) {
    const auto r = run_until_exit({kBin + "/themis-coordinator", "-c", config, "--insecure", "--listen", listen},
                                  dir.file("coordinator.log"), 20s);
    EXPECT_NE(r.code, 0) << listen << ": the coordinator served without CURVE";
    EXPECT_NE(r.code, -1) << listen << ": still running";
    EXPECT_NE(r.out.find("loopback"), std::string::npos) << r.out;
  }
  std::ofstream(dir.file("nodelet.toml")) << "[cluster]\ncoordinator = \"tcp://192.0.2.1:7310\"\n\n[nodelet]\nhost = \"n1\"\n"
                                             "insecure = true\nslots = [[0]]\nwork_dir = \"" << dir.file("work") << "\"\n";
  const auto nodelet = run_until_exit({kBin + "/themis-nodelet", "-c", dir.file("nodelet.toml")}, dir.file("nodelet.log"), 20s);
  EXPECT_NE(nodelet.code, 0);
  EXPECT_NE(nodelet.code, -1) << "nodelet still running";
  EXPECT_NE(nodelet.out.find("without CURVE"), std::string::npos) << nodelet.out;
  for (const std::string endpoint : {"tcp://192.0.2.1:7310", "tcp://127.0.0.1;192.0.2.1:7310", "tcp://127.example.com:7310"}) {
    const auto ctl = run_until_exit({kBin + "/themisctl", "--insecure", "--coordinator", endpoint, "whoami"},
                                    dir.file("ctl.log"), 20s);
    EXPECT_NE(ctl.code, 0) << endpoint;
    EXPECT_NE(ctl.out.find("loopback"), std::string::npos) << endpoint << ": " << ctl.out;
  }
#ifdef THEMIS_HAVE_LAUNCHER
  const auto launch = run_until_exit({kBin + "/themis-launch", "--insecure", "--coordinator", "tcp://192.0.2.1:7310",
                                      "--app", "1"},
                                     dir.file("launch.log"), 20s);
  EXPECT_NE(launch.code, 0);
  EXPECT_NE(launch.out.find("loopback"), std::string::npos) << launch.out;
#endif
}

// A loopback TCP port nothing listens on now.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

TEST(InsecureMode, LoopbackServesEveryPeerAsAdmin) {
  TempDir dir;
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(free_port());
  Process coordinator({kBin + "/themis-coordinator", "-c", insecure_config(dir), "--listen", endpoint},
                      dir.file("coordinator.log"));
  std::optional<std::string> answer;
  for (int i = 0; i < 20 && !answer && coordinator.running(); ++i) {
    answer = exchange(endpoint, {std::nullopt, ""}, whoami, 1s);
  }
  ASSERT_TRUE(answer.has_value()) << read_text(dir.file("coordinator.log"));
  EXPECT_NE(answer->find("\"role\":\"admin\""), std::string::npos) << *answer;
  EXPECT_NE(read_text(dir.file("coordinator.log")).find("INSECURE MODE"), std::string::npos);
  coordinator.kill_and_wait(SIGTERM);
}

// ------------------------------------------------------------------ other users' apps

class AppAccess : public Endpoints {
 protected:
  std::int64_t submit(const std::string& user, const std::string& name, const std::string& shell) {
    const std::string spec = "name = \"" + name + "\"\ncommand = [\"sh\", \"-c\", \"" + shell + "\"]\n"
                             "[checkpoint]\ngrace_period = \"1s\"\n";
    const auto r = cluster_->ctl(user, {"submit", "--parsable", cluster_->write_file(name + ".toml", spec)});
    EXPECT_EQ(r.code, 0) << r.out;
    return std::stoll(r.first_stdout_line());
  }
};

TEST_F(AppAccess, OthersSeeAnAppButNotItsLogsAndCannotActOnIt) {
  cluster_->start_node("node-a");
  const auto failed = submit("alice", "leaky", "echo token=SECRET-7f3a; exit 3");
  const auto running = submit("alice", "steady", "exec sleep 600");
  ASSERT_TRUE(cluster_->wait_for([&] {
    return cluster_->sql("SELECT count(*) FROM jobs WHERE app_id = " + std::to_string(failed) +
                         " AND log_tail LIKE '%SECRET-7f3a%'") == "1" &&
           cluster_->sql("SELECT state FROM jobs WHERE app_id = " + std::to_string(running)) == "RUNNING";
  }, 60s)) << read_text(cluster_->coordinator_log());

  // Everyone sees the app (docs/admin.md); only its owner and admins its log tail.
  for (const std::string command : {"show", "explain"}) {
    const auto bob = cluster_->ctl("bob", {"--json", command, std::to_string(failed)});
    EXPECT_EQ(bob.code, 0) << bob.out;
    EXPECT_NE(bob.out.find("leaky"), std::string::npos) << bob.out;
    EXPECT_EQ(bob.out.find("SECRET-7f3a"), std::string::npos) << command << " leaks the log to bob: " << bob.out;
    for (const std::string reader : {"alice", "root"}) {
      const auto r = cluster_->ctl(reader, {"--json", command, std::to_string(failed)});
      EXPECT_NE(r.out.find("SECRET-7f3a"), std::string::npos) << reader << " " << command << ": " << r.out;
    }
  }
  const auto apps = cluster_->ctl("bob", {"--json", "apps"});
  EXPECT_EQ(apps.code, 0);
  EXPECT_EQ(apps.out.find("SECRET-7f3a"), std::string::npos);

  // Bob can neither cancel it nor become its launcher nor stop its jobs; nothing changes.
  const auto cancel = cluster_->ctl("bob", {"cancel", std::to_string(running)});
  EXPECT_EQ(cancel.code, 77) << cancel.out;
  const ClientSecurity bob{keys_of(*cluster_, "bob"), server_key_};
  const auto attach = exchange(cluster_->endpoint(), bob, [&](auto body) { body.initAttach().setApp(running); }, 10s);
  ASSERT_TRUE(attach.has_value());
  EXPECT_EQ(error_of(*attach).rfind(denied_prefix(), 0), 0u) << error_of(*attach);
  const auto stop = exchange(cluster_->endpoint(), bob, [&](auto body) {
    auto s = body.initStopJob();
    s.setApp(running);
    s.setJob(0);
    s.setAttempt(1);
    s.setReason("mine now");
  }, 10s);
  ASSERT_TRUE(stop.has_value());
  EXPECT_NE(error_of(*stop), "") << "bob's StopJob on alice's app was accepted";
  const auto cancel_raw = exchange(cluster_->endpoint(), bob, [&](auto body) { body.initCancel().setApp(running); }, 10s);
  ASSERT_TRUE(cancel_raw.has_value());
  EXPECT_EQ(error_of(*cancel_raw).rfind(denied_prefix(), 0), 0u) << error_of(*cancel_raw);
  std::this_thread::sleep_for(500ms);  // a wrongly accepted stop would have been applied by now
  EXPECT_EQ(cluster_->sql("SELECT state FROM jobs WHERE app_id = " + std::to_string(running)), "RUNNING");
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM events WHERE app_id = " + std::to_string(running) +
                          " AND kind IN ('CancelRequested', 'Cancelled')"), "0");

  // The owner may (the control).
  EXPECT_EQ(cluster_->ctl("alice", {"cancel", std::to_string(running)}).code, 0);
  EXPECT_TRUE(cluster_->wait_for([&] {
    return cluster_->sql("SELECT state FROM apps WHERE id = " + std::to_string(running)) == "CANCELLED";
  }, 30s));
}

// ------------------------------------------------------------------ SQL

TEST_F(AppAccess, SqlRefusesEveryWriteAndLeavesTheDatabaseUnchanged) {
  submit("alice", "kept", "exec sleep 600");
  cluster_->kill_coordinator(SIGTERM);  // a quiet file, so that "unchanged" can be checked byte for byte
  const std::string db = cluster_->db_path();
  const std::string before = file_bytes(db) + file_bytes(db + "-wal");
  auto sql = [&](const std::string& query) { return run_command({kBin + "/themisctl", "sql", "--db", db, query}); };

  const auto read = sql("SELECT name, owner FROM apps");
  EXPECT_EQ(read.code, 0) << read.out;
  EXPECT_NE(read.out.find("kept"), std::string::npos) << read.out;

  const std::string elsewhere = cluster_->dir() + "/written.db";
  for (const std::string& write : std::vector<std::string>{
           "INSERT INTO apps(name, owner, state, spec, submitted_at) VALUES ('x', 'mallory', 'PENDING', '', 0)",
           "UPDATE apps SET owner = 'mallory'",
           "DELETE FROM apps",
           "DROP VIEW apps_rho",
           "CREATE TABLE owned(x)",
           "PRAGMA query_only = OFF; DELETE FROM apps",
           "PRAGMA journal_mode = DELETE",
           "PRAGMA user_version = 99",
           "ATTACH DATABASE '" + elsewhere + "' AS other; CREATE TABLE other.t(x)",
           "VACUUM INTO '" + elsewhere + "'",
           "ATTACH DATABASE '" + db + "' AS again; VACUUM again INTO '" + elsewhere + "'",
           "VACUUM",
       }) {
    const auto r = sql(write);
    EXPECT_NE(r.code, 0) << "accepted: " << write << "\n" << r.out;
    EXPECT_FALSE(r.out.empty()) << "refused without a reason: " << write;
  }
  EXPECT_FALSE(fs::exists(elsewhere));
  EXPECT_EQ(file_bytes(db) + file_bytes(db + "-wal"), before) << "the database file changed";
  EXPECT_EQ(sql("SELECT count(*) AS n FROM apps WHERE owner = 'alice'").out, "n\n1\n");
}

// ------------------------------------------------------------------ keys

TEST(Keys, SecretsAre0600AndANewKeyDirectory0700WhateverTheUmask) {
  TempDir dir;
  const mode_t old_mask = ::umask(0);  // the child inherits a umask that would make everything world-writable
  const std::string keys = dir.file("etc/themis/keys");
  const auto first = run_command({kBin + "/themisctl", "keygen", "gpu01", "--dir", keys});
  const auto again = run_command({kBin + "/themisctl", "keygen", "gpu01", "--dir", keys});
  const auto forced = run_command({kBin + "/themisctl", "keygen", "gpu01", "--dir", keys, "--force"});
  std::ofstream(dir.file("themis.toml")) << "[coordinator]\nauthorized_keys = \"" << dir.file("authorized_keys") << "\"\n";
  const auto enroll = run_command({kBin + "/themis-coordinator", "-c", dir.file("themis.toml"), "enroll", "gpu01",
                                   keys + "/gpu01.key", "--role", "node"});
  ::umask(old_mask);
  ASSERT_EQ(first.code, 0) << first.out;
  EXPECT_NE(again.code, 0) << "a secret was overwritten without --force";
  EXPECT_EQ(forced.code, 0) << forced.out;
  ASSERT_EQ(enroll.code, 0) << enroll.out;
  EXPECT_EQ(mode_of(keys), 0700u);
  EXPECT_EQ(mode_of(keys + "/gpu01.key_secret"), 0600u);
  EXPECT_EQ(mode_of(keys + "/gpu01.key"), 0644u);
  EXPECT_EQ(mode_of(dir.file("authorized_keys")), 0640u);
  EXPECT_FALSE(fs::exists(keys + "/gpu01.key_secret.tmp"));
}

TEST(Keys, ANewAuthorizedKeysFileTakesItsDirectorysGroup) {
  // /etc/themis is root:themis 0750 and the coordinator runs as themis: it reads what root enrolls
  // through the group (docs/admin.md). Root can give the directory a group other than its own.
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the directory another group";
  TempDir dir;
  const std::string etc = dir.file("etc");
  fs::create_directories(etc);
  const gid_t group = ::getegid() == 1 ? 2 : 1;
  ASSERT_EQ(::chown(etc.c_str(), static_cast<uid_t>(-1), group), 0);
  std::ofstream(dir.file("themis.toml")) << "[coordinator]\nauthorized_keys = \"" << etc << "/authorized_keys\"\n";
  const auto keys = dir.file("keys");
  ASSERT_EQ(run_command({kBin + "/themisctl", "keygen", "alice", "--dir", keys}).code, 0);
  const mode_t old_mask = ::umask(0077);
  const auto enroll = run_command({kBin + "/themis-coordinator", "-c", dir.file("themis.toml"), "enroll", "alice",
                                   keys + "/alice.key", "--role", "user"});
  ::umask(old_mask);
  ASSERT_EQ(enroll.code, 0) << enroll.out;
  struct stat st {};
  ASSERT_EQ(::stat((etc + "/authorized_keys").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_gid, group);
  EXPECT_EQ(st.st_uid, ::geteuid());
}

}  // namespace
}  // namespace themis::testing
