// Idempotent submit against a real coordinator over CURVE: a Submit carries a client-chosen token, and a
// repeat of (owner, token) is answered with the app the first one made instead of creating another.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "net/curve_keys.h"
#include "net/envelope.h"
#include "net/request_client.h"
#include "net/socket_security.h"
#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;
using W = wire::Envelope::Body::Which;

std::string sleeper_spec(const std::string& name, int jobs) {
  std::string values;
  for (int i = 0; i < jobs; ++i) values += (i ? ", " : "") + std::to_string(i);
  return "name = \"" + name + "\"\ncommand = [\"sleep\", \"60\"]\n[hyperparameters]\nx = [" + values + "]\n";
}

struct Answer {
  bool submitted = false;
  std::int64_t app = 0;
  std::string name;
  std::uint32_t jobs = 0;
  wire::ErrorCode code{};
  std::string error;
};

Answer answer_of(const net::InMessage& reply) {
  Answer a;
  if (reply.which() == W::SUBMITTED) {
    const auto s = reply.envelope().getBody().getSubmitted();
    a.submitted = true;
    a.app = s.getApp();
    a.name = s.getName();
    a.jobs = s.getJobs();
  } else if (reply.which() == W::ERROR) {
    a.code = reply.envelope().getBody().getError().getCode();
    a.error = reply.envelope().getBody().getError().getMessage();
  } else {
    a.error = "unexpected reply " + net::body_name(reply.which());
  }
  return a;
}

void fill_submit(net::OutMessage& out, const std::string& spec, const std::string& token) {
  auto submit = out.body().initSubmit();
  submit.setSpec(spec);
  submit.setSpecName("app.toml");
  if (!token.empty()) submit.setToken(token);
}

class IdempotentSubmit : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<TestCluster>(std::vector<NodeSpec>{{"node-a", "rack-1", {{0, 1}}}});
    cluster_->start_coordinator();
  }

  net::ClientOptions client_options(const std::string& user) const {
    net::ClientOptions options;
    options.endpoint = cluster_->endpoint();
    options.own_keys = net::read_certificate(cluster_->key(user, true));
    options.server_public_key = net::read_certificate(cluster_->key("coordinator", false)).public_key;
    options.timeout = 30s;
    return options;
  }

  Answer submit(const std::string& user, const std::string& spec, const std::string& token) {
    net::RequestClient rpc(client_options(user));
    net::OutMessage out(rpc.next_request_id());
    fill_submit(out, spec, token);
    const auto reply = rpc.call(out);
    if (!reply) return Answer{false, 0, "", 0, {}, "no answer"};
    return answer_of(*reply);
  }

  std::string apps() { return cluster_->sql("SELECT count(*) FROM apps"); }
  std::string jobs() { return cluster_->sql("SELECT count(*) FROM jobs"); }

  std::unique_ptr<TestCluster> cluster_;
};

TEST_F(IdempotentSubmit, SameTokenTwiceIsOneAppWithTheSameAnswer) {
  const auto spec = sleeper_spec("sweep", 3);
  const auto first = submit("alice", spec, "retry-me-1");
  ASSERT_TRUE(first.submitted) << first.error;
  const auto second = submit("alice", spec, "retry-me-1");
  ASSERT_TRUE(second.submitted) << second.error;
  EXPECT_EQ(second.app, first.app);
  EXPECT_EQ(second.name, "sweep");
  EXPECT_EQ(second.jobs, 3u);
  EXPECT_EQ(first.jobs, 3u);
  EXPECT_EQ(apps(), "1");
  EXPECT_EQ(jobs(), "3");
  EXPECT_EQ(cluster_->sql("SELECT submit_token FROM apps WHERE id = " + std::to_string(first.app)), "retry-me-1");
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM events WHERE kind = 'Submitted'"), "1");
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM events WHERE kind = 'SubmitRepeated' AND app_id = " + std::to_string(first.app)),
            "1");
  // Later repeats get the same answer and are not recorded again.
  const auto third = submit("alice", spec, "retry-me-1");
  EXPECT_EQ(third.app, first.app);
  EXPECT_EQ(third.jobs, 3u);
  EXPECT_EQ(apps(), "1");
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM events WHERE kind = 'SubmitRepeated'"), "1");
}

