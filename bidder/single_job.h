#pragma once
// Finish-time fairness of a single-job app, Themis Eq. 1:
//
//   ρ(G)      = T_sh(G) / T_id
//   T_sh(G)   = elapsed + iter_left · serial_iter_time · S(G) / min(|G|, demand_max)
//   T_id      = T_cluster · N_avg
//   T_cluster = iter_total · serial_iter_time / min(R_C, demand_max)
//
// The allocation G is assumed to hold until the job completes; speedup is linear up to demand_max.
#include "core/ids.h"

namespace themis::bidder {

struct SingleJobApp {
  Seconds elapsed = 0;           // T_current − T_start, queueing included; >= 0
  double iter_total = 0;         // iterations of the whole job; > 0
  double iter_left = 0;          // iterations still to run; 0 <= iter_left <= iter_total
  Seconds serial_iter_time = 0;  // one iteration on one GPU, no slowdown; > 0
  int demand_max = 0;            // most GPUs the job can use; >= 1
  int cluster_gpus = 0;          // R_C; >= 1
  double n_avg = 0;              // average contention N_avg (see contention.h); >= 1
};

// Throws std::invalid_argument naming the first bad field.
void validate(const SingleJobApp& app);

// T_cluster: the job alone on min(R_C, demand_max) GPUs with no slowdown.
Seconds cluster_finish_time(const SingleJobApp& app);
// T_id = T_cluster · N_avg.
Seconds independent_finish_time(const SingleJobApp& app);
// T_sh with `gpus` GPUs (in all) at slowdown `slowdown` (>= 1). With 0 GPUs and work left the job
// never finishes: +infinity. A finished job (iter_left = 0) is at `elapsed` whatever it holds.
Seconds shared_finish_time(const SingleJobApp& app, int gpus, double slowdown);
// ρ = T_sh / T_id.
double finish_time_fairness(const SingleJobApp& app, int gpus, double slowdown);

// ρ if the app waits `wait` seconds (e.g. one lease) with nothing new and then runs on `gpus` GPUs at
// `slowdown`: a finite value for "no new GPUs this round" (architecture.md §3) that still grows with
// every round the app waits.
double finish_time_fairness_after_wait(const SingleJobApp& app, Seconds wait, int gpus, double slowdown);

}  // namespace themis::bidder
