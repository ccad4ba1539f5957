// The fault matrix, a slow bidder (docs/reliability.md "Fault matrix: disk full, silent bidder"): an app's
// themis-launch is stopped with SIGSTOP across some lease expiries, so the offers of those rounds reach it
// only after the offer deadline, and left running across others, so it bids in time. Rounds must still run
// at the deadline, a late bid must be dropped rather than counted in a later round, the invariants must
// hold throughout, the other app must finish, and the slow app must finish once left alone. Real processes
// on loopback with CURVE: a coordinator, two nodelets with one virtual GPU each, two launchers,
// themis-train workers (LibTorch on CPU), paced to 10 ms per iteration so that a job's length is wall time: the
// slow app's job outlives the six toggled lease expiries however loaded the machine is.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>
#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include "net/curve_keys.h"
#include "net/envelope.h"
#include "net/socket_security.h"
#include "tests/faults/invariants.h"
#include "tests/faults/launcher_cluster.h"
#include "tests/integration/protocol_launcher.h"
#include "tests/integration/test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;

const std::string kBin = THEMIS_BIN_DIR;
constexpr int kCycles = 6;  // lease expiries: the even ones with the launcher stopped, the odd ones running

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}
void sleep_until_unix(double at) {
  const double wait = at - unix_seconds();
  if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
}

std::string spec(const std::string& name, const std::string& dir, const std::string& learning_rates, int iterations) {
  return "name = \"" + name + "\"\n" + "command = [\"" + kBin +
         "/themis-train\", \"--model\", \"mlp\", \"--hidden\", \"16\", \"--batch-size\", \"8\", \"--threads\", \"1\", "
         "\"--min-iteration-seconds\", \"0.01\"]\n"
         "hyperparameters = { lr = [" + learning_rates + "] }\n"
         "resources = { gpus_per_job = 1 }\n"
         "checkpoint = { dir = \"" + dir + "/ckpt/{app}/{job}\", grace_period = \"20s\" }\n"
         "[scheduler]\nlauncher = \"foreground\"\niterations = " + std::to_string(iterations) +
         "\nserial_iter_time = 0.01\n";
}

// The bids a launcher logged: round -> rho_no_new, in the order it sent them.
struct SentBids {
  std::vector<long long> rounds;
  std::map<long long, double> rho_no_new;
};
SentBids sent_bids(const std::string& log) {
  SentBids sent;
  const std::regex line("round ([0-9]+): offered [0-9]+ GPUs, bid [0-9]+ rows, rho_no_new ([0-9.eE+-]+|inf|nan)");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), line); it != std::sregex_iterator(); ++it) {
    const long long round = std::stoll((*it)[1].str());
    sent.rounds.push_back(round);
    sent.rho_no_new[round] = std::strtod((*it)[2].str().c_str(), nullptr);
  }
  return sent;
}

// Rounds whose bid of `app` the coordinator logged as late and dropped.
std::set<long long> dropped_bids(const std::string& log, std::int64_t app) {
  std::set<long long> rounds;
  const std::regex line("late bid of app " + std::to_string(app) + " for round ([0-9]+) dropped");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), line); it != std::sregex_iterator(); ++it) {
    rounds.insert(std::stoll((*it)[1].str()));
  }
  return rounds;
}

class SlowBidder : public ::testing::Test {
 protected:
  void SetUp() override { start_two_node_launcher_cluster(cluster_); }

