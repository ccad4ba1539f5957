// A launch that acts on a grant whose lease ended before the launch arrived (docs/protocols/control.md
// "Stale grants"), against a real coordinator and nodelet: a stand-in launcher holds a grant, lets a lease
// reach its expiry, and launches onto it while the coordinator re-auctions the GPU (the expiry's round waits
// for the launcher's bid). The answer is staleGrant, not denied; a launch on a live lease is still accepted.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "net/envelope.h"
#include "protocol_launcher.h"
#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;
using W = wire::Envelope::Body::Which;

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Lease {
  std::int32_t gpu = 0;
  std::int64_t id = 0;
  double expiry = 0;
};

struct Answer {
  bool ack = false;
  wire::ErrorCode code = wire::ErrorCode::INTERNAL;
  std::string message;
};

// The app's launcher as the test drives it: bids for every offered GPU while `bidding`, keeps the leases
// of the last grant that held any, and the answers to its launches.
class StaleGrantLauncher {
 public:
  StaleGrantLauncher(zmq::context_t& context, TestCluster& cluster, std::int64_t app) : launcher_(context, cluster, "alice", app) {}

  bool pump() {
    return launcher_.pump_all([&](const net::InMessage& in) {
      const auto body = in.envelope().getBody();
      switch (in.which()) {
        case W::OFFER: {
          ++offers;
          if (!bidding) break;
          std::vector<std::int32_t> all;
          for (const auto g : body.getOffer().getGpus()) all.push_back(g);
          launcher_.bid_one_row(in, 2.0, 1.0, all);
          break;
        }
        case W::GRANT:
          if (body.getGrant().getLeases().size() > 0) {
            leases.clear();
            for (const auto l : body.getGrant().getLeases()) leases.push_back({l.getGpu(), l.getId(), l.getExpiry()});
          }
          break;
        case W::ACK: answers[in.request_id()] = {true, wire::ErrorCode::INTERNAL, body.getAck().getMessage()}; break;
        case W::ERROR:
          answers[in.request_id()] = {false, body.getError().getCode(), body.getError().getMessage()};
          break;
        default: break;
      }
    });
  }

  // Job `job`'s attempt `attempt` on `lease`'s GPU, naming the lease (or, `name_lease` false, as an older
  // launcher does, naming none).
  void launch(std::uint64_t request, std::int64_t job, std::uint32_t attempt, const Lease& lease, bool name_lease) {
    net::OutMessage out(request);
    auto msg = out.body().initLaunchJob();
    msg.setApp(launcher_.app());
    msg.setJob(job);
    msg.setAttempt(attempt);
    msg.initGpus(1).set(0, lease.gpu);
    if (name_lease) msg.initLeases(1).set(0, lease.id);
    launcher_.send(out);
  }

  bool bidding = true;
  int offers = 0;
  std::vector<Lease> leases;
  std::map<std::uint64_t, Answer> answers;

 private:
  ProtocolLauncher launcher_;
};

