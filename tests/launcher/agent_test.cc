#include "launcher/agent.h"

#include <gtest/gtest.h>

#include <cmath>

#include "bidder/bid_validation.h"
#include "tests/launcher/test_cluster.h"

namespace themis::launcher {
namespace {

AgentConfig single_job(int gpus_per_job, double iterations) {
  return {.app = 5, .scheduler = {SchedulerKind::kAllJobs, 1, {iterations}}, .gpus_per_job = gpus_per_job,
          .lease_seconds = 60, .default_serial_iter_time = 0.5};
}

// The filter's ranking key for an app holding nothing is ρ after one more lease on all its jobs can use
// (bidder::IdleRho::kWholeDemand), not on one gang: six one-GPU jobs would run on six GPUs, not one after another,
// and a crowded cluster's small fair share does not make a wide app rank as if it could never run wider.
TEST(Agent, AnAppHoldingNothingRanksByAllItCanUseAndBidsAgainstOneGangAfterALease) {
  const auto cluster = testing::two_rack_cluster();  // 10 GPUs
  const AgentConfig six{.app = 5, .scheduler = {SchedulerKind::kAllJobs, 6, {100}}, .gpus_per_job = 1,
                        .lease_seconds = 60, .default_serial_iter_time = 0.5};
  const Agent alone(cluster, six, 0, 1);  // N_avg 1: T_id on 6 GPUs, 50 s
  EXPECT_NEAR(alone.current_rho(0), (60.0 + 50.0) / 50.0, 1e-9) << "a lease, then its 6 jobs side by side";
  EXPECT_LT(alone.current_rho(0), alone.rho_no_new(0) / 3);
  const Agent crowded(cluster, six, 0, 10);  // N_avg 10: a fair share of one GPU, T_id 6 · 50 s
  EXPECT_NEAR(crowded.current_rho(0), (60.0 + 50.0) / 300.0, 1e-9) << "still on all six";
  EXPECT_NEAR(crowded.rho_no_new(0), (60.0 + 300.0) / 300.0, 1e-9) << "no new GPUs: a lease, then one gang";
}

// The coordinator's forecast of the contention over the rest of the app's life (AppStatusAck.contentionAhead) goes
// into its ranking key: 300 s lived among 10 apps, 300 s left on a fair share of one GPU; if it will share with 2
// on average from now on, its life's N_avg is 6, T_id 180 s instead of 300 s, and it ranks as further behind.
TEST(Agent, TheCoordinatorsContentionForecastShortensTIdInItsRankingKey) {
  const auto cluster = testing::two_rack_cluster();  // 10 GPUs
  const AgentConfig six{.app = 5, .scheduler = {SchedulerKind::kAllJobs, 6, {100}}, .gpus_per_job = 1,
                        .lease_seconds = 60, .default_serial_iter_time = 0.5};
  Agent crowded(cluster, six, 0, 10);
  EXPECT_NEAR(crowded.remaining_at_fair_share(300), 300, 1e-9) << "six 50 s jobs on one GPU";
  EXPECT_NEAR(crowded.current_rho(300), (300.0 + 60.0 + 50.0) / 300.0, 1e-9) << "no forecast yet: the past average";
  crowded.set_contention_ahead(2);
  EXPECT_NEAR(crowded.current_rho(300), (300.0 + 60.0 + 50.0) / 180.0, 1e-9);
  EXPECT_NEAR(crowded.rho_no_new(300), (300.0 + 60.0 + 300.0) / 300.0, 1e-9) << "bids keep the model as it was";
  crowded.set_contention_ahead(std::nan(""));
  EXPECT_NEAR(crowded.current_rho(300), (300.0 + 60.0 + 50.0) / 300.0, 1e-9) << "a forecast taken back";
}

TEST(Agent, LostLeaseStopsTheJobWhichResumesFromItsCheckpointOnTheNextGrant) {
  const auto cluster = testing::two_rack_cluster();
  Agent agent(cluster, single_job(2, 100), 0, 1);
  EXPECT_TRUE(agent.take_launches().empty()) << "no GPUs held yet";
  agent.set_held_gpus({4, 5, 8});
  auto launches = agent.take_launches();
  ASSERT_EQ(launches.size(), 1U);
  EXPECT_EQ(launches[0].attempt, 1);
  EXPECT_EQ(launches[0].gpus, (std::vector<GpuIndex>{4, 5}));
  EXPECT_EQ(launches[0].iterations, 100);
  EXPECT_EQ(agent.job(0).state, JobState::kStarting);
  agent.on_worker_start(0, 1, -1);
  for (int it = 1; it <= 40; ++it) agent.on_iteration(0, 1, 0, it, 0.1, 2.0 / it);
  EXPECT_EQ(agent.job(0).state, JobState::kRunning);
  EXPECT_DOUBLE_EQ(agent.job(0).iterations_done, 40);

  // A lease that stays does nothing; losing GPU 5 stops the job (checkpoint and exit).
  agent.set_held_gpus({4, 5});
  EXPECT_TRUE(agent.take_stops().empty());
  agent.set_held_gpus({4, 8});
  auto stops = agent.take_stops();
  ASSERT_EQ(stops.size(), 1U);
  EXPECT_EQ(stops[0].job, 0);
  EXPECT_EQ(stops[0].attempt, 1);
  EXPECT_EQ(agent.job(0).state, JobState::kStopping);
  EXPECT_TRUE(agent.take_launches().empty()) << "nothing restarts before the stopped attempt exits";

  // An exit of an older attempt is ignored; the worker's own exit moves the job back to waiting.
  agent.on_exit(0, 0, ExitKind::kCompleted, 100, 10);
  EXPECT_EQ(agent.job(0).state, JobState::kStopping);
  agent.on_exit(0, 1, ExitKind::kPreempted, 42, 10);
  EXPECT_EQ(agent.job(0).state, JobState::kWaiting);
  EXPECT_EQ(agent.job(0).preemptions, 1);
  // It resumes on what it holds now, across racks: attempt 2.
  const auto resumed = agent.take_launches();
  ASSERT_EQ(resumed.size(), 1U);
  EXPECT_EQ(resumed[0].attempt, 2);
  EXPECT_EQ(resumed[0].gpus, (std::vector<GpuIndex>{4, 8}));
}

TEST(Agent, ResumeLaunchesTheNextAttemptOnTheNewGrant) {
  const auto cluster = testing::two_rack_cluster();
  Agent agent(cluster, single_job(2, 100), 0, 1);
  agent.set_held_gpus({0, 1});
  ASSERT_EQ(agent.take_launches().size(), 1U);
  agent.on_worker_start(0, 1, -1);
  for (int it = 1; it <= 30; ++it) agent.on_iteration(0, 1, 0, it, 0.1, 1.0);
  agent.set_held_gpus({});
  ASSERT_EQ(agent.take_stops().size(), 1U);
  agent.on_exit(0, 1, ExitKind::kPreempted, 30, 5);
  EXPECT_EQ(agent.extra_demand(), 2);
  agent.set_held_gpus({6, 7});
  const auto launches = agent.take_launches();
  ASSERT_EQ(launches.size(), 1U);
  EXPECT_EQ(launches[0].attempt, 2);
  EXPECT_EQ(launches[0].gpus, (std::vector<GpuIndex>{6, 7}));
  // Reports of the old attempt no longer count; the new one resumes from iteration 30.
  agent.on_iteration(0, 1, 0, 99, 0.1, 0.0);
  EXPECT_DOUBLE_EQ(agent.job(0).iterations_done, 30);
  agent.on_worker_start(0, 2, 30);
  for (int it = 31; it <= 100; ++it) agent.on_iteration(0, 2, 0, it, 0.1, 0.5);
  EXPECT_FALSE(agent.finished()) << "only the worker's completed exit finishes it";
  agent.on_exit(0, 2, ExitKind::kCompleted, 100, 50);
  EXPECT_TRUE(agent.finished());
  EXPECT_EQ(agent.job(0).state, JobState::kIdle);
  EXPECT_EQ(agent.finished_at(), 50.0);
  EXPECT_EQ(agent.extra_demand(), 0);
}

// Jobs start with the most time left first, the order the app's ρ estimate packs them in: three
// 100-iteration jobs stopped at 80, 40 and 10 iterations resume 10 first on a single GPU. Starting the
// most advanced first left the longest job waiting while the estimate priced it as running.
TEST(Agent, TheJobWithTheMostTimeLeftStartsFirst) {
  const auto cluster = testing::two_rack_cluster();
  const AgentConfig three{.app = 5, .scheduler = {SchedulerKind::kAllJobs, 3, {100}}, .gpus_per_job = 1,
                          .lease_seconds = 60, .default_serial_iter_time = 0.5};
  Agent agent(cluster, three, 0, 1);
  agent.set_held_gpus({0, 1, 2});
  ASSERT_EQ(agent.take_launches().size(), 3U);
  const int done[] = {80, 40, 10};
  for (int job = 0; job < 3; ++job) {
    agent.on_worker_start(job, 1, -1);
    for (int it = 1; it <= done[job]; ++it) agent.on_iteration(job, 1, 0, it, 0.1, 1.0);
  }
  agent.set_held_gpus({});
  ASSERT_EQ(agent.take_stops().size(), 3U);
  for (int job = 0; job < 3; ++job) agent.on_exit(job, 1, ExitKind::kPreempted, done[job], 5);
  agent.set_held_gpus({4});
  auto launches = agent.take_launches();
  ASSERT_EQ(launches.size(), 1U);
  EXPECT_EQ(launches[0].job, 2) << "90 iterations left, against 60 and 20";
  agent.set_held_gpus({4, 5});
  launches = agent.take_launches();
  ASSERT_EQ(launches.size(), 1U);
  EXPECT_EQ(launches[0].job, 1);
}

// Three 100-iteration jobs of 0.5 s per iteration on two GPUs: jobs 0 and 1 run to iteration 60 (20 s
// left each) while job 2 waits (50 s). Going on ends the phase at 20 + 30 (restart) + 50 = 100 s;
// stopping job 1 for job 2 ends it at 30 + 50 = 80 s (job 1 resumes after job 0, at 20 + 30 + 20 = 70 s),
// so job 1 stops and job 2 takes its GPU. On one GPU the same swap cannot end sooner: nothing stops.
TEST(Agent, ARunningJobStopsForALongerWaitingOneWhenThePhaseEndsSooner) {
  const auto cluster = testing::two_rack_cluster();
  const AgentConfig three{.app = 5, .scheduler = {SchedulerKind::kAllJobs, 3, {100}}, .gpus_per_job = 1,
                          .lease_seconds = 60, .default_serial_iter_time = 0.5, .restart_seconds = 30};
  Agent agent(cluster, three, 0, 1);
  agent.set_held_gpus({0, 1});
  auto launches = agent.take_launches();
  ASSERT_EQ(launches.size(), 2U);
  EXPECT_EQ(launches[0].job, 0);
  EXPECT_EQ(launches[1].job, 1);
  for (int job = 0; job < 2; ++job) {
    agent.on_worker_start(job, 1, -1);
    for (int it = 1; it <= 60; ++it) agent.on_iteration(job, 1, 0, it, 0.5, 1.0);
  }
  agent.set_held_gpus({0, 1});  // the leases renewed
  auto stops = agent.take_stops();
  ASSERT_EQ(stops.size(), 1U);
  EXPECT_EQ(stops[0].job, 1);
  EXPECT_EQ(agent.job(1).state, JobState::kStopping);
  EXPECT_EQ(agent.job(0).state, JobState::kRunning);
  agent.on_exit(1, 1, ExitKind::kPreempted, 60, 30);
  launches = agent.take_launches();
  ASSERT_EQ(launches.size(), 1U);
  EXPECT_EQ(launches[0].job, 2);
  agent.set_held_gpus({0, 1});
  EXPECT_TRUE(agent.take_stops().empty()) << "the longest jobs run: nothing to gain";

  Agent one(cluster, three, 0, 1);
  one.set_held_gpus({0});
  ASSERT_EQ(one.take_launches().size(), 1U);
  one.on_worker_start(0, 1, -1);
  for (int it = 1; it <= 60; ++it) one.on_iteration(0, 1, 0, it, 0.5, 1.0);
  one.set_held_gpus({0});
  EXPECT_TRUE(one.take_stops().empty()) << "20 + 30 + 50 s going on, 30 + 50 + 30 + 20 s stopping";
}

TEST(Agent, FailuresRestartUntilMaxRestartsThenTheAppFails) {
  const auto cluster = testing::two_rack_cluster();
  auto config = single_job(1, 10);
  config.max_restarts = 1;
  Agent agent(cluster, config, 0, 1);
  agent.set_held_gpus({2});
  ASSERT_EQ(agent.take_launches().size(), 1U);
  agent.on_exit(0, 1, ExitKind::kFailed, 0, 1);
  EXPECT_EQ(agent.job(0).state, JobState::kWaiting);
  ASSERT_EQ(agent.take_launches().size(), 1U);
  agent.on_exit(0, 2, ExitKind::kFailed, 0, 2);
  EXPECT_EQ(agent.job(0).state, JobState::kFailed);
  EXPECT_TRUE(agent.failed());
  EXPECT_TRUE(agent.take_launches().empty());
}

// Held GPUs go back before their leases end once no job runs there and none waits to start: not while a
// job waits (it may start there), not during a probe, and not once the app is over (its end releases all).
TEST(Agent, ItGivesBackHeldGpusNoJobRunsOnAndNoneWaitsFor) {
  const auto cluster = testing::two_rack_cluster();
  AgentConfig config{.app = 9, .scheduler = {SchedulerKind::kSuccessiveHalving, 2, {10, 100}},
                     .gpus_per_job = 1, .default_serial_iter_time = 0.1};
  Agent agent(cluster, config, 0, 1);
  agent.set_held_gpus({0, 1, 2});
  EXPECT_TRUE(agent.idle_gpus().empty()) << "two jobs wait to start";
  const auto launches = agent.take_launches();
  ASSERT_EQ(launches.size(), 2U);
  std::vector<GpuIndex> unused = {0, 1, 2};
  for (const auto& l : launches) std::erase(unused, l.gpus[0]);
  ASSERT_EQ(unused.size(), 1U);
  EXPECT_EQ(agent.idle_gpus(), unused) << "both jobs run; the third GPU has nothing to run";
  agent.on_worker_start(0, 1, -1);
  agent.on_worker_start(1, 1, -1);
  agent.on_iteration(0, 1, 0, 10, 0.1, 0.9);
  agent.on_exit(0, 1, ExitKind::kCompleted, 10, 1);
  unused.push_back(launches[0].job == 0 ? launches[0].gpus[0] : launches[1].gpus[0]);
  std::sort(unused.begin(), unused.end());
  EXPECT_EQ(agent.idle_gpus(), unused) << "job 1 runs on; nothing waits";
  agent.on_iteration(1, 1, 0, 10, 0.1, 0.1);
  agent.on_exit(1, 1, ExitKind::kCompleted, 10, 2);
  ASSERT_EQ(agent.scheduler().phase(), 1);
  EXPECT_TRUE(agent.idle_gpus().empty()) << "the survivor waits to start on one of them";
  const auto survivor = agent.take_launches();
  ASSERT_EQ(survivor.size(), 1U);
  EXPECT_EQ(agent.idle_gpus().size(), 2U) << "the survivor runs on one GPU of three";
  agent.on_iteration(survivor[0].job, 2, 0, 100, 0.1, 0.05);
  agent.on_exit(survivor[0].job, 2, ExitKind::kCompleted, 100, 3);
  ASSERT_TRUE(agent.finished());
  EXPECT_TRUE(agent.idle_gpus().empty()) << "the app is over";

  // A job stopping because it lost part of its gang's leases starts again: the GPUs it was granted
  // instead are not given back (seen in scripts/local-cluster: a 4-GPU job moved to four GPUs of which
  // three were given back while it stopped, and won back by the next round).
  AgentConfig gang{.app = 7, .scheduler = {SchedulerKind::kAllJobs, 1, {1000}}, .gpus_per_job = 2,
                   .default_serial_iter_time = 0.1};
  Agent moving(cluster, gang, 0, 1);
  moving.set_held_gpus({0, 1});
  ASSERT_EQ(moving.take_launches().size(), 1U);
  moving.on_worker_start(0, 1, -1);
  moving.set_held_gpus({1, 8, 9});
  ASSERT_EQ(moving.take_stops().size(), 1U) << "GPU 0's lease is gone: the job stops";
  EXPECT_TRUE(moving.idle_gpus().empty()) << "GPUs 8 and 9 are where it starts again";

  Agent probing(cluster, config, 0, 1);
  probing.set_held_gpus({4}, /*probe=*/true);
  ASSERT_EQ(probing.take_launches().size(), 1U);
  probing.on_worker_start(0, 1, -1);
  EXPECT_TRUE(probing.idle_gpus().empty()) << "a probe holds one GPU for the coordinator's verdict";
}

// A GPU the launcher has said it gives back is no longer the app's: the next phase's job must not launch there
// while the coordinator releases it (seen in CI: job 0 finished first and its GPU went back, job 1 finished a
// millisecond later, and phase 2's job 0 launched on the GPU given back; the coordinator refused it as a stale
// grant and the app waited a round for a GPU it still held).
TEST(Agent, AGpuGivenBackTakesNoLaunchBeforeTheNextGrant) {
  const auto cluster = testing::two_rack_cluster();
  AgentConfig config{.app = 9, .scheduler = {SchedulerKind::kSuccessiveHalving, 2, {10, 100}},
                     .gpus_per_job = 1, .default_serial_iter_time = 0.1};
  Agent agent(cluster, config, 0, 1);
  agent.set_held_gpus({0, 1});
  const auto launches = agent.take_launches();
  ASSERT_EQ(launches.size(), 2U);
  const GpuIndex gpu_of_0 = launches[0].job == 0 ? launches[0].gpus[0] : launches[1].gpus[0];
  const GpuIndex gpu_of_1 = gpu_of_0 == 0 ? 1 : 0;
  agent.on_worker_start(0, 1, -1);
  agent.on_worker_start(1, 1, -1);
  agent.on_iteration(0, 1, 0, 10, 0.1, 0.1);  // job 0 has the lower loss: it goes on
  agent.on_exit(0, 1, ExitKind::kCompleted, 10, 1);
  ASSERT_EQ(agent.idle_gpus(), std::vector<GpuIndex>{gpu_of_0});
  agent.give_back(agent.idle_gpus());
  EXPECT_EQ(agent.held_gpus(), std::vector<GpuIndex>{gpu_of_1});
  agent.give_back({gpu_of_1});  // job 1 runs there: kept
  EXPECT_EQ(agent.held_gpus(), std::vector<GpuIndex>{gpu_of_1});
  agent.on_iteration(1, 1, 0, 10, 0.1, 0.9);
  agent.on_exit(1, 1, ExitKind::kCompleted, 10, 1.001);
  ASSERT_EQ(agent.scheduler().phase(), 1);
  const auto next = agent.take_launches();
  ASSERT_EQ(next.size(), 1U);
  EXPECT_EQ(next[0].job, 0);
  EXPECT_EQ(next[0].gpus, std::vector<GpuIndex>{gpu_of_1}) << "not on the GPU given back";
}

TEST(Agent, SuccessiveHalvingRelaunchesSurvivorsAndNeverTheStoppedJobs) {
  const auto cluster = testing::two_rack_cluster();
  AgentConfig config{.app = 9, .scheduler = {SchedulerKind::kSuccessiveHalving, 4, {10, 10, 10}},
                     .gpus_per_job = 1, .max_concurrent_jobs = 3, .default_serial_iter_time = 0.1};
  Agent agent(cluster, config, 0, 1);
  agent.set_held_gpus({0, 1, 2, 3});
  auto launches = agent.take_launches();
  ASSERT_EQ(launches.size(), 3U) << "max_concurrent_jobs caps the jobs running at once";
  const double loss[] = {0.8, 0.2, 0.6, 0.1};
  for (const auto& l : launches) {
    agent.on_worker_start(l.job, 1, -1);
    agent.on_iteration(l.job, 1, 0, 10, 0.1, loss[l.job]);
    agent.on_exit(l.job, 1, ExitKind::kCompleted, 10, 1);
  }
  launches = agent.take_launches();
  ASSERT_EQ(launches.size(), 1U);
  EXPECT_EQ(launches[0].job, 3);
  agent.on_worker_start(3, 1, -1);
  agent.on_iteration(3, 1, 0, 10, 0.1, loss[3]);
  agent.on_exit(3, 1, ExitKind::kCompleted, 10, 2);
  EXPECT_EQ(agent.scheduler().phase(), 1);
  launches = agent.take_launches();
  ASSERT_EQ(launches.size(), 2U);
  EXPECT_EQ(launches[0].job, 1);
  EXPECT_EQ(launches[1].job, 3);
  EXPECT_EQ(launches[0].attempt, 2);
  EXPECT_EQ(launches[0].iterations, 20);
  EXPECT_EQ(agent.job(0).status, JobStatus::kStoppedEarly);
  EXPECT_EQ(agent.job(2).status, JobStatus::kStoppedEarly);
  agent.on_iteration(1, 2, 0, 20, 0.1, 0.05);
  agent.on_iteration(3, 2, 0, 20, 0.1, 0.09);
  agent.on_exit(1, 2, ExitKind::kCompleted, 20, 3);
  agent.on_exit(3, 2, ExitKind::kCompleted, 20, 3);
  launches = agent.take_launches();
  ASSERT_EQ(launches.size(), 1U);
  EXPECT_EQ(launches[0].job, 1);
  EXPECT_EQ(launches[0].iterations, 30);
  agent.on_exit(1, 3, ExitKind::kCompleted, 30, 4);
  EXPECT_TRUE(agent.finished());
  EXPECT_TRUE(agent.take_launches().empty());
}

TEST(Agent, BidsOnlyWholeGangsAndValidRows) {
  const auto cluster = testing::two_rack_cluster();
  Agent agent(cluster, single_job(2, 1000), 0, 3);
  const Offer offer{1, {0, 1, 2, 3, 4, 8, 9}};
  const Bid bid = agent.bid(offer, 30);
  ASSERT_FALSE(bid.rows.empty());
  EXPECT_NO_THROW(bidder::validate_bid(bid, offer));
  for (const auto& row : bid.rows) EXPECT_EQ(row.gpus.size(), 2U) << "a 2-GPU gang needs exactly 2";
  // The best row is machine-local: 30 s queued, 1000 · 0.5 / 2 s of work; T_id = 250, the fair share's (10 GPUs
  // among 3 apps leave it more than its 2-GPU gang).
  EXPECT_EQ(cluster.locality(bid.rows.front().gpus), Locality::kSameSlot);
  EXPECT_NEAR(bid.rows.front().rho, (30 + 250.0) / 250.0, 1e-12);
  // Waiting a lease (60 s) then running on the smallest gang.
  EXPECT_NEAR(bid.rho_no_new, (90 + 250.0) / 250.0, 1e-12);
  // Holding a gang, it wants nothing more.
  agent.set_held_gpus({0, 1});
  EXPECT_TRUE(agent.bid(Offer{2, {2, 3, 4}}, 30).rows.empty());
}

// An app alone on the cluster finishes at ρ 1 however long its worker takes to start: T_id counts the measured
// launch-to-start time once per phase, as the app would pay it alone. Without it a short app read ρ 5.6 alone on
// the local cluster (docs/local-cluster.md, "A lone app").
TEST(Agent, AnAppAloneFinishesAtRhoOneWhateverItsWorkerTakesToStart) {
  const auto cluster = testing::two_rack_cluster();
  for (const Seconds start : {0.0, 12.0}) {
    Agent agent(cluster, single_job(2, 100), 0, 1);
    agent.set_held_gpus({0, 1});
    ASSERT_EQ(agent.take_launches(0).size(), 1U);
    agent.on_worker_start(0, 1, -1, start);
    Seconds now = start;
    for (int it = 1; it <= 100; ++it) {
      now += 0.25;  // 0.5 s of serial work per iteration on its 2-GPU gang
      agent.on_iteration(0, 1, 0, it, 0.25, 1.0);
    }
    agent.on_exit(0, 1, ExitKind::kCompleted, 100, now);
    ASSERT_TRUE(agent.finished());
    // Timed from iteration warmup + 1 on: T_id = 100 · 0.5 / 2 + start = 25 + start, JCT the same.
    EXPECT_NEAR(agent.current_rho(now), 1.0, 1e-9) << "start " << start;
  }
}

// An app alone is probed too (docs/reliability.md, "Probe"): its first job runs alone on one GPU, and the
// others launch once that job has reported an iteration. T_id counts the probe's launch to its first iteration
// once, so an app whose other jobs start the moment the probe passes finishes at ρ 1, however long its
// workers take to start.
TEST(Agent, AProbedAppAloneFinishesAtRhoOneWhenItsOtherJobsStartAsTheProbePasses) {
  const auto cluster = testing::two_rack_cluster();
  const AgentConfig two_jobs{.app = 5, .scheduler = {SchedulerKind::kAllJobs, 2, {100}}, .gpus_per_job = 1,
                             .lease_seconds = 60, .default_serial_iter_time = 0.5};
  for (const Seconds start : {0.0, 3.0}) {
    Agent agent(cluster, two_jobs, 0, 1);
    agent.set_held_gpus({0}, true);
    ASSERT_EQ(agent.take_launches(0).size(), 1U);
    agent.on_worker_start(0, 1, -1, start);
    Seconds now = start + 0.5;
    agent.on_iteration(0, 1, 0, 1, 0.5, 1.0, now);  // the probe passes
    agent.set_held_gpus({0, 1});
    const auto others = agent.take_launches(now);
    ASSERT_EQ(others.size(), 1U);
    EXPECT_EQ(others[0].job, 1);
    agent.on_worker_start(1, 1, -1, now + start);
    for (int it = 2; it <= 100; ++it) agent.on_iteration(0, 1, 0, it, 0.5, 1.0, start + 0.5 * it);
    agent.on_exit(0, 1, ExitKind::kCompleted, 100, start + 50);
    Seconds end = now + start;
    for (int it = 1; it <= 100; ++it) {
      end += 0.5;
      agent.on_iteration(1, 1, 0, it, 0.5, 1.0, end);
    }
    agent.on_exit(1, 1, ExitKind::kCompleted, 100, end);
    ASSERT_TRUE(agent.finished());
    // JCT = probe (start + 0.5) + start + 50; T_id = longest job 50 + one start + the probe.
    EXPECT_NEAR(agent.context(end).probe_time, start + 0.5, 1e-9) << "start " << start;
    EXPECT_NEAR(agent.current_rho(end), 1.0, 1e-9) << "start " << start;
  }
}

// When its leases end, the app's GPUs are offered with the rest; a machine as good as the one its job runs on
// must not look better only for coming first: the row naming its own machine comes first among equal rows, and
// the arbiter keeps a row's named GPUs, so the job is renewed where it runs instead of moving (seen on the local
// cluster: a 4-GPU job moved between two idle machines at every renewal, with a checkpoint and restart each time).
TEST(Agent, AtARenewalTheRowOfTheMachineItsJobRunsOnComesFirstAmongEqualRows) {
  const auto cluster = testing::two_rack_cluster();  // node1 = GPUs 0-3, node2 = 4-7, node3 = 8-9
  Agent agent(cluster, single_job(4, 100000), 0, 1);
  agent.set_held_gpus({4, 5, 6, 7});
  ASSERT_EQ(agent.take_launches().size(), 1U);
  agent.on_worker_start(0, 1, -1);
  const Offer renewal{3, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}};
  const Bid bid = agent.bid(renewal, 30);
  ASSERT_GE(bid.rows.size(), 2U);
  EXPECT_EQ(bid.rows[0].gpus, (std::vector<GpuIndex>{4, 5, 6, 7}));
  EXPECT_EQ(bid.rows[1].gpus, (std::vector<GpuIndex>{0, 1, 2, 3}));
  EXPECT_EQ(bid.rows[0].rho, bid.rows[1].rho);
  // Holding nothing on offer (a new app), the generator's own order stands: node1 first.
  Agent fresh(cluster, single_job(4, 100000), 0, 1);
  EXPECT_EQ(fresh.bid(renewal, 30).rows.front().gpus, (std::vector<GpuIndex>{0, 1, 2, 3}));
}

// Holding nothing, an app of 2-GPU gangs offered a 2-GPU slot in each rack runs each gang inside its
// slot: the 4-GPU bundle is worth what four GPUs of one machine are, not a cross-rack placement.
TEST(Agent, HoldingNothingItPricesABundleByWhereItsGangsRun) {
  const auto cluster = testing::two_rack_cluster();
  const AgentConfig two{.app = 5, .scheduler = {SchedulerKind::kAllJobs, 2, {1000}}, .gpus_per_job = 2,
                        .lease_seconds = 60, .default_serial_iter_time = 0.5};
  const Agent agent(cluster, two, 0, 3);
  auto four = [&](std::vector<GpuIndex> gpus) {
    const Bid bid = agent.bid(Offer{1, gpus}, 30);
    for (const auto& row : bid.rows)
      if (row.gpus.size() == 4) return row.rho;
    return 0.0;
  };
  const double spread = four({0, 1, 8, 9});
  EXPECT_GT(spread, 0);
  EXPECT_DOUBLE_EQ(spread, four({0, 1, 2, 3}));
}

// Keeping a running gang, the new GPUs start a gang of their own (a gang launches only whole), so a bundle
// is priced where that gang runs, not by its span with the kept GPUs: two GPUs of the other rack's machine
// are worth what two more GPUs of the kept machine are.
TEST(Agent, KeepingARunningGangItPricesNewGpusWhereTheirOwnGangRuns) {
  const auto cluster = testing::two_rack_cluster();
  const AgentConfig two{.app = 5, .scheduler = {SchedulerKind::kAllJobs, 2, {1000}}, .gpus_per_job = 2,
                        .lease_seconds = 60, .default_serial_iter_time = 0.5};
  Agent agent(cluster, two, 0, 3);
  agent.set_held_gpus({0, 1});
  ASSERT_EQ(agent.take_launches().size(), 1U);
  agent.on_worker_start(0, 1, -1);
  auto two_more = [&](std::vector<GpuIndex> offered, std::vector<GpuIndex> row) {
    const Bid bid = agent.bid(Offer{1, offered}, 30);
    for (const auto& r : bid.rows)
      if (r.gpus == row) return r.rho;
    return 0.0;
  };
  const double same_machine = two_more({2, 3, 8, 9}, {2, 3});
  ASSERT_GT(same_machine, 0);
  EXPECT_DOUBLE_EQ(two_more({2, 3, 8, 9}, {8, 9}), same_machine);
  EXPECT_DOUBLE_EQ(two_more({4, 5}, {4, 5}), same_machine) << "node2, the kept machine's rack";
}

// Two running 2-GPU gangs, each inside one machine, run at a machine's speed wherever the two machines
// are: the app's current ρ and its ρ of no new GPUs take each gang's own span, not the span of all it holds.
TEST(Agent, ItsRhoTakesEachGangsOwnSpanNotTheSpanOfAllItHolds) {
  const auto cluster = testing::two_rack_cluster();
  const AgentConfig two{.app = 5, .scheduler = {SchedulerKind::kAllJobs, 2, {1000}}, .gpus_per_job = 2,
                        .lease_seconds = 60, .default_serial_iter_time = 0.5};
  auto holding = [&](std::vector<GpuIndex> held) {
    Agent agent(cluster, two, 0, 3);
    agent.set_held_gpus(held);
    EXPECT_EQ(agent.take_launches().size(), 2U);
    agent.on_worker_start(0, 1, -1);
    agent.on_worker_start(1, 1, -1);
    return std::make_pair(agent.current_rho(30), agent.bid(Offer{1, {6}}, 30).rho_no_new);
  };
  const auto one_machine = holding({0, 1, 2, 3});
  const auto two_racks = holding({0, 1, 8, 9});
  EXPECT_DOUBLE_EQ(two_racks.first, one_machine.first);
  EXPECT_DOUBLE_EQ(two_racks.second, one_machine.second);
  // A gang that spans two machines is slowed: of GPUs 0, 4, 8 and 9 one gang runs on 0 and 4 (node1 and
  // node2, one rack).
  const auto one_gang_spread = holding({0, 4, 8, 9});
  EXPECT_GT(one_gang_spread.first, one_machine.first);
  EXPECT_GT(one_gang_spread.second, one_machine.second);
}

TEST(Agent, GpusWhoseLeaseExpiresAreOfferedBackAndTheAppBidsToKeepThem) {
  const auto cluster = testing::two_rack_cluster();
  Agent agent(cluster, single_job(2, 1000), 0, 3);
  agent.set_held_gpus({0, 1});
  ASSERT_EQ(agent.take_launches().size(), 1U);
  agent.on_worker_start(0, 1, -1);
  // Its leases on 0 and 1 expire: the offer holds them again, and it bids to win them back.
  const Offer renewal{2, {0, 1, 4}};
  const Bid bid = agent.bid(renewal, 30);
  ASSERT_FALSE(bid.rows.empty());
  EXPECT_NO_THROW(bidder::validate_bid(bid, renewal));
  EXPECT_EQ(bid.rows.front().gpus, (std::vector<GpuIndex>{0, 1}));
  // Without them it keeps nothing, so its ρ without new GPUs is that of waiting a lease.
  EXPECT_NEAR(bid.rho_no_new, (90 + 250.0) / 250.0, 1e-12);
  EXPECT_LT(bid.rows.front().rho, bid.rho_no_new);
}

}  // namespace
}  // namespace themis::launcher

