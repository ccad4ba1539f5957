// Failed attempts and admission control: the coordinator's side of docs/reliability.md. The decisions
// themselves are pure (failure_class.h, retry_policy.h, admission.h); this file reads and writes the store.
#include <spdlog/spdlog.h>

#include <csignal>

#include "coordinator/admission_feasibility.h"
#include "coordinator/coordinator.h"
#include "coordinator/store/event_kinds.h"
#include "coordinator/store/feasibility_store.h"

namespace themis::coordinator {

namespace {
const char* decision_name(bool launcher, bool retry) { return launcher ? "launcher" : retry ? "retry" : "failed"; }
}  // namespace

Classification Coordinator::classify_rank_exit(std::int64_t app, std::int64_t job, int exit_code, int signal,
                                               const std::string& log_tail, double now) {
  const auto since = failures_.job_state_since(app, job);
  ExitObservation exit;
  exit.exit_code = exit_code;
  exit.signal = signal;
  exit.log_tail = log_tail;
  exit.seconds_running = since ? now - *since : 0;
  return classify_exit(exit);
}

std::string Coordinator::decide_failed_attempt(std::int64_t app, std::int64_t job, std::int64_t attempt,
                                               const Classification& failure, std::optional<int> exit_code,
                                               std::optional<int> signal, double now) {
  const int earlier =
      static_cast<int>(failures_.earlier_failures(app, job, std::string(to_string(failure.failure_class)), attempt));
  const bool launcher = has_launcher(app);
  const auto decision = decide_retry(config_.retry, failure.failure_class, earlier, now);
  const std::string summary = launcher ? "the app's launcher decides" : decision.summary;
  const std::string class_name(to_string(failure.failure_class));
  // One row per failed attempt: a later rank of the same attempt may replace it with a better cause.
  const bool retry = decision.retry && !launcher;
  const std::optional<double> retry_at = retry ? std::optional<double>(decision.not_before) : std::nullopt;
  failures_.replace_attempt({app, job, attempt, now, class_name, exit_code, signal, failure.reason,
                             decision_name(launcher, decision.retry), retry_at, summary});
  failures_.set_job_failure(app, job, class_name + ": " + failure.reason, retry_at);
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
  const auto current = failures_.attempt_class(app, job, attempt);
  if (!current) return;
  // The job is stopping: SIGTERM/SIGKILL came from our Stop, and a rank without its peer fails in
  // whatever way; only a rank that ran out of memory or hit a user error names a better root cause.
  if (signal == SIGTERM || signal == SIGKILL) return;
  const auto known = failure_class_from_string(*current);
  const auto candidate = classify_rank_exit(app, job, exit_code, signal, log_tail, now);
  if (candidate.failure_class != FailureClass::kOutOfMemory && candidate.failure_class != FailureClass::kUserError) return;
  if (known && !more_specific(candidate.failure_class, *known)) return;
  const std::string stop_reason = decide_failed_attempt(app, job, attempt, candidate, exit_code, signal, now);
  // Still STOPPING: its end state follows the reason (Backoff: PENDING again; RankFailed: FAILED).
  failures_.set_stopping_reason(app, job, stop_reason);
}

void Coordinator::after_node_loss(std::int64_t app, std::int64_t job, std::int64_t attempt, const std::string& what,
                                  double now) {
  const std::string stop_reason = decide_failed_attempt(app, job, attempt, classify_node_loss(what), std::nullopt,
                                                        std::nullopt, now);
  if (has_launcher(app)) return;
  // stop_job left it PENDING (nothing to wait for on a lost host); a job out of retries fails instead.
  if (stop_reason == "Backoff") {
    failures_.mark_pending_in_backoff(app, job);
  } else {
    if (states_.job_state(app, job) == JobState::kPending) {
      states_.move_job(app, job, JobEvent::kFailed, reason_code(FailureClass::kNodeFailure), now);
    }
    event(now, store::job_end_event("FAILED"), app, job, "", std::nullopt, std::string(reason_code(FailureClass::kNodeFailure)));
  }
}

void Coordinator::record_preemption(std::int64_t app, std::int64_t job, std::int64_t attempt, double now) {
  failures_.record_preemption(app, job, attempt, now);
}

std::string Coordinator::failed_reason(std::int64_t app, std::int64_t job, std::int64_t attempt) {
  const auto stored = failures_.attempt_class(app, job, attempt);
  if (!stored) return "RankFailed";
  const auto c = failure_class_from_string(*stored);
  return c ? std::string(reason_code(*c)) : "RankFailed";
}

void Coordinator::release_backoffs(double now) {
  if (failures_.backoffs_due(now) == 0) return;
  store::Database::Transaction tx(db_);
  const auto ready = failures_.pending_backoffs_due(now);
  for (const auto& [app, job] : ready) event(now, "BackoffOver", app, job, "", std::nullopt, "ready to run again");
  failures_.release_backoffs(now);
  tx.commit();
  if (!ready.empty()) trigger("retry back-off over");
}

void Coordinator::admit_apps(double now) {
  admission_.watch_inputs();
  judge_feasibility(now);  // infeasible apps leave the queue: they neither wait in it nor block it
  std::map<std::int64_t, std::string> before;  // app -> its admission before this plan
  auto apply = [&](const AdmissionPlan& plan) {
    for (const auto app : plan.admit) {
      admission_.admit(app);
      if (before[app] != kAdmissionUndecided) event(now, "Admitted", app, std::nullopt, "", std::nullopt, "was " + before[app]);
    }
    for (const auto& w : plan.wait) {
      if (before[w.app] == w.reason) continue;
      store::FeasibilityStore(db_).set_admission(w.app, w.reason);
      if (before[w.app] == kAdmissionUndecided) event(now, "Queued", w.app, std::nullopt, "", std::nullopt, w.reason);
    }
  };
  auto remember = [&](std::int64_t last_app, std::int64_t cluster_gpus, const AdmissionProgress& after) {
    admission_.remember({true, last_app, cluster_gpus, after.demand_gpus, after.blocked});
  };

  // Arrivals since the last plan, behind a queue that nothing has changed since: only they are decided.
  const store::AdmissionMemo memo = admission_.memo();
  if (memo.valid) {
    const std::int64_t covered = memo.last_app;
    std::vector<QueuedApp> arrivals;
    std::int64_t last_app = covered;
    bool admitted_elsewhere = false;  // an arrival already counted as admitted: the queue's demand changed
    for (const auto& arrived : admission_.apps_after(covered)) {
      const std::int64_t app = arrived.id;
      const std::string& state = arrived.state;
      last_app = app;
      if (state == "PENDING" && arrived.admission && !is_infeasible_reason(*arrived.admission)) {
        arrivals.push_back({app, arrived.demand_gpus});
        before[app] = *arrived.admission;
      } else if ((state == "PENDING" || state == "RUNNING") && !arrived.admission && arrived.demand_gpus > 0) {
        admitted_elsewhere = true;
      }
    }
    if (!admitted_elsewhere) {
      const auto plan = plan_admission_after(config_.admission, memo.cluster_gpus, {memo.demand_gpus, memo.blocked}, arrivals);
      apply(plan);
      remember(last_app, memo.cluster_gpus, plan.after);
      return;
    }
    before.clear();
  }

  // The whole queue, after the demand of the admitted apps still active.
  AdmissionInput input;
  for (const auto& queued : admission_.queue(std::string(kInfeasiblePrefix))) {
    input.queue.push_back({queued.id, queued.demand_gpus});
    before[queued.id] = queued.admission.value_or("");
  }
  input.cluster_gpus = admission_.up_gpus();
  input.admitted_demand_gpus = admission_.admitted_demand_gpus();
  const std::int64_t newest = admission_.newest_app();
  const auto plan = plan_admission(config_.admission, input);
  apply(plan);
  remember(newest, input.cluster_gpus, plan.after);
}

}  // namespace themis::coordinator
