#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "bidder/curve_stopping.h"
#include "bidder/loss_curve.h"

namespace themis::bidder {
namespace {

CurveStoppingApp app() {
  CurveStoppingApp a;
  a.elapsed = 50;
  a.jobs = {{.serial_iter_time = 2, .iterations_done = 100, .stop_iteration = 400},
            {.serial_iter_time = 1, .iterations_done = 100, .stop_iteration = 200}};
  a.job_demand_max = 4;
  a.app_demand_max = 8;
  a.cluster_gpus = 32;
  a.n_avg = 2;
  return a;
}

TEST(CurveStopping, LastJobSetsTheFinish) {
  const CurveStoppingApp a = app();
  // Work left: 600 and 100 GPU-s. Two GPUs: one each → 600. Four GPUs: 3 + 1 → 200.
  EXPECT_DOUBLE_EQ(shared_finish_time(a, 2, 1.0), 50 + 600);
  EXPECT_DOUBLE_EQ(shared_finish_time(a, 4, 1.0), 50 + 200);
  EXPECT_DOUBLE_EQ(shared_finish_time(a, 1, 1.0), 50 + 700);  // serialized
  EXPECT_DOUBLE_EQ(cluster_finish_time(a), (800.0 + 200) / 8);
  EXPECT_DOUBLE_EQ(finish_time_fairness(a, 2, 1.0), 650 / 250.0);
}

TEST(CurveStopping, UsesTheForecast) {
  const LossCurve truth{0.5, 4.0, 1.0};
  std::vector<LossPoint> points;
  for (int t = 10; t <= 100; t += 10) points.push_back({double(t), truth.at(t)});
  const StopRule rule{.has_target = true, .target_loss = 0.52, .plateau_delta = 0, .max_iterations = 10000,
                      .fit_tolerance = 0};
  CurveStoppingApp a = app();
  a.jobs = {{.serial_iter_time = 1, .iterations_done = 100, .stop_iteration = forecast_stop_iteration(points, rule)}};
  EXPECT_NEAR(a.jobs[0].stop_iteration, 200, 3);  // 0.5 + 4/t <= 0.52 at t = 200
  EXPECT_NEAR(shared_finish_time(a, 1, 1.0), 50 + 100, 3);
}

TEST(CurveStopping, InvalidInputsNameTheField) {
  CurveStoppingApp a = app();
  a.jobs[1].stop_iteration = 50;
  try {
    validate(a);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("jobs[1].stop_iteration"), std::string::npos) << e.what();
  }
  a = app();
  a.jobs.clear();
  EXPECT_THROW(validate(a), std::invalid_argument);
}

}  // namespace
}  // namespace themis::bidder
