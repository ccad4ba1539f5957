#include "coordinator/store/state_store.h"

#include <string>

namespace themis::store {

using coordinator::next_state;
using coordinator::releases_placement;
using coordinator::sources;
using coordinator::target;
using coordinator::to_string;
using coordinator::job_state_named;
using coordinator::app_state_named;
using coordinator::is_final;

namespace {

// "state IN ('PENDING','STARTING')" for the event's source states.
std::string source_clause(JobEvent event) {
  std::string clause = "state IN (";
  bool first = true;
  for (JobState s : sources(event)) {
    clause += first ? "'" : ",'";
    clause += to_string(s);
    clause += "'";
    first = false;
  }
  return clause + ")";
}

std::string move_sql(JobEvent event, std::string_view where) {
  std::string sql = "UPDATE jobs SET state = ?1, reason = coalesce(?2, reason), state_since = ?3";
  if (releases_placement(event)) sql += ", placement = '[]', exited_ranks = 0";
  return sql + " WHERE " + std::string(where) + " AND " + source_clause(event);
}

}  // namespace

std::optional<JobState> StateStore::job_state(std::int64_t app, std::int64_t job) {
  auto st = db_.prepare("SELECT state FROM jobs WHERE app_id = ? AND job = ?");
  st.bind_all(app, job);
  if (!st.step()) return std::nullopt;
  return job_state_named(st.text(0));
}

std::optional<AppState> StateStore::app_state(std::int64_t app) {
  auto st = db_.prepare("SELECT state FROM apps WHERE id = ?");
  st.bind(1, app);
  if (!st.step()) return std::nullopt;
  return app_state_named(st.text(0));
}

bool StateStore::move_job(std::int64_t app, std::int64_t job, JobEvent event, std::optional<std::string_view> reason,
                          double now, std::string_view stop_reason) {
  auto st = db_.prepare(move_sql(event, "app_id = ?4 AND job = ?5"));
  st.bind(1, to_string(target(event, stop_reason)));
  if (reason) {
    st.bind(2, *reason);
  } else {
    st.bind_null(2);
  }
  st.bind(3, now).bind(4, app).bind(5, job);
  return st.run() > 0;
}

int StateStore::move_jobs_of_app(std::int64_t app, JobState from, JobEvent event, std::string_view reason, double now) {
  if (!next_state(from, event)) return 0;  // not a move the state machine has
  auto st = db_.prepare(move_sql(event, "app_id = ?4 AND state = ?5"));
  st.bind(1, to_string(target(event))).bind(2, reason).bind(3, now).bind(4, app).bind(5, to_string(from));
  return st.run();
}

bool StateStore::start_job(std::int64_t app, std::int64_t job, std::optional<std::int64_t> attempt,
                           const std::string& placement_json, double now, JobEvent event) {
  if (event != JobEvent::kStarted && event != JobEvent::kRelaunched) return false;
  auto st = db_.prepare("UPDATE jobs SET state = ?1, reason = '', attempt = coalesce(?2, attempt + 1), placement = ?3, "
                        "exited_ranks = 0, exit_code = NULL, exit_signal = NULL, state_since = ?4, launcher_env = (?2 IS NOT NULL) "
                        "WHERE app_id = ?5 AND job = ?6 AND " + source_clause(event));
  st.bind(1, to_string(target(event))).bind(2, attempt).bind(3, placement_json).bind(4, now);
  st.bind(5, app).bind(6, job);
  return st.run() > 0;
}

JobCounts StateStore::job_counts(std::int64_t app) {
  auto st = db_.prepare("SELECT count(*), coalesce(sum(state = 'COMPLETED'), 0), coalesce(sum(state = 'FAILED'), 0), "
                        "coalesce(sum(state = 'CANCELLED'), 0), coalesce(sum(state IN ('STARTING','RUNNING','STOPPING')), 0) "
                        "FROM jobs WHERE app_id = ?");
  st.bind(1, app);
  st.step();
  return JobCounts{st.int64(0), st.int64(1), st.int64(2), st.int64(3), st.int64(4)};
}

bool StateStore::move_app(std::int64_t app, AppState to, double now) {
  // Only an app that has not ended moves (app_may_move); "state IN ('PENDING','RUNNING')" is that rule.
  if (is_final(to)) {
    auto st = db_.prepare("UPDATE apps SET state = ?1, finished_at = ?2 WHERE id = ?3 AND state IN ('PENDING','RUNNING')");
    st.bind(1, to_string(to)).bind(2, now).bind(3, app);
    return st.run() > 0;
  }
  auto st = db_.prepare("UPDATE apps SET state = ?1 WHERE id = ?2 AND state IN ('PENDING','RUNNING') AND state <> ?1");
  st.bind(1, to_string(to)).bind(2, app);
  return st.run() > 0;
}

}  // namespace themis::store
