// The contention forecast on the wire (AppStatus.remaining, AppStatusAck): a real coordinator answers a launcher's
// status with the apps active now and bidder::contention_ahead over the seconds the launcher says it still needs and
// the other apps' (docs/bidder.md, "N_avg ahead"). An app that has not said, or has no launcher, counts as staying
// throughout; a launcher that does not report `remaining` (an older one) gets no answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "protocol_launcher.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;

struct Answer {
  std::uint32_t active_apps = 0;
  double ahead = 0;
};

void send_status(ProtocolLauncher& launcher, std::uint64_t id, double remaining) {
  net::OutMessage out(id);
  auto status = out.body().initAppStatus();
  status.setApp(launcher.app());
  status.setRho(1.0);
  status.setPhase("train");
  status.setSummary("status " + std::to_string(id));
  if (remaining > 0) status.setRemaining(remaining);  // 0: not reported, as an older launcher sends it
  launcher.send(out);
}

// Sends a status and waits for its answer; `answered` collects the request ids of every answer read meanwhile.
std::optional<Answer> status_round_trip(TestCluster& cluster, ProtocolLauncher& launcher, std::uint64_t id, double remaining,
                                        std::vector<std::uint64_t>& answered) {
  send_status(launcher, id, remaining);
  std::optional<Answer> answer;
  cluster.wait_for([&] {
    launcher.pump_all([&](const net::InMessage& in) {
      if (in.which() != wire::Envelope::Body::Which::APP_STATUS_ACK) return;
      answered.push_back(in.request_id());
      if (in.request_id() == id) {
        const auto ack = in.envelope().getBody().getAppStatusAck();
        answer = Answer{ack.getActiveApps(), ack.getContentionAhead()};
      }
    });
    return answer.has_value();
  }, 10s);
  return answer;
}

TEST(ContentionAhead, TheCoordinatorAnswersAStatusWithTheContentionOverTheRestOfTheAppsLife) {
  TestCluster cluster({{"node-a", "rack-1", {{0, 1}}}, {"node-b", "rack-1", {{0, 1}}}});
  ASSERT_TRUE(cluster.start()) << read_text(cluster.coordinator_log());
  auto submit = [&](const std::string& name) { return std::stoll(cluster.submit("alice", name, one_gpu_sleeper(name, 120))); };
  const std::int64_t long_app = submit("long");
  const std::int64_t short_app = submit("short");
  submit("no-launcher");
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM apps WHERE state IN ('PENDING','RUNNING')") == "3"; }, 20s));
  zmq::context_t context(1);
  ProtocolLauncher long_launcher(context, cluster, "alice", long_app);
  ProtocolLauncher short_launcher(context, cluster, "alice", short_app);
  ASSERT_TRUE(cluster.wait_for([&] { return long_launcher.pump_all([](const net::InMessage&) {}); }, 10s));
  ASSERT_TRUE(cluster.wait_for([&] { return short_launcher.pump_all([](const net::InMessage&) {}); }, 10s));

  // 1,000 s left; neither other app has said how long it stays: both count throughout, 1 + 2 = 3.
  std::vector<std::uint64_t> answered;
  auto first = status_round_trip(cluster, long_launcher, 101, 1000, answered);
  ASSERT_TRUE(first) << read_text(cluster.coordinator_log());
  EXPECT_EQ(first->active_apps, 3U);
  EXPECT_DOUBLE_EQ(first->ahead, 3.0);
  // 200 s left; "long" stays beyond that and "no-launcher" throughout: 1 + (200 + 200) / 200 = 3.
  auto second = status_round_trip(cluster, short_launcher, 102, 200, answered);
  ASSERT_TRUE(second) << read_text(cluster.coordinator_log());
  EXPECT_DOUBLE_EQ(second->ahead, 3.0);
  // Now "short" leaves after 200 of long's 1,000 s: 1 + (200 + 1,000) / 1,000 = 2.2.
  auto third = status_round_trip(cluster, long_launcher, 103, 1000, answered);
  ASSERT_TRUE(third) << read_text(cluster.coordinator_log());
  EXPECT_EQ(third->active_apps, 3U);
  EXPECT_NEAR(third->ahead, 2.2, 1e-12);
  // A status without `remaining`, as an older launcher sends it, is taken in and not answered: the answer to the
  // status sent after it arrives, and none came for it (one connection keeps the order).
  send_status(long_launcher, 104, 0);
  ASSERT_TRUE(cluster.wait_for([&] {
    return cluster.sql("SELECT count(*) FROM events WHERE kind = 'LauncherStatus' AND app_id = " + std::to_string(long_app) +
                       " AND json_extract(message, '$.summary') = 'status 104'") == "1";
  }, 10s)) << read_text(cluster.coordinator_log());
  ASSERT_TRUE(status_round_trip(cluster, long_launcher, 105, 1000, answered)) << read_text(cluster.coordinator_log());
  EXPECT_EQ(std::count(answered.begin(), answered.end(), 104U), 0);
}

}  // namespace
}  // namespace themis::testing
