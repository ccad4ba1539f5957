// `themisctl explain` against a real coordinator and nodelets: for a pending, a running and a finished
// app, the verdict's facts are checked against the coordinator's database, and the text against them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "net/curve_keys.h"
#include "net/envelope.h"
#include "net/socket_security.h"
#include "protocol_launcher.h"
#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// Three nodelets with two virtual GPUs each, on two racks: six GPUs.
std::vector<NodeSpec> three_nodes() {
  return {{"node-a", "rack-1", {{0, 1}}}, {"node-b", "rack-1", {{0}, {1}}}, {"node-c", "rack-2", {{0, 1}}}};
}

std::string sleeper(const std::string& name, int jobs, int gpus_per_job) {
  std::string values;
  for (int i = 0; i < jobs; ++i) values += (i ? ", " : "") + std::to_string(i);
  return "name = \"" + name + "\"\ncommand = [\"sleep\", \"120\"]\n[hyperparameters]\nx = [" + values + "]\n"
         "[resources]\ngpus_per_job = " + std::to_string(gpus_per_job) + "\n[checkpoint]\ngrace_period = \"1s\"\n";
}

std::string fixed3(const std::string& number) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", std::stod(number));
  return buf;
}

class Explain : public ::testing::Test {
 protected:
  // reject_infeasible off: FinishedApps… cancels an app too wide for the cluster, which the default refuses.
  void SetUp() override { start("reject_infeasible = false\n"); }
  // A fresh cluster whose coordinator has `settings` (the old one, if any, is stopped first).
  void start(const std::string& settings) {
    cluster_.reset();
    cluster_ = std::make_unique<TestCluster>(three_nodes(), "60s", settings);
    cluster_->start_coordinator();
    for (const auto& n : three_nodes()) cluster_->start_node(n.host);
    ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "3"; }, 20s))
        << read_text(cluster_->coordinator_log());
  }
  std::string submit(const std::string& user, const std::string& spec, const std::string& file) {
    const auto r = cluster_->ctl(user, {"submit", "--parsable", cluster_->write_file(file, spec)});
    EXPECT_EQ(r.code, 0) << r.out;
    return r.first_stdout_line();
  }
  bool wait_sql(const std::string& query, const std::string& expected, std::chrono::milliseconds timeout = 30s) {
    return cluster_->wait_for([&] { return cluster_->sql(query) == expected; }, timeout);
  }
  // The verdict as JSON, and the text a user sees.
  json verdict(const std::string& app, std::string* text = nullptr) {
    const auto r = cluster_->ctl("alice", {"--json", "explain", app});
    EXPECT_EQ(r.code, 0) << r.out;
    if (text) {
      const auto t = cluster_->ctl("alice", {"explain", app});
      EXPECT_EQ(t.code, 0) << t.out;
      *text = t.out;
    }
    return json::parse(r.out)["verdict"];
  }
  double real(const std::string& query) { return std::stod(cluster_->sql(query)); }
  std::unique_ptr<TestCluster> cluster_;
};

TEST_F(Explain, PendingWithEveryGpuLeasedNamesTheNextLeaseExpiry) {
  submit("alice", sleeper("hog", 3, 2), "hog.toml");
  ASSERT_TRUE(wait_sql("SELECT count(*) FROM jobs WHERE app_id = 1 AND state = 'RUNNING'", "3"))
      << read_text(cluster_->coordinator_log());
  submit("bob", sleeper("waiter", 1, 2), "waiter.toml");
  std::string text;
  const json v = verdict("2", &text);
  EXPECT_EQ(v["state"], "PENDING");
  EXPECT_EQ(v["reason"], "Resources") << text;
  EXPECT_EQ(v["facts"]["free_gpus"].dump(),
            cluster_->sql("SELECT count(*) FROM gpus g WHERE NOT EXISTS (SELECT 1 FROM leases_active l WHERE l.gpu = g.gpu)"));
  EXPECT_EQ(v["facts"]["gpus_up"].dump(), cluster_->sql("SELECT count(*) FROM gpus"));
  EXPECT_NEAR(v["facts"]["next_expiry"].get<double>(), real("SELECT min(expiry_ts) FROM leases_active"), 1e-4);  // SQLite prints 15 significant digits
  // No round considered it: the database has no bid row for it.
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM bids WHERE app_id = 2"), "0");
  const std::string holder = cluster_->sql("SELECT app || ' (' || app_name || ')' FROM leases_active ORDER BY expiry_ts, gpu LIMIT 1");
  EXPECT_NE(text.find("PENDING (Resources)"), std::string::npos) << text;
  EXPECT_NE(text.find("all 6 GPUs of the up hosts are leased"), std::string::npos) << text;
  EXPECT_NE(text.find("app " + holder), std::string::npos) << holder << "\n" << text;
}

