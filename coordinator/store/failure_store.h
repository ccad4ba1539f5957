#pragma once
// The SQL of failed attempts (coordinator/job_failures.cc, docs/reliability.md): job_failures, one row per
// failed or preempted attempt with its class and the retry decision, and the back-off of jobs.retry_at.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/store/database.h"

namespace themis::store {

// One failed attempt as job_failures stores it. `decision` is "retry", "failed" or "launcher"; retry_at is
// set only for "retry".
struct FailedAttempt {
  std::int64_t app = 0, job = 0, attempt = 0;
  double ts = 0;
  std::string failure_class;
  std::optional<int> exit_code, exit_signal;
  std::string reason, decision;
  std::optional<double> retry_at;
  std::string summary;
};

class FailureStore {
 public:
  explicit FailureStore(Database& db) : db_(db) {}

  // When the job entered its current state; nullopt for an unknown job.
  std::optional<double> job_state_since(std::int64_t app, std::int64_t job);
  // Attempts of the job before `attempt` that failed in `failure_class`.
  std::int64_t earlier_failures(std::int64_t app, std::int64_t job, const std::string& failure_class, std::int64_t attempt);
  // The class stored for an attempt; nullopt when none is.
  std::optional<std::string> attempt_class(std::int64_t app, std::int64_t job, std::int64_t attempt);
  // Stores `f` as its attempt's one row, replacing any earlier row of that attempt.
  void replace_attempt(const FailedAttempt& f);
  // An attempt the scheduler stopped: it resumes from its checkpoint.
  void record_preemption(std::int64_t app, std::int64_t job, std::int64_t attempt, double now);

  // jobs.failure ("class: reason") and jobs.retry_at (nullopt: no back-off).
  void set_job_failure(std::int64_t app, std::int64_t job, const std::string& failure, std::optional<double> retry_at);
  // The reason of a job still STOPPING (its end state follows it).
  void set_stopping_reason(std::int64_t app, std::int64_t job, const std::string& reason);
  // Marks a PENDING job as waiting out its back-off.
  void mark_pending_in_backoff(std::int64_t app, std::int64_t job);

  // Jobs whose back-off ended by `now`, whatever their state.
  std::int64_t backoffs_due(double now);
  // PENDING jobs (app, job) whose back-off ended by `now`.
  std::vector<std::pair<std::int64_t, std::int64_t>> pending_backoffs_due(double now);
  // Ends the back-offs due by `now`: PENDING jobs get reason Retry, every such job loses its retry_at.
  void release_backoffs(double now);

 private:
  Database& db_;
};

}  // namespace themis::store
