// The machine hold (docs/arbiter.md, "Gang reservation"): when the worst-ranked app's gang fits the offer by
// count but no set of the offer is placed well enough for it, the free GPUs of the machine that first holds
// its gang wait for it; the rest of the offer is auctioned as usual.
#include "policy/arbiter/machine_hold.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <vector>

#include "policy/arbiter/themis_policy.h"
#include "test_apps.h"

namespace themis::arbiter {
namespace {

using testing::ScriptedApp;

// Three 4-GPU machines in one rack: m0 = GPUs 0-3, m1 = 4-7, m2 = 8-11.
const Cluster& three_machines() {
  static const Cluster cluster = testing::make_cluster(3, 1, 4, 3);
  return cluster;
}

// App 1 (ρ 3): one rigid 4-GPU gang, 4x slower across machines (placement score 1/4 there); it prices any
// spread set worse than waiting. App 2 (ρ 1.2): one-GPU jobs, any count up to 4.
struct Apps {
  ScriptedApp gang{1, 3.0, 4, [](const Offer& offer) {
                     Bid bid{1, 3.0, {}};
                     if (offer.gpus.size() >= 4) bid.rows.push_back({{offer.gpus.begin(), offer.gpus.begin() + 4}, 3.5});
                     return bid;
                   }};
  ScriptedApp ones{2, 1.2, 4, [](const Offer& offer) {
                     Bid bid{2, 1.2, {}};
                     for (std::size_t k = 1; k <= std::min<std::size_t>(4, offer.gpus.size()); ++k)
                       bid.rows.push_back({{offer.gpus.begin(), offer.gpus.begin() + static_cast<long>(k)}, 1.2 - 0.05 * static_cast<double>(k)});
                     return bid;
                   }};
  explicit Apps(bool spread_averse) {
    gang.set_gpus_per_job(4);
    gang.set_rigid_gangs(true);
    if (spread_averse)
      gang.set_placement_score([](std::span<const GpuIndex> gpus) {
        std::set<int> machines;
        for (GpuIndex g : gpus) machines.insert(three_machines().gpu(g).machine);
        return machines.size() > 1 ? 0.25 : 1.0;
      });
  }
};

// At t=100, GPUs 0-1 (m0), 4-6 (m1) and 8 (m2) are free: six, enough for the gang by count, but no four of
// them on one machine. App 2 holds the rest: 2 and 3 until t=150 and 160, 7 until t=500, 9-11 until t=200.
// m0 is the first machine to hold the gang (at t=160; m2 at 200, m1 at 500), so its two free GPUs wait.
RoundInput scattered(Apps& apps) {
  return RoundInput{&three_machines(), 7, 100, {0, 1, 4, 5, 6, 8},
                    {{2, 2, 3, 0, 150}, {3, 2, 3, 0, 160}, {7, 2, 3, 0, 500}, {9, 2, 3, 0, 200}, {10, 2, 3, 0, 200}, {11, 2, 3, 0, 200}},
                    {&apps.gang, &apps.ones}};
}

std::optional<MachineHold> hold_for(const RoundInput& input, Apps& apps) {
  const std::vector<AppModel*> ranked = {&apps.gang, &apps.ones};
  return hold_machine_for_worst_gang(input, ranked);
}

// The policy's round on `input` (gang reservation on by default).
RoundOutcome round_of(const RoundInput& input) {
  ThemisPolicy policy;
  Rng rng(1);
  return policy.run_round(input, rng);
}

// Every GPU the round granted, each grant checked to go to app 2.
std::set<GpuIndex> granted_to_app_2(const RoundOutcome& out) {
  std::set<GpuIndex> granted;
  for (const Grant& g : out.grants) {
    EXPECT_EQ(g.app, 2);
    granted.insert(g.gpus.begin(), g.gpus.end());
  }
  return granted;
}

TEST(MachineHold, TheMachineFirstToHoldTheWorstAppsGangWaitsAndTheRestIsAuctioned) {
  Apps apps(/*spread_averse=*/true);
  const RoundInput input = scattered(apps);
  const auto hold = hold_for(input, apps);
  ASSERT_TRUE(hold.has_value());
  EXPECT_EQ(hold->app, 1);
  EXPECT_EQ(hold->gang, 4);
  EXPECT_EQ(hold->machine, 0);
  EXPECT_EQ(hold->gpus, (std::vector<GpuIndex>{0, 1}));

  const RoundOutcome out = round_of(input);
  ASSERT_TRUE(out.reservation.has_value());
  EXPECT_EQ(out.reservation->app, 1);
  EXPECT_EQ(out.reservation->reason,
            "held for app 1, the worst ρ, whose gang needs 4 GPUs placed together: 2 free on machine m0 now, more as "
            "leases end");
  std::set<GpuIndex> idle_held;
  for (const IdleGpu& i : out.idle)
    if (i.reason == out.reservation->reason) idle_held.insert(i.gpu);
  EXPECT_EQ(idle_held, (std::set<GpuIndex>{0, 1}));
  const std::set<GpuIndex> granted = granted_to_app_2(out);  // the gang wins nothing spread
  EXPECT_FALSE(granted.empty());
  for (GpuIndex g : granted) EXPECT_TRUE(g == 4 || g == 5 || g == 6 || g == 8) << g;
  // Every free GPU is granted or idle, once.
  EXPECT_EQ(granted.size() + out.idle.size(), input.free_gpus.size());
}

// The same offer to a gang that runs as fast spread (placement score 1 everywhere): nothing is held.
TEST(MachineHold, NothingIsHeldForAGangThatRunsAsWellSpread) {
  Apps apps(/*spread_averse=*/false);
  const RoundInput input = scattered(apps);
  EXPECT_FALSE(hold_for(input, apps).has_value());
  EXPECT_FALSE(round_of(input).reservation.has_value());
}

// Once a machine has the gang's four GPUs free, the offer holds a well-placed set: nothing is held.
TEST(MachineHold, NothingIsHeldOnceAMachineHoldsTheGang) {
  Apps apps(/*spread_averse=*/true);
  RoundInput input = scattered(apps);
  input.free_gpus = {0, 1, 2, 3, 4, 8};
  input.leases = {{5, 2, 3, 0, 500}, {6, 2, 3, 0, 500}, {7, 2, 3, 0, 500}};
  EXPECT_FALSE(hold_for(input, apps).has_value());
}

// Three GPUs free, one on each machine: fewer than the gang's four, the count reservation's case. A gang too
// slow spread over machines waits for one machine only: m0 (its other GPUs return at 150-170, m2's at 200, m1's
// at 500) keeps its free GPU 0 idle, and GPUs 4 and 8, which could only ever give the gang a spread set, go to
// app 2. A gang that runs as well spread takes GPUs as they come back, so the count reservation keeps all three.
RoundInput one_free_per_machine(Apps& apps) {
  return RoundInput{&three_machines(), 7, 100, {0, 4, 8},
                    {{1, 2, 3, 0, 150}, {2, 2, 3, 0, 160}, {3, 2, 3, 0, 170}, {5, 2, 3, 0, 500}, {6, 2, 3, 0, 500},
                     {7, 2, 3, 0, 500}, {9, 2, 3, 0, 200}, {10, 2, 3, 0, 200}, {11, 2, 3, 0, 200}},
                    {&apps.gang, &apps.ones}};
}

TEST(MachineHold, AGangWiderThanTheOfferAndTooSlowSpreadHoldsOneMachineNotTheWholeOffer) {
  Apps apps(/*spread_averse=*/true);
  const RoundInput input = one_free_per_machine(apps);
  const auto hold = hold_for(input, apps);
  ASSERT_TRUE(hold.has_value());
  EXPECT_EQ(hold->machine, 0);
  EXPECT_EQ(hold->gang, 4);
  EXPECT_EQ(hold->gpus, (std::vector<GpuIndex>{0}));

  const RoundOutcome out = round_of(input);
  ASSERT_TRUE(out.reservation.has_value());
  EXPECT_EQ(out.reservation->reason,
            "held for app 1, the worst ρ, whose gang needs 4 GPUs placed together: 1 free on machine m0 now, more as "
            "leases end");
  EXPECT_EQ(granted_to_app_2(out), (std::set<GpuIndex>{4, 8}));
  ASSERT_EQ(out.idle.size(), 1u);
  EXPECT_EQ(out.idle[0].gpu, 0);
}

TEST(MachineHold, AGangWiderThanTheOfferThatRunsAsWellSpreadKeepsTheCountReservationOfTheWholeOffer) {
  Apps apps(/*spread_averse=*/false);
  const RoundInput input = one_free_per_machine(apps);
  EXPECT_FALSE(hold_for(input, apps).has_value());
  const RoundOutcome out = round_of(input);
  ASSERT_TRUE(out.reservation.has_value());
  EXPECT_EQ(out.reservation->reason, "reserved for app 1, the worst ρ, whose next gang needs 4 GPUs: 3 free now, more as leases end");
  EXPECT_TRUE(out.grants.empty());
  EXPECT_EQ(out.idle.size(), 3u);
}

}  // namespace
}  // namespace themis::arbiter