// With the coordinator's default gang reservation: the worst-ρ app's 4-GPU gang is wider than the two free
// GPUs, and the leased ones come back as leases end, so the round holds the two for it.
TEST_F(Explain, PendingWhileTheRoundHoldsTheFreeGpusForItsGangSaysReserved) {
  submit("alice", sleeper("pair", 2, 2), "pair.toml");
  ASSERT_TRUE(wait_sql("SELECT count(*) FROM jobs WHERE app_id = 1 AND state = 'RUNNING'", "2"));
  submit("alice", sleeper("wide", 1, 4), "wide.toml");
  ASSERT_TRUE(wait_sql("SELECT count(*) FROM bids WHERE app_id = 2", "1")) << read_text(cluster_->coordinator_log());
  std::string text;
  const json v = verdict("2", &text);
  EXPECT_EQ(v["state"], "PENDING");
  EXPECT_EQ(v["reason"], "Reserved") << text;
  EXPECT_NE(text.find("PENDING (Reserved)"), std::string::npos) << text;
  EXPECT_NE(text.find("held its 2 free GPUs for it"), std::string::npos) << text;
  EXPECT_NE(text.find("whose next gang needs 4 GPUs: 2 free now"), std::string::npos) << text;
  const std::string round = cluster_->sql("SELECT max(round_id) FROM bids WHERE app_id = 2");
  EXPECT_EQ(cluster_->sql("SELECT offered_to FROM rounds WHERE id = " + round), "[]");
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM leases_active WHERE app = 2"), "0");
}