  std::int64_t submit(const std::string& name, const std::string& learning_rates, int iterations) {
    const auto r = cluster_->ctl(
        "alice", {"submit", "--parsable",
                  cluster_->write_file(name + ".toml", spec(name, cluster_->dir(), learning_rates, iterations))});
    EXPECT_EQ(r.code, 0) << r.out;
    const auto id = std::stoll(r.first_stdout_line());
    submitted_.push_back(id);
    return id;
  }
  Process launcher(std::int64_t app) {
    return Process({kBin + "/themis-launch", "--coordinator", cluster_->endpoint(), "--key", cluster_->key("alice", true),
                    "--server-key", cluster_->key("coordinator", false), "--app", std::to_string(app)},
                   log_of(app));
  }
  std::string log_of(std::int64_t app) const { return cluster_->dir() + "/launcher-" + std::to_string(app) + ".log"; }
  std::string sql(const std::string& query) { return cluster_->sql(query); }
  std::string state(std::int64_t app) { return sql("SELECT state FROM apps WHERE id = " + std::to_string(app)); }
  std::string diagnostics() {
    return "apps: " + sql("SELECT group_concat(name || ' ' || state, ', ') FROM apps") + "\njobs: " +
           sql("SELECT group_concat(app_id || '_' || job || ' ' || state || ' attempt ' || attempt, ', ') FROM jobs") +
           "\nleases: " +
           sql("SELECT group_concat(gpu || '->' || app_id || ' ' || state, ', ') FROM leases WHERE state = 'active'") +
           "\n" + read_text(cluster_->coordinator_log());
  }
  bool host_lost() { return sql("SELECT count(*) FROM events WHERE kind = 'HostDown'") != "0"; }
  // Iterations `app`'s launcher last reported done (themisctl's PROGRESS, "done/planned phase"); -1 if none.
  long long iterations_done(std::int64_t app) {
    const auto r = cluster_->ctl("alice", {"apps", "-o", "json"});
    if (r.code != 0) return -1;
    const auto doc = nlohmann::json::parse(r.stdout_text, nullptr, false);
    if (doc.is_discarded() || !doc.contains("items")) return -1;
    for (const auto& item : doc["items"]) {
      if (item.value("app", std::int64_t{-1}) != app || !item.contains("progress") || !item["progress"].is_string()) continue;
      const std::string progress = item["progress"];
      const auto slash = progress.find('/');
      if (slash == std::string::npos || slash == 0) return -1;
      return std::stoll(progress.substr(0, slash));
    }
    return -1;
  }
  // Waits until `app` is COMPLETED, for as long as its launcher reports new iterations within every
  // `stall`: its job trains on the CPU, so how long it takes depends on the machine's load, while a job
  // that stops making progress is the failure this looks for.
  bool completes_while_training(std::int64_t app, std::chrono::seconds stall) {
    long long last = -1;
    auto last_change = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - last_change < stall) {
      if (state(app) == "COMPLETED") return true;
      const long long done = iterations_done(app);
      if (done > last) {
        last = done;
        last_change = std::chrono::steady_clock::now();
      }
      std::this_thread::sleep_for(1s);
    }
    return state(app) == "COMPLETED";
  }
  // Mean seconds and count over the rounds in (after, upto] that offered GPUs to `app`, by `which`.
  std::pair<double, int> offer_wait(std::int64_t app, long long after, long long upto, const std::string& which) {
    const std::string where = " FROM rounds r JOIN bids b ON b.round_id = r.id AND b.app_id = " + std::to_string(app) +
                              " WHERE r.id > " + std::to_string(after) + " AND r.id <= " + std::to_string(upto) +
                              " AND r.offers_sent_at IS NOT NULL AND r.auction_started_at IS NOT NULL"
                              " AND EXISTS (SELECT 1 FROM json_each(r.offered_to) o WHERE o.value = b.app_id) AND " + which;
    const std::string n = sql("SELECT count(*)" + where);
    const std::string mean = sql("SELECT avg(r.auction_started_at - r.offers_sent_at)" + where);
    return {mean.empty() ? 0.0 : std::stod(mean), n.empty() ? 0 : std::stoi(n)};
  }

  std::unique_ptr<TestCluster> cluster_;
  std::vector<std::int64_t> submitted_;
};

