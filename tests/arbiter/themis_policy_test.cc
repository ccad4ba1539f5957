#include "policy/arbiter/themis_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

#include "test_apps.h"

namespace themis::arbiter {
namespace {

using testing::ScriptedApp;

// A random bidder: rows are random subsets of the offer, sometimes malformed on purpose.
ScriptedApp::BidFunction random_bidder(AppId id, std::uint64_t seed, double rho_now, int demand) {
  return [=](const Offer& offer) {
    Rng rng(seed);
    Bid bid{id, rho_now, {}};
    const int rows = static_cast<int>(rng.below(8));
    for (int r = 0; r < rows; ++r) {
      std::vector<GpuIndex> gpus;
      const auto start = rng.below(offer.gpus.size());
      const int size = 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(std::max(1, demand + 1))));
      for (std::size_t k = start; k < offer.gpus.size() && static_cast<int>(gpus.size()) < size; ++k)
        if (rng.uniform() < 0.8) gpus.push_back(offer.gpus[k]);
      if (rng.uniform() < 0.05) gpus.push_back(100000);       // outside the offer
      if (rng.uniform() < 0.05) std::reverse(gpus.begin(), gpus.end());
      const double rho = rng.uniform() < 0.03 ? -1.0 : rho_now * (0.2 + rng.uniform());
      // Scopes 0..4 are valid; 5 is malformed and must be dropped by validation.
      bid.rows.push_back({gpus, rho, static_cast<ShapeScope>(rng.below(6))});
    }
    if (rng.uniform() < 0.03) bid.rho_no_new = std::nan("");
    return bid;
  };
}

TEST(ThemisPolicy, InvariantsOverRandomRounds) {
  const Cluster cluster = testing::make_cluster(6, 2, 2, 3);  // 24 GPUs
  Rng world(11);
  int granted_total = 0, idle_total = 0, auction_grants = 0, leftover_grants = 0;
  for (int round = 0; round < 500; ++round) {
    ThemisSettings settings;
    settings.f = FilterFraction::from_double(world.uniform());
    const SolverKind solvers[] = {SolverKind::kBranchAndBound, SolverKind::kCbc, SolverKind::kShape};
    settings.solver = solvers[(round / 3) % 3];  // every solver with every rounding rule
    const RoundingRule rules[] = {RoundingRule::kLottery, RoundingRule::kNearest, RoundingRule::kTimeShare};
    settings.rounding = rules[round % 3];
    ThemisPolicy policy(settings);
    RoundInput input;
    input.cluster = &cluster;
    input.round = round;
    input.now = 600.0 * round;
    for (GpuIndex g = 0; g < cluster.size(); ++g)
      if (world.uniform() < 0.5) input.free_gpus.push_back(g);
    std::vector<std::unique_ptr<ScriptedApp>> apps;
    std::map<AppId, int> demand;
    const int n = static_cast<int>(world.below(8));
    for (int a = 0; a < n; ++a) {
      const AppId id = 100 + a;
      const double rho = 0.5 + 3 * world.uniform();
      const int d = static_cast<int>(world.below(6));
      demand[id] = d;
      apps.push_back(std::make_unique<ScriptedApp>(id, rho, d, random_bidder(id, world.next(), rho, d)));
      input.apps.push_back(apps.back().get());
    }
    Rng rng(static_cast<std::uint64_t>(round) + 1);
    const RoundOutcome out = policy.run_round(input, rng);
    SCOPED_TRACE("round " + std::to_string(round));

    std::set<GpuIndex> seen;
    std::map<AppId, int> got;
    for (const Grant& grant : out.grants) {
      EXPECT_TRUE(std::is_sorted(grant.gpus.begin(), grant.gpus.end()));
      EXPECT_FALSE(grant.gpus.empty());
      EXPECT_NE(grant.kind, GrantKind::kDirect);
      for (GpuIndex g : grant.gpus) {
        EXPECT_TRUE(seen.insert(g).second) << "GPU " << g << " granted twice";
        EXPECT_TRUE(std::binary_search(input.free_gpus.begin(), input.free_gpus.end(), g));
      }
      got[grant.app] += static_cast<int>(grant.gpus.size());
      (grant.kind == GrantKind::kAuction ? auction_grants : leftover_grants)++;
    }
    for (const auto& [app, count] : got) EXPECT_LE(count, demand[app]) << "app " << app;
    for (const IdleGpu& idle : out.idle) {
      EXPECT_TRUE(seen.insert(idle.gpu).second) << "GPU " << idle.gpu << " both granted and idle";
      EXPECT_FALSE(idle.reason.empty());
    }
    EXPECT_EQ(seen, std::set<GpuIndex>(input.free_gpus.begin(), input.free_gpus.end()));
    EXPECT_GE(out.auction.gap, 0.0);
    for (const auto& w : out.auction.winners) {
      EXPECT_GT(w.c, 0.0);
      EXPECT_LE(w.c, 1.0);
      EXPECT_TRUE(std::includes(w.pf_bundle.begin(), w.pf_bundle.end(), w.kept.begin(), w.kept.end()));
    }
    const auto leases = policy.leases(out, input);
    EXPECT_EQ(leases.size(), out.grants.empty() ? 0u : static_cast<std::size_t>(std::count_if(seen.begin(), seen.end(), [&](GpuIndex g) {
      return std::none_of(out.idle.begin(), out.idle.end(), [&](const IdleGpu& i) { return i.gpu == g; });
    })));
    for (const Lease& l : leases) {
      if (settings.rounding == RoundingRule::kTimeShare) {
        EXPECT_GT(l.expiry - l.start, 0.0);
        EXPECT_LE(l.expiry - l.start, 600.0);
      } else {
        EXPECT_DOUBLE_EQ(l.expiry - l.start, 600.0);
      }
    }
    granted_total += static_cast<int>(seen.size() - out.idle.size());
    idle_total += static_cast<int>(out.idle.size());
  }
  EXPECT_GT(auction_grants, 100);
  EXPECT_GT(leftover_grants, 100);
  EXPECT_GT(granted_total, 1000);
  EXPECT_GT(idle_total, 10);
}

