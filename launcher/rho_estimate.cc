#include "launcher/rho_estimate.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "bidder/job_packing.h"
#include "bidder/single_job.h"
#include "bidder/successive_halving.h"

namespace themis::launcher {
namespace {

int app_demand_max(const AppContext& context, const HyperparameterScheduler& scheduler) {
  const int jobs = scheduler.spec().jobs;
  const int concurrent = context.max_concurrent_jobs > 0 ? std::min(jobs, context.max_concurrent_jobs) : jobs;
  return context.gpus_per_job * concurrent;
}

bool single_job(const HyperparameterScheduler& scheduler) {
  return scheduler.spec().kind == SchedulerKind::kAllJobs && scheduler.spec().jobs == 1;
}

bidder::SingleJobApp single_job_app(const HyperparameterScheduler& scheduler, const TimingModel& timing,
                                    const AppContext& context) {
  const double total = scheduler.target(0);
  return {.elapsed = context.elapsed,
          .iter_total = total,
          .iter_left = std::max(0.0, total - scheduler.iterations_done(0)),
          .serial_iter_time = timing.serial_iter_time(0),
          .demand_max = context.gpus_per_job,
          .cluster_gpus = context.cluster_gpus,
          .n_avg = context.n_avg};
}

bidder::SuccessiveHalvingApp halving_app(const HyperparameterScheduler& scheduler, const TimingModel& timing,
                                         const AppContext& context) {
  bidder::SuccessiveHalvingApp app;
  app.elapsed = context.elapsed;
  app.initial_jobs = scheduler.spec().jobs;
  app.phase_iterations = scheduler.spec().phase_iterations;
  app.current_phase = scheduler.phase();
  for (int job : scheduler.current_jobs()) {
    app.current_jobs.push_back({timing.serial_iter_time(job),
                                std::max(0.0, scheduler.target(job) - scheduler.iterations_done(job))});
  }
  std::vector<Seconds> serial;
  for (int job = 0; job < scheduler.spec().jobs; ++job) serial.push_back(timing.serial_iter_time(job));
  std::sort(serial.begin(), serial.end());
  const Seconds median = serial[serial.size() / 2];
  Seconds budget = 0;
  for (int phase = 0; phase < scheduler.phases(); ++phase) {
    budget += bidder::jobs_in_phase(app.initial_jobs, phase) *
              scheduler.spec().phase_iterations[static_cast<std::size_t>(phase)] * median;
  }
  app.job_demand_max = context.gpus_per_job;
  app.app_demand_max = app_demand_max(context, scheduler);
  app.budget = budget;
  app.cluster_gpus = context.cluster_gpus;
  app.n_avg = context.n_avg;
  return app;
}

}  // namespace

int usable_gpus(const AppContext& context, const HyperparameterScheduler& scheduler, int gpus) {
  const int gangs = std::max(0, gpus) / context.gpus_per_job;
  return std::min(gangs * context.gpus_per_job, app_demand_max(context, scheduler));
}

Seconds independent_finish_time(const HyperparameterScheduler& scheduler, const TimingModel& timing,
                                const AppContext& context) {
  if (single_job(scheduler)) return bidder::independent_finish_time(single_job_app(scheduler, timing, context));
  if (scheduler.spec().kind == SchedulerKind::kSuccessiveHalving) {
    return bidder::independent_finish_time(halving_app(scheduler, timing, context));
  }
  Seconds work = 0;
  for (int job = 0; job < scheduler.spec().jobs; ++job) work += scheduler.target(job) * timing.serial_iter_time(job);
  return work / std::min(context.cluster_gpus, app_demand_max(context, scheduler)) * context.n_avg;
}

Seconds shared_finish_time(const HyperparameterScheduler& scheduler, const TimingModel& timing,
                           const AppContext& context, int gpus, Locality placement) {
  const int usable = usable_gpus(context, scheduler, gpus);
  const double slowdown = timing.slowdown().slowdown(placement);
  if (scheduler.finished()) return context.elapsed;
  if (usable == 0) return std::numeric_limits<double>::infinity();
  if (single_job(scheduler)) {
    return bidder::shared_finish_time(single_job_app(scheduler, timing, context), usable, slowdown);
  }
  if (scheduler.spec().kind == SchedulerKind::kSuccessiveHalving) {
    return bidder::shared_finish_time(halving_app(scheduler, timing, context), usable, slowdown);
  }
  std::vector<Seconds> work;
  for (int job = 0; job < scheduler.spec().jobs; ++job) {
    work.push_back(std::max(0.0, scheduler.target(job) - scheduler.iterations_done(job)) * timing.serial_iter_time(job));
  }
  return context.elapsed + bidder::phase_finish_time(work, usable, context.gpus_per_job, slowdown);
}

double estimate_rho(const HyperparameterScheduler& scheduler, const TimingModel& timing, const AppContext& context,
                    int gpus, Locality placement) {
  return shared_finish_time(scheduler, timing, context, gpus, placement) /
         independent_finish_time(scheduler, timing, context);
}

}  // namespace themis::launcher