TEST_F(SlowBidder, LateBidsAreDroppedRoundsGoOnAndBothAppsFinish) {
  const auto slow = submit("slow", "\"0.05\"", 2400);
  Process slow_launcher = launcher(slow);
  ASSERT_TRUE(cluster_->wait_for([&] { return sql("SELECT state FROM jobs WHERE app_id = " + std::to_string(slow)) == "RUNNING"; }, 60s))
      << read_text(log_of(slow)) << diagnostics();
  const auto steady = submit("steady", "\"0.05\", \"0.1\", \"0.2\"", 450);
  Process steady_launcher = launcher(steady);
  ASSERT_TRUE(cluster_->wait_for([&] { return state(steady) == "RUNNING"; }, 60s)) << read_text(log_of(steady)) << diagnostics();

  // The invariants, sampled by a thread of their own while the launcher is stopped and continued.
  std::atomic<bool> done{false};
  std::mutex violations_mutex;
  std::vector<std::string> violations;
  int invariant_samples = 0;
  std::thread sampler([&] {
    while (!done) {
      const auto found = faults::check_invariants({cluster_->db_path(), submitted_, true, cluster_->dir()});
      const std::lock_guard<std::mutex> lock(violations_mutex);
      ++invariant_samples;
      violations.insert(violations.end(), found.begin(), found.end());
      std::this_thread::sleep_for(300ms);
    }
  });
  struct JoinOnExit {
    std::atomic<bool>& done;
    std::thread& thread;
    ~JoinOnExit() {
      done = true;
      if (thread.joinable()) thread.join();
    }
  } join_on_exit{done, sampler};
  struct ContinueOnExit {
    Process& launcher;
    ~ContinueOnExit() { launcher.signal(SIGCONT); }
  } continue_on_exit{slow_launcher};

  const long long round_before = std::stoll(sql("SELECT coalesce(max(id), 0) FROM rounds"));
  int stopped_expiries = 0;
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    // The next lease expiry starts a round that offers every GPU of the expiring leases to both apps.
    double expiry = 0;
    ASSERT_TRUE(cluster_->wait_for([&] {
      const std::string next = sql("SELECT min(expiry) FROM leases WHERE state = 'active' AND expiry > " +
                                   std::to_string(unix_seconds() + 0.4));
      if (next.empty()) return false;
      expiry = std::stod(next);
      return true;
    }, 30s)) << diagnostics();
    if (cycle % 2 == 0) {
      // Stopped from before the expiry until well after the offer deadline (1 s): this round's bid is late.
      sleep_until_unix(expiry - 0.3);
      slow_launcher.signal(SIGSTOP);
      std::this_thread::sleep_for(2000ms);
      slow_launcher.signal(SIGCONT);
      ++stopped_expiries;
    } else {
      sleep_until_unix(expiry + 1.5);  // running: it bids in time
    }
  }
  const long long round_after_toggling = std::stoll(sql("SELECT coalesce(max(id), 0) FROM rounds"));

  const bool steady_done = cluster_->wait_for([&] { return state(steady) == "COMPLETED"; }, 120s);
  const bool slow_done = completes_while_training(slow, 60s);
  done = true;
  sampler.join();
  if (host_lost()) {
    GTEST_SKIP() << "a host missed its heartbeats under load; the slow-bidder case was not isolated: "
                 << sql("SELECT group_concat(ts || ' ' || host || ' ' || message, '; ') FROM events WHERE kind = 'HostDown'")
                 << "\n" << read_text(cluster_->coordinator_log());
  }
  ASSERT_TRUE(steady_done) << read_text(log_of(steady)) << diagnostics();
  ASSERT_TRUE(slow_done) << read_text(log_of(slow)) << diagnostics();
  EXPECT_EQ(steady_launcher.wait(), 0);
  EXPECT_EQ(slow_launcher.wait(), 0);
  EXPECT_TRUE(violations.empty()) << ::testing::PrintToString(violations);
  const auto final_violations = faults::check_invariants({cluster_->db_path(), submitted_, true, cluster_->dir()});
  EXPECT_TRUE(final_violations.empty()) << ::testing::PrintToString(final_violations);

  // Rounds went on while the bidder was slow: each stopped expiry had its round.
  const long long toggled_rounds = round_after_toggling - round_before;
  EXPECT_GE(toggled_rounds, stopped_expiries) << diagnostics();

  // Late bids were dropped: the coordinator logged each, and the round it was for recorded no bid.
  const std::string coordinator_log = read_text(cluster_->coordinator_log());
  const auto dropped = dropped_bids(coordinator_log, slow);
  EXPECT_GE(dropped.size(), 1u) << coordinator_log;
  for (const long long round : dropped) {
    EXPECT_EQ(sql("SELECT coalesce(max(rho_no_new IS NOT NULL), 0) FROM bids WHERE round_id = " + std::to_string(round) +
                  " AND app_id = " + std::to_string(slow)),
              "0")
        << "the late bid for round " << round << " was counted";
  }
  // ... and never counted in another round: no round number was offered twice, and every bid the
  // coordinator recorded for the slow app is the one the launcher sent for that very round.
  const SentBids sent = sent_bids(read_text(log_of(slow)));
  for (std::size_t i = 1; i < sent.rounds.size(); ++i) {
    EXPECT_LT(sent.rounds[i - 1], sent.rounds[i]) << "round " << sent.rounds[i] << " was offered twice";
  }
  int applied = 0;
  for (long long round = round_before + 1; round <= std::stoll(sql("SELECT coalesce(max(id), 0) FROM rounds")); ++round) {
    const std::string recorded = sql("SELECT rho_no_new FROM bids WHERE round_id = " + std::to_string(round) +
                                     " AND app_id = " + std::to_string(slow) + " AND rho_no_new IS NOT NULL");
    if (recorded.empty()) continue;
    ++applied;
    EXPECT_EQ(dropped.count(round), 0u) << "round " << round;
    const auto it = sent.rho_no_new.find(round);
    ASSERT_NE(it, sent.rho_no_new.end()) << "round " << round << " counted a bid the launcher never sent for it";
    EXPECT_NEAR(std::stod(recorded), it->second, 0.0006) << "round " << round;
  }
  EXPECT_GE(applied, 1) << "the slow app never bid in time";

  // What it cost the slow app: its jobs stopped at a lease it did not renew in time, and where they resumed.
  const std::string slow_log = read_text(log_of(slow));
  std::string preemptions, resumptions;
  const std::regex preempted("preempted \\(checkpointed\\) at iteration ([0-9]+)"), resumed("resumed from iteration ([0-9]+)");
  for (auto it = std::sregex_iterator(slow_log.begin(), slow_log.end(), preempted); it != std::sregex_iterator(); ++it) {
    preemptions += " " + (*it)[1].str();
  }
  for (auto it = std::sregex_iterator(slow_log.begin(), slow_log.end(), resumed); it != std::sregex_iterator(); ++it) {
    resumptions += " " + (*it)[1].str();
  }
  std::printf("slow app: job attempts %s; preempted (checkpointed) at iterations:%s; resumed from:%s\n",
              sql("SELECT attempt FROM jobs WHERE app_id = " + std::to_string(slow)).c_str(),
              preemptions.empty() ? " none" : preemptions.c_str(), resumptions.empty() ? " none" : resumptions.c_str());
  const auto late = offer_wait(slow, round_before, round_after_toggling, "b.rho_no_new IS NULL");
  const auto in_time = offer_wait(slow, round_before, round_after_toggling, "b.rho_no_new IS NOT NULL");
  const auto alone = offer_wait(slow, round_after_toggling, 1LL << 40, "1");
  std::printf("slow bidder: %d stopped expiries in %d cycles, %lld rounds meanwhile, %zu late bids dropped, %d bids "
              "counted, %d invariant samples; offers to auction: %.3f s mean over %d rounds without its bid, %.3f s over "
              "%d rounds with it, %.3f s over %d rounds once left alone; steady app and slow app COMPLETED\n",
              stopped_expiries, kCycles, toggled_rounds, dropped.size(), applied, invariant_samples, late.first,
              late.second, in_time.first, in_time.second, alone.first, alone.second);
}