// Two apps that hold nothing compete for one GPU. "No new GPUs" means waiting one lease (600 s) and
// then running on the GPU: ρ_no_new = (now + 600 + work) / T_id, ρ_row = (now + work) / T_id.
struct StarvingApp {
  AppId id;
  double work;   // seconds left on one GPU
  double t_id;
  int held = 0;
};

Bid starving_bid(const StarvingApp& a, double now, const Offer& offer) {
  return Bid{a.id, (now + 600 + a.work) / a.t_id, {{{offer.gpus.front()}, (now + a.work) / a.t_id}}};
}

TEST(ThemisPolicy, StarvingAppWithTheBiggerImprovementWins) {
  const Cluster cluster = testing::make_cluster(1, 1, 1, 1);
  ThemisSettings settings;
  settings.f = FilterFraction::parse("0");  // both bid
  ThemisPolicy policy(settings);
  // A: 1200 s of work -> ratio (600+1200)/1200 = 1.5. B: 3000 s -> 3600/3000 = 1.2. A wins.
  StarvingApp a{1, 1200, 4000}, b{2, 3000, 4000};
  ScriptedApp app_a(1, 1800 / 4000.0, 1, [&](const Offer& o) { return starving_bid(a, 0, o); });
  ScriptedApp app_b(2, 3600 / 4000.0, 1, [&](const Offer& o) { return starving_bid(b, 0, o); });
  RoundInput input{&cluster, 1, 0, {0}, {}, {&app_a, &app_b}};
  Rng rng(1);
  const RoundOutcome out = policy.run_round(input, rng);
  ASSERT_EQ(out.auction.winners.size(), 1u);
  EXPECT_EQ(out.auction.winners[0].app, 1);
  // c_A = exp(0 − log 1.2) = 1/1.2; one GPU rounds to 1 kept.
  EXPECT_NEAR(out.auction.winners[0].c, 1 / 1.2, 1e-12);
  ASSERT_EQ(out.grants.size(), 1u);
  EXPECT_EQ(out.grants[0].app, 1);
  EXPECT_EQ(out.grants[0].kind, GrantKind::kAuction);
}