TEST_F(Explain, PendingAfterARoundSaysWhoWasOfferedAndWhereTheGpusWent) {
  // Without gang reservation (the paper's round): two 2-GPU jobs leave two GPUs free; a 4-GPU job cannot use them.
  start("reject_infeasible = false\ngang_reservation = false\n");
  submit("alice", sleeper("pair", 2, 2), "pair.toml");
  ASSERT_TRUE(wait_sql("SELECT count(*) FROM jobs WHERE app_id = 1 AND state = 'RUNNING'", "2"));
  submit("alice", sleeper("wide", 1, 4), "wide.toml");
  ASSERT_TRUE(wait_sql("SELECT count(*) FROM bids WHERE app_id = 2", "1")) << read_text(cluster_->coordinator_log());
  std::string text;
  json v = verdict("2", &text);
  EXPECT_EQ(v["state"], "PENDING");
  const std::string round = cluster_->sql("SELECT max(round_id) FROM bids WHERE app_id = 2");
  EXPECT_EQ(v["facts"]["round"].dump(), round);
  EXPECT_EQ(v["facts"]["round_free_gpus"].dump(), cluster_->sql("SELECT free_gpus FROM rounds WHERE id = " + round));
  EXPECT_EQ(v["facts"]["offered_to"].dump(), cluster_->sql("SELECT offered_to FROM rounds WHERE id = " + round));
  // Two GPUs are left over but a 4-GPU job fits in neither: the app is not granted them (it could use
  // none), and they stay idle with the reason.
  EXPECT_EQ(cluster_->sql("SELECT grant_kind FROM bids WHERE app_id = 2 AND round_id = " + round), "") << text;
  EXPECT_EQ(v["reason"], "NoBid") << text;
  EXPECT_NE(cluster_->sql("SELECT outcome FROM rounds WHERE id = " + round)
                .find("fewer than one whole job of any app that wants more (the narrowest needs 4)"),
            std::string::npos)
      << cluster_->sql("SELECT outcome FROM rounds WHERE id = " + round);

  // A third app arrives: with f = 0.8 and three active apps, the offer goes to ⌈0.2·3⌉ = 1 app, the one
  // of the two wanting GPUs with the worse ρ.
  submit("bob", sleeper("wide-too", 1, 4), "wide-too.toml");
  ASSERT_TRUE(wait_sql("SELECT count(*) FROM bids WHERE app_id = 3", "1")) << read_text(cluster_->coordinator_log());
  v = verdict("3", &text);
  const std::string round3 = cluster_->sql("SELECT max(round_id) FROM bids WHERE app_id = 3");
  const std::string offered = cluster_->sql("SELECT offered_to FROM rounds WHERE id = " + round3);
  EXPECT_EQ(v["facts"]["round"].dump(), round3);
  EXPECT_EQ(v["facts"]["offered_to"].dump(), offered);
  EXPECT_EQ(v["facts"]["filter_size"], 1);
  EXPECT_EQ(v["facts"]["round_apps"].dump(), cluster_->sql("SELECT apps FROM rounds WHERE id = " + round3));
  const std::string rank = cluster_->sql("SELECT count(*) + 1 FROM bids o, bids b WHERE o.round_id = b.round_id AND b.app_id = 3 "
                                         "AND b.round_id = " + round3 + " AND o.rho_before > b.rho_before");
  EXPECT_EQ(v["facts"]["rho_rank"].dump(), rank);
  const bool offered_to_3 = offered.find('3') != std::string::npos;
  const bool granted_3 = !cluster_->sql("SELECT grant_kind FROM bids WHERE app_id = 3 AND round_id = " + round3).empty();
  if (granted_3) {
    EXPECT_EQ(v["reason"], "Placement") << text;
  } else if (offered_to_3) {
    EXPECT_EQ(v["reason"], "NoBid") << text;  // apps without a launcher send no bid
  } else {
    EXPECT_EQ(v["reason"], "Fairness") << text;
    const std::string first = cluster_->sql("SELECT json_extract('" + offered + "', '$[0]')");
    const std::string first_rho = fixed3(cluster_->sql("SELECT rho_before FROM bids WHERE round_id = " + round3 + " AND app_id = " + first));
    EXPECT_NE(text.find("app " + first + " ("), std::string::npos) << text;
    EXPECT_NE(text.find("ρ " + first_rho + ")"), std::string::npos) << first_rho << "\n" << text;
    EXPECT_NE(text.find("ranked " + rank + " of 3"), std::string::npos) << text;
    const std::string own_rho = fixed3(cluster_->sql("SELECT rho_before FROM bids WHERE round_id = " + round3 + " AND app_id = 3"));
    EXPECT_NE(text.find("its ρ " + own_rho), std::string::npos) << text;
  }
  // The offer went to the app that had waited longer, whose ρ is the larger.
  EXPECT_EQ(offered, "[2]") << text;
}

TEST_F(Explain, RunningNamesItsGpusTheRoundThatGaveThemAndTheirExpiry) {
  submit("alice", sleeper("sweep", 2, 2), "sweep.toml");
  ASSERT_TRUE(wait_sql("SELECT count(*) FROM jobs WHERE app_id = 1 AND state = 'RUNNING'", "2"));
  std::string text;
  const json v = verdict("1", &text);
  EXPECT_EQ(v["state"], "RUNNING");
  EXPECT_EQ(v["reason"], "Running");
  const std::string gpus = cluster_->sql("SELECT json_group_array(gpu) FROM (SELECT gpu FROM leases_active WHERE app = 1 ORDER BY gpu)");
  EXPECT_EQ(v["facts"]["gpus"].dump(), gpus);
  EXPECT_EQ(v["facts"]["won_round"].dump(), cluster_->sql("SELECT max(round) FROM leases_active WHERE app = 1"));
  EXPECT_EQ(v["facts"]["grant_kind"], cluster_->sql("SELECT grant_kind FROM bids WHERE app_id = 1 AND won <> '[]'"));
  EXPECT_NEAR(v["facts"]["first_expiry"].get<double>(), real("SELECT min(expiry_ts) FROM leases_active WHERE app = 1"), 1e-4);  // SQLite prints 15 significant digits
  EXPECT_EQ(v["facts"]["jobs_running"], 2);
  EXPECT_NE(text.find("RUNNING (Running)"), std::string::npos) << text;
  EXPECT_NE(text.find("holds 4 GPUs " + gpus), std::string::npos) << text;
  const std::string rho = fixed3(cluster_->sql("SELECT rho FROM apps WHERE id = 1"));
  EXPECT_NE(text.find("ρ " + rho), std::string::npos) << text;
}

