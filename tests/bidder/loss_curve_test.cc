#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "bidder/loss_curve.h"
#include "core/rng.h"

namespace themis::bidder {
namespace {

std::vector<LossPoint> sample(const LossCurve& truth, int upto, double noise = 0, std::uint64_t seed = 1) {
  Rng rng(seed);
  std::vector<LossPoint> points;
  for (int t = 10; t <= upto; t += 10) points.push_back({double(t), truth.at(t) + noise * (rng.uniform() - 0.5)});
  return points;
}

TEST(LossCurve, RecoversAnExactCurve) {
  const LossCurve truth{0.5, 4.0, 0.7};
  const std::vector<LossCurve> fits = plausible_curves(sample(truth, 300), 0.0);
  ASSERT_FALSE(fits.empty());
  EXPECT_NEAR(fits.front().c, 0.7, 0.006);
  EXPECT_NEAR(fits.front().a, 0.5, 0.01);
}

TEST(LossCurve, TargetStop) {
  const LossCurve curve{0.5, 4.0, 1.0};
  StopRule rule{.has_target = true, .target_loss = 0.6, .plateau_delta = 0, .max_iterations = 1000};
  EXPECT_DOUBLE_EQ(stop_iteration(curve, rule, 0), 40);  // 0.5 + 4/t <= 0.6 at t = 40
  rule.target_loss = 0.4;  // below the asymptote: never reached
  EXPECT_DOUBLE_EQ(stop_iteration(curve, rule, 0), 1000);
  rule.target_loss = 0.6;
  EXPECT_DOUBLE_EQ(stop_iteration(curve, rule, 70), 70);  // already there
}

TEST(LossCurve, PlateauStop) {
  const LossCurve curve{0.5, 4.0, 1.0};
  const StopRule rule{.has_target = false, .target_loss = 0, .plateau_delta = 0.0001, .max_iterations = 1000};
  EXPECT_DOUBLE_EQ(stop_iteration(curve, rule, 0), 200);  // 4/t^2 < 1e-4 at t = 200
}

TEST(LossCurve, ForecastIsTheLatestStopOverThePlausibleBand) {
  const LossCurve truth{0.3, 3.0, 0.8};
  StopRule rule{.has_target = true, .target_loss = 0.35, .plateau_delta = 0, .max_iterations = 100000,
                .fit_tolerance = 0};
  const double exact = stop_iteration(truth, rule, 0);
  ASSERT_DOUBLE_EQ(exact, 167);  // (3 / 0.05)^(1/0.8) = 166.7
  const auto points = sample(truth, 60, 0.004, 3);
  const double best_only = forecast_stop_iteration(points, rule);
  rule.fit_tolerance = 0.5;
  const std::vector<LossCurve> band = plausible_curves(points, rule.fit_tolerance);
  ASSERT_GT(band.size(), 1u);
  const double widened = forecast_stop_iteration(points, rule);
  EXPECT_GE(widened, best_only);
  for (const LossCurve& c : band) EXPECT_LE(stop_iteration(c, rule, 60), widened);
  EXPECT_NEAR(best_only, exact, 0.15 * exact);
}

TEST(LossCurve, TooFewPointsForecastsTheLimit) {
  const StopRule rule{.has_target = true, .target_loss = 0.1, .plateau_delta = 0, .max_iterations = 500};
  const std::vector<LossPoint> two = {{1, 2.0}, {2, 1.5}};
  EXPECT_DOUBLE_EQ(forecast_stop_iteration(two, rule), 500);
}

TEST(LossCurve, InvalidInputs) {
  const std::vector<LossPoint> bad = {{0, 1}, {1, 1}, {2, 1}};
  EXPECT_THROW(plausible_curves(bad, 0.1), std::invalid_argument);
  const std::vector<LossPoint> nan = {{1, NAN}, {2, 1}, {3, 1}};
  EXPECT_THROW(plausible_curves(nan, 0.1), std::invalid_argument);
  EXPECT_THROW(stop_iteration({0, 1, 1}, StopRule{}, 0), std::invalid_argument);  // max_iterations 0
}

}  // namespace
}  // namespace themis::bidder