// A launcher on the launcher protocol (docs/launcher.md) that keeps the offers it gets and answers one
// when told, however late: the slowest bidder there is.
class HeldOffers {
 public:
  HeldOffers(zmq::context_t& context, TestCluster& cluster, std::int64_t app) : launcher_(context, cluster, "alice", app) {}
  // Reads what arrived; true once attached.
  bool pump() {
    return launcher_.pump([&](const net::InMessage& in) {
      const auto offer = in.envelope().getBody().getOffer();
      std::vector<std::int32_t> gpus;
      for (const auto g : offer.getGpus()) gpus.push_back(g);
      offers_.push_back({in.request_id(), offer.getRound(), gpus});
    });
  }
  struct HeldOffer {
    std::uint64_t request_id;
    std::int64_t round;
    std::vector<std::int32_t> gpus;
  };
  const std::vector<HeldOffer>& offers() const { return offers_; }
  // Bids for offer `index`: all its GPUs at ρ `rho`, ρ `rho_no_new` without them.
  void answer(std::size_t index, double rho, double rho_no_new) {
    const HeldOffer& offer = offers_.at(index);
    net::OutMessage out(offer.request_id);
    auto bid = out.body().initBid();
    bid.setApp(launcher_.app());
    bid.setRound(offer.round);
    bid.setRhoNoNew(rho_no_new);
    auto row = bid.initRows(1)[0];
    row.setRho(rho);
    auto gpus = row.initGpus(static_cast<unsigned>(offer.gpus.size()));
    for (unsigned g = 0; g < offer.gpus.size(); ++g) gpus.set(g, offer.gpus[g]);
    launcher_.send(out);
  }