TEST_F(Explain, FinishedAppsGiveTheirEndTimeJctRhoAndExitStatus) {
  submit("alice", "name = \"ok\"\ncommand = [\"sh\", \"-c\", \"echo fine\"]\n", "ok.toml");
  submit("alice", "name = \"bad\"\ncommand = [\"sh\", \"-c\", \"echo 'config error: lr must be positive' >&2; exit 78\"]\n",
         "bad.toml");
  submit("alice", sleeper("never", 1, 8), "never.toml");  // eight GPUs: never fits (waits Infeasible), then cancelled
  ASSERT_TRUE(wait_sql("SELECT count(*) FROM apps WHERE id IN (1, 2) AND state IN ('COMPLETED','FAILED')", "2", 60s))
      << read_text(cluster_->coordinator_log());
  EXPECT_EQ(cluster_->ctl("alice", {"cancel", "3"}).code, 0);
  ASSERT_TRUE(wait_sql("SELECT state FROM apps WHERE id = 3", "CANCELLED"));

  std::string text;
  json v = verdict("1", &text);
  EXPECT_EQ(v["state"], "COMPLETED");
  EXPECT_EQ(v["reason"], "Completed");
  EXPECT_NEAR(v["facts"]["finished_at"].get<double>(), real("SELECT finished_at FROM apps WHERE id = 1"), 1e-4);  // SQLite prints 15 significant digits
  EXPECT_NEAR(v["facts"]["jct_seconds"].get<double>(), real("SELECT finished_at - submitted_at FROM apps WHERE id = 1"), 1e-4);  // SQLite prints 15 significant digits
  EXPECT_EQ(v["facts"]["rho"].dump().substr(0, 5), cluster_->sql("SELECT rho FROM apps WHERE id = 1").substr(0, 5));
  EXPECT_EQ(v["facts"]["jobs"][0]["exit_code"].dump(), cluster_->sql("SELECT exit_code FROM jobs WHERE app_id = 1"));
  const std::string jct = cluster_->sql("SELECT printf('%.3f', finished_at - submitted_at) FROM apps WHERE id = 1");
  // Whole seconds as explain writes them (floor, then milliseconds); strftime alone rounds x.9995 s up.
  EXPECT_NE(text.find("COMPLETED at " + cluster_->sql("SELECT strftime('%Y-%m-%dT%H:%M:%S', CAST(finished_at AS INTEGER), 'unixepoch') FROM apps WHERE id = 1")),
            std::string::npos) << text;
  EXPECT_NE(text.find("(JCT " + jct + " s)"), std::string::npos) << text;
  EXPECT_NE(text.find("exit 0, signal 0"), std::string::npos) << text;

  v = verdict("2", &text);
  EXPECT_EQ(v["state"], "FAILED");
  EXPECT_EQ(v["reason"], "Failed");
  EXPECT_EQ(v["facts"]["jobs"][0]["exit_code"].dump(), cluster_->sql("SELECT exit_code FROM jobs WHERE app_id = 2"));
  EXPECT_EQ(cluster_->sql("SELECT exit_code FROM jobs WHERE app_id = 2"), "78");
  EXPECT_NEAR(v["facts"]["jct_seconds"].get<double>(), real("SELECT finished_at - submitted_at FROM apps WHERE id = 2"), 1e-4);  // SQLite prints 15 significant digits
  EXPECT_NE(text.find("exit 78, signal 0"), std::string::npos) << text;
  EXPECT_NE(text.find("last line: config error: lr must be positive"), std::string::npos) << text;

  v = verdict("3", &text);
  EXPECT_EQ(v["state"], "CANCELLED");
  EXPECT_EQ(v["facts"]["jobs"][0]["state"], "CANCELLED");
  EXPECT_EQ(v["facts"]["gpu_seconds"], 0.0);
  EXPECT_NE(text.find("never started"), std::string::npos) << text;
}

