#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "bidder/single_job.h"

namespace themis::bidder {
namespace {

SingleJobApp app() {
  return {.elapsed = 100, .iter_total = 1000, .iter_left = 600, .serial_iter_time = 2, .demand_max = 8,
          .cluster_gpus = 64, .n_avg = 2};
}

std::string error_of(const SingleJobApp& a) {
  try {
    validate(a);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SingleJob, FormulaTerms) {
  const SingleJobApp a = app();
  EXPECT_DOUBLE_EQ(cluster_finish_time(a), 1000.0 * 2 / 8);  // min(R_C, dmax) = 8
  EXPECT_DOUBLE_EQ(independent_finish_time(a), 250 * 2);
  EXPECT_DOUBLE_EQ(shared_finish_time(a, 4, 1.0), 100 + 600.0 * 2 / 4);
  EXPECT_DOUBLE_EQ(shared_finish_time(a, 4, 1.3), 100 + 600.0 * 2 * 1.3 / 4);
  EXPECT_DOUBLE_EQ(finish_time_fairness(a, 4, 1.0), 400.0 / 500);
}

TEST(SingleJob, SpeedupStopsAtDemandMax) {
  const SingleJobApp a = app();
  EXPECT_DOUBLE_EQ(shared_finish_time(a, 8, 1.0), shared_finish_time(a, 64, 1.0));
  EXPECT_LT(shared_finish_time(a, 8, 1.0), shared_finish_time(a, 7, 1.0));
}

TEST(SingleJob, ClusterSmallerThanDemandUsesTheCluster) {
  SingleJobApp a = app();
  a.cluster_gpus = 4;
  EXPECT_DOUBLE_EQ(cluster_finish_time(a), 1000.0 * 2 / 4);
}

TEST(SingleJob, NoGpusWithWorkLeftNeverFinishes) {
  EXPECT_TRUE(std::isinf(shared_finish_time(app(), 0, 1.0)));
  SingleJobApp done = app();
  done.iter_left = 0;
  EXPECT_DOUBLE_EQ(shared_finish_time(done, 0, 1.0), 100);
}

TEST(SingleJob, WaitingRaisesRho) {
  const SingleJobApp a = app();
  const double now = finish_time_fairness(a, 4, 1.0);
  const double later = finish_time_fairness_after_wait(a, 300, 4, 1.0);
  EXPECT_DOUBLE_EQ(later - now, 300.0 / 500);
  EXPECT_THROW(finish_time_fairness_after_wait(a, -1, 4, 1.0), std::invalid_argument);
}

TEST(SingleJob, InvalidInputsNameTheField) {
  SingleJobApp a = app();
  a.serial_iter_time = 0;
  EXPECT_NE(error_of(a).find("serial_iter_time"), std::string::npos) << error_of(a);
  a = app();
  a.iter_left = 1001;
  EXPECT_NE(error_of(a).find("iter_left"), std::string::npos);
  a = app();
  a.elapsed = -1;
  EXPECT_NE(error_of(a).find("elapsed"), std::string::npos);
  a = app();
  a.demand_max = 0;
  EXPECT_NE(error_of(a).find("demand_max"), std::string::npos);
  a = app();
  a.cluster_gpus = 0;
  EXPECT_NE(error_of(a).find("cluster_gpus"), std::string::npos);
  a = app();
  a.n_avg = 0.5;
  EXPECT_NE(error_of(a).find("n_avg"), std::string::npos);
  a = app();
  a.iter_total = NAN;
  EXPECT_NE(error_of(a).find("iter_total"), std::string::npos);
  EXPECT_EQ(error_of(app()), "");
  EXPECT_THROW(shared_finish_time(app(), -1, 1.0), std::invalid_argument);
  EXPECT_THROW(shared_finish_time(app(), 2, 0.9), std::invalid_argument);
}

}  // namespace
}  // namespace themis::bidder