TEST(ThemisPolicy, TimeShareRoundingLeasesTheWholeBundleForCOfTheLease) {
  // As above, but two GPUs: A's two-GPU row wins; without A, B would take one GPU (ρ 1.2 -> 0.9).
  const Cluster cluster = testing::make_cluster(1, 1, 2, 1);  // GPUs 0 and 1 on one machine
  ThemisSettings settings;
  settings.f = FilterFraction::parse("0");
  settings.rounding = RoundingRule::kTimeShare;
  ThemisPolicy policy(settings);
  ScriptedApp app_a(1, 1.5, 2, [](const Offer&) { return Bid{1, 1.5, {{{0, 1}, 0.5}}}; });
  ScriptedApp app_b(2, 1.2, 1, [](const Offer&) { return Bid{2, 1.2, {{{0}, 0.9}}}; });
  RoundInput input{&cluster, 1, 100, {0, 1}, {}, {&app_a, &app_b}};
  Rng rng(1);
  const RoundOutcome out = policy.run_round(input, rng);
  ASSERT_EQ(out.auction.winners.size(), 1u);
  const double c = out.auction.winners[0].c;
  EXPECT_NEAR(c, 0.9 / 1.2, 1e-12);
  ASSERT_EQ(out.grants.size(), 1u);
  EXPECT_EQ(out.grants[0].gpus, (std::vector<GpuIndex>{0, 1}));
  EXPECT_DOUBLE_EQ(out.grants[0].lease_fraction, c);
  for (const Lease& l : policy.leases(out, input)) {
    EXPECT_DOUBLE_EQ(l.start, 100);
    EXPECT_DOUBLE_EQ(l.expiry, 100 + 600 * c);
  }
}

TEST(ThemisPolicy, NeitherStarvingAppStarvesOverRounds) {
  // Default f = 0.8: each round only the app with the worse current ρ bids. The one that waits sees
  // its ρ grow; the one that runs keeps its ρ; so the GPU changes hands.
  const Cluster cluster = testing::make_cluster(1, 1, 1, 1);
  ThemisPolicy policy;
  StarvingApp apps[2] = {{1, 30000, 40000}, {2, 20000, 40000}};
  auto current_rho = [](const StarvingApp& a, double now) {
    return (now + (a.held > 0 ? 0 : 600) + a.work) / a.t_id;
  };
  std::vector<std::unique_ptr<ScriptedApp>> models;
  double now = 0;
  for (auto& a : apps)
    models.push_back(std::make_unique<ScriptedApp>(a.id, 0, 1, [&a, &now](const Offer& o) {
      return starving_bid(a, now, o);
    }));
  int longest_wait[2] = {0, 0}, wait[2] = {0, 0}, wins[2] = {0, 0};
  Rng rng(7);
  for (int round = 0; round < 60; ++round) {
    for (int k = 0; k < 2; ++k) models[static_cast<std::size_t>(k)]->set_rho(current_rho(apps[k], now));
    RoundInput input{&cluster, round, now, {0}, {}, {models[0].get(), models[1].get()}};
    const RoundOutcome out = policy.run_round(input, rng);
    ASSERT_EQ(out.grants.size(), 1u);
    ASSERT_EQ(out.auction.bidders.size(), 1u);
    for (int k = 0; k < 2; ++k) {
      const bool won = out.grants[0].app == apps[k].id;
      apps[k].held = won ? 1 : 0;
      if (won) {
        apps[k].work -= 600;
        ++wins[k];
        wait[k] = 0;
      } else {
        longest_wait[k] = std::max(longest_wait[k], ++wait[k]);
      }
    }
    now += 600;
  }
  EXPECT_GT(wins[0], 10);
  EXPECT_GT(wins[1], 10);
  EXPECT_LT(longest_wait[0], 20);
  EXPECT_LT(longest_wait[1], 20);
}