// A launcher for one app on the launcher protocol (docs/launcher.md): it attaches and answers every
// offer with one row, the first `want` offered GPUs at ρ `rho`, and ρ `rho_no_new` without them.
class BiddingLauncher {
 public:
  BiddingLauncher(zmq::context_t& context, TestCluster& cluster, const std::string& user, std::int64_t app, double rho,
                  double rho_no_new, unsigned want = 2)
      : launcher_(context, cluster, user, app), rho_(rho), rho_no_new_(rho_no_new), want_(want) {}
  // Handles what arrived; true once attached.
  bool pump() {
    return launcher_.pump([&](const net::InMessage& in) {
      const auto offer = in.envelope().getBody().getOffer();
      net::OutMessage out(in.request_id());
      auto bid = out.body().initBid();
      bid.setApp(launcher_.app());
      bid.setRound(offer.getRound());
      bid.setRhoNoNew(rho_no_new_);
      const unsigned count = std::min(want_, offer.getGpus().size());
      auto row = bid.initRows(1)[0];
      row.setRho(rho_);
      auto gpus = row.initGpus(count);
      for (unsigned g = 0; g < count; ++g) gpus.set(g, offer.getGpus()[g]);
      launcher_.send(out);
      ++bids_;
    });
  }
  int bids() const { return bids_; }

 private:
  ProtocolLauncher launcher_;
  double rho_, rho_no_new_;
  unsigned want_;
  int bids_ = 0;
};

// f = 0 and the fixed filter: every app that wants GPUs is offered them, so two launchers bid against each other.
class ExplainAuction : public Explain {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<TestCluster>(three_nodes(), "60s", "fairness_knob = 0\nfilter = \"fixed\"\n");
    cluster_->start_coordinator();
    for (const auto& n : three_nodes()) cluster_->start_node(n.host);
    ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "3"; }, 20s))
        << read_text(cluster_->coordinator_log());
  }
};

TEST_F(ExplainAuction, OutbidNamesTheBidsAndTheWinner) {
  // Every GPU busy: four with "hog", two with "spare"; then two launcher apps wait for the next round.
  submit("alice", sleeper("hog", 2, 2), "hog.toml");
  submit("alice", sleeper("spare", 1, 2), "spare.toml");
  ASSERT_TRUE(wait_sql("SELECT count(*) FROM jobs WHERE state = 'RUNNING'", "3")) << read_text(cluster_->coordinator_log());
  const std::string a = submit("alice", sleeper("keen", 1, 2), "keen.toml");
  const std::string b = submit("alice", sleeper("patient", 1, 2), "patient.toml");
  zmq::context_t context(1);
  // keen: ρ 3.0 without the GPUs, 1.5 with them; patient: 1.3 without, 1.2 with. The proportional-fair
  // choice (max Σ log 1/ρ) gives them to keen: log(1/1.5) + log(1/1.3) > log(1/3.0) + log(1/1.2).
  BiddingLauncher keen(context, *cluster_, "alice", std::stoll(a), 1.5, 3.0);
  BiddingLauncher patient(context, *cluster_, "alice", std::stoll(b), 1.2, 1.3);
  ASSERT_TRUE(cluster_->wait_for([&] { return keen.pump() & patient.pump(); }, 10s));
  // Cancelling "spare" frees its two GPUs: a round offers them to both launchers.
  ASSERT_EQ(cluster_->ctl("alice", {"cancel", "2"}).code, 0);
  ASSERT_TRUE(cluster_->wait_for([&] {
    keen.pump();
    patient.pump();
    return cluster_->sql("SELECT count(*) FROM bids WHERE app_id = " + b + " AND rho_no_new IS NOT NULL") != "0";
  }, 20s)) << read_text(cluster_->coordinator_log());
  EXPECT_GE(keen.bids(), 1);
  const std::string round = cluster_->sql("SELECT max(round_id) FROM bids WHERE app_id = " + b + " AND rho_no_new IS NOT NULL");
  std::string text;
  const json v = verdict(b, &text);
  EXPECT_EQ(v["facts"]["round"].dump(), round);
  EXPECT_EQ(v["facts"]["offered"], true);
  EXPECT_EQ(v["facts"]["bid"], true);
  EXPECT_EQ(v["facts"]["bid_rows"].dump(), cluster_->sql("SELECT bid_rows FROM bids WHERE app_id = " + b + " AND round_id = " + round));
  const std::string won = cluster_->sql("SELECT won FROM bids WHERE app_id = " + b + " AND round_id = " + round);
  const std::string winners = cluster_->sql("SELECT json_extract(outcome, '$.auction_winners') FROM rounds WHERE id = " + round);
  EXPECT_EQ(v["facts"]["won"].dump(), won);
  ASSERT_EQ(won, "[]") << "the auction should have given the GPUs to keen:\n" << winners << "\n" << text;
  EXPECT_EQ(v["reason"], "Outbid") << text;
  EXPECT_EQ(v["facts"]["winners"].dump(), winners);
  const std::string kept = cluster_->sql("SELECT json_extract(w.value, '$.kept') FROM rounds r, "
                                         "json_each(json_extract(r.outcome, '$.auction_winners')) w WHERE r.id = " + round +
                                         " AND json_extract(w.value, '$.app') = " + a);
  ASSERT_FALSE(kept.empty()) << winners;
  EXPECT_NE(text.find("PENDING (Outbid)"), std::string::npos) << text;
  EXPECT_NE(text.find("1.300 without new GPUs"), std::string::npos) << text;
  EXPECT_NE(text.find("at ρ 1.200"), std::string::npos) << text;
  EXPECT_NE(text.find("the auction gave " + kept + " to app " + a + " (its proportional-fair bundle"), std::string::npos)
      << kept << "\n" << text;
  EXPECT_NE(text.find("at ρ 1.500"), std::string::npos) << text;
  // The winner holds the GPUs it kept; its launcher has not placed its job on them.
  const json w = verdict(a);
  EXPECT_EQ(w["reason"], "Launching");
  EXPECT_EQ(w["facts"]["unused_gpus"].dump(),
            cluster_->sql("SELECT json_group_array(gpu) FROM (SELECT gpu FROM leases_active WHERE app = " + a + " ORDER BY gpu)"));
}

