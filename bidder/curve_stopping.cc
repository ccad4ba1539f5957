#include "bidder/curve_stopping.h"

#include <algorithm>

#include "bidder/input_checks.h"
#include "bidder/job_packing.h"

namespace themis::bidder {
namespace {
constexpr const char* kWhere = "curve-stopping app";
}

void validate(const CurveStoppingApp& app) {
  detail::require_non_negative(kWhere, "elapsed", app.elapsed);
  if (app.jobs.empty()) detail::reject(kWhere, "jobs", "non-empty", 0);
  for (std::size_t j = 0; j < app.jobs.size(); ++j) {
    const std::string field = "jobs[" + std::to_string(j) + "]";
    const CurveJob& job = app.jobs[j];
    detail::require_positive(kWhere, field + ".serial_iter_time", job.serial_iter_time);
    detail::require_non_negative(kWhere, field + ".iterations_done", job.iterations_done);
    detail::require_non_negative(kWhere, field + ".stop_iteration", job.stop_iteration);
    if (job.stop_iteration < job.iterations_done)
      detail::reject(kWhere, field + ".stop_iteration", ">= iterations_done", job.stop_iteration);
  }
  detail::require_at_least(kWhere, "job_demand_max", app.job_demand_max, 1);
  detail::require_at_least(kWhere, "app_demand_max", app.app_demand_max, 1);
  detail::require_at_least(kWhere, "cluster_gpus", app.cluster_gpus, 1);
  detail::require_at_least(kWhere, "n_avg", app.n_avg, 1);
}

Seconds shared_finish_time(const CurveStoppingApp& app, int gpus, double slowdown) {
  validate(app);
  std::vector<Seconds> work;
  for (const CurveJob& j : app.jobs) work.push_back((j.stop_iteration - j.iterations_done) * j.serial_iter_time);
  return app.elapsed + phase_finish_time(work, gpus, app.job_demand_max, slowdown);
}

Seconds cluster_finish_time(const CurveStoppingApp& app) {
  validate(app);
  Seconds work = 0;
  for (const CurveJob& j : app.jobs) work += j.stop_iteration * j.serial_iter_time;
  if (work <= 0) detail::reject(kWhere, "jobs", "forecast some work (a stop_iteration > 0)", work);
  return work / std::min(app.cluster_gpus, app.app_demand_max);
}

Seconds independent_finish_time(const CurveStoppingApp& app) { return cluster_finish_time(app) * app.n_avg; }

double finish_time_fairness(const CurveStoppingApp& app, int gpus, double slowdown) {
  return shared_finish_time(app, gpus, slowdown) / independent_finish_time(app);
}

}  // namespace themis::bidder
