#pragma once
// The one writer of jobs.state and apps.state: every move is checked against the state machines of
// coordinator/lifecycle.h in the UPDATE itself (a job that no longer stands where the move starts is left
// as it is, and the caller learns it from the return value).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "coordinator/lifecycle.h"
#include "coordinator/store/database.h"

namespace themis::store {

using coordinator::AppState;
using coordinator::JobCounts;
using coordinator::JobEvent;
using coordinator::JobState;

class StateStore {
 public:
  explicit StateStore(Database& db) : db_(db) {}

  std::optional<JobState> job_state(std::int64_t app, std::int64_t job);
  std::optional<AppState> app_state(std::int64_t app);

  // Moves one job by `event` when it stands in one of the event's sources; true when it moved. `reason`:
  // the job's new reason (nullopt keeps the stored one). `stop_reason` decides where kStopped ends.
  bool move_job(std::int64_t app, std::int64_t job, JobEvent event, std::optional<std::string_view> reason, double now,
                std::string_view stop_reason = {});
  // Moves every job of `app` that stands in `from` (one of the event's sources); returns how many moved.
  int move_jobs_of_app(std::int64_t app, JobState from, JobEvent event, std::string_view reason, double now);
  // kStarted (or kRelaunched) with its placement (JSON array of GPUs): the attempt is `attempt`, or the next
  // one when nullopt. False when the job does not stand where `event` starts.
  bool start_job(std::int64_t app, std::int64_t job, std::optional<std::int64_t> attempt, const std::string& placement_json,
                 double now, JobEvent event = JobEvent::kStarted);

  JobCounts job_counts(std::int64_t app);
  // Moves an app that has not ended to `to` (finished_at is written when `to` is final); true when it moved.
  bool move_app(std::int64_t app, AppState to, double now);

 private:
  Database& db_;
};

}  // namespace themis::store
