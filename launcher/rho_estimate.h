#pragma once
// The app's finish-time fairness ρ = T_sh / T_id from its scheduler's state and its live timings,
// through the bidder's formulas:
//   - one job (kAllJobs, 1 job): Eq. 1 (bidder/single_job.h);
//   - several independent jobs (kAllJobs): one phase of jobs packed on the GPUs (bidder/job_packing.h),
//     T_cluster = Σ_j iterations_j · serial_j / min(R_C, app demand);
//   - successive halving: Eq. 2 (bidder/successive_halving.h) with B = Σ_i J_i · I_i · t_median.
// A job is a gang of gpus_per_job GPUs, so only whole gangs count: `gpus` is rounded down to a multiple
// of gpus_per_job and capped at gpus_per_job · max_concurrent_jobs.
#include "core/ids.h"
#include "core/topology.h"
#include "launcher/hyperparameter_scheduler.h"
#include "launcher/timing_model.h"

namespace themis::launcher {

struct AppContext {
  Seconds elapsed = 0;         // now − submission, queueing included
  double n_avg = 1;            // average contention, the app included (>= 1)
  int cluster_gpus = 1;        // R_C
  int gpus_per_job = 1;        // the gang size = job_demand_max
  int max_concurrent_jobs = 0; // 0: no cap
};

// GPUs the app can use out of `gpus`: whole gangs, at most max_concurrent_jobs of them.
int usable_gpus(const AppContext& context, const HyperparameterScheduler& scheduler, int gpus);

// T_id of the app (seconds).
Seconds independent_finish_time(const HyperparameterScheduler& scheduler, const TimingModel& timing,
                                const AppContext& context);
// T_sh if the app held `gpus` GPUs spanning `placement` until it completes (+infinity if it cannot run).
Seconds shared_finish_time(const HyperparameterScheduler& scheduler, const TimingModel& timing,
                           const AppContext& context, int gpus, Locality placement);
double estimate_rho(const HyperparameterScheduler& scheduler, const TimingModel& timing, const AppContext& context,
                    int gpus, Locality placement);

}  // namespace themis::launcher
