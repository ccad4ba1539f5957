#include "launcher/rho_estimate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "bidder/single_job.h"
#include "bidder/successive_halving.h"
#include "core/rng.h"
#include "launcher/agent.h"
#include "tests/launcher/test_cluster.h"

namespace themis::launcher {
namespace {

TEST(RhoEstimate, SingleJobIsEquationOne) {
  HyperparameterScheduler scheduler({SchedulerKind::kAllJobs, 1, {1000}});
  scheduler.report(0, 200, 1.0);
  TimingModel timing(1.0);
  for (int i = 0; i < 5; ++i) timing.observe(0, 2, Locality::kSameMachine, 0.3);  // serial 0.6
  const AppContext ctx{.independent_time = bidder::IndependentTime::kClusterTimesContention, .elapsed = 100, .n_avg = 2,
                       .cluster_gpus = 10, .gpus_per_job = 2};
  // Eq. 1's T_id = 1000 * 0.6 / min(10, 2) * 2 = 600; T_sh(2 GPUs, same rack S 1.1) = 100 + 800 * 0.6 * 1.1 / 2 = 364.
  EXPECT_NEAR(independent_finish_time(scheduler, timing, ctx), 600, 1e-9);
  EXPECT_NEAR(estimate_rho(scheduler, timing, ctx, 2, Locality::kSameRack), 364.0 / 600.0, 1e-12);
  // A 3rd GPU is no use to a 2-GPU gang; a 1st alone cannot run it.
  EXPECT_NEAR(estimate_rho(scheduler, timing, ctx, 3, Locality::kSameRack), 364.0 / 600.0, 1e-12);
  EXPECT_TRUE(std::isinf(estimate_rho(scheduler, timing, ctx, 1, Locality::kSameSlot)));
}

// Jobs are rigid gangs: two 2-GPU jobs on one gang run one after the other, each slowed by where that gang
// runs. Packed elastically (before 2026-11-29) they ran one GPU each at no slowdown, so the estimate was the
// same on one machine and across racks, and a bid could not tell a spread gang from a local one.
TEST(RhoEstimate, JobsOfOneGangRunOneAfterTheOtherSlowedByTheGangsPlacement) {
  HyperparameterScheduler scheduler({SchedulerKind::kAllJobs, 2, {1000}});
  TimingModel timing(0.5);
  const AppContext ctx{.elapsed = 0, .n_avg = 1, .cluster_gpus = 8, .gpus_per_job = 2};
  // Each job: 1000 · 0.5 / 2 · S on one gang; two in a row on 2 GPUs, side by side on 4.
  const double s_rack = timing.slowdown().slowdown(Locality::kCrossRack);
  ASSERT_GT(s_rack, 1.0);
  EXPECT_NEAR(shared_finish_time(scheduler, timing, ctx, 2, Locality::kSameMachine), 500, 1e-9);
  EXPECT_NEAR(shared_finish_time(scheduler, timing, ctx, 2, Locality::kCrossRack), 500 * s_rack, 1e-9);
  EXPECT_NEAR(shared_finish_time(scheduler, timing, ctx, 4, Locality::kCrossRack), 250 * s_rack, 1e-9);
  EXPECT_TRUE(std::isinf(shared_finish_time(scheduler, timing, ctx, 1, Locality::kSameSlot)));
}

TEST(RhoEstimate, SuccessiveHalvingIsEquationTwoOverTheSchedulersState) {
  HyperparameterScheduler scheduler({SchedulerKind::kSuccessiveHalving, 4, {8, 16, 36}});
  TimingModel timing(100.0);
  const double serial[] = {80, 100, 100, 120};
  for (int j = 0; j < 4; ++j) timing.observe(j, 1, Locality::kSameSlot, serial[j]);
  const AppContext ctx{.independent_time = bidder::IndependentTime::kClusterTimesContention, .elapsed = 0, .n_avg = 4,
                       .cluster_gpus = 16, .gpus_per_job = 1};
  // The paper's §4.3.3 example on 2 GPUs gives 1600 + 1600 + 1800 = 5000 with job_demand_max 8. Here a
  // job is a 1-GPU gang, so the last phase's one job runs on one GPU: 1600 + 1600 + 36 * 100 = 6800.
  // B = (4*8 + 2*16 + 36) * 100 = 10000 GPU-s as in the paper; T_id = 10000 / min(16, 4) * 4 = 10000.
  EXPECT_NEAR(shared_finish_time(scheduler, timing, ctx, 2, Locality::kSameMachine), 6800, 1e-9);
  EXPECT_NEAR(independent_finish_time(scheduler, timing, ctx), 10000, 1e-9);
  bidder::SuccessiveHalvingApp app{.elapsed = 0, .initial_jobs = 4, .phase_iterations = {8, 16, 36},
                                   .current_phase = 0, .current_jobs = {{80, 8}, {100, 8}, {100, 8}, {120, 8}},
                                   .job_demand_max = 1, .app_demand_max = 4, .budget = 10000,
                                   .cluster_gpus = 16, .n_avg = 4};
  EXPECT_NEAR(estimate_rho(scheduler, timing, ctx, 2, Locality::kSameMachine),
              bidder::finish_time_fairness(app, 2, 1.0), 1e-12);
}

// The launcher's own rule is the fair share's, as themis-sim's (docs/bidder.md, "App model"): each phase on
// min(R_C / N_avg, its demand) GPUs, never faster than its longest job, and one start per phase. The same app as
// above, 16 GPUs among 4 apps: a share of 4 GPUs. Phase 1: 4 · 8 · 100 / 4 = 800; phase 2: its two jobs of 16 ·
// 100 take 1600 each; phase 3: one job of 3600. Eq. 2 spreads all 10000 GPU-s over 4 GPUs and misses that the
// last phases cannot use them.
TEST(RhoEstimate, TheFairShareTimeCountsEachPhasesLongestJobAndOneStartPerPhase) {
  HyperparameterScheduler scheduler({SchedulerKind::kSuccessiveHalving, 4, {8, 16, 36}});
  TimingModel timing(100.0);
  const double serial[] = {80, 100, 100, 120};
  for (int j = 0; j < 4; ++j) timing.observe(j, 1, Locality::kSameSlot, serial[j]);
  const AppContext ctx{.elapsed = 0, .n_avg = 4, .cluster_gpus = 16, .gpus_per_job = 1};
  EXPECT_NEAR(independent_finish_time(scheduler, timing, ctx), 800 + 1600 + 3600, 1e-9);
  // Starts of 30 s, and one that waited 400 s for its GPUs (a cost of sharing, left out by the median): 30 s
  // more per phase, in T_id and in the time left after this phase.
  const Seconds before = shared_finish_time(scheduler, timing, ctx, 4, Locality::kSameMachine);
  timing.observe_start(30);
  timing.observe_start(400);
  timing.observe_start(30);
  EXPECT_DOUBLE_EQ(timing.start_overhead(), 30);
  EXPECT_NEAR(independent_finish_time(scheduler, timing, ctx), 6000 + 3 * 30, 1e-9);
  EXPECT_NEAR(shared_finish_time(scheduler, timing, ctx, 4, Locality::kSameMachine), before + 2 * 30, 1e-9);
  EXPECT_THROW(timing.observe_start(-1), std::invalid_argument);
}

// A single 2-GPU job on node1 (machine-local), its true serial time 0.2 s, each iteration ±10 % noise,
// the launcher's prior 1.0 s (5x off). At several points of its life the agent's ρ estimate is
// compared with the ρ it finally achieves: (finish − submit) / T_id with the true serial time.
TEST(RhoEstimate, ConvergesToTheAchievedRhoOnASyntheticTimingStream) {
  const auto cluster = testing::two_rack_cluster();
  const double true_serial = 0.2;
  const int iterations = 600;
  AgentConfig config{.app = 1, .scheduler = {SchedulerKind::kAllJobs, 1, {static_cast<double>(iterations)}},
                     .gpus_per_job = 2, .lease_seconds = 30, .default_serial_iter_time = 1.0};
  const Seconds submit = 1000;
  Agent agent(cluster, config, submit, 2);
  Seconds now = submit + 20;  // queued 20 s
  agent.set_held_gpus({0, 1});
  const auto launches = agent.take_launches();
  ASSERT_EQ(launches.size(), 1U);
  agent.on_worker_start(0, 1, -1);
  Rng rng(7);
  std::vector<std::pair<int, double>> estimates;  // (iteration, ρ estimate)
  for (int it = 1; it <= iterations; ++it) {
    const double seconds = true_serial / 2 * (0.9 + 0.2 * rng.uniform());
    now += seconds;
    agent.on_iteration(0, 1, 0, it, seconds, 1.0 / it);
    if (it == 1 || it % 60 == 0) estimates.emplace_back(it, agent.current_rho(now));
  }
  agent.on_exit(0, 1, ExitKind::kCompleted, iterations, now);
  ASSERT_TRUE(agent.finished());
  // True T_id (the fair share's): 600 * 0.2 / min(10 / N_avg 2, 2) = 60 s.
  const double achieved = (now - submit) / (iterations * true_serial / 2);
  double last_error = 1;
  for (const auto& [it, rho] : estimates) {
    const double error = std::abs(rho - achieved) / achieved;
    std::printf("rho estimate after %3d of %d iterations: %.4f (achieved %.4f, error %.2f %%)\n", it, iterations, rho,
                achieved, 100 * error);
    if (it >= 60) {
      EXPECT_LT(error, 0.05) << "at iteration " << it;
    }
    last_error = error;
  }
  EXPECT_LT(last_error, 0.02);
  // Before any timed iteration the 5x-off prior moves T_sh and T_id alike; ρ is still 20 % off.
  EXPECT_GT(std::abs(estimates.front().second - achieved) / achieved, 0.1) << "the prior is 5x off at first";
  EXPECT_NEAR(agent.current_rho(now + 500), agent.current_rho(now), 1e-12) << "a finished app's ρ is frozen";
}

}  // namespace
}  // namespace themis::launcher