TEST(StaleGrant, ALaunchOnALeaseThatExpiredSinceItsGrantIsAnsweredStaleGrantAndTheNextGrantLaunches) {
  // f = 0 and the fixed filter: the app is offered the GPUs of every round, so the round of its leases'
  // expiry waits (up to 1 s) for its bid. No probe: its first round is an auction.
  const std::vector<NodeSpec> node{{"node-a", "rack-1", {{0, 1}}}};
  TestCluster cluster(node, "2s", "fairness_knob = 0\nfilter = \"fixed\"\nprobe_duration = \"0s\"\n");
  cluster.start_coordinator();
  cluster.start_node("node-a");
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "1"; }, 20s))
      << read_text(cluster.coordinator_log());
  const std::string spec =
      "name = \"pair\"\ncommand = [\"sleep\", \"120\"]\n[hyperparameters]\nx = [0, 1]\n[resources]\ngpus_per_job = 1\n"
      "[checkpoint]\ngrace_period = \"1s\"\n[scheduler]\nlauncher = \"foreground\"\n";
  const auto submitted = cluster.ctl("alice", {"submit", "--parsable", cluster.write_file("pair.toml", spec)});
  ASSERT_EQ(submitted.code, 0) << submitted.out;
  const std::int64_t app = std::stoll(submitted.out);

  zmq::context_t context(1);
  StaleGrantLauncher launcher(context, cluster, app);
  ASSERT_TRUE(cluster.wait_for([&] { return launcher.pump() && launcher.leases.size() == 2; }, 20s))
      << read_text(cluster.coordinator_log());
  const auto granted = launcher.leases;

  // A launch on a live lease, naming it, is accepted as before.
  launcher.launch(100, 0, 1, granted[0], true);
  ASSERT_TRUE(cluster.wait_for([&] { return launcher.pump(), launcher.answers.count(100) > 0; }, 10s));
  EXPECT_TRUE(launcher.answers[100].ack) << launcher.answers[100].message;

  // The leases reach their expiry; the round that re-auctions them offers the GPUs and waits for a bid that
  // does not come. A launch on the second GPU, acting on the grant above, arrives in that window.
  launcher.bidding = false;
  const int offers_before = launcher.offers;
  ASSERT_TRUE(cluster.wait_for([&] { return launcher.pump(), launcher.offers > offers_before; }, 20s))
      << read_text(cluster.coordinator_log());
  EXPECT_GT(unix_now(), granted[1].expiry) << "the expiry's round came before the expiry";
  launcher.launch(101, 1, 1, granted[1], true);
  launcher.launch(102, 1, 1, granted[1], false);
  ASSERT_TRUE(cluster.wait_for([&] { return launcher.pump(), launcher.answers.count(101) + launcher.answers.count(102) == 2; }, 10s));
  const Answer stale = launcher.answers[101], unnamed = launcher.answers[102];
  if (stale.ack && cluster.sql("SELECT count(*) FROM leases WHERE state = 'active' AND gpu = " + std::to_string(granted[1].gpu) +
                               " AND id <> " + std::to_string(granted[1].id)) == "1") {
    GTEST_SKIP() << "the expiry's round passed its bid deadline and leased the GPU to the app again before the launch "
                    "arrived (a loaded box): the stale case was not produced";
  }
  EXPECT_FALSE(stale.ack);
  EXPECT_EQ(stale.code, wire::ErrorCode::STALE_GRANT) << stale.message;
  EXPECT_NE(stale.message.find("stale grant: job " + std::to_string(app) + "_1 attempt 1: GPU " +
                               std::to_string(granted[1].gpu) + "'s lease " + std::to_string(granted[1].id) + " expired"),
            std::string::npos)
      << stale.message;
  // A launch that names no lease (an older launcher) gets the answer it always got.
  EXPECT_FALSE(unnamed.ack);
  EXPECT_EQ(unnamed.code, wire::ErrorCode::DENIED) << unnamed.message;
  EXPECT_NE(unnamed.message.find("is not leased to app " + std::to_string(app)), std::string::npos) << unnamed.message;
  EXPECT_EQ(cluster.sql("SELECT state || ' ' || attempt FROM jobs WHERE app_id = " + std::to_string(app) + " AND job = 1"),
            "PENDING 0")
      << "a refused launch changes nothing";

  // Bidding again, the app gets the GPU back under a new lease, and the same launch acting on that grant starts.
  launcher.bidding = true;
  std::optional<Lease> fresh;
  ASSERT_TRUE(cluster.wait_for([&] {
    launcher.pump();
    for (const auto& l : launcher.leases) {
      if (l.gpu == granted[1].gpu && l.id != granted[1].id && l.expiry > unix_now() + 0.5) fresh = l;
    }
    return fresh.has_value();
  }, 20s)) << read_text(cluster.coordinator_log());
  launcher.launch(103, 1, 1, *fresh, true);
  ASSERT_TRUE(cluster.wait_for([&] { return launcher.pump(), launcher.answers.count(103) > 0; }, 10s));
  EXPECT_TRUE(launcher.answers[103].ack) << launcher.answers[103].message;
}

}  // namespace
}  // namespace themis::testing
