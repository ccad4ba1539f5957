// Failed attempts and admission control: the coordinator's side of docs/reliability.md. The decisions
// themselves are pure (failure_class.h, retry_policy.h, admission.h); this file reads and writes the store.
#include <spdlog/spdlog.h>

#include <csignal>

#include "coordinator/admission_feasibility.h"
#include "coordinator/coordinator.h"
#include "coordinator/store/event_kinds.h"

namespace themis::coordinator {

namespace {
const char* decision_name(bool launcher, bool retry) { return launcher ? "launcher" : retry ? "retry" : "failed"; }

// Where the last admission plan left off, in a TEMP table of the coordinator's connection: it rolls back
// with the transaction that wrote it, and readers of the database never see it. It covers the apps up
// to last_app; apps submitted since are the arrivals the next plan decides, after the queue
// (plan_admission_after). TEMP triggers mark it stale whenever an input of the plan changes for an app
// it covers: a queued app leaves the queue or changes, an admitted app ends or its demand changes (a job
// ends), a host or GPU comes or goes. A stale memo means a full re-plan, as every plan was before.
constexpr const char* kWatchAdmissionInputs = R"sql(
CREATE TEMP TABLE admission_memo (
  one          INTEGER PRIMARY KEY CHECK (one = 1),
  valid        INTEGER NOT NULL,
  last_app     INTEGER NOT NULL,
  cluster_gpus INTEGER NOT NULL,
  demand_gpus  INTEGER NOT NULL,
  blocked      INTEGER NOT NULL
);
INSERT INTO admission_memo VALUES (1, 0, 0, 0, 0, 0);
CREATE TEMP TRIGGER admission_memo_app_inserted AFTER INSERT ON apps
WHEN new.id <= (SELECT last_app FROM admission_memo) BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_app_deleted AFTER DELETE ON apps
WHEN old.id <= (SELECT last_app FROM admission_memo) BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_app_updated AFTER UPDATE OF id, state, admission, gpus_per_job, max_concurrent_jobs ON apps
WHEN min(old.id, new.id) <= (SELECT last_app FROM admission_memo)
 AND (old.id IS NOT new.id OR old.admission IS NOT new.admission OR old.gpus_per_job IS NOT new.gpus_per_job
      OR old.max_concurrent_jobs IS NOT new.max_concurrent_jobs
      OR (old.state IN ('PENDING','RUNNING')) IS NOT (new.state IN ('PENDING','RUNNING'))
      OR (old.admission IS NOT NULL AND old.state IS NOT new.state))
BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_job_inserted AFTER INSERT ON jobs
WHEN new.app_id <= (SELECT last_app FROM admission_memo) BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_job_deleted AFTER DELETE ON jobs
WHEN old.app_id <= (SELECT last_app FROM admission_memo) BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_job_updated AFTER UPDATE OF app_id, state ON jobs
WHEN min(old.app_id, new.app_id) <= (SELECT last_app FROM admission_memo)
 AND (old.app_id IS NOT new.app_id
      OR (old.state IN ('COMPLETED','FAILED','CANCELLED')) IS NOT (new.state IN ('COMPLETED','FAILED','CANCELLED')))
BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_host_inserted AFTER INSERT ON hosts BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_host_deleted AFTER DELETE ON hosts BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_host_updated AFTER UPDATE OF id, state ON hosts
WHEN old.id IS NOT new.id OR old.state IS NOT new.state BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_gpu_inserted AFTER INSERT ON gpus BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_gpu_deleted AFTER DELETE ON gpus BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_gpu_updated AFTER UPDATE OF gpu, host_id ON gpus
WHEN old.gpu IS NOT new.gpu OR old.host_id IS NOT new.host_id BEGIN UPDATE admission_memo SET valid = 0; END;
)sql";

// Created on first use inside the caller's transaction, so created again if that transaction rolls back.
void watch_admission_inputs(store::Database& db) {
  auto exists = db.prepare("SELECT count(*) FROM sqlite_temp_master WHERE type = 'table' AND name = 'admission_memo'");
  exists.step();
  if (exists.int64(0) == 0) db.exec(kWatchAdmissionInputs);
}

// An app's demand: gpus_per_job x min(max_concurrent_jobs, jobs not ended).
constexpr const char* kAppDemand =
    "a.gpus_per_job * min(a.max_concurrent_jobs, "
    "(SELECT count(*) FROM jobs j WHERE j.app_id = a.id AND j.state NOT IN ('COMPLETED','FAILED','CANCELLED')))";
}  // namespace