TEST(ThemisPolicy, MalformedBidsAreDroppedNotFatal) {
  const Cluster cluster = testing::make_cluster(1, 2, 2, 1);
  ThemisSettings settings;
  settings.f = FilterFraction::parse("0");
  ThemisPolicy policy(settings);
  ScriptedApp bad(1, 5.0, 2, [](const Offer&) { return Bid{1, std::nan(""), {{{0}, 1.0}}}; });
  ScriptedApp wrong_id(2, 4.0, 2, [](const Offer&) { return Bid{99, 2.0, {{{0}, 1.0}}}; });
  ScriptedApp good(3, 3.0, 2, [](const Offer&) { return Bid{3, 2.0, {{{1, 0}, 1.0}, {{2, 3}, 1.0}}}; });
  RoundInput input{&cluster, 1, 0, {0, 1, 2, 3}, {}, {&bad, &wrong_id, &good}};
  Rng rng(1);
  const RoundOutcome out = policy.run_round(input, rng);
  EXPECT_EQ(out.auction.bids.size(), 3u);
  ASSERT_EQ(out.auction.winners.size(), 1u);
  EXPECT_EQ(out.auction.winners[0].app, 3);
  EXPECT_EQ(out.auction.winners[0].pf_bundle, (std::vector<GpuIndex>{2, 3}));
  EXPECT_EQ(out.auction.winners[0].c, 1.0);
  ASSERT_EQ(policy.last_rejections().size(), 3u);
  EXPECT_EQ(policy.last_rejections()[0].app, 1);
  EXPECT_EQ(policy.last_rejections()[1].app, 99);
  EXPECT_EQ(policy.last_rejections()[2].app, 3);
  EXPECT_EQ(policy.last_rejections()[2].row, 0);
  // The two bidders without a valid bid still get the leftover as apps with remaining demand.
  int granted = 0;
  for (const auto& g : out.grants) granted += static_cast<int>(g.gpus.size());
  EXPECT_EQ(granted, 4);
}

TEST(ThemisPolicy, BadSettingsAreRefusedAndSayWhich) {
  const auto message = [](ThemisSettings settings) {
    try {
      ThemisPolicy policy(settings);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  ThemisSettings threads;
  threads.solver_threads = -1;
  EXPECT_NE(message(threads).find("solver_threads must be >= 0"), std::string::npos) << message(threads);
  ThemisSettings rows;
  rows.max_rows_per_bidder = 0;
  EXPECT_NE(message(rows).find("max_rows_per_bidder must be >= 1"), std::string::npos) << message(rows);
  ThemisSettings fine;
  fine.solver_threads = 3;
  EXPECT_EQ(message(fine), "accepted");
}

TEST(ThemisPolicy, OfferBoundedFilterLetsTheWorstAppUseTheWholeOfferItCanUse) {
  // Two GPUs. A (ρ 3) can use both; B (ρ 2) one. Were both to bid, PF would split them:
  // A {0} (3 -> 2.2) + B {1} (2 -> 1) is worth log(3/2.2) + log 2 = 1.00 > A {0,1} (3 -> 1.5) = 0.69.
  // Offer-bounded: A alone can use the whole offer, so only A bids, and a lone bidder pays nothing.
  const Cluster cluster = testing::make_cluster(1, 1, 2, 1);
  auto run = [&](FilterRule rule) {
    ScriptedApp a(1, 3.0, 2, [](const Offer&) { return Bid{1, 3.0, {{{0, 1}, 1.5}, {{0}, 2.2}}}; });
    ScriptedApp b(2, 2.0, 1, [](const Offer&) { return Bid{2, 2.0, {{{0}, 1.0}, {{1}, 1.0}}}; });
    ThemisSettings settings;
    settings.f = FilterFraction::parse("0");  // the paper's filter would let both bid
    settings.filter_rule = rule;
    ThemisPolicy policy(settings);
    RoundInput input{&cluster, 1, 0, {0, 1}, {}, {&a, &b}};
    Rng rng(1);
    const RoundOutcome out = policy.run_round(input, rng);
    std::map<AppId, int> got;
    for (const Grant& g : out.grants) got[g.app] += static_cast<int>(g.gpus.size());
    return std::make_tuple(policy.offer_recipients(input), out.auction.bidders, got, b.bids_asked());
  };
  const auto [offered, bidders, got, b_asked] = run(FilterRule::kOfferBounded);
  EXPECT_EQ(offered, (std::vector<AppId>{1}));
  EXPECT_EQ(bidders, (std::vector<AppId>{1}));
  EXPECT_EQ(b_asked, 0);
  EXPECT_EQ(got, (std::map<AppId, int>{{1, 2}}));
  const auto [offered_f, bidders_f, got_f, b_asked_f] = run(FilterRule::kFixed);
  EXPECT_EQ(bidders_f, (std::vector<AppId>{1, 2}));
  EXPECT_EQ(b_asked_f, 1);
  EXPECT_EQ(got_f, (std::map<AppId, int>{{1, 1}, {2, 1}}));
}

TEST(ThemisPolicy, OfferRecipientsAreTheFilter) {
  const Cluster cluster = testing::make_cluster(1, 1, 2, 1);
  std::vector<std::unique_ptr<ScriptedApp>> owned;
  RoundInput input{&cluster, 1, 0, {0, 1}, {}, {}};
  for (int k = 0; k < 10; ++k) {
    owned.push_back(std::make_unique<ScriptedApp>(k, k * 0.5, 1));
    input.apps.push_back(owned.back().get());
  }
  ThemisPolicy policy;
  EXPECT_EQ(policy.offer_recipients(input), (std::vector<AppId>{9, 8}));
  EXPECT_THROW(leases_from_grants({}, 1, 0, 0), std::invalid_argument);
  const std::vector<Grant> bad{Grant{1, {0}, GrantKind::kAuction, 0.0}};
  EXPECT_THROW(leases_from_grants(bad, 1, 0, 600), std::invalid_argument);
}

}  // namespace
}  // namespace themis::arbiter

