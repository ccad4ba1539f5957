// A large machine among small ones (docs/arbiter.md, "Whole GPUs"): the hidden payment must not break up
// the machine that the placement-sensitive winner won. Hand-checked auction, every figure below by hand:
//
// m0 has 8 GPUs (0-7); m1..m4 have 2 each (8-15); one rack. Apps A and B each run one rigid 8-GPU gang
// and hold nothing (ρ with no new GPUs: 2.0). A is placement-sensitive: ρ 1.0 on m0, 1.5 spread over
// m1..m4. B less so: 1.0 on m0, 1.2 spread. Both bid; the offer is all 16 GPUs.
//   PF: A on m0 and B spread: 1/(1.0 · 1.2) = 0.833 > A spread and B on m0: 1/(1.5 · 1.0) = 0.667.
//   c_A = (1/1.2) / (1/1.0) = 0.8333 (without A, B takes m0 at 1.0); c_B = 1 (without B, A keeps m0).
//   c_A · 8 = 6.67 GPUs: A's gang runs on 8 or on none, and 8 is the nearer, so A keeps m0 whole.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "policy/arbiter/themis_policy.h"
#include "test_apps.h"

namespace themis::arbiter {
namespace {

using testing::ScriptedApp;

const Cluster& large_and_small() {
  static const Cluster cluster(ClusterSpec{"large-and-small",
                                           {{"m0", "r0", {8}},
                                            {"m1", "r0", {2}},
                                            {"m2", "r0", {2}},
                                            {"m3", "r0", {2}},
                                            {"m4", "r0", {2}}}});
  return cluster;
}

const std::vector<GpuIndex> kLarge{0, 1, 2, 3, 4, 5, 6, 7};
const std::vector<GpuIndex> kSpread{8, 9, 10, 11, 12, 13, 14, 15};

ScriptedApp::BidFunction bids(AppId id, double spread_rho) {
  return [=](const Offer&) { return Bid{id, 2.0, {{kLarge, 1.0}, {kSpread, spread_rho}}}; };
}

struct Round {
  ScriptedApp a{1, 2.0, 8, bids(1, 1.5)};
  ScriptedApp b{2, 1.9, 8, bids(2, 1.2)};
  explicit Round(bool rigid) {
    for (ScriptedApp* app : {&a, &b}) {
      app->set_gpus_per_job(8);
      app->set_rigid_gangs(rigid);
    }
  }
  RoundOutcome run(RoundingRule rule) {
    ThemisSettings settings;
    settings.f = FilterFraction::parse("0");
    settings.rounding = rule;
    ThemisPolicy policy(settings);
    std::vector<GpuIndex> offer(16);
    for (GpuIndex g = 0; g < 16; ++g) offer[static_cast<std::size_t>(g)] = g;
    RoundInput input{&large_and_small(), 1, 100, offer, {}, {&a, &b}};
    Rng rng(3);
    return policy.run_round(input, rng);
  }
};

std::map<AppId, std::vector<GpuIndex>> granted(const RoundOutcome& out) {
  std::map<AppId, std::vector<GpuIndex>> got;
  for (const Grant& g : out.grants) got[g.app].insert(got[g.app].end(), g.gpus.begin(), g.gpus.end());
  return got;
}

double c_of(const RoundOutcome& out, AppId app) {
  for (const auto& w : out.auction.winners)
    if (w.app == app) return w.c;
  ADD_FAILURE() << "app " << app << " did not win";
  return 0;
}

TEST(LargeMachine, TheSensitiveGangWinsItAndKeepsItWholeUnderNearestRounding) {
  Round round(/*rigid=*/true);
  const RoundOutcome out = round.run(RoundingRule::kNearest);
  EXPECT_NEAR(c_of(out, 1), 1.0 / 1.2, 1e-9);
  EXPECT_NEAR(c_of(out, 2), 1.0, 1e-9);
  const auto got = granted(out);
  EXPECT_EQ(got.at(1), kLarge);
  EXPECT_EQ(got.at(2), kSpread);
  for (const Grant& g : out.grants) EXPECT_DOUBLE_EQ(g.lease_fraction, 1.0);
}

TEST(LargeMachine, TimeShareTakesThePaymentInTimeAndKeepsTheMachineWhole) {
  Round round(/*rigid=*/true);
  const RoundOutcome out = round.run(RoundingRule::kTimeShare);
  const auto got = granted(out);
  EXPECT_EQ(got.at(1), kLarge);
  EXPECT_EQ(got.at(2), kSpread);
  for (const Grant& g : out.grants)
    EXPECT_NEAR(g.lease_fraction, g.app == 1 ? 1.0 / 1.2 : 1.0, 1e-9) << "app " << g.app;
}

TEST(LargeMachine, AnElasticWinnerKeepsSevenOfItsEightAndOneIdles) {
  // The contrast the rigid rule removes: an app that can run on any count keeps ⌊6.67 + ½⌋ = 7 GPUs of
  // m0, and the eighth goes back (no app that did not bid is left to take it as leftover).
  Round round(/*rigid=*/false);
  const RoundOutcome out = round.run(RoundingRule::kNearest);
  const auto got = granted(out);
  ASSERT_EQ(got.at(1).size(), 7u);
  for (GpuIndex g : got.at(1)) EXPECT_LT(g, 8);
  EXPECT_EQ(got.at(2), kSpread);
  EXPECT_EQ(out.idle.size(), 1u);
}

}  // namespace
}  // namespace themis::arbiter
