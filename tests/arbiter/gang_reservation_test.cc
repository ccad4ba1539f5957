// Gang reservation (docs/arbiter.md, "Gang reservation"): when the worst-ranked app's next gang is wider
// than the offer, the offer waits for it instead of going to narrower apps.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "policy/arbiter/themis_policy.h"
#include "test_apps.h"

namespace themis::arbiter {
namespace {

using testing::ScriptedApp;

// Four one-GPU machines. App 1 (ρ 3) runs rigid 4-GPU gangs and bids the whole offer once it holds a
// gang; app 2 (ρ 1.2) can use any two GPUs.
struct TwoApps {
  ScriptedApp wide{1, 3.0, 4, [](const Offer& offer) {
                     Bid bid{1, 3.0, {}};
                     if (offer.gpus.size() >= 4) bid.rows.push_back({offer.gpus, 1.5});
                     return bid;
                   }};
  ScriptedApp narrow{2, 1.2, 2, [](const Offer& offer) {
                       Bid bid{2, 1.2, {}};
                       if (offer.gpus.size() >= 2) bid.rows.push_back({{offer.gpus[0], offer.gpus[1]}, 1.0});
                       return bid;
                     }};
  TwoApps() {
    wide.set_gpus_per_job(4);
    wide.set_rigid_gangs(true);
  }
};

std::map<AppId, std::vector<GpuIndex>> granted(const RoundOutcome& out) {
  std::map<AppId, std::vector<GpuIndex>> got;
  for (const Grant& g : out.grants) got[g.app].insert(got[g.app].end(), g.gpus.begin(), g.gpus.end());
  return got;
}

ThemisSettings settings_with(bool reservation, bool backfill = true) {
  ThemisSettings settings;
  settings.gang_reservation = reservation;
  settings.gang_backfill = backfill;
  return settings;
}

const Cluster& four_machines() {
  static const Cluster cluster = testing::make_cluster(4, 1, 1, 4);
  return cluster;
}

// GPUs 0 and 1 are free at t=100; `holder` leases 2 and 3 until t=600.
RoundInput two_free(TwoApps& apps, AppId holder = 2) {
  return RoundInput{&four_machines(), 5, 100, {0, 1}, {{2, holder, 4, 0, 600}, {3, holder, 4, 0, 600}}, {&apps.wide, &apps.narrow}};
}

TEST(GangReservation, TheOfferWaitsForTheWorstAppsGangWhileOtherLeasesCanMakeItUp) {
  TwoApps apps;
  RoundInput input = two_free(apps);
  ThemisPolicy policy(settings_with(true, /*backfill=*/false));
  EXPECT_TRUE(policy.offer_recipients(input).empty());
  Rng rng(1);
  const RoundOutcome out = policy.run_round(input, rng);
  EXPECT_TRUE(out.grants.empty());
  ASSERT_EQ(out.idle.size(), 2u);
  EXPECT_EQ(out.idle[0].gpu, 0);
  EXPECT_EQ(out.idle[1].gpu, 1);
  EXPECT_EQ(out.idle[0].reason,
            "reserved for app 1, the worst ρ, whose next gang needs 4 GPUs: 2 free now, more as leases end");
  ASSERT_TRUE(out.reservation.has_value());
  EXPECT_EQ(out.reservation->app, 1);
  EXPECT_EQ(out.reservation->reason, out.idle[0].reason);
  EXPECT_EQ(apps.wide.bids_asked(), 0);
  EXPECT_EQ(apps.narrow.bids_asked(), 0);
}

TEST(GangReservation, OffThePapersRoundHandsTheOfferToTheNarrowerApp) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    TwoApps apps;
    RoundInput input = two_free(apps);
    ThemisPolicy policy(settings_with(false));
    Rng rng(seed);
    const RoundOutcome out = policy.run_round(input, rng);
    EXPECT_EQ(granted(out), (std::map<AppId, std::vector<GpuIndex>>{{2, {0, 1}}})) << seed;
    EXPECT_FALSE(out.reservation.has_value()) << seed;
  }
}

TEST(GangReservation, AWholeGangOnOfferGoesToTheWorstApp) {
  TwoApps apps;
  RoundInput input{&four_machines(), 6, 600, {0, 1, 2, 3}, {}, {&apps.wide, &apps.narrow}};
  ThemisPolicy policy(settings_with(true));
  Rng rng(1);
  const RoundOutcome out = policy.run_round(input, rng);
  EXPECT_EQ(apps.wide.bids_asked(), 1);
  EXPECT_EQ(granted(out), (std::map<AppId, std::vector<GpuIndex>>{{1, {0, 1, 2, 3}}}));
  EXPECT_TRUE(out.idle.empty());
}

