#include "coordinator/store/failure_store.h"

namespace themis::store {

std::optional<double> FailureStore::job_state_since(std::int64_t app, std::int64_t job) {
  auto st = db_.prepare("SELECT state_since FROM jobs WHERE app_id = ? AND job = ?");
  st.bind_all(app, job);
  if (!st.step()) return std::nullopt;
  return st.real(0);
}

std::int64_t FailureStore::earlier_failures(std::int64_t app, std::int64_t job, const std::string& failure_class,
                                            std::int64_t attempt) {
  auto count = db_.prepare("SELECT count(*) FROM job_failures WHERE app_id = ? AND job = ? AND class = ? AND attempt < ?");
  count.bind_all(app, job, failure_class, attempt);
  count.step();
  return count.int64(0);
}

std::optional<std::string> FailureStore::attempt_class(std::int64_t app, std::int64_t job, std::int64_t attempt) {
  auto st = db_.prepare("SELECT class FROM job_failures WHERE app_id = ? AND job = ? AND attempt = ?");
  st.bind_all(app, job, attempt);
  if (!st.step()) return std::nullopt;
  return st.text(0);
}

void FailureStore::replace_attempt(const FailedAttempt& f) {
  db_.prepare("DELETE FROM job_failures WHERE app_id = ? AND job = ? AND attempt = ?").bind_all(f.app, f.job, f.attempt).run();
  auto insert = db_.prepare(
      "INSERT INTO job_failures(app_id, job, attempt, ts, class, exit_code, exit_signal, reason, decision, retry_at, summary) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  insert.bind_all(f.app, f.job, f.attempt, f.ts, f.failure_class).bind(6, f.exit_code).bind(7, f.exit_signal).bind(8, f.reason);
  insert.bind(9, f.decision).bind(10, f.retry_at).bind(11, f.summary).run();
}

void FailureStore::record_preemption(std::int64_t app, std::int64_t job, std::int64_t attempt, double now) {
  db_.prepare("INSERT INTO job_failures(app_id, job, attempt, ts, class, reason, decision, summary) "
              "VALUES (?,?,?,?, 'preemption', 'stopped by the scheduler', 'resume', 'resumes from its checkpoint')")
      .bind_all(app, job, attempt, now)
      .run();
}

void FailureStore::set_job_failure(std::int64_t app, std::int64_t job, const std::string& failure,
                                   std::optional<double> retry_at) {
  db_.prepare("UPDATE jobs SET failure = ?, retry_at = ? WHERE app_id = ? AND job = ?")
      .bind(1, failure)
      .bind(2, retry_at)
      .bind(3, app)
      .bind(4, job)
      .run();
}

void FailureStore::set_stopping_reason(std::int64_t app, std::int64_t job, const std::string& reason) {
  db_.prepare("UPDATE jobs SET reason = ? WHERE app_id = ? AND job = ? AND state = 'STOPPING'").bind_all(reason, app, job).run();
}

void FailureStore::mark_pending_in_backoff(std::int64_t app, std::int64_t job) {
  db_.prepare("UPDATE jobs SET reason = 'Backoff' WHERE app_id = ? AND job = ? AND state = 'PENDING'").bind_all(app, job).run();
}

std::int64_t FailureStore::backoffs_due(double now) {
  auto due = db_.prepare("SELECT count(*) FROM jobs WHERE retry_at IS NOT NULL AND retry_at <= ?");
  due.bind(1, now);
  due.step();
  return due.int64(0);
}

std::vector<std::pair<std::int64_t, std::int64_t>> FailureStore::pending_backoffs_due(double now) {
  auto jobs = db_.prepare("SELECT app_id, job FROM jobs WHERE retry_at IS NOT NULL AND retry_at <= ? AND state = 'PENDING'");
  jobs.bind(1, now);
  std::vector<std::pair<std::int64_t, std::int64_t>> ready;
  while (jobs.step()) ready.emplace_back(jobs.int64(0), jobs.int64(1));
  return ready;
}

void FailureStore::release_backoffs(double now) {
  db_.prepare("UPDATE jobs SET reason = CASE WHEN state = 'PENDING' THEN 'Retry' ELSE reason END, retry_at = NULL "
              "WHERE retry_at IS NOT NULL AND retry_at <= ?")
      .bind(1, now)
      .run();
}

}  // namespace themis::store
