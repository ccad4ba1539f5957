#pragma once
// The launcher's app, described for the bidder's app model (bidder/app_model.h), which computes its ρ,
// T_id and bids: the state comes from the app's scheduler and its live timings.
//   - one job or several independent jobs (kAllJobs): one phase of the jobs' remaining work;
//   - successive halving: the current phase's jobs with their own serial times and iterations left,
//     then each later phase's J_i jobs of I_i iterations at the current phase's upper-median serial time.
// T_id is Eq. 1 / Eq. 2's T_cluster · N_avg (bidder::IndependentTime::kClusterTimesContention):
//   T_cluster = Σ_j iterations_j · serial_j / min(R_C, app demand) for kAllJobs, and
//   B / min(R_C, app demand) with B = Σ_i J_i · I_i · t_median (median over all jobs) for halving.
// A job is a gang of gpus_per_job GPUs, so only whole gangs count: `gpus` is rounded down to a multiple
// of gpus_per_job and capped at gpus_per_job · max_concurrent_jobs.
#include "bidder/app_model.h"
#include "core/ids.h"
#include "core/topology.h"
#include "launcher/hyperparameter_scheduler.h"
#include "launcher/timing_model.h"

namespace themis::launcher {

struct AppContext {
  // T_id's rule (bidder/app_model.h). The fair share is the paper's §3.2 definition and themis-sim's, so the
  // launcher's ρ and the simulator's mean the same; Eq. 1 / Eq. 2's T_cluster · N_avg reproduces the paper's
  // agent examples (docs/bidder.md, "App model").
  bidder::IndependentTime independent_time = bidder::IndependentTime::kFairShare;
  Seconds elapsed = 0;         // now − submission, queueing included
  double n_avg = 1;            // average contention, the app included (>= 1)
  int cluster_gpus = 1;        // R_C
  int gpus_per_job = 1;        // the gang size = job_demand_max
  int max_concurrent_jobs = 0; // 0: no cap
  Seconds probe_time = 0;      // bidder::AppState::probe_time: the app's probe, launch to first iteration
};

// GPUs the app can use out of `gpus`: whole gangs, at most max_concurrent_jobs of them.
int usable_gpus(const AppContext& context, const HyperparameterScheduler& scheduler, int gpus);

// The app model's state. demand_now is the app's whole demand and lease 0: the agent sets both.
bidder::AppState app_state(const HyperparameterScheduler& scheduler, const TimingModel& timing,
                           const AppContext& context);

// Shorthands over bidder::AppModel(app_state(...)):
// T_id of the app (seconds).
Seconds independent_finish_time(const HyperparameterScheduler& scheduler, const TimingModel& timing,
                                const AppContext& context);
// T_sh if the app held `gpus` GPUs spanning `placement` until it completes (+infinity if it cannot run).
Seconds shared_finish_time(const HyperparameterScheduler& scheduler, const TimingModel& timing,
                           const AppContext& context, int gpus, Locality placement);
double estimate_rho(const HyperparameterScheduler& scheduler, const TimingModel& timing, const AppContext& context,
                    int gpus, Locality placement);

}  // namespace themis::launcher
