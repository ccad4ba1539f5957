#pragma once
// How the jobs of one phase share the app's GPUs, and when the phase ends (its slowest job).
//
// - At least as many GPUs as jobs: every job gets one GPU, then each further GPU goes to the job that
//   would finish last, while it is below job_demand_max and another GPU shortens it. This greedy split
//   minimises the phase's finish time; with equal jobs it is the even split of the paper's example.
//   A job on more than one GPU runs at the placement slowdown S; a one-GPU job has no communication
//   and runs at 1.
// - Fewer GPUs than jobs: jobs run one after another, one GPU each, and are assigned to GPUs so that
//   the last GPU to finish finishes as early as possible (makespan): longest-processing-time-first,
//   then, up to kExactPackingJobs jobs, a branch and bound that is exact unless it runs out of its
//   node budget (2000 nodes), in which case the best schedule found is used. Paper §4.3.3: 2 GPUs and jobs of
//   640/800/800/960 s give 1600 s (960 + 640 on one GPU, 800 + 800 on the other).
#include <span>

#include "core/ids.h"

namespace themis::bidder {

inline constexpr int kExactPackingJobs = 16;

// `serial_work[j]`: seconds job j still needs on one GPU without slowdown (iterations · serial time);
// jobs with no work left are ignored. Returns 0 when no job has work, +infinity when gpus == 0 and
// some job has. Throws std::invalid_argument on negative work, gpus < 0, job_demand_max < 1, S < 1.
Seconds phase_finish_time(std::span<const Seconds> serial_work, int gpus, int job_demand_max,
                          double slowdown);

// Rigid gangs: job j runs only on exactly `job_gpus[j]` GPUs, taking serial_work[j] / job_gpus[j]
// seconds (× S when it spans more than one GPU). Jobs start longest first, each as soon as enough GPUs
// are free; one that does not fit lets shorter ones that fit start before it (backfill). Returns when
// the last ends: 0 when no job has work, +infinity when some job with work needs more than `gpus`.
// Throws std::invalid_argument on negative work, mismatched sizes, job_gpus < 1, gpus < 0, S < 1.
Seconds rigid_phase_finish_time(std::span<const Seconds> serial_work, std::span<const int> job_gpus, int gpus,
                                double slowdown);

// A list schedule from a running state, for an app scheduler choosing which of its jobs run now. The
// `running` gangs hold their GPUs until they end; the `queued` ones start in the given order, each as
// soon as enough GPUs are free (a later one starting past one that does not fit yet), on `free_gpus`
// GPUs besides. A queued gang pays `restart` before it runs unless it `resumes` (it was running a moment
// ago) and starts at once. Returns when the last gang ends; +infinity when a queued gang never fits.
struct RunningGang {
  Seconds time_left = 0;
  int gpus = 1;
};
struct QueuedGang {
  Seconds time = 0;
  int gpus = 1;
  Seconds restart = 0;
  bool resumes = false;
};
Seconds list_schedule_finish(std::span<const RunningGang> running, int free_gpus, std::span<const QueuedGang> queued);

}  // namespace themis::bidder