TEST(GangReservation, NoReservationForAGangNoEndingLeaseCanComplete) {
  TwoApps apps;
  apps.wide.set_gpus_per_job(8);  // 8 > the 4 GPUs of the cluster
  apps.wide.set_demand(8);
  RoundInput input = two_free(apps);
  ThemisPolicy policy(settings_with(true));
  Rng rng(1);
  const RoundOutcome out = policy.run_round(input, rng);
  EXPECT_EQ(granted(out), (std::map<AppId, std::vector<GpuIndex>>{{2, {0, 1}}}));
  EXPECT_FALSE(out.reservation.has_value());
}

TEST(GangReservation, LeasesOnDrainedMachinesAreNotCountedOn) {
  TwoApps apps;
  RoundInput input = two_free(apps);
  input.draining = {3};  // GPU 3 will not be offered again: 0, 1 and 2 make no gang of 4
  ThemisPolicy policy(settings_with(true));
  Rng rng(1);
  const RoundOutcome out = policy.run_round(input, rng);
  EXPECT_EQ(granted(out), (std::map<AppId, std::vector<GpuIndex>>{{2, {0, 1}}}));
  EXPECT_FALSE(out.reservation.has_value());
}

TEST(GangReservation, TheWorstAppsOwnLeasesAreNotCountedOn) {
  TwoApps apps;
  // App 1 already runs on 2 and 3 (its own leases do not come back to it as a new gang).
  RoundInput input = two_free(apps, /*holder=*/1);
  ThemisPolicy policy(settings_with(true));
  Rng rng(1);
  const RoundOutcome out = policy.run_round(input, rng);
  EXPECT_EQ(granted(out), (std::map<AppId, std::vector<GpuIndex>>{{2, {0, 1}}}));
  EXPECT_FALSE(out.reservation.has_value());
}

TEST(GangReservation, AWorstAppThatCanUseTheOfferIsNotReservedFor) {
  TwoApps apps;
  apps.wide.set_rigid_gangs(false);  // it can run on any count: the paper's round
  RoundInput input = two_free(apps);
  ThemisPolicy policy(settings_with(true));
  EXPECT_FALSE(policy.offer_recipients(input).empty());
  EXPECT_FALSE(reserve_for_worst_gang(input, input.apps).has_value());
}

// Backfill: the narrow app holds GPUs 2 and 3 until t=600, so the wide app's gang fits at 600; meanwhile
// the narrow app uses 0 and 1 on a lease that ends then (500 s of a 1000 s lease).
TEST(GangReservation, TheReservedGpusAreLentToAnotherAppUntilTheGangFits) {
  TwoApps apps;
  RoundInput input = two_free(apps);
  ThemisSettings settings = settings_with(true);
  settings.lease_duration = 1000;
  ThemisPolicy policy(settings);
  EXPECT_TRUE(policy.offer_recipients(input).empty());  // still no auction
  Rng rng(1);
  const RoundOutcome out = policy.run_round(input, rng);
  ASSERT_TRUE(out.reservation.has_value());
  EXPECT_EQ(out.reservation->app, 1);
  EXPECT_EQ(granted(out), (std::map<AppId, std::vector<GpuIndex>>{{2, {0, 1}}}));
  ASSERT_EQ(out.grants.size(), 1u);
  EXPECT_EQ(out.grants[0].kind, GrantKind::kLeftover);
  EXPECT_DOUBLE_EQ(out.grants[0].lease_fraction, 0.5);
  for (const Lease& lease : policy.leases(out, input)) EXPECT_DOUBLE_EQ(lease.expiry, 600);
  EXPECT_TRUE(out.idle.empty());
  EXPECT_EQ(apps.wide.bids_asked(), 0);
}

TEST(GangReservation, ABackfillShorterThanAQuarterLeaseIsNotLent) {
  TwoApps apps;
  RoundInput input = two_free(apps);
  ThemisSettings settings = settings_with(true);
  settings.lease_duration = 2001;  // 500 s is just under a quarter of it
  ThemisPolicy policy(settings);
  Rng rng(1);
  const RoundOutcome out = policy.run_round(input, rng);
  ASSERT_TRUE(out.reservation.has_value());
  EXPECT_TRUE(out.grants.empty());
  EXPECT_EQ(out.idle.size(), 2u);
}

TEST(GangReservation, TheGangFitsWhenEnoughOtherLeasesHaveEnded) {
  TwoApps apps;
  // Two free; app 2 holds GPU 2 until t=300 and GPU 3 until t=700: the gang of 4 fits at 700.
  RoundInput input{&four_machines(), 5, 100, {0, 1}, {{2, 2, 4, 0, 300}, {3, 2, 4, 0, 700}}, {&apps.wide, &apps.narrow}};
  const auto reservation = reserve_for_worst_gang(input, input.apps);
  ASSERT_TRUE(reservation.has_value());
  EXPECT_EQ(reservation->gang, 4);
  EXPECT_DOUBLE_EQ(reservation->gang_fits_at, 700);
}

}  // namespace
}  // namespace themis::arbiter
