#pragma once
// `themis-sim run --fidelity gavel`: a replay under the assumptions of Gavel's own simulator (Gavel,
// OSDI'20), so that themis-sim's figures can be checked against Gavel's on the same trace. The event-
// driven engine (sim/simulator.h) leases GPUs the instant they free up and admits an app the instant it
// arrives; Gavel's simulator instead advances in rounds and re-solves its allocation at most every
// `resolve_interval` seconds. What is reproduced (docs/simulator.md, "Gavel fidelity mode"):
//   - rounds: every scheduled job runs min(floor(throughput * round), remaining) steps from the round's
//     start; the round ends when the last of them does, and the next round starts there;
//   - a job's completion time is the end of its last micro-task (not rounded up to the round);
//   - arrivals are admitted only at round boundaries (or, with nothing running, at the next arrival);
//   - the allocation is re-solved only when something changed and `resolve_interval` has passed since
//     the last re-solve: a job that arrives, or GPUs a completion frees, wait for it;
//   - FIFO (non-preemptive, head of line blocks; a completion hands its slot to the queue's head
//     only if it fits), then per round the allocated jobs in priority order (allocation / share of
//     time received since the re-solve) as rigid gangs;
//   - consolidated throughput only: placement never slows a job;
//   - a multi-GPU job's last steps are split as steps / gpus per worker: if that is zero the micro-task
//     fails, and after `max_failed_attempts` failures in a row the job is dropped (not completed).
#include <cstdint>
#include <string>
#include <vector>

#include "core/ids.h"
#include "sim/trace.h"

namespace themis::sim {

struct GavelFidelitySettings {
  int gpus = 0;                     // one GPU type; servers do not matter (no placement slowdown)
  Seconds round = 360;              // Gavel's time_per_iteration
  Seconds resolve_interval = 1920;  // Gavel's minimum_time_between_allocation_resets
  int max_failed_attempts = 5;
};

struct GavelJobResult {
  std::size_t index = 0;  // position in the workload (arrival order), as Gavel's job id
  std::string name;
  Seconds arrival = 0;
  int gpus = 0;
  long long total_steps = 0;
  double throughput = 0;  // steps/s on all its GPUs
  bool completed = false;
  bool dropped = false;   // failed max_failed_attempts micro-tasks in a row
  Seconds finish = 0;     // end of its last successful micro-task
  Seconds jct = 0;        // finish - arrival, for completed jobs
};

struct GavelFidelityResult {
  std::vector<GavelJobResult> jobs;  // workload order
  Seconds makespan = 0;              // clock when the last job completed or was dropped
  long long rounds = 0;
  long long resolves = 0;
  // Times nothing ran, nothing was left to arrive and the allocation could not yet be re-solved;
  // Gavel's simulator has no next event there, this one waits for the re-solve.
  long long idle_waits = 0;
};

// Every app must be one rigid job (Gavel's traces convert that way). Throws std::invalid_argument
// naming the app otherwise, or when a job needs more GPUs than `settings.gpus`.
GavelFidelityResult simulate_gavel_fifo(const std::vector<AppSpec>& apps, const GavelFidelitySettings& settings);

}  // namespace themis::sim
