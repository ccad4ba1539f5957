// The first-iteration probe (docs/reliability.md "Probe"): a new app's first job runs alone on one GPU
// for at most probe_duration before the app competes for more, so that a job that fails at once fails in
// seconds instead of after winning an auction (Philly study: most failures come early, from user errors).
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "coordinator/coordinator.h"
#include "coordinator/failure_class.h"
#include "coordinator/store/probe_store.h"
#include "coordinator/store/round_store.h"
#include "coordinator/retry_policy.h"

namespace themis::coordinator {

using json = nlohmann::json;

bool Coordinator::wants_probe(std::int64_t /*app*/, int gpus_per_job, int jobs, int max_concurrent_jobs) {
  if (config_.probe_duration_ms <= 0) return false;
  // An app of one one-GPU job is its own probe.
  const int concurrent = max_concurrent_jobs > 0 ? std::min(jobs, max_concurrent_jobs) : jobs;
  return gpus_per_job * concurrent > 1;
}

// Inside the round's transaction, once the plan's probe lease (up to probe_duration) and, for an app the
// coordinator runs, its job's start are written: the app's probe is running.
//
// An app with a launcher gets the lease alone: its launcher, not the coordinator, starts the job, because
// only the launcher gives a job its environment (typed THEMIS_HPARAMS with the iteration target,
// THEMIS_JOB_ID, the report socket). The lease reaches it as an ordinary grant (send_grant) marked
// `probe` while apps.probe is 'running'; the launcher then starts one attempt of one job on that one GPU
// whatever its gpus_per_job (Agent::set_held_gpus), through LaunchJob like any launch. Its verdict comes
// from the attempt's recorded failure, not from the job's state, which the launcher may change again.
void Coordinator::note_probe_started(AppId app, GpuIndex gpu, std::int64_t job, RoundId round, double now) {
  const bool launcher = launcher_mode(app) != LauncherMode::kNone;
  store::ProbeStore(db_).set_probe(app, store::ProbeStore::Probe::kRunning);
  store::RoundStore rounds(db_);
  rounds.insert_bid(round, app, rounds.attained_rho(app, now), std::nullopt, "[]", json(std::vector<GpuIndex>{gpu}).dump(),
                    "probe");
  event(now, "ProbeStarted", app, launcher ? std::nullopt : std::optional(job), "", round,
        (launcher ? std::string("its launcher's first job") : "job " + std::to_string(job)) + " alone on GPU " +
            std::to_string(gpu) + " for up to " + std::to_string(config_.probe_duration_ms / 1000) +
            " s before the app competes for more");
  spdlog::info("app {}: probing job {} on GPU {}", app, job, gpu);
}

namespace {

struct ProbeFailure {
  std::int64_t job = 0;
  std::string why;
  bool retried = false;  // its class is retried by the policy: the probe passes, as for a job the coordinator runs
};

// The first failed attempt of a launcher app since its probe lease began (the app's first lease).
std::optional<ProbeFailure> launcher_probe_failure(store::Database& db, const RetryPolicy& policy, std::int64_t app,
                                                   double now) {
  const auto f = store::ProbeStore(db).first_failure_since_first_lease(app);
  if (!f) return std::nullopt;
  ProbeFailure out{f->job, "its probe failed: job " + std::to_string(f->job) + ": " + f->failure_class + ": " + f->reason};
  if (const auto failure_class = failure_class_from_string(f->failure_class)) {
    out.retried = decide_retry(policy, *failure_class, static_cast<int>(f->earlier_same_class), now).retry;
  }
  return out;
}

}  // namespace

// A launcher app's probe ends at its first failed attempt (the app fails at once unless the failure class
// is retried), when a job completes, or when the probe lease is over (expired or released).
void Coordinator::settle_launcher_probe(std::int64_t app, bool active, double now) {
  const auto failure = launcher_probe_failure(db_, config_.retry, app, now);
  const bool failed = failure && !failure->retried;
  if (!active) {  // it ended during its probe (its launcher finished or failed it, or it was cancelled)
    store::ProbeStore(db_).set_probe(app, failed ? store::ProbeStore::Probe::kFailed : store::ProbeStore::Probe::kPassed);
    if (failed) event(now, "ProbeFailed", app, failure->job, "", std::nullopt, failure->why);
    return;
  }
  if (failed) {
    states_.move_jobs_of_app(app, JobState::kPending, JobEvent::kCancelled, "ProbeFailed", now);
    store::ProbeStore(db_).set_probe(app, store::ProbeStore::Probe::kFailed);
    event(now, "ProbeFailed", app, failure->job, "", std::nullopt, failure->why);
    end_launcher_app(app, true, failure->why, now);  // stops what runs, releases the probe lease, AppFailed
    spdlog::info("app {}: {}", app, failure->why);
    return;
  }
  std::string passed;
  if (failure) {
    passed = failure->why.substr(std::string("its probe failed: ").size()) + ", which is retried; the app now competes for GPUs";
  } else {
    store::ProbeStore probes(db_);
    const std::int64_t completed = probes.completed_jobs(app);
    const std::int64_t live_leases = probes.live_leases(app, now);
    const auto launcher = launchers_.find(app);
    if (completed > 0) passed = "its job completed during the probe";
    // The probe is for the first iterations (a job that fails does so at once): once the launcher
    // reports iterations done, running the rest on one GPU would only slow the app down.
    else if (launcher != launchers_.end() && launcher->second.progress > 0)
      passed = "its job trained on one GPU (the launcher reports iterations done); the app now competes for GPUs";
    else if (live_leases == 0) passed = "its probe lease is over; the app now competes for GPUs";
    else return;  // still probing
  }
  store::ProbeStore(db_).set_probe(app, store::ProbeStore::Probe::kPassed);
  event(now, "ProbePassed", app, std::nullopt, "", std::nullopt, passed);
  // Its launcher holds the probe lease as a probe until told otherwise; a round may end without grants.
  send_grant(app, 0);
}

// A probe ends when its job leaves the GPU: stopped at the probe's expiry or exited. A job that failed
// without a retry fails the app at once; anything else lets the app compete.
void Coordinator::settle_probes(double now) {
  store::ProbeStore probes(db_);
  for (const auto& [app, active] : probes.probing_apps()) {
    if (launcher_mode(app) != LauncherMode::kNone) {
      settle_launcher_probe(app, active, now);
      continue;
    }
    const auto last = probes.last_attempt(app);
    if (!last) continue;
    const auto state = job_state_named(last->state);
    if (!state || is_active(*state)) continue;
    const std::int64_t job = last->job;
    const bool failed = *state == JobState::kFailed;
    const std::string why = "its probe failed: job " + std::to_string(job) + ": " + last->why;
    if (!active) {  // it ended with its probe's job (an app of one job), or was cancelled
      probes.set_probe(app, failed ? store::ProbeStore::Probe::kFailed : store::ProbeStore::Probe::kPassed);
      if (failed) event(now, "ProbeFailed", app, job, "", std::nullopt, why);
      continue;
    }
    if (failed) {
      states_.move_jobs_of_app(app, JobState::kPending, JobEvent::kCancelled, "ProbeFailed", now);
      probes.set_probe(app, store::ProbeStore::Probe::kFailed);
      states_.move_app(app, AppState::kFailed, now);
      event(now, "ProbeFailed", app, job, "", std::nullopt, why);
      event(now, "AppFailed", app, std::nullopt, "", std::nullopt, why);
      spdlog::info("app {}: {}", app, why);
    } else {
      probes.set_probe(app, store::ProbeStore::Probe::kPassed);
      event(now, "ProbePassed", app, job, "", std::nullopt,
            *state == JobState::kCompleted ? "its job completed during the probe" : "its job ran; the app now competes for GPUs");
    }
  }
}

}  // namespace themis::coordinator
