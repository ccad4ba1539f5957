#pragma once
// Forecasting when a job's training stops, from its loss curve (performance-curve stopping, Themis
// §4.3.2, after Hyperdrive and Vizier).
//
// Model: loss(t) = a + b · t^(−c) for iteration t >= 1, b >= 0, c in [kMinExponent, kMaxExponent].
// Fit: for each exponent c on a grid, a and b by linear least squares (loss against t^(−c)).
// Every grid curve whose squared error is within `fit_tolerance` of the best one is plausible; the
// forecast is the LATEST stop among the plausible curves. The paper over-estimates on purpose: it
// uses "the most optimistic convergence curve that results in the maximum forecasted completion
// time", and the band of plausible curves narrows as more of the curve is seen.
#include <span>
#include <vector>

namespace themis::bidder {

inline constexpr double kMinExponent = 0.05;
inline constexpr double kMaxExponent = 2.0;

struct LossPoint {
  double iteration = 0;  // > 0
  double loss = 0;       // finite
};

struct LossCurve {
  double a = 0;  // asymptote
  double b = 0;  // >= 0
  double c = 0;  // > 0
  double at(double iteration) const;
};

// When a job stops: the first iteration at which loss <= target_loss (if set), or at which the loss
// improves by less than plateau_delta per iteration (if > 0), and never after max_iterations.
struct StopRule {
  bool has_target = false;
  double target_loss = 0;
  double plateau_delta = 0;    // >= 0; 0 = no plateau rule
  double max_iterations = 0;   // > 0: the job's configured limit
  double fit_tolerance = 0.10; // plausible curves: squared error <= best · (1 + tolerance)
};

// All plausible curves for `points`, best fit first. Throws std::invalid_argument on a bad point.
std::vector<LossCurve> plausible_curves(std::span<const LossPoint> points, double fit_tolerance);

// Iteration at which `curve` meets `rule`, at least `now` and at most rule.max_iterations.
double stop_iteration(const LossCurve& curve, const StopRule& rule, double now);

// The forecast stop iteration: the latest over the plausible curves. With fewer than three points
// (three parameters) nothing can be fitted and the forecast is rule.max_iterations.
double forecast_stop_iteration(std::span<const LossPoint> points, const StopRule& rule);

}  // namespace themis::bidder
