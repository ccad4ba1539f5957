#include "launcher/rho_estimate.h"

#include <algorithm>
#include <vector>

#include "bidder/successive_halving.h"

namespace themis::launcher {
namespace {

int app_demand_max(const AppContext& context, const HyperparameterScheduler& scheduler) {
  const int jobs = scheduler.spec().jobs;
  const int concurrent = context.max_concurrent_jobs > 0 ? std::min(jobs, context.max_concurrent_jobs) : jobs;
  return context.gpus_per_job * concurrent;
}

Seconds work_left(const HyperparameterScheduler& scheduler, const TimingModel& timing, int job) {
  return std::max(0.0, scheduler.target(job) - scheduler.iterations_done(job)) * timing.serial_iter_time(job);
}

Seconds upper_median(std::vector<Seconds> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Every job runs on exactly one gang (a gang launches only whole): the phases are packed as rigid gangs
// (bidder::rigid_phase_finish_time), as themis-sim packs its rigid jobs, so a gang's placement slows it
// whatever the count. Packed elastically, jobs on fewer GPUs than jobs × gang ran one GPU each at no
// slowdown, and a bundle that spread a gang over racks was priced as one that kept it on a machine.
void set_rigid_gangs(bidder::AppState& state) {
  state.remaining_job_gpus.clear();
  for (const bidder::PhaseWork& phase : state.remaining)
    state.remaining_job_gpus.emplace_back(phase.serial_work.size(), state.gang);
}

}  // namespace

int usable_gpus(const AppContext& context, const HyperparameterScheduler& scheduler, int gpus) {
  return bidder::usable_gpus(gpus, context.gpus_per_job, app_demand_max(context, scheduler));
}

bidder::AppState app_state(const HyperparameterScheduler& scheduler, const TimingModel& timing,
                           const AppContext& context) {
  const int gang = context.gpus_per_job;
  const int demand = app_demand_max(context, scheduler);
  bidder::AppState state;
  state.elapsed = context.elapsed;
  state.independent_time = context.independent_time;
  state.start_overhead = timing.start_overhead();
  state.probe_time = context.probe_time;
  state.gang = gang;
  state.max_gpus = demand;
  state.demand_now = demand;
  state.cluster_gpus = context.cluster_gpus;
  state.n_avg = context.n_avg;
  const int jobs = scheduler.spec().jobs;
  if (scheduler.spec().kind == SchedulerKind::kSuccessiveHalving) {
    std::vector<Seconds> all;
    for (int job = 0; job < jobs; ++job) all.push_back(timing.serial_iter_time(job));
    const Seconds median_all = upper_median(all);
    for (int phase = 0; phase < scheduler.phases(); ++phase) {
      const double iterations = scheduler.spec().phase_iterations[static_cast<std::size_t>(phase)];
      state.life.push_back({.work = bidder::jobs_in_phase(jobs, phase) * iterations * median_all,
                            .demand = static_cast<double>(demand),
                            .longest = iterations * median_all / gang});
    }
    if (!scheduler.finished()) {
      bidder::PhaseWork current{{}, gang};
      std::vector<Seconds> serial;
      for (int job : scheduler.current_jobs()) {
        current.serial_work.push_back(work_left(scheduler, timing, job));
        serial.push_back(timing.serial_iter_time(job));
      }
      state.remaining.push_back(std::move(current));
      // A later phase's survivors are unknown: its jobs run at the current phase's median (Eq. 2).
      const Seconds median = upper_median(serial);
      for (int phase = scheduler.phase() + 1; phase < scheduler.phases(); ++phase) {
        const Seconds work = scheduler.spec().phase_iterations[static_cast<std::size_t>(phase)] * median;
        state.remaining.push_back(
            {std::vector<Seconds>(static_cast<std::size_t>(bidder::jobs_in_phase(jobs, phase)), work), gang});
      }
    }
    set_rigid_gangs(state);
    return state;
  }
  bidder::LifePhase life{.work = 0, .demand = static_cast<double>(demand), .longest = 0};
  bidder::PhaseWork current{{}, gang};
  for (int job = 0; job < jobs; ++job) {
    const Seconds work = scheduler.target(job) * timing.serial_iter_time(job);
    life.work += work;
    life.longest = std::max(life.longest, work / gang);
    current.serial_work.push_back(work_left(scheduler, timing, job));
  }
  state.life.push_back(life);
  if (!scheduler.finished()) state.remaining.push_back(std::move(current));
  set_rigid_gangs(state);
  return state;
}

Seconds independent_finish_time(const HyperparameterScheduler& scheduler, const TimingModel& timing,
                                const AppContext& context) {
  return bidder::AppModel(app_state(scheduler, timing, context)).independent_time();
}

Seconds shared_finish_time(const HyperparameterScheduler& scheduler, const TimingModel& timing,
                           const AppContext& context, int gpus, Locality placement) {
  const bidder::AppModel model(app_state(scheduler, timing, context));
  return context.elapsed + model.remaining_time(gpus, timing.slowdown().slowdown(placement));
}

double estimate_rho(const HyperparameterScheduler& scheduler, const TimingModel& timing, const AppContext& context,
                    int gpus, Locality placement) {
  const bidder::AppModel model(app_state(scheduler, timing, context));
  return model.rho(gpus, timing.slowdown().slowdown(placement));
}

}  // namespace themis::launcher
