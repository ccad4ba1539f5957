// Themis Figure 5, second instance, through the whole policy with bidder-library bids: one 4-GPU
// machine and two 2-GPU machines; a placement-insensitive app and a placement-sensitive app want 4
// GPUs each. The sensitive app must get the 4-GPU machine whatever the two apps' ids, with every
// solver: the insensitive app's bid says its ρ is the same spread over the small machines (a spread
// row of equal ρ, and a row scope of "anywhere"), so the auction need not break a tie by id.
#include <gtest/gtest.h>

#include <algorithm>

#include "bidder/bid_generator.h"
#include "core/rng.h"
#include "policy/arbiter/themis_policy.h"
#include "test_apps.h"

namespace themis::arbiter {
namespace {

Cluster figure5_cluster() {
  ClusterSpec spec{"fig5", {}};
  spec.machines.push_back({"m0", "r0", {2, 2}});
  spec.machines.push_back({"m1", "r0", {2}});
  spec.machines.push_back({"m2", "r0", {2}});
  return Cluster(spec);
}

constexpr double kRhoNow = 10;  // both hold nothing yet

// ρ of 2400 one-second iterations on `total` GPUs against 600 s ideal, slowed by S off one machine.
bidder::Valuation valuation(double slowdown_off_machine) {
  return [slowdown_off_machine](int total, Locality placement) {
    const double s = placement <= Locality::kSameMachine ? 1.0 : slowdown_off_machine;
    return 2400.0 / total * s / 600.0;
  };
}

Bid bid_of(const Cluster& cluster, const Offer& offer, AppId app, double slowdown_off_machine) {
  return bidder::generate_bid(cluster, offer, {app, {}, 4, kRhoNow}, valuation(slowdown_off_machine));
}

TEST(PlacementSensitiveAuction, InsensitiveBidSaysItsRhoHoldsSpreadToo) {
  const Cluster cluster = figure5_cluster();
  const Offer offer{1, {0, 1, 2, 3, 4, 5, 6, 7}};
  const Bid insensitive = bid_of(cluster, offer, 1, 1.0);
  const auto spread = std::find_if(insensitive.rows.begin(), insensitive.rows.end(), [](const BidRow& r) {
    return r.gpus == std::vector<GpuIndex>{4, 5, 6, 7};
  });
  ASSERT_NE(spread, insensitive.rows.end());
  EXPECT_EQ(spread->rho, 1.0);
  EXPECT_EQ(spread->scope, ShapeScope::kAnywhere);
  const Bid sensitive = bid_of(cluster, offer, 2, 1.289);
  for (const BidRow& row : sensitive.rows) {
    if (row.gpus.size() != 4) continue;
    EXPECT_EQ(row.gpus, (std::vector<GpuIndex>{0, 1, 2, 3})) << "no spread row of equal ρ exists for it";
    EXPECT_EQ(row.scope, ShapeScope::kMachine);
  }
}

TEST(PlacementSensitiveAuction, SensitiveAppGetsTheWholeMachineWhateverTheIds) {
  const Cluster cluster = figure5_cluster();
  for (SolverKind solver : {SolverKind::kBranchAndBound, SolverKind::kCbc, SolverKind::kShape}) {
    for (const bool sensitive_first : {false, true}) {
      SCOPED_TRACE(std::string(to_string(solver)) + (sensitive_first ? ", sensitive app id 1" : ", sensitive app id 2"));
      const AppId sensitive_id = sensitive_first ? 1 : 2, insensitive_id = sensitive_first ? 2 : 1;
      testing::ScriptedApp sensitive(sensitive_id, kRhoNow, 4, [&](const Offer& offer) {
        return bid_of(cluster, offer, sensitive_id, 1.289);
      });
      testing::ScriptedApp insensitive(insensitive_id, kRhoNow, 4, [&](const Offer& offer) {
        return bid_of(cluster, offer, insensitive_id, 1.0);
      });
      ThemisSettings settings;
      settings.f = FilterFraction{0, 1};  // both apps bid
      settings.solver = solver;
      ThemisPolicy policy(settings);
      RoundInput input{&cluster, 1, 0, {0, 1, 2, 3, 4, 5, 6, 7}, {}, {}};
      input.apps = sensitive_first ? std::vector<AppModel*>{&sensitive, &insensitive}
                                   : std::vector<AppModel*>{&insensitive, &sensitive};
      Rng rng(1);
      const RoundOutcome outcome = policy.run_round(input, rng);
      ASSERT_EQ(outcome.auction.winners.size(), 2u);
      for (const auto& winner : outcome.auction.winners) {
        EXPECT_EQ(winner.c, 1.0);
        const std::vector<GpuIndex> expected =
            winner.app == sensitive_id ? std::vector<GpuIndex>{0, 1, 2, 3} : std::vector<GpuIndex>{4, 5, 6, 7};
        EXPECT_EQ(winner.kept, expected) << "app " << winner.app;
      }
    }
  }
}

}  // namespace
}  // namespace themis::arbiter
