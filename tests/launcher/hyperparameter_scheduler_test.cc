#include "launcher/hyperparameter_scheduler.h"

#include <gtest/gtest.h>

namespace themis::launcher {
namespace {

SchedulerSpec halving(int jobs, std::vector<double> phases) {
  return {SchedulerKind::kSuccessiveHalving, jobs, std::move(phases)};
}

TEST(HyperparameterScheduler, SuccessiveHalvingKeepsTheBestHalfByLatestLoss) {
  HyperparameterScheduler s(halving(4, {10, 20, 40}));
  EXPECT_EQ(s.phases(), 3);
  EXPECT_EQ(s.runnable_jobs(), (std::vector<int>{0, 1, 2, 3}));
  const double losses[] = {0.9, 0.3, 0.5, 0.1};
  for (int j = 0; j < 4; ++j) {
    // An earlier, better loss must not count: only the latest one does.
    s.report(j, 5, 0.01);
    s.report(j, 10, losses[j]);
  }
  EXPECT_EQ(s.status(0), JobStatus::kPhaseDone);
  EXPECT_EQ(s.advance_if_phase_done(), (std::vector<int>{0, 2}));
  EXPECT_EQ(s.phase(), 1);
  EXPECT_EQ(s.current_jobs(), (std::vector<int>{1, 3}));
  EXPECT_EQ(s.status(0), JobStatus::kStoppedEarly);
  EXPECT_EQ(s.status(2), JobStatus::kStoppedEarly);
  EXPECT_EQ(s.status(1), JobStatus::kActive);
  EXPECT_DOUBLE_EQ(s.target(1), 30);  // cumulative: 10 + 20

  s.report(1, 30, 0.05);
  EXPECT_TRUE(s.advance_if_phase_done().empty()) << "job 3 has not reached its target yet";
  s.report(3, 30, 0.07);
  EXPECT_EQ(s.advance_if_phase_done(), (std::vector<int>{3}));
  EXPECT_EQ(s.current_jobs(), (std::vector<int>{1}));
  EXPECT_DOUBLE_EQ(s.target(1), 70);
  EXPECT_FALSE(s.finished());
  s.report(1, 70, 0.02);
  EXPECT_EQ(s.status(1), JobStatus::kFinished);
  EXPECT_TRUE(s.finished());
  EXPECT_TRUE(s.advance_if_phase_done().empty());
}

TEST(HyperparameterScheduler, JobsWithoutLossRankLastAndTiesGoToTheLowerIndex) {
  HyperparameterScheduler s(halving(4, {5, 5}));
  s.report(0, 5, std::nullopt);
  s.report(1, 5, 0.4);
  s.report(2, 5, 0.4);
  s.report(3, 5, 0.2);
  EXPECT_EQ(s.advance_if_phase_done(), (std::vector<int>{0, 2}));
  EXPECT_EQ(s.current_jobs(), (std::vector<int>{1, 3}));
}

TEST(HyperparameterScheduler, AllJobsRunToTheirIterationsWithoutStopping) {
  HyperparameterScheduler s({SchedulerKind::kAllJobs, 2, {100}});
  s.report(0, 100, 5.0);
  EXPECT_EQ(s.status(0), JobStatus::kFinished);
  EXPECT_EQ(s.runnable_jobs(), (std::vector<int>{1}));
  EXPECT_TRUE(s.advance_if_phase_done().empty());
  s.report(1, 60, 0.1);
  s.report(1, 40, 0.2);  // progress never moves back
  EXPECT_DOUBLE_EQ(s.iterations_done(1), 60);
  EXPECT_FALSE(s.finished());
  s.report(1, 100, 0.1);
  EXPECT_TRUE(s.finished());
}

TEST(HyperparameterScheduler, BadSpecsAreRejectedByName) {
  auto message = [](const SchedulerSpec& spec) {
    try {
      HyperparameterScheduler s(spec);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message(halving(3, {1, 1})).find("jobs must be a power of two, got 3"), std::string::npos);
  EXPECT_NE(message(halving(4, {1, 1, 1, 1})).find("allow at most 3"), std::string::npos);
  EXPECT_NE(message(halving(4, {1, 0})).find("phase_iterations[1] must be >= 1"), std::string::npos);
  EXPECT_NE(message({SchedulerKind::kAllJobs, 1, {1, 2}}).find("exactly one entry"), std::string::npos);
  EXPECT_NE(message({SchedulerKind::kAllJobs, 0, {1}}).find("jobs must be >= 1"), std::string::npos);
}

}  // namespace
}  // namespace themis::launcher

namespace themis::launcher {
namespace {

TEST(HyperparameterScheduler, RestoredProgressContinuesWhereTheSavedOneStopped) {
  HyperparameterScheduler first(halving(4, {10, 20, 40}));
  const double losses[] = {0.9, 0.3, 0.5, 0.1};
  for (int j = 0; j < 4; ++j) first.report(j, 10, losses[j]);
  first.advance_if_phase_done();
  first.report(1, 30, 0.05);  // job 1 reached phase 2's target, job 3 has not

  HyperparameterScheduler second(halving(4, {10, 20, 40}));
  second.restore(first.progress());
  EXPECT_EQ(second.phase(), 1);
  EXPECT_EQ(second.current_jobs(), (std::vector<int>{1, 3}));
  EXPECT_EQ(second.status(0), JobStatus::kStoppedEarly);
  EXPECT_EQ(second.status(1), JobStatus::kPhaseDone);
  EXPECT_EQ(second.runnable_jobs(), (std::vector<int>{3}));
  second.report(3, 30, 0.07);
  EXPECT_EQ(second.advance_if_phase_done(), (std::vector<int>{3})) << "job 1's restored loss 0.05 beats 0.07";

  SchedulerProgress wrong = first.progress();
  wrong.status.pop_back();
  EXPECT_THROW(second.restore(wrong), std::invalid_argument);
  wrong = first.progress();
  wrong.phase = 3;
  EXPECT_THROW(second.restore(wrong), std::invalid_argument);
}

}  // namespace
}  // namespace themis::launcher
