#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "bidder/successive_halving.h"

namespace themis::bidder {
namespace {

SuccessiveHalvingApp app() {
  SuccessiveHalvingApp a;
  a.initial_jobs = 4;
  a.phase_iterations = {8, 16, 36};
  a.current_jobs = {{80, 8}, {100, 8}, {100, 8}, {120, 8}};
  a.job_demand_max = 8;
  a.app_demand_max = 16;
  a.budget = 10000;
  a.cluster_gpus = 16;
  a.n_avg = 4;
  return a;
}

std::string error_of(const SuccessiveHalvingApp& a) {
  try {
    validate(a);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SuccessiveHalving, JobsPerPhaseHalve) {
  EXPECT_EQ(jobs_in_phase(8, 0), 8);
  EXPECT_EQ(jobs_in_phase(8, 2), 2);
  EXPECT_EQ(jobs_in_phase(8, 3), 1);
  EXPECT_EQ(jobs_in_phase(8, 5), 1);
}

TEST(SuccessiveHalving, PartlyRunPhaseUsesItersLeft) {
  SuccessiveHalvingApp a = app();
  a.elapsed = 500;
  a.current_jobs = {{80, 2}, {100, 4}, {100, 0}, {120, 1}};  // one job done with the phase
  // 3 jobs with work 160/400/120 on 4 GPUs: the 400 s job gets 2 GPUs → 200.
  const std::vector<Seconds> phases = phase_finish_times(a, 4, 1.0);
  EXPECT_DOUBLE_EQ(phases[0], 200);
  EXPECT_DOUBLE_EQ(phases[1], 1600 / 2.0);  // 2 jobs × 1600 s on 4 GPUs, 2 each
  EXPECT_DOUBLE_EQ(phases[2], 3600 / 4.0);
  EXPECT_DOUBLE_EQ(shared_finish_time(a, 4, 1.0), 500 + 200 + 800 + 900);
}

TEST(SuccessiveHalving, LastPhaseOnly) {
  SuccessiveHalvingApp a = app();
  a.current_phase = 2;
  a.current_jobs = {{90, 10}};
  EXPECT_DOUBLE_EQ(shared_finish_time(a, 16, 1.0), 900 / 8.0);
  EXPECT_DOUBLE_EQ(shared_finish_time(a, 16, 1.25), 900 * 1.25 / 8);
}

TEST(SuccessiveHalving, AppDemandCapsTheClusterTime) {
  SuccessiveHalvingApp a = app();
  a.app_demand_max = 4;
  EXPECT_DOUBLE_EQ(cluster_finish_time(a), 2500);
}

TEST(SuccessiveHalving, MoreGpusNeverHurtWithoutSlowdown) {
  const SuccessiveHalvingApp a = app();
  for (int g = 1; g < 32; ++g) EXPECT_LE(shared_finish_time(a, g + 1, 1.0), shared_finish_time(a, g, 1.0)) << g;
}

TEST(SuccessiveHalving, BudgetSplit) {
  EXPECT_EQ(iterations_from_budget(10000, 4, 3, 100), (std::vector<double>{8, 16, 36}));
  EXPECT_EQ(iterations_from_budget(8000, 2, 2, 100), (std::vector<double>{20, 40}));
  EXPECT_THROW(iterations_from_budget(10, 4, 3, 100), std::invalid_argument);
  EXPECT_THROW(iterations_from_budget(10000, 3, 2, 100), std::invalid_argument);
  EXPECT_THROW(iterations_from_budget(10000, 4, 4, 100), std::invalid_argument);
}

TEST(SuccessiveHalving, InvalidInputsNameTheField) {
  SuccessiveHalvingApp a = app();
  a.initial_jobs = 6;
  EXPECT_NE(error_of(a).find("initial_jobs"), std::string::npos) << error_of(a);
  a = app();
  a.phase_iterations = {8, 16, 36, 10};  // 4 jobs allow at most 3 phases
  EXPECT_NE(error_of(a).find("phase_iterations"), std::string::npos);
  a = app();
  a.phase_iterations[1] = 0;
  EXPECT_NE(error_of(a).find("phase_iterations[1]"), std::string::npos);
  a = app();
  a.current_phase = 3;
  EXPECT_NE(error_of(a).find("current_phase"), std::string::npos);
  a = app();
  a.current_jobs.pop_back();
  EXPECT_NE(error_of(a).find("current_jobs"), std::string::npos);
  a = app();
  a.current_jobs[2].serial_iter_time = -3;
  EXPECT_NE(error_of(a).find("current_jobs[2].serial_iter_time"), std::string::npos);
  a = app();
  a.current_jobs[1].iters_left = 9;
  EXPECT_NE(error_of(a).find("current_jobs[1].iters_left"), std::string::npos);
  a = app();
  a.budget = 0;
  EXPECT_NE(error_of(a).find("budget"), std::string::npos);
  a = app();
  a.job_demand_max = 0;
  EXPECT_NE(error_of(a).find("job_demand_max"), std::string::npos);
  EXPECT_EQ(error_of(app()), "");
}

}  // namespace
}  // namespace themis::bidder
