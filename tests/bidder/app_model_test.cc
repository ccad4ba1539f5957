#include "bidder/app_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "bidder/bid_validation.h"
#include "bidder/successive_halving.h"

namespace themis::bidder {
namespace {

// One job of 1000 iterations at 0.6 s (600 s of serial work), 200 done, on gangs of 2, with Eq. 1's T_id.
AppState equation_one_job() {
  AppState state;
  state.elapsed = 100;
  state.remaining = {{{800 * 0.6}, 2}};
  state.life = {{.work = 1000 * 0.6, .demand = 2, .longest = 300}};
  state.independent_time = IndependentTime::kClusterTimesContention;
  state.gang = 2;
  state.max_gpus = 2;
  state.demand_now = 2;
  state.cluster_gpus = 10;
  state.n_avg = 2;
  state.lease = 60;
  return state;
}

TEST(AppModel, ClusterTimesContentionIsEquationOne) {
  const AppModel model(equation_one_job());
  // T_id = 600 / min(10, 2) · 2 = 600; T_sh(2 GPUs, S 1.1) = 100 + 480 · 1.1 / 2 = 364.
  EXPECT_NEAR(model.independent_time(), 600, 1e-9);
  EXPECT_NEAR(model.rho(2, 1.1), 364.0 / 600.0, 1e-12);
  EXPECT_NEAR(model.rho(3, 1.1), 364.0 / 600.0, 1e-12) << "a third GPU is no use to a 2-GPU gang";
  EXPECT_TRUE(std::isinf(model.rho(1, 1.0))) << "one GPU cannot run a 2-GPU gang";
  EXPECT_NEAR(model.rho(2, 1.1, 60), 424.0 / 600.0, 1e-12) << "waiting a lease adds 60 s";
}

TEST(AppModel, FairShareIndependentTimeIsTheExclusiveShareBoundedByTheLongestJob) {
  // Twenty one-GPU jobs of w = 100 s among N_avg 30 apps on 256 GPUs: the share is 8.53 GPUs.
  const std::vector<LifePhase> life{{.work = 2000, .demand = 20, .longest = 100}};
  EXPECT_NEAR(independent_time(life, IndependentTime::kFairShare, 256, 30), 2000 / (256.0 / 30), 1e-9);  // 2.34 w
  EXPECT_NEAR(independent_time(life, IndependentTime::kClusterTimesContention, 256, 30), 3000, 1e-9);   // 30 w
  // Alone on the cluster: 2000 / min(256, 20) = 100, but its 400 s job bounds it.
  const std::vector<LifePhase> long_job{{.work = 2000, .demand = 20, .longest = 400}};
  EXPECT_NEAR(independent_time(long_job, IndependentTime::kFairShare, 256, 1), 400, 1e-9);
  // Phases add up: 300 / min(2.5, 6) + max(100 / min(2.5, 1), 100).
  const std::vector<LifePhase> two{{.work = 300, .demand = 6, .longest = 50}, {.work = 100, .demand = 1, .longest = 100}};
  EXPECT_NEAR(independent_time(two, IndependentTime::kFairShare, 10, 4), 120 + 100, 1e-9);
}

// Six one-GPU jobs of 50 s on a 10-GPU cluster, nothing held, the simulator's T_id.
AppState six_jobs(double n_avg) {
  AppState state;
  state.remaining = {{std::vector<Seconds>(6, 50.0), 1}};
  state.life = {{.work = 300, .demand = 6, .longest = 50}};
  state.demand_now = 6;
  state.cluster_gpus = 10;
  state.n_avg = n_avg;
  state.lease = 60;
  return state;
}

TEST(AppModel, IdleRhoIsRhoAfterALeaseOnTheFairShareOrOnOneGpu) {
  const AppModel alone(six_jobs(1));
  // T_id = max(300 / min(10, 6), 50) = 50. Fair share min(6, 10) = 6 GPUs: 60 + 50 over 50.
  EXPECT_EQ(alone.fair_share_gpus(), 6);
  EXPECT_NEAR(alone.idle_rho(IdleRho::kFairShare, 1.0), 110.0 / 50.0, 1e-12);
  // One GPU runs the six jobs one after another: 60 + 300 over 50.
  EXPECT_NEAR(alone.idle_rho(IdleRho::kOneGpu, 1.0), 360.0 / 50.0, 1e-12);
  const AppModel crowded(six_jobs(10));  // a share of one GPU: both rules agree; T_id = 300
  EXPECT_EQ(crowded.fair_share_gpus(), 1);
  EXPECT_NEAR(crowded.idle_rho(IdleRho::kFairShare, 1.0), 360.0 / 300.0, 1e-12);
  EXPECT_DOUBLE_EQ(crowded.idle_rho(IdleRho::kFairShare, 1.0), crowded.idle_rho(IdleRho::kOneGpu, 1.0));
}

// The default rule prices an app holding nothing on all its jobs can use: on a crowded cluster (a fair share of
// one GPU) the six-job app ranks as what it can still reach after a lease, 60 + 50 over 300, not as if it could
// never run more than one job at a time (60 + 300 over 300); a one-job app of one GPU ranks the same either way.
TEST(AppModel, TheWholeDemandRuleRanksAnIdleAppOnAllItCanUse) {
  const AppModel crowded(six_jobs(10));
  EXPECT_EQ(crowded.idle_share(IdleRho::kWholeDemand), 6);
  EXPECT_EQ(crowded.idle_share(IdleRho::kFairShare), 1);
  EXPECT_EQ(crowded.idle_share(IdleRho::kOneGpu), 1);
  EXPECT_NEAR(crowded.idle_rho(IdleRho::kWholeDemand, 1.0), 110.0 / 300.0, 1e-12);
  EXPECT_NEAR(crowded.ranking_rho(0, 1.0, 1.0, IdleRho::kWholeDemand), 110.0 / 300.0, 1e-12);
  // Holding three of its six, it runs them in two rounds of 50 s with no wait: 100 over 300, below the cap.
  EXPECT_NEAR(crowded.ranking_rho(3, 1.0, 1.0, IdleRho::kWholeDemand), 100.0 / 300.0, 1e-12);
  // Holding one, its ρ on one GPU (300 over 300) is capped at ρ after a lease on all six.
  EXPECT_NEAR(crowded.ranking_rho(1, 1.0, 1.0, IdleRho::kWholeDemand), 110.0 / 300.0, 1e-12);
  auto one = six_jobs(10);
  one.remaining = {{{50.0}, 1}};
  one.life = {{.work = 50, .demand = 1, .longest = 50}};
  one.demand_now = 1;
  const AppModel single(one);
  EXPECT_DOUBLE_EQ(single.idle_rho(IdleRho::kWholeDemand, 1.0), single.idle_rho(IdleRho::kFairShare, 1.0));
  EXPECT_EQ(AppModel(six_jobs(1)).idle_share(IdleRho::kWholeDemand), 6) << "alone, its share is its demand too";
}

// The six-job app has lived 300 s among 10 apps on average, and would need 300 s more on its fair share of one
// GPU. If the apps around it leave so that it shares with 2 on average from now on, its whole life's N_avg is
// (300·10 + 300·2) / 600 = 6, its T_id max(300 / (10 / 6), 50) = 180 s, and it is further behind than the past
// says: ranked by ρ after a lease on its six GPUs, (300 + 60 + 50) / 180 rather than / 300.
TEST(AppModel, AForecastOfContentionAheadShortensTIdForTheRankingKey) {
  AppState state = six_jobs(10);
  state.elapsed = 300;
  EXPECT_DOUBLE_EQ(AppModel(state).remaining_at_fair_share(), 300);
  const AppState ahead = with_contention_ahead(state, 2);
  EXPECT_DOUBLE_EQ(ahead.n_avg, 6);
  EXPECT_NEAR(AppModel(ahead).independent_time(), 180, 1e-9);
  EXPECT_NEAR(AppModel(ahead).ranking_rho(0, 1.0, 1.0, IdleRho::kWholeDemand), 410.0 / 180.0, 1e-12);
  EXPECT_NEAR(AppModel(state).ranking_rho(0, 1.0, 1.0, IdleRho::kWholeDemand), 410.0 / 300.0, 1e-12);
  EXPECT_DOUBLE_EQ(with_contention_ahead(state, std::nan("")).n_avg, 10) << "no forecast: the past average";
}

TEST(AppModel, AnAppShortOfItsFairShareRanksNoWorseThanOneHoldingNothing) {
  const AppModel alone(six_jobs(1));  // fair share 6 GPUs, T_id 50 s, lease 60 s; idle ρ (60 + 50) / 50
  const double idle = alone.idle_rho(IdleRho::kFairShare, 1.0);
  EXPECT_NEAR(alone.ranking_rho(0, 1.0, 1.0, IdleRho::kFairShare), idle, 1e-12);
  // One GPU runs the six jobs in 300 s (ρ 6), yet winning it must not rank the app below where it stood.
  EXPECT_NEAR(alone.rho(1, 1.0), 6.0, 1e-12);
  EXPECT_NEAR(alone.ranking_rho(1, 1.0, 1.0, IdleRho::kFairShare), idle, 1e-12);
  EXPECT_NEAR(alone.ranking_rho(3, 1.0, 1.0, IdleRho::kFairShare), 100.0 / 50.0, 1e-12) << "ρ(3) = 2 is below 2.2";
  double previous = alone.ranking_rho(0, 1.0, 1.0, IdleRho::kFairShare);
  for (int held = 1; held <= 6; ++held) {
    const double key = alone.ranking_rho(held, 1.0, 1.0, IdleRho::kFairShare);
    EXPECT_LE(key, previous) << "one more GPU never ranks it worse: " << held << " held";
    previous = key;
  }
  // At its share the key is its current ρ, even above ρ after a lease at the best placement: a bad placement
  // still shows. One 2-GPU gang (its share): 100 + 480 · 1.5 / 2 over 600, against 100 + 60 + 480 / 2.
  const AppModel gang(equation_one_job());
  EXPECT_EQ(gang.fair_share_gpus(), 2);
  EXPECT_NEAR(gang.ranking_rho(2, 1.5, 1.0, IdleRho::kFairShare), 460.0 / 600.0, 1e-12);
  EXPECT_NEAR(gang.idle_rho(IdleRho::kFairShare, 1.0), 400.0 / 600.0, 1e-12);
  // Under kOneGpu the share is one gang, so any usable holding ranks by its current ρ.
  EXPECT_NEAR(alone.ranking_rho(1, 1.0, 1.0, IdleRho::kOneGpu), 6.0, 1e-12);
  EXPECT_NEAR(alone.ranking_rho(0, 1.0, 1.0, IdleRho::kOneGpu), alone.idle_rho(IdleRho::kOneGpu, 1.0), 1e-12);
}

TEST(AppModel, FairShareIsWholeGangsAtLeastOneAtMostTheDemand) {
  auto state = six_jobs(4);
  state.remaining = {{std::vector<Seconds>(3, 100.0), 2}};
  state.gang = 2;
  state.demand_now = 6;
  EXPECT_EQ(AppModel(state).fair_share_gpus(), 2) << "⌊10 / 4⌋ = 2";
  state.n_avg = 6;
  EXPECT_EQ(AppModel(state).fair_share_gpus(), 2) << "a share of one GPU is one gang";
  state.n_avg = 1;
  EXPECT_EQ(AppModel(state).fair_share_gpus(), 6) << "at most its demand";
  state.demand_now = 0;
  EXPECT_EQ(AppModel(state).fair_share_gpus(), 2);
}

TEST(AppModel, NoNewGpusKeepsRunningOnWhatItKeepsOrWaitsALeaseForOneGang) {
  const AppModel model(equation_one_job());
  EXPECT_DOUBLE_EQ(model.rho_without_new(2, 1.1, 1.0), model.rho(2, 1.1)) << "it keeps running: no wait";
  // One GPU of a 2-GPU gang is no use: 100 + 60 + 480 / 2 over 600.
  EXPECT_NEAR(model.rho_without_new(1, 1.0, 1.0), 400.0 / 600.0, 1e-12);
  EXPECT_NEAR(model.rho_without_new(0, 1.0, 1.0), 400.0 / 600.0, 1e-12);
}

TEST(AppModel, PhasesArePackedEachAtItsOwnDemandAsInThePapersExample) {
  // §4.3.3 on 2 GPUs: 4 jobs (80, 100, 100, 120 s × 8 iterations) → 1600; 2 jobs × 16 × 100 → 1600;
  // 1 job × 36 × 100 on 2 GPUs → 1800: 5000 s, as the paper (job_demand_max 8).
  AppState state;
  state.remaining = {{{640, 800, 800, 960}, 8}, {{1600, 1600}, 8}, {{3600}, 8}};
  state.life = {{.work = 10000, .demand = 4, .longest = 0}};
  state.independent_time = IndependentTime::kClusterTimesContention;
  state.cluster_gpus = 16;
  state.n_avg = 4;
  const AppModel model(state);
  EXPECT_NEAR(model.remaining_time(2, 1.0), 5000, 1e-9);
  EXPECT_NEAR(model.independent_time(), 10000, 1e-9);
  const SuccessiveHalvingApp eq2{.elapsed = 0, .initial_jobs = 4, .phase_iterations = {8, 16, 36},
                                 .current_phase = 0, .current_jobs = {{80, 8}, {100, 8}, {100, 8}, {120, 8}},
                                 .job_demand_max = 8, .app_demand_max = 4, .budget = 10000,
                                 .cluster_gpus = 16, .n_avg = 4};
  EXPECT_NEAR(model.rho(2, 1.0), finish_time_fairness(eq2, 2, 1.0), 1e-12);
  // Each phase at its own demand: the last job capped at 1 GPU runs 3600 s.
  state.remaining.back().job_demand_max = 1;
  EXPECT_NEAR(AppModel(state).remaining_time(2, 1.0), 6800, 1e-9);
  state.remaining.clear();
  EXPECT_EQ(AppModel(state).remaining_time(0, 1.0), 0) << "finished: nothing left, whatever it holds";
}

Cluster two_racks() {  // 10 GPUs: two machines of two 2-GPU slots in rack a, one 2-GPU machine in rack b
  return Cluster(ClusterSpec{"two-racks", {{"node1", "a", {2, 2}}, {"node2", "a", {2, 2}}, {"node3", "b", {2}}}});
}

// One 2-GPU job of 1000 iterations at 0.5 s, 30 s after arrival among N_avg 3 apps, Eq. 1's T_id = 750.
AppState gang_of_two() {
  AppState state;
  state.elapsed = 30;
  state.remaining = {{{500}, 2}};
  state.life = {{.work = 500, .demand = 2, .longest = 250}};
  state.independent_time = IndependentTime::kClusterTimesContention;
  state.gang = 2;
  state.max_gpus = 2;
  state.demand_now = 2;
  state.cluster_gpus = 10;
  state.n_avg = 3;
  state.lease = 60;
  return state;
}

TEST(AppModel, BidsOnlyWholeGangsValuedByRhoAtTheBundlesPlacement) {
  const Cluster cluster = two_racks();
  const AppModel model(gang_of_two());
  const Offer offer{1, {0, 1, 2, 3, 4, 8, 9}};
  BidQuery query;
  query.app = 5;
  query.remaining_demand = 2;
  query.rho_no_new = model.rho_without_new(0, 1.0, 1.0);
  query.slowdown = {1.0, 1.0, 1.1, 1.3};
  const Bid bid = model.bid(cluster, offer, query);
  ASSERT_FALSE(bid.rows.empty());
  EXPECT_NO_THROW(validate_bid(bid, offer));
  EXPECT_NEAR(bid.rho_no_new, (90 + 250.0) / 750.0, 1e-12) << "a lease, then one gang";
  for (const auto& row : bid.rows) {
    ASSERT_EQ(row.gpus.size(), 2U) << "a 2-GPU gang needs exactly 2";
    const double s = query.slowdown[static_cast<std::size_t>(cluster.locality(row.gpus))];
    EXPECT_NEAR(row.rho, (30 + 250.0 * s) / 750.0, 1e-12);
  }
  EXPECT_NEAR(bid.rows.front().rho, 280.0 / 750.0, 1e-12);
  // What the app reports can differ from its ρ (a lying app): every row goes through the hook.
  query.report = [](double rho, int gpus, Locality) { return gpus == 2 ? rho * 2 : rho; };
  const Bid reported = model.bid(cluster, offer, query);
  ASSERT_EQ(reported.rows.size(), bid.rows.size());
  for (std::size_t r = 0; r < bid.rows.size(); ++r) EXPECT_DOUBLE_EQ(reported.rows[r].rho, 2 * bid.rows[r].rho);
  query.remaining_demand = 0;
  EXPECT_TRUE(model.bid(cluster, offer, query).rows.empty()) << "wanting nothing, it bids no rows";
}

TEST(AppModel, HeldGpusOutsideThePlacementStillCountTowardsTheGangs) {
  // Two 2-GPU jobs; it keeps 2 GPUs (not passed for placement): a row of k adds to 2 + k GPUs in all.
  const Cluster cluster = two_racks();
  auto state = gang_of_two();
  state.remaining = {{{500, 500}, 2}};
  state.life = {{.work = 1000, .demand = 4, .longest = 250}};
  state.max_gpus = 4;
  state.demand_now = 4;
  const AppModel model(state);
  BidQuery query;
  query.held_gpus = 2;
  query.remaining_demand = 2;
  query.rho_no_new = model.rho_without_new(2, 1.0, 1.0);
  const Bid bid = model.bid(cluster, Offer{1, {0, 1, 2, 3, 8}}, query);
  ASSERT_FALSE(bid.rows.empty());
  for (const auto& row : bid.rows) {
    EXPECT_EQ(row.gpus.size(), 2U);
    EXPECT_NEAR(row.rho, model.rho(4, 1.0), 1e-12);
  }
  // T_id = 1000 / min(10, 4) · 3 = 750; keeping 2 GPUs it finishes in 500 s, with 4 in 250 s.
  EXPECT_NEAR(bid.rho_no_new, (30 + 500.0) / 750.0, 1e-12);
  EXPECT_NEAR(bid.rows.front().rho, (30 + 250.0) / 750.0, 1e-12);
}

TEST(AppModel, BadStateIsRejectedNamingTheField) {
  auto expect_error = [](AppState state, const std::string& field) {
    try {
      AppModel model(std::move(state));
      ADD_FAILURE() << "accepted a bad " << field;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  auto state = equation_one_job();
  state.gang = 0;
  expect_error(state, "gang");
  state = equation_one_job();
  state.life.clear();
  expect_error(state, "life");
  state = equation_one_job();
  state.remaining[0].serial_work[0] = -1;
  expect_error(state, "remaining[0].serial_work[0]");
  state = equation_one_job();
  state.n_avg = 0;
  expect_error(state, "n_avg");
  state = equation_one_job();
  state.max_gpus = 1;
  expect_error(state, "max_gpus");
  state = equation_one_job();
  state.life[0].work = 0;
  expect_error(state, "T_id");
  state = equation_one_job();
  state.start_overhead = -1;
  expect_error(state, "start_overhead");
  state.start_overhead = std::numeric_limits<double>::infinity();
  expect_error(state, "start_overhead");
  state = equation_one_job();
  state.probe_time = -0.5;
  expect_error(state, "probe_time");
  state.probe_time = std::numeric_limits<double>::quiet_NaN();
  expect_error(state, "probe_time");
}

}  // namespace
}  // namespace themis::bidder
