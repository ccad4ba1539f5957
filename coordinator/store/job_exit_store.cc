#include "coordinator/store/job_exit_store.h"

namespace themis::store {

std::optional<JobExitStore::Attempt> JobExitStore::current_attempt(std::int64_t app, std::int64_t job) {
  auto st = db_.prepare("SELECT state, attempt FROM jobs WHERE app_id = ? AND job = ?");
  st.bind_all(app, job);
  if (!st.step()) return std::nullopt;
  return Attempt{st.text(0), st.int64(1)};
}

std::int64_t JobExitStore::attempt(std::int64_t app, std::int64_t job) {
  auto st = db_.prepare("SELECT attempt FROM jobs WHERE app_id = ? AND job = ?");
  st.bind_all(app, job);
  return st.step() ? st.int64(0) : 0;
}

bool JobExitStore::is_stopping(std::int64_t app, std::int64_t job, std::int64_t attempt) {
  auto st = db_.prepare("SELECT count(*) FROM jobs WHERE app_id = ? AND job = ? AND attempt = ? AND state = 'STOPPING'");
  st.bind_all(app, job, attempt);
  st.step();
  return st.int64(0) > 0;
}

std::optional<std::string> JobExitStore::reason(std::int64_t app, std::int64_t job) {
  auto st = db_.prepare("SELECT reason FROM jobs WHERE app_id = ? AND job = ?");
  st.bind_all(app, job);
  if (!st.step()) return std::nullopt;
  return st.text(0);
}

std::optional<JobExitStore::ExitTally> JobExitStore::exit_tally(std::int64_t app, std::int64_t job) {
  auto st = db_.prepare("SELECT state, attempt, reason, exited_ranks, json_array_length(placement) FROM jobs "
                        "WHERE app_id = ? AND job = ?");
  st.bind_all(app, job);
  if (!st.step()) return std::nullopt;
  return ExitTally{st.text(0), st.int64(1), st.text(2), st.int64(3), st.int64(4)};
}

void JobExitStore::record_rank_exit(std::int64_t app, std::int64_t job, std::int64_t exited_ranks, std::int64_t exit_code,
                                    std::int64_t signal, bool success, const std::string& log_tail) {
  db_.prepare("UPDATE jobs SET exited_ranks = ?, exit_code = coalesce(exit_code, ?), exit_signal = coalesce(exit_signal, ?), "
              "log_tail = CASE WHEN ? THEN coalesce(log_tail, ?) ELSE ? END WHERE app_id = ? AND job = ?")
      .bind_all(exited_ranks, exit_code, signal, static_cast<std::int64_t>(success ? 1 : 0), log_tail, log_tail, app, job)
      .run();
}

void JobExitStore::set_failed_exit(std::int64_t app, std::int64_t job, std::int64_t exit_code, std::int64_t signal,
                                   const std::string& log_tail) {
  db_.prepare("UPDATE jobs SET exit_code = ?, exit_signal = ?, log_tail = ? WHERE app_id = ? AND job = ?")
      .bind_all(exit_code, signal, log_tail, app, job)
      .run();
}

std::optional<JobExitStore::StopTarget> JobExitStore::stop_target(std::int64_t app, std::int64_t job) {
  auto st = db_.prepare("SELECT j.attempt, j.state, a.grace_ms FROM jobs j JOIN apps a ON a.id = j.app_id "
                        "WHERE j.app_id = ? AND j.job = ?");
  st.bind_all(app, job);
  if (!st.step()) return std::nullopt;
  return StopTarget{st.int64(0), st.text(1), st.int64(2)};
}

JobExitStore::StopState JobExitStore::stop_state(std::int64_t app, std::int64_t job) {
  auto st = db_.prepare("SELECT state, reason, attempt FROM jobs WHERE app_id = ? AND job = ?");
  st.bind_all(app, job);
  if (!st.step()) return {};
  return StopState{st.text(0), st.text(1), st.int64(2)};
}

void JobExitStore::hold_retry_until(std::int64_t app, std::int64_t job, double until) {
  db_.prepare("UPDATE jobs SET retry_at = max(coalesce(retry_at, 0), ?) WHERE app_id = ? AND job = ? AND state = 'PENDING'")
      .bind_all(until, app, job)
      .run();
}

}  // namespace themis::store