Classification Coordinator::classify_rank_exit(std::int64_t app, std::int64_t job, int exit_code, int signal,
                                               const std::string& log_tail, double now) {
  auto st = db_.prepare("SELECT state_since FROM jobs WHERE app_id = ? AND job = ?");
  st.bind_all(app, job);
  ExitObservation exit;
  exit.exit_code = exit_code;
  exit.signal = signal;
  exit.log_tail = log_tail;
  exit.seconds_running = st.step() ? now - st.real(0) : 0;
  return classify_exit(exit);
}

std::string Coordinator::decide_failed_attempt(std::int64_t app, std::int64_t job, std::int64_t attempt,
                                               const Classification& failure, std::optional<int> exit_code,
                                               std::optional<int> signal, double now) {
  auto count = db_.prepare("SELECT count(*) FROM job_failures WHERE app_id = ? AND job = ? AND class = ? AND attempt < ?");
  count.bind_all(app, job, std::string(to_string(failure.failure_class)), attempt);
  count.step();
  const int earlier = static_cast<int>(count.int64(0));
  const bool launcher = has_launcher(app);
  const auto decision = decide_retry(config_.retry, failure.failure_class, earlier, now);
  const std::string summary = launcher ? "the app's launcher decides" : decision.summary;
  const std::string class_name(to_string(failure.failure_class));
  // One row per failed attempt: a later rank of the same attempt may replace it with a better cause.
  db_.prepare("DELETE FROM job_failures WHERE app_id = ? AND job = ? AND attempt = ?").bind_all(app, job, attempt).run();
  auto insert = db_.prepare(
      "INSERT INTO job_failures(app_id, job, attempt, ts, class, exit_code, exit_signal, reason, decision, retry_at, summary) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  insert.bind_all(app, job, attempt, now, class_name).bind(6, exit_code).bind(7, signal).bind(8, failure.reason);
  insert.bind(9, decision_name(launcher, decision.retry));
  if (decision.retry && !launcher) insert.bind(10, decision.not_before);
  else insert.bind_null(10);
  insert.bind(11, summary).run();
  const bool retry = decision.retry && !launcher;
  db_.prepare("UPDATE jobs SET failure = ?, retry_at = ? WHERE app_id = ? AND job = ?")
      .bind(1, class_name + ": " + failure.reason)
      .bind(2, retry ? std::optional<double>(decision.not_before) : std::nullopt)
      .bind(3, app)
      .bind(4, job)
      .run();
  // Events are visible to every user; the reason quotes the logs, so it stays in job_failures.
  event(now, "FailureClassified", app, job, "", std::nullopt, "attempt " + std::to_string(attempt) + ": " + class_name + "; " + summary);
  spdlog::info("job {}_{} attempt {}: {} ({}); {}", app, job, attempt, class_name, failure.reason, summary);
  return retry ? "Backoff" : "RankFailed";
}

std::string Coordinator::record_failed_exit(std::int64_t app, std::int64_t job, std::int64_t attempt, int exit_code,
                                            int signal, const std::string& log_tail, double now) {
  return decide_failed_attempt(app, job, attempt, classify_rank_exit(app, job, exit_code, signal, log_tail, now),
                               exit_code, signal, now);
}

void Coordinator::refine_failed_exit(std::int64_t app, std::int64_t job, std::int64_t attempt, int exit_code, int signal,
                                     const std::string& log_tail, double now) {
  auto current = db_.prepare("SELECT class FROM job_failures WHERE app_id = ? AND job = ? AND attempt = ?");
  current.bind_all(app, job, attempt);
  if (!current.step()) return;
  // The job is stopping: SIGTERM/SIGKILL came from our Stop, and a rank without its peer fails in
  // whatever way; only a rank that ran out of memory or hit a user error names a better root cause.
  if (signal == SIGTERM || signal == SIGKILL) return;
  const auto known = failure_class_from_string(current.text(0));
  const auto candidate = classify_rank_exit(app, job, exit_code, signal, log_tail, now);
  if (candidate.failure_class != FailureClass::kOutOfMemory && candidate.failure_class != FailureClass::kUserError) return;
  if (known && !more_specific(candidate.failure_class, *known)) return;
  const std::string stop_reason = decide_failed_attempt(app, job, attempt, candidate, exit_code, signal, now);
  // Still STOPPING: its end state follows the reason (Backoff: PENDING again; RankFailed: FAILED).
  db_.prepare("UPDATE jobs SET reason = ? WHERE app_id = ? AND job = ? AND state = 'STOPPING'")
      .bind_all(stop_reason, app, job)
      .run();
}

void Coordinator::after_node_loss(std::int64_t app, std::int64_t job, std::int64_t attempt, const std::string& what,
                                  double now) {
  const std::string stop_reason = decide_failed_attempt(app, job, attempt, classify_node_loss(what), std::nullopt,
                                                        std::nullopt, now);
  if (has_launcher(app)) return;
  // stop_job left it PENDING (nothing to wait for on a lost host); a job out of retries fails instead.
  if (stop_reason == "Backoff") {
    db_.prepare("UPDATE jobs SET reason = 'Backoff' WHERE app_id = ? AND job = ? AND state = 'PENDING'").bind_all(app, job).run();
  } else {
    if (states_.job_state(app, job) == JobState::kPending) {
      states_.move_job(app, job, JobEvent::kFailed, reason_code(FailureClass::kNodeFailure), now);
    }
    event(now, store::job_end_event("FAILED"), app, job, "", std::nullopt, std::string(reason_code(FailureClass::kNodeFailure)));
  }
}

void Coordinator::record_preemption(std::int64_t app, std::int64_t job, std::int64_t attempt, double now) {
  db_.prepare("INSERT INTO job_failures(app_id, job, attempt, ts, class, reason, decision, summary) "
              "VALUES (?,?,?,?, 'preemption', 'stopped by the scheduler', 'resume', 'resumes from its checkpoint')")
      .bind_all(app, job, attempt, now)
      .run();
}

std::string Coordinator::failed_reason(std::int64_t app, std::int64_t job, std::int64_t attempt) {
  auto st = db_.prepare("SELECT class FROM job_failures WHERE app_id = ? AND job = ? AND attempt = ?");
  st.bind_all(app, job, attempt);
  if (!st.step()) return "RankFailed";
  const auto c = failure_class_from_string(st.text(0));
  return c ? std::string(reason_code(*c)) : "RankFailed";
}

void Coordinator::release_backoffs(double now) {
  auto due = db_.prepare("SELECT count(*) FROM jobs WHERE retry_at IS NOT NULL AND retry_at <= ?");
  due.bind(1, now);
  due.step();
  if (due.int64(0) == 0) return;
  store::Database::Transaction tx(db_);
  auto jobs = db_.prepare("SELECT app_id, job FROM jobs WHERE retry_at IS NOT NULL AND retry_at <= ? AND state = 'PENDING'");
  jobs.bind(1, now);
  std::vector<std::pair<std::int64_t, std::int64_t>> ready;
  while (jobs.step()) ready.emplace_back(jobs.int64(0), jobs.int64(1));
  for (const auto& [app, job] : ready) event(now, "BackoffOver", app, job, "", std::nullopt, "ready to run again");
  db_.prepare("UPDATE jobs SET reason = CASE WHEN state = 'PENDING' THEN 'Retry' ELSE reason END, retry_at = NULL "
              "WHERE retry_at IS NOT NULL AND retry_at <= ?")
      .bind(1, now)
      .run();
  tx.commit();
  if (!ready.empty()) trigger("retry back-off over");
}

void Coordinator::admit_apps(double now) {
  watch_admission_inputs(db_);
  judge_feasibility(now);  // infeasible apps leave the queue: they neither wait in it nor block it
  std::map<std::int64_t, std::string> before;  // app -> its admission before this plan
  auto apply = [&](const AdmissionPlan& plan) {
    for (const auto app : plan.admit) {
      db_.prepare("UPDATE apps SET admission = NULL WHERE id = ?").bind(1, app).run();
      if (before[app] != kAdmissionUndecided) event(now, "Admitted", app, std::nullopt, "", std::nullopt, "was " + before[app]);
    }
    for (const auto& w : plan.wait) {
      if (before[w.app] == w.reason) continue;
      db_.prepare("UPDATE apps SET admission = ? WHERE id = ?").bind_all(w.reason, w.app).run();
      if (before[w.app] == kAdmissionUndecided) event(now, "Queued", w.app, std::nullopt, "", std::nullopt, w.reason);
    }
  };
  auto remember = [&](std::int64_t last_app, std::int64_t cluster_gpus, const AdmissionProgress& after) {
    db_.prepare("UPDATE admission_memo SET valid = 1, last_app = ?, cluster_gpus = ?, demand_gpus = ?, blocked = ?")
        .bind_all(last_app, cluster_gpus, after.demand_gpus, static_cast<std::int64_t>(after.blocked ? 1 : 0))
        .run();
  };

  // Arrivals since the last plan, behind a queue that nothing has changed since: only they are decided.
  struct Memo {
    bool valid;
    std::int64_t last_app, cluster_gpus;
    AdmissionProgress after;
  };
  const Memo memo = [&] {
    auto st = db_.prepare("SELECT valid, last_app, cluster_gpus, demand_gpus, blocked FROM admission_memo");
    st.step();
    return Memo{st.int64(0) == 1, st.int64(1), st.int64(2), {st.int64(3), st.int64(4) != 0}};
  }();
  if (memo.valid) {
    const std::int64_t covered = memo.last_app;
    auto arrived = db_.prepare(std::string("SELECT a.id, a.state, a.admission, ") + kAppDemand +
                               " FROM apps a WHERE a.id > ? ORDER BY a.id");
    arrived.bind(1, covered);
    std::vector<QueuedApp> arrivals;
    std::int64_t last_app = covered;
    bool admitted_elsewhere = false;  // an arrival already counted as admitted: the queue's demand changed
    while (arrived.step()) {
      const std::int64_t app = arrived.int64(0);
      const std::string state = arrived.text(1);
      last_app = app;
      if (state == "PENDING" && !arrived.is_null(2) && !is_infeasible_reason(arrived.text(2))) {
        arrivals.push_back({app, arrived.int64(3)});
        before[app] = arrived.text(2);
      } else if ((state == "PENDING" || state == "RUNNING") && arrived.is_null(2) && arrived.int64(3) > 0) {
        admitted_elsewhere = true;
      }
    }
    if (!admitted_elsewhere) {
      const auto plan = plan_admission_after(config_.admission, memo.cluster_gpus, memo.after, arrivals);
      apply(plan);
      remember(last_app, memo.cluster_gpus, plan.after);
      return;
    }
    before.clear();
  }

  // The whole queue, after the demand of the admitted apps still active.
  auto queued = db_.prepare(std::string("SELECT a.id, a.admission, ") + kAppDemand +
                            " FROM apps a WHERE a.state = 'PENDING' AND a.admission IS NOT NULL "
                            "AND substr(a.admission, 1, length(?1)) IS NOT ?1 ORDER BY a.id");
  queued.bind(1, std::string(kInfeasiblePrefix));
  AdmissionInput input;
  while (queued.step()) {
    input.queue.push_back({queued.int64(0), queued.int64(2)});
    before[queued.int64(0)] = queued.text(1);
  }
  auto gpus = db_.prepare("SELECT count(*) FROM gpus g JOIN hosts h ON h.id = g.host_id WHERE h.state = 'up'");
  gpus.step();
  input.cluster_gpus = gpus.int64(0);
  auto admitted = db_.prepare(std::string("SELECT coalesce(sum(") + kAppDemand +
                              "), 0) FROM apps a WHERE a.state IN ('PENDING','RUNNING') AND a.admission IS NULL");
  admitted.step();
  input.admitted_demand_gpus = admitted.int64(0);
  auto newest = db_.prepare("SELECT coalesce(max(id), 0) FROM apps");
  newest.step();
  const auto plan = plan_admission(config_.admission, input);
  apply(plan);
  remember(newest.int64(0), input.cluster_gpus, plan.after);
}

}  // namespace themis::coordinator
