#include "bidder/loss_curve.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "bidder/input_checks.h"

namespace themis::bidder {
namespace {

constexpr const char* kWhere = "loss curve";
constexpr int kExponentSteps = 196;  // grid step 0.01 over [0.05, 2.0]

struct Fit {
  LossCurve curve;
  double squared_error = 0;
};

// Least squares of loss = a + b·x with x = t^(−c), b clamped at >= 0 (a loss curve never rises).
Fit fit_for_exponent(std::span<const LossPoint> points, double c) {
  const double n = static_cast<double>(points.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const LossPoint& p : points) {
    const double x = std::pow(p.iteration, -c);
    sx += x;
    sy += p.loss;
    sxx += x * x;
    sxy += x * p.loss;
  }
  const double var = sxx - sx * sx / n;
  double b = var > 0 ? (sxy - sx * sy / n) / var : 0;
  b = std::max(b, 0.0);
  const double a = (sy - b * sx) / n;
  Fit fit{{a, b, c}, 0};
  for (const LossPoint& p : points) {
    const double r = p.loss - fit.curve.at(p.iteration);
    fit.squared_error += r * r;
  }
  return fit;
}

}  // namespace

double LossCurve::at(double iteration) const { return a + b * std::pow(iteration, -c); }

std::vector<LossCurve> plausible_curves(std::span<const LossPoint> points, double fit_tolerance) {
  detail::require_non_negative(kWhere, "fit_tolerance", fit_tolerance);
  for (std::size_t i = 0; i < points.size(); ++i) {
    detail::require_positive(kWhere, "points[" + std::to_string(i) + "].iteration", points[i].iteration);
    if (!std::isfinite(points[i].loss))
      detail::reject(kWhere, "points[" + std::to_string(i) + "].loss", "finite", points[i].loss);
  }
  if (points.size() < 3) return {};
  std::vector<Fit> fits;
  for (int k = 0; k < kExponentSteps; ++k) {
    const double c = kMinExponent + (kMaxExponent - kMinExponent) * k / (kExponentSteps - 1);
    fits.push_back(fit_for_exponent(points, c));
  }
  std::sort(fits.begin(), fits.end(),
            [](const Fit& x, const Fit& y) { return x.squared_error < y.squared_error; });
  // The absolute slack keeps an exact fit (error 0) from admitting only itself by rounding.
  const double limit = fits.front().squared_error * (1 + fit_tolerance) + 1e-12;
  std::vector<LossCurve> plausible;
  for (const Fit& f : fits)
    if (f.squared_error <= limit) plausible.push_back(f.curve);
  return plausible;
}

double stop_iteration(const LossCurve& curve, const StopRule& rule, double now) {
  detail::require_positive(kWhere, "max_iterations", rule.max_iterations);
  detail::require_non_negative(kWhere, "plateau_delta", rule.plateau_delta);
  detail::require_non_negative(kWhere, "now", now);
  if (rule.has_target && !std::isfinite(rule.target_loss))
    detail::reject(kWhere, "target_loss", "finite", rule.target_loss);
  double stop = rule.max_iterations;
  if (rule.has_target) {
    if (curve.b == 0) {
      if (curve.a <= rule.target_loss) stop = now;
    } else if (rule.target_loss > curve.a) {
      stop = std::min(stop, std::pow(curve.b / (rule.target_loss - curve.a), 1 / curve.c));
    }
  }
  if (rule.plateau_delta > 0) {
    // |d loss / dt| = b·c·t^(−c−1) falls below plateau_delta at t = (b·c / delta)^(1/(c+1)).
    stop = std::min(stop, std::pow(curve.b * curve.c / rule.plateau_delta, 1 / (curve.c + 1)));
  }
  stop = std::ceil(stop - 1e-9);
  return std::clamp(stop, std::min(now, rule.max_iterations), rule.max_iterations);
}

double forecast_stop_iteration(std::span<const LossPoint> points, const StopRule& rule) {
  const std::vector<LossCurve> curves = plausible_curves(points, rule.fit_tolerance);
  double now = 0;
  for (const LossPoint& p : points) now = std::max(now, p.iteration);
  detail::require_positive(kWhere, "max_iterations", rule.max_iterations);
  if (curves.empty()) return rule.max_iterations;
  double latest = 0;
  for (const LossCurve& c : curves) latest = std::max(latest, stop_iteration(c, rule, now));
  return latest;
}

}  // namespace themis::bidder