namespace themis::arbiter {
namespace {

// An app that sees the offer but bids nothing (no launcher yet) competes for the leftover on equal
// terms with the apps that were not offered; it must not queue behind them.
TEST(ThemisPolicy, OfferedAppThatBidsNothingSharesTheLeftoverFirst) {
  const Cluster cluster = testing::make_cluster(3, 1, 2, 2);
  int silent_won = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    testing::ScriptedApp holder(1, 0.5, 6);   // best ρ: never filtered in
    testing::ScriptedApp silent(2, 9.0, 6);   // worst ρ: filtered in, answers with an empty bid
    RoundInput input{&cluster, 1, 0, {0, 1, 2, 3, 4, 5}, {}, {&holder, &silent}};
    ThemisPolicy policy;
    Rng rng(seed);
    const RoundOutcome out = policy.run_round(input, rng);
    EXPECT_EQ(silent.bids_asked(), 1);
    for (const Grant& g : out.grants) {
      EXPECT_EQ(g.kind, GrantKind::kLeftover);
      if (g.app == 2) ++silent_won;
    }
  }
  // Random order among first-tier recipients: over 40 seeds the silent app must win some rounds.
  EXPECT_GT(silent_won, 5);
}

// Issue 14: on 4 GPUs, the worst-ρ app needs 8 per job. It sees the offer, bids nothing (no bundle holds a
// job), and must not take the 4 GPUs as leftover: the one-GPU app gets them, every seed.
TEST(ThemisPolicy, TheWorstAppWhoseJobCannotFitTakesNoLeftover) {
  const Cluster cluster = testing::make_cluster(2, 1, 2, 2);  // 2 hosts x 2 GPUs
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    testing::ScriptedApp wide(1, 9.0, 8);
    wide.set_gpus_per_job(8);
    testing::ScriptedApp narrow(2, 0.5, 4);
    RoundInput input{&cluster, 1, 0, {0, 1, 2, 3}, {}, {&wide, &narrow}};
    ThemisPolicy policy;
    Rng rng(seed);
    const RoundOutcome out = policy.run_round(input, rng);
    ASSERT_EQ(out.grants.size(), 1u) << seed;
    EXPECT_EQ(out.grants[0].app, 2);
    EXPECT_EQ(out.grants[0].gpus, (std::vector<GpuIndex>{0, 1, 2, 3}));
    EXPECT_TRUE(out.idle.empty());
  }
}

}  // namespace
}  // namespace themis::arbiter