 private:
  ProtocolLauncher launcher_;
  std::vector<HeldOffer> offers_;
};

// An offer whose GPUs go away before its deadline (their host is declared down) ends without a round.
// The next offer must not take the same round number, or a bid for the abandoned offer, arriving late,
// would count in that next round.
TEST(AbandonedOffer, ALateBidForAnOfferThatNeverBecameARoundIsNotCountedInTheNextRound) {
  // Heartbeats of 100 ms × 3 lives: the killed host is declared down 0.3 s after its last heartbeat,
  // before the 1 s offer deadline.
  TestCluster cluster({{"node-a", "r1", {{0}}}}, "60s", "fairness_knob = 0\nfilter = \"fixed\"\nheartbeat_lives = 3\n");
  cluster.start_coordinator();
  cluster.start_node("node-a");
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "1"; }, 20s));
  const auto r = cluster.ctl("alice", {"submit", "--parsable", cluster.write_file("late.toml", spec("late", cluster.dir(), "\"0.05\"", 100))});
  ASSERT_EQ(r.code, 0) << r.out;
  const std::int64_t app = std::stoll(r.first_stdout_line());
  zmq::context_t context(1);
  HeldOffers launcher(context, cluster, app);
  ASSERT_TRUE(cluster.wait_for([&] { return launcher.pump() && !launcher.offers().empty(); }, 20s))
      << read_text(cluster.coordinator_log());
  cluster.kill_node("node-a", SIGKILL);
  const auto first_offer_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM events WHERE kind = 'HostDown'") == "1"; }, 20s));
  // Past the deadline of the first offer: with no GPU left to auction, it ended without a round.
  ASSERT_TRUE(cluster.wait_for([&] { return std::chrono::steady_clock::now() - first_offer_at > 1500ms; }, 5s));
  if (cluster.sql("SELECT count(*) FROM rounds") != "0") {
    GTEST_SKIP() << "the first offer's round ran before the host was declared down (a loaded box); the abandoned "
                    "offer was not produced";
  }
  cluster.start_node("node-a");  // it registers again: the next round offers its GPU
  ASSERT_TRUE(cluster.wait_for([&] { return launcher.pump(), launcher.offers().size() >= 2; }, 20s))
      << read_text(cluster.coordinator_log());
  const auto first = launcher.offers()[0], second = launcher.offers()[1];
  EXPECT_NE(first.round, second.round) << "two offers numbered " << first.round;
  launcher.answer(0, 6.0, 7.0);  // the late bid, for the abandoned offer
  ASSERT_TRUE(cluster.wait_for([&] {
    launcher.pump();
    return cluster.sql("SELECT count(*) FROM rounds WHERE id = " + std::to_string(second.round)) == "1";
  }, 20s)) << read_text(cluster.coordinator_log());
  EXPECT_EQ(cluster.sql("SELECT coalesce(rho_no_new, 'none') FROM bids WHERE round_id = " + std::to_string(second.round) +
                        " AND app_id = " + std::to_string(app)),
            "none")
      << "the bid for the abandoned offer counted in round " << second.round;
  EXPECT_NE(read_text(cluster.coordinator_log())
                .find("late bid of app " + std::to_string(app) + " for round " + std::to_string(first.round) + " dropped"),
            std::string::npos);
  std::printf("abandoned offer: numbered %lld, the next offer %lld; the late bid for the first %s\n",
              static_cast<long long>(first.round), static_cast<long long>(second.round),
              cluster.sql("SELECT rho_no_new FROM bids WHERE round_id = " + std::to_string(second.round)).empty()
                  ? "was dropped"
                  : "counted");
}

}  // namespace
}  // namespace themis::testing