namespace themis::launcher {
namespace {

TEST(Agent, AProbeRunsOneAttemptOfOneJobOnOneGpuAndAFailureIsNotRetriedDuringIt) {
  const auto cluster = testing::two_rack_cluster();
  AgentConfig config{.app = 5, .scheduler = {SchedulerKind::kAllJobs, 3, {100}}, .gpus_per_job = 2, .lease_seconds = 60};
  Agent agent(cluster, config, 0, 1);
  agent.set_held_gpus({8}, /*probe=*/true);
  const auto launches = agent.take_launches();
  ASSERT_EQ(launches.size(), 1U) << "one job, though a gang is two GPUs";
  EXPECT_EQ(launches[0].gpus, (std::vector<GpuIndex>{8}));
  EXPECT_EQ(launches[0].attempt, 1);
  EXPECT_EQ(launches[0].iterations, 100) << "the job's real iteration target";
  agent.on_exit(launches[0].job, 1, ExitKind::kFailed, 0, 3);
  EXPECT_EQ(agent.job(launches[0].job).failures, 1);
  EXPECT_TRUE(agent.take_launches().empty()) << "the probe is one attempt: its verdict is the coordinator's";
  agent.set_held_gpus({8}, true);
  EXPECT_TRUE(agent.take_launches().empty()) << "the same probe granted again";
}

TEST(Agent, IterationsOnLessThanAGangAreNotTimed) {
  // A rank takes its own batch, so one GPU of a two-GPU gang does half an iteration's work: timing it
  // would halve the job's serial time and shrink T_id (ρ of the local cluster's 4-GPU MLP read 28).
  const auto cluster = testing::two_rack_cluster();
  Agent agent(cluster, single_job(2, 100000), 0, 1);
  agent.set_held_gpus({8}, true);
  ASSERT_EQ(agent.take_launches().size(), 1U);
  agent.on_worker_start(0, 1, -1);
  for (int i = 1; i <= 100; ++i) agent.on_iteration(0, 1, 0, i, 0.01, std::nullopt);
  EXPECT_FALSE(agent.timing().measured(0)) << "the probe's one-GPU iterations";
  agent.set_held_gpus({8, 9});
  ASSERT_EQ(agent.take_stops().size(), 1U);
  agent.on_exit(0, 1, ExitKind::kPreempted, 100, 10);
  ASSERT_EQ(agent.take_launches().size(), 1U);
  agent.on_worker_start(0, 2, 100);
  for (int i = 101; i <= 200; ++i) agent.on_iteration(0, 2, 0, i, 0.03, std::nullopt);
  ASSERT_TRUE(agent.timing().measured(0));
  EXPECT_NEAR(agent.timing().serial_iter_time(0), 0.06, 1e-9) << "t · k on the whole gang of two";
}

TEST(Agent, AfterItsProbeAJobOnLessThanAGangStopsAndResumesOnAWholeGang) {
  const auto cluster = testing::two_rack_cluster();
  Agent agent(cluster, single_job(2, 100), 0, 1);
  agent.set_held_gpus({8}, true);
  ASSERT_EQ(agent.take_launches().size(), 1U);
  agent.on_worker_start(0, 1, -1);
  // The probe is over: the app won GPUs 8 and 9; the job on GPU 8 alone checkpoints and moves to both.
  agent.set_held_gpus({8, 9});
  const auto stops = agent.take_stops();
  ASSERT_EQ(stops.size(), 1U);
  EXPECT_EQ(stops[0].reason, "probe over: resumes on a whole gang");
  EXPECT_TRUE(agent.take_launches().empty());
  agent.on_exit(0, 1, ExitKind::kPreempted, 20, 10);
  const auto resumed = agent.take_launches();
  ASSERT_EQ(resumed.size(), 1U);
  EXPECT_EQ(resumed[0].attempt, 2);
  EXPECT_EQ(resumed[0].gpus, (std::vector<GpuIndex>{8, 9}));

  // A one-GPU job keeps running on the probe's GPU when the app wins it back.
  Agent single(cluster, single_job(1, 100), 0, 1);
  single.set_held_gpus({3}, true);
  ASSERT_EQ(single.take_launches().size(), 1U);
  single.set_held_gpus({2, 3});
  EXPECT_TRUE(single.take_stops().empty());
  EXPECT_EQ(single.job(0).state, JobState::kStarting);
}

TEST(Agent, ARefusedLaunchWaitsAndTheNextTryIsANewAttempt) {
  const auto cluster = testing::two_rack_cluster();
  Agent agent(cluster, single_job(1, 10), 0, 1);
  agent.set_held_gpus({5});
  ASSERT_EQ(agent.take_launches().size(), 1U);
  agent.on_launch_refused(0, 2);  // not the current attempt: ignored
  EXPECT_EQ(agent.job(0).state, JobState::kStarting);
  agent.on_launch_refused(0, 1);
  EXPECT_EQ(agent.job(0).state, JobState::kWaiting);
  EXPECT_EQ(agent.free_gpus(), (std::vector<GpuIndex>{5}));
  EXPECT_TRUE(agent.take_launches().empty()) << "no retry before the next leases";
  agent.set_held_gpus({5});
  const auto retry = agent.take_launches();
  ASSERT_EQ(retry.size(), 1U);
  EXPECT_EQ(retry[0].attempt, 2);
  // Refused after a stop was asked (the lease went meanwhile): it never ran, so it waits again.
  agent.set_held_gpus({});
  ASSERT_EQ(agent.take_stops().size(), 1U);
  agent.on_launch_refused(0, 2);
  EXPECT_EQ(agent.job(0).state, JobState::kWaiting);
}

// A grant re-sends every lease the app holds, also one about to expire: a job launched onto it would reach the
// coordinator after the lease ended (a stale grant), or be stopped at the GPU's re-auction. It waits for the
// grant of that round instead.
TEST(Agent, NoJobGoesOntoALeaseAboutToEndAndTheRenewedLeaseLaunchesIt) {
  const auto cluster = testing::two_rack_cluster();
  AgentConfig config = single_job(2, 100);
  config.lease_seconds = 10;
  EXPECT_DOUBLE_EQ(launch_margin(10), 1.0);
  EXPECT_DOUBLE_EQ(launch_margin(60), 1.0);
  EXPECT_DOUBLE_EQ(launch_margin(2), 0.2);
  Agent agent(cluster, config, 0, 1);
  // GPUs 4 and 5 under leases ending at 110 and 120; GPU 8's ends at 109.5.
  agent.set_held_leases({{4, 110}, {5, 120}, {8, 109.5}});
  EXPECT_TRUE(agent.take_launches(109.2).empty()) << "GPU 4's lease has 0.8 s left, under the 1 s margin";
  auto launches = agent.take_launches(108.0);
  ASSERT_EQ(launches.size(), 1U);
  EXPECT_EQ(launches[0].gpus, (std::vector<GpuIndex>{4, 5})) << "GPU 8 (1.5 s left) is not a gang's without 4 or 5";
  // The job runs; leases ending do not stop it (only the next grant does).
  agent.on_worker_start(0, 1, -1);
  EXPECT_TRUE(agent.take_stops().empty());

  // It stops (the lease moved); the next grant holds 4 and 5 with 0.5 s left on 4: no launch until a grant
  // renews it, then the next attempt starts.
  agent.set_held_leases({{5, 120}, {8, 130}});
  ASSERT_EQ(agent.take_stops().size(), 1U);
  agent.on_exit(0, 1, ExitKind::kPreempted, 10, 109);
  agent.set_held_leases({{4, 110}, {5, 120}});
  EXPECT_TRUE(agent.take_launches(109.5).empty());
  agent.set_held_leases({{4, 120.2}, {5, 120}});
  launches = agent.take_launches(110.2);
  ASSERT_EQ(launches.size(), 1U);
  EXPECT_EQ(launches[0].attempt, 2);
  // Leases of unknown expiry (set_held_gpus) and a caller that gives no time launch as before.
  Agent plain(cluster, config, 0, 1);
  plain.set_held_gpus({4, 5});
  EXPECT_EQ(plain.take_launches(1e12).size(), 1U);
}

}  // namespace
}  // namespace themis::launcher
