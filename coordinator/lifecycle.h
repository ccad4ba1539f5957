#pragma once
// The job and app state machines of the coordinator (docs/reliability.md "Job and app states"). Pure: the
// store writes a state only through these tables (coordinator/store/state_store.h), so a state the table
// does not allow from where a job stands is never written.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace themis::coordinator {

enum class JobState { kPending, kStarting, kRunning, kStopping, kCompleted, kFailed, kCancelled };
enum class AppState { kPending, kRunning, kCompleted, kFailed, kCancelled };

// As stored in jobs.state / apps.state and shown by themisctl ("PENDING", ...).
std::string_view to_string(JobState state);
std::string_view to_string(AppState state);
std::optional<JobState> job_state_named(std::string_view name);
std::optional<AppState> app_state_named(std::string_view name);

// STARTING, RUNNING or STOPPING: the job's workers may run, and its placement's GPUs are taken.
bool is_active(JobState state);
bool is_final(JobState state);
bool is_final(AppState state);

// What moves a job.
enum class JobEvent {
  kStarted,     // GPUs were placed for it (a round, or its launcher's launch): PENDING → STARTING
  kRelaunched,  // its app's launcher runs an ended job again (the next successive-halving phase, a retry the
                // launcher decides): COMPLETED/FAILED → STARTING
  kWorkersUp,   // its host reports its workers: STARTING → RUNNING
  kStopSent,    // its workers were told to stop and their exits are awaited: STARTING/RUNNING → STOPPING
  kStopped,     // its workers are gone after a stop, or there was nothing to wait for: see end_of_stop
  kSucceeded,   // every rank exited 0: STARTING/RUNNING → COMPLETED
  kRetried,     // a failed attempt with retries left: STARTING/RUNNING → PENDING (after its back-off)
  kFailed,      // a failed attempt without retries: STARTING/RUNNING/PENDING → FAILED (PENDING: after a host loss)
  kCancelled,   // cancelled before it ran, or its app's probe failed: PENDING → CANCELLED
  kDropped,     // successive halving dropped it: PENDING/COMPLETED → COMPLETED
};

// Where a stopped job ends, by the reason it was stopped with: "Cancelled" → CANCELLED, "RankFailed" →
// FAILED, any other (Preempted, NodeFail, WorkersLost, Backoff, ...) → PENDING, to be placed again.
JobState end_of_stop(std::string_view stop_reason);

// The states `event` may move a job from.
const std::vector<JobState>& sources(JobEvent event);
// The state `event` moves a job to (`stop_reason` matters for kStopped only).
JobState target(JobEvent event, std::string_view stop_reason = {});
// The job's next state, or nullopt when `event` cannot happen in `from`.
std::optional<JobState> next_state(JobState from, JobEvent event, std::string_view stop_reason = {});
// Whether the move gives the job's GPUs up (its placement is cleared): a job that waits again, or whose
// stop ended, holds none; a job that completed or failed keeps its last placement for the record.
bool releases_placement(JobEvent event);

// An app's state follows its jobs (apps without a launcher; a launcher ends its app itself).
struct JobCounts {
  std::int64_t total = 0, completed = 0, failed = 0, cancelled = 0, active = 0;
};
// PENDING/RUNNING while a job may still run; once every job ended: CANCELLED if any was cancelled, else
// FAILED if any failed, else COMPLETED.
AppState app_state_from_jobs(const JobCounts& jobs);
// An app moves only out of PENDING or RUNNING; an ended app never changes again.
bool app_may_move(AppState from, AppState to);

}  // namespace themis::coordinator