class ShortLeaseAuction : public Explain {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<TestCluster>(three_nodes(), "2s", "fairness_knob = 0\nfilter = \"fixed\"\n");
    cluster_->start_coordinator();
    for (const auto& n : three_nodes()) cluster_->start_node(n.host);
    ASSERT_TRUE(cluster_->wait_for([&] { return cluster_->sql("SELECT count(*) FROM hosts WHERE state = 'up'") == "3"; }, 20s))
        << read_text(cluster_->coordinator_log());
  }
};

// A launcher app's expiring GPUs won by another launcher app: the winner's new leases stay active
// (they were once expired in the same round, as if they were the loser's).
TEST_F(ShortLeaseAuction, GpusWonFromAnotherLaunchersExpiringLeaseStayLeased) {
  // patient holds all six GPUs; at their expiry keen outbids it for two of them and patient takes the
  // other four back as leftover (see OutbidNamesTheBidsAndTheWinner for the ρ arithmetic).
  const std::string patient_app = submit("alice", sleeper("patient", 3, 2), "patient.toml");
  zmq::context_t context(1);
  BiddingLauncher patient(context, *cluster_, "alice", std::stoll(patient_app), 1.2, 1.3, 6);
  ASSERT_TRUE(cluster_->wait_for([&] {
    patient.pump();
    return cluster_->sql("SELECT count(*) FROM leases_active WHERE app = " + patient_app) == "6";
  }, 20s)) << read_text(cluster_->coordinator_log());
  const std::string keen_app = submit("alice", sleeper("keen", 1, 2), "keen.toml");
  BiddingLauncher keen(context, *cluster_, "alice", std::stoll(keen_app), 1.5, 3.0, 2);
  ASSERT_TRUE(cluster_->wait_for([&] {
    patient.pump();
    keen.pump();
    return cluster_->sql("SELECT count(*) FROM leases WHERE app_id = " + keen_app) != "0";
  }, 30s)) << read_text(cluster_->coordinator_log());
  const std::string round = cluster_->sql("SELECT min(round_id) FROM leases WHERE app_id = " + keen_app);
  // The GPUs keen won were patient's, expiring in that round.
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM leases k JOIN leases p ON p.gpu = k.gpu AND p.app_id = " + patient_app +
                          " AND p.expiry <= k.start WHERE k.app_id = " + keen_app + " AND k.round_id = " + round),
            "2");
  EXPECT_EQ(cluster_->sql("SELECT count(*) FROM leases WHERE app_id = " + keen_app + " AND round_id = " + round +
                          " AND state <> 'active' AND released_at - start < 0.5"),
            "0")
      << cluster_->sql("SELECT group_concat(gpu || ':' || state || ':' || coalesce(release_reason, ''), ' ') FROM leases WHERE app_id = " + keen_app);
}

}  // namespace
}  // namespace themis::testing