TEST_F(IdempotentSubmit, TokensAreScopedPerOwner) {
  const auto spec = sleeper_spec("shared", 1);
  const auto alice = submit("alice", spec, "same-token");
  const auto bob = submit("bob", spec, "same-token");
  ASSERT_TRUE(alice.submitted) << alice.error;
  ASSERT_TRUE(bob.submitted) << bob.error;
  EXPECT_NE(alice.app, bob.app);
  EXPECT_EQ(apps(), "2");
  EXPECT_EQ(cluster_->sql("SELECT owner FROM apps WHERE id = " + std::to_string(alice.app)), "alice");
  EXPECT_EQ(cluster_->sql("SELECT owner FROM apps WHERE id = " + std::to_string(bob.app)), "bob");
  // Each owner's repeat still finds its own app.
  EXPECT_EQ(submit("bob", spec, "same-token").app, bob.app);
  EXPECT_EQ(submit("alice", spec, "same-token").app, alice.app);
  EXPECT_EQ(apps(), "2");
}

TEST_F(IdempotentSubmit, SameTokenWithAnotherSpecIsRefusedAndStoresNothing) {
  const auto first = submit("alice", sleeper_spec("one", 1), "tok-42");
  ASSERT_TRUE(first.submitted) << first.error;
  const std::string events = cluster_->sql("SELECT count(*) FROM events");
  const auto other = submit("alice", sleeper_spec("two", 2), "tok-42");
  EXPECT_FALSE(other.submitted);
  EXPECT_EQ(other.code, wire::ErrorCode::BAD_SPEC);
  EXPECT_NE(other.error.find("token tok-42 was already used by app " + std::to_string(first.app) + " with a different spec"),
            std::string::npos)
      << other.error;
  EXPECT_EQ(apps(), "1");
  EXPECT_EQ(jobs(), "1");
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM events"), events);

  // themisctl reports it with the invalid-spec exit code and the same message.
  const auto ctl = cluster_->ctl("alice", {"submit", "--token", "tok-42", cluster_->write_file("two.toml", sleeper_spec("two", 2))});
  EXPECT_EQ(ctl.code, 65) << ctl.out;
  EXPECT_NE(ctl.out.find("was already used by app " + std::to_string(first.app)), std::string::npos) << ctl.out;
  EXPECT_EQ(apps(), "1");
}

TEST_F(IdempotentSubmit, WithoutATokenEverySubmitIsANewApp) {
  const auto spec = sleeper_spec("plain", 1);
  const auto first = submit("alice", spec, "");
  const auto second = submit("alice", spec, "");
  ASSERT_TRUE(first.submitted) << first.error;
  ASSERT_TRUE(second.submitted) << second.error;
  EXPECT_NE(first.app, second.app);
  EXPECT_EQ(apps(), "2");
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM apps WHERE submit_token IS NULL"), "2");
}

TEST_F(IdempotentSubmit, TokensOverTheBoundOrWithSpacesAreRefused) {
  const auto spec = sleeper_spec("bounded", 1);
  const auto too_long = submit("alice", spec, std::string(129, 'k'));
  EXPECT_FALSE(too_long.submitted);
  EXPECT_EQ(too_long.code, wire::ErrorCode::BAD_SPEC);
  EXPECT_NE(too_long.error.find("submit token is 129 bytes; at most 128"), std::string::npos) << too_long.error;
  const auto spaced = submit("alice", spec, "a token");
  EXPECT_FALSE(spaced.submitted);
  EXPECT_NE(spaced.error.find("printable ASCII without spaces"), std::string::npos) << spaced.error;
  EXPECT_EQ(apps(), "0");
  const auto longest = submit("alice", spec, std::string(128, 'k'));
  EXPECT_TRUE(longest.submitted) << longest.error;
  EXPECT_EQ(apps(), "1");
}

