#pragma once
// Finish-time fairness of a successive-halving app, Themis Eq. 2 (§4.3.2):
//
//   n jobs start; phase i (1-based) runs J_i = n / 2^(i−1) jobs for I_i iterations each; the best half
//   goes on. T_sh(i) = the phase's slowest job on its share of the allocation (job_packing.h);
//
//   T_sh      = elapsed + Σ_{i >= current} T_sh(i)
//   T_cluster = B / min(R_C, app_demand_max)        (B: the app's budget in GPU-seconds)
//   T_id      = T_cluster · N_avg
//
// The current phase uses the surviving jobs' own serial iteration times and iterations left; a future
// phase does not know its survivors and uses the median job of the current phase (the upper median,
// sorted[J/2]: 100 s for {80, 100, 100, 120} and 120 s for {100, 120}, as in both printed examples).
// PhaseTimeModel::kMedianForAllPhases also takes the current phase's jobs at the median time (keeping
// their iterations left): that is the model that reproduces the paper's Table 3 (papers.md §1.8.4).
//
// The paper says "log2(n) phases" but its example runs 3 phases (4, 2, 1 jobs) for n = 4: here the
// number of phases is the length of phase_iterations, at most log2(n) + 1.
#include <vector>

#include "core/ids.h"

namespace themis::bidder {

// A job of the current phase (the paper's JobInfo without locality sensitivity: S is the app's).
struct PhaseJob {
  Seconds serial_iter_time = 0;  // > 0
  double iters_left = 0;         // iterations left in the current phase; >= 0
};

struct SuccessiveHalvingApp {
  Seconds elapsed = 0;                  // >= 0, includes the finished phases and queueing
  int initial_jobs = 0;                 // n: a power of two, >= 1
  std::vector<double> phase_iterations; // I_i for every phase from the first; each > 0
  int current_phase = 0;                // 0-based index into phase_iterations
  std::vector<PhaseJob> current_jobs;   // exactly J_current jobs (finished ones with iters_left 0)
  int job_demand_max = 0;               // >= 1
  int app_demand_max = 0;               // >= 1
  Seconds budget = 0;                   // B in GPU-seconds; > 0
  int cluster_gpus = 0;                 // R_C; >= 1
  double n_avg = 0;                     // >= 1
};

enum class PhaseTimeModel {
  kActualCurrentPhase,  // default: current phase from the survivors, later phases from the median
  kMedianForAllPhases,  // every phase at the median job (reproduces the paper's Table 3)
};

// J_i = n / 2^i for the 0-based phase i (at least 1).
int jobs_in_phase(int initial_jobs, int phase);
// Throws std::invalid_argument naming the first bad field.
void validate(const SuccessiveHalvingApp& app);

// Upper median of the current phase's serial iteration times.
Seconds median_serial_iter_time(const SuccessiveHalvingApp& app);

// T_sh(i) of every phase from the current one on (index 0 = current phase), with `gpus` GPUs at `slowdown`.
std::vector<Seconds> phase_finish_times(const SuccessiveHalvingApp& app, int gpus, double slowdown,
                                        PhaseTimeModel model = PhaseTimeModel::kActualCurrentPhase);
Seconds shared_finish_time(const SuccessiveHalvingApp& app, int gpus, double slowdown,
                           PhaseTimeModel model = PhaseTimeModel::kActualCurrentPhase);
Seconds cluster_finish_time(const SuccessiveHalvingApp& app);
Seconds independent_finish_time(const SuccessiveHalvingApp& app);
double finish_time_fairness(const SuccessiveHalvingApp& app, int gpus, double slowdown,
                            PhaseTimeModel model = PhaseTimeModel::kActualCurrentPhase);

// Iterations per phase from a budget B split evenly over `phases` phases, every job at
// `serial_iter_time`: phase i gets B / phases GPU-seconds, i.e. floor(B / (phases · J_i · t))
// iterations; the last phase takes whatever the earlier phases' rounding left, so the phases use B.
// The exact even split of the paper's example (B = 10000, n = 4, t = 100) is 8.33 / 16.67 / 33.33;
// the paper prints "≈ 8, 16, 36", which is what this rule gives (3200 + 3200 + 3600 = 10000).
std::vector<double> iterations_from_budget(Seconds budget, int initial_jobs, int phases,
                                           Seconds serial_iter_time);

}  // namespace themis::bidder
