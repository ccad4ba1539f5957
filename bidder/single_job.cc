#include "bidder/single_job.h"

#include <algorithm>
#include <limits>

#include "bidder/input_checks.h"

namespace themis::bidder {
namespace {
constexpr const char* kWhere = "single-job app";
}

void validate(const SingleJobApp& app) {
  detail::require_non_negative(kWhere, "elapsed", app.elapsed);
  detail::require_positive(kWhere, "iter_total", app.iter_total);
  detail::require_non_negative(kWhere, "iter_left", app.iter_left);
  if (app.iter_left > app.iter_total)
    detail::reject(kWhere, "iter_left", "<= iter_total (" + detail::format_number(app.iter_total) + ")",
                   app.iter_left);
  detail::require_positive(kWhere, "serial_iter_time", app.serial_iter_time);
  detail::require_at_least(kWhere, "demand_max", app.demand_max, 1);
  detail::require_at_least(kWhere, "cluster_gpus", app.cluster_gpus, 1);
  detail::require_at_least(kWhere, "n_avg", app.n_avg, 1);
}

Seconds cluster_finish_time(const SingleJobApp& app) {
  validate(app);
  return app.iter_total * app.serial_iter_time / std::min(app.cluster_gpus, app.demand_max);
}

Seconds independent_finish_time(const SingleJobApp& app) { return cluster_finish_time(app) * app.n_avg; }

Seconds shared_finish_time(const SingleJobApp& app, int gpus, double slowdown) {
  validate(app);
  detail::require_non_negative(kWhere, "gpus", gpus);
  detail::require_at_least(kWhere, "slowdown", slowdown, 1);
  if (app.iter_left == 0) return app.elapsed;
  if (gpus == 0) return std::numeric_limits<double>::infinity();
  return app.elapsed + app.iter_left * app.serial_iter_time * slowdown / std::min(gpus, app.demand_max);
}

double finish_time_fairness(const SingleJobApp& app, int gpus, double slowdown) {
  return shared_finish_time(app, gpus, slowdown) / independent_finish_time(app);
}

double finish_time_fairness_after_wait(const SingleJobApp& app, Seconds wait, int gpus, double slowdown) {
  detail::require_non_negative(kWhere, "wait", wait);
  SingleJobApp later = app;
  later.elapsed += wait;
  return finish_time_fairness(later, gpus, slowdown);
}

}  // namespace themis::bidder
