#pragma once
// Finish-time fairness of a performance-curve-stopping app (Themis §4.3.2): each running job stops at
// the iteration its loss curve forecasts (loss_curve.h); the app finishes when its last job does.
//
//   T_sh      = elapsed + finish of the remaining jobs sharing the allocation (job_packing.h)
//   T_cluster = Σ_j stop_iteration_j · serial_iter_time_j / min(R_C, app_demand_max)
//   T_id      = T_cluster · N_avg
//
// The paper gives no T_id for these apps; T_cluster here is Eq. 2's with the budget B replaced by the
// forecast total work of the jobs, so it moves with the forecast as Eq. 1's does with iter_total.
#include <vector>

#include "core/ids.h"

namespace themis::bidder {

struct CurveJob {
  Seconds serial_iter_time = 0;  // > 0
  double iterations_done = 0;    // >= 0
  double stop_iteration = 0;     // forecast (forecast_stop_iteration); >= iterations_done
};

struct CurveStoppingApp {
  Seconds elapsed = 0;          // >= 0
  std::vector<CurveJob> jobs;   // the jobs still running; at least one
  int job_demand_max = 0;       // >= 1
  int app_demand_max = 0;       // >= 1
  int cluster_gpus = 0;         // R_C; >= 1
  double n_avg = 0;             // >= 1
};

void validate(const CurveStoppingApp& app);
Seconds shared_finish_time(const CurveStoppingApp& app, int gpus, double slowdown);
Seconds cluster_finish_time(const CurveStoppingApp& app);
Seconds independent_finish_time(const CurveStoppingApp& app);
double finish_time_fairness(const CurveStoppingApp& app, int gpus, double slowdown);

}  // namespace themis::bidder