// The answer is really lost: the client sends the submit and closes its socket before the reply comes.
// A new connection with the same token gets the app the first submit made.
TEST_F(IdempotentSubmit, ReplyLostWithTheClosedSocketThenRetryOnANewSocketIsOneApp) {
  const auto spec = sleeper_spec("lost-reply", 2);
  {
    zmq::context_t context(1);
    zmq::socket_t socket(context, zmq::socket_type::dealer);
    net::make_curve_client(socket, net::read_certificate(cluster_->key("alice", true)),
                           net::read_certificate(cluster_->key("coordinator", false)).public_key);
    socket.set(zmq::sockopt::linger, 10000);  // the request itself must leave before the close
    socket.connect(cluster_->endpoint());
    net::OutMessage out(1);
    fill_submit(out, spec, "lost-1");
    auto frame = out.to_frame();
    ASSERT_TRUE(socket.send(frame, zmq::send_flags::none));
    socket.close();
  }
  ASSERT_TRUE(cluster_->wait_for([&] { return apps() == "1"; }, 30s)) << read_text(cluster_->coordinator_log());
  const std::string first = cluster_->sql("SELECT id FROM apps WHERE submit_token = 'lost-1'");
  ASSERT_FALSE(first.empty());

  const auto retry = submit("alice", spec, "lost-1");
  ASSERT_TRUE(retry.submitted) << retry.error;
  EXPECT_EQ(std::to_string(retry.app), first);
  EXPECT_EQ(retry.name, "lost-reply");
  EXPECT_EQ(retry.jobs, 2u);
  EXPECT_EQ(apps(), "1");
  EXPECT_EQ(jobs(), "2");
}

TEST_F(IdempotentSubmit, ThemisctlTokenOptionMakesRepeatsOneApp) {
  const auto file = cluster_->write_file("ctl.toml", sleeper_spec("ctl-app", 1));
  const auto first = cluster_->ctl("alice", {"submit", "--parsable", "--token", "from-script-7", file});
  const auto second = cluster_->ctl("alice", {"submit", "--parsable", "--token", "from-script-7", file});
  ASSERT_EQ(first.code, 0) << first.out;
  ASSERT_EQ(second.code, 0) << second.out;
  EXPECT_EQ(first.stdout_text, second.stdout_text);
  // Without --token each invocation draws its own random token: two apps, two distinct 32-hex-digit tokens.
  ASSERT_EQ(cluster_->ctl("alice", {"submit", "--parsable", file}).code, 0);
  ASSERT_EQ(cluster_->ctl("alice", {"submit", "--parsable", file}).code, 0);
  EXPECT_EQ(apps(), "3");
  EXPECT_EQ(cluster_->sql("SELECT count(DISTINCT submit_token) FROM apps WHERE length(submit_token) = 32 "
                          "AND submit_token NOT GLOB '*[^0-9a-f]*'"),
            "2");
}

// themisctl times out while the coordinator is stopped and sends the submit again on the same socket with
// the same token. Once the coordinator runs again it reads both attempts: one app, and the repeat is
// answered with it.
TEST_F(IdempotentSubmit, ThemisctlRetriesAfterATimeoutWithTheSameToken) {
  const auto file = cluster_->write_file("slow.toml", sleeper_spec("slow", 1));
  const std::string log = cluster_->dir() + "/ctl-retry.log";
  cluster_->signal_coordinator(SIGSTOP);
  struct Resume {
    TestCluster& cluster;
    ~Resume() { cluster.signal_coordinator(SIGCONT); }
  } resume{*cluster_};
  Process ctl({std::string(THEMIS_BIN_DIR) + "/themisctl", "--coordinator", cluster_->endpoint(), "--key",
               cluster_->key("alice", true), "--server-key", cluster_->key("coordinator", false), "--timeout-ms", "1000",
               "submit", "--parsable", file},
              log);
  ASSERT_TRUE(cluster_->wait_for([&] { return read_text(log).find("attempt 2 of 3") != std::string::npos; }, 30s))
      << read_text(log);
  cluster_->signal_coordinator(SIGCONT);
  const int code = ctl.wait();
  const std::string out = read_text(log);
  ASSERT_EQ(code, 0) << out;
  EXPECT_EQ(apps(), "1");
  const std::string app = cluster_->sql("SELECT id FROM apps");
  EXPECT_NE(out.find("\n" + app + "\n"), std::string::npos) << out;
  // The first attempt waited in the socket and reached the coordinator too: answered as a repeat.
  EXPECT_GE(std::stoi(cluster_->sql("SELECT count(*) FROM events WHERE kind = 'SubmitRepeated'")), 1)
      << read_text(cluster_->coordinator_log());
}

}  // namespace
}  // namespace themis::testing
