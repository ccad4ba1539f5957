#pragma once
// The Themis Agent of one app, without I/O (the daemon in launcher_daemon.h feeds it and carries out
// its commands). It owns the app's hyper-parameter scheduler, its live timing model and the lifecycle
// of every job:
//
//   kWaiting ──assign GPUs──▶ kStarting ──first report──▶ kRunning ──exit "completed"──▶ kIdle
//      ▲                          │                          │
//      │                          └────── lease lost or moved: Stop ──▶ kStopping
//      └──────────── exit "preempted" (checkpoint saved) or a failure below max_restarts ◀┘
//
// A lost or moved lease stops the affected job (the coordinator's Stop: SIGTERM, the worker saves a
// checkpoint and exits "preempted"); the job waits, and its next launch, on whatever GPUs the app holds
// then, is attempt + 1 and resumes from that checkpoint. Exits of an older attempt are ignored.
// A job whose phase target is reached becomes kIdle; when its phase ends, successive halving makes the
// survivors kWaiting again with the next target (they resume from their checkpoint) and stops the rest.
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bidder/app_model.h"
#include "bidder/contention.h"
#include "core/bid.h"
#include "core/ids.h"
#include "core/topology.h"
#include "launcher/hyperparameter_scheduler.h"
#include "launcher/rho_estimate.h"
#include "launcher/timing_model.h"

namespace themis::launcher {

enum class JobState { kWaiting, kStarting, kRunning, kStopping, kIdle, kFailed };
std::string_view to_string(JobState state);

enum class ExitKind {
  kCompleted,  // reached its target and saved a checkpoint
  kPreempted,  // stopped on request with a checkpoint saved
  kFailed,     // anything else (crash, kill, communication failure, preempted without a save)
};

struct AgentConfig {
  AppId app = 0;
  SchedulerSpec scheduler;
  int gpus_per_job = 1;
  int max_concurrent_jobs = 0;     // 0: no cap
  int max_restarts = 3;            // failures per job before the job (and so the app) fails
  Seconds lease_seconds = 60;      // one lease, for the "no new GPUs" ρ
  Seconds default_serial_iter_time = 1.0;
  bidder::SlowdownPriors slowdown_priors{};
  int warmup_iterations = 1;       // iterations after each start left out of the timings
  // What a job's stop and later resume cost (checkpoint, exit, start, restore): the price of stopping a
  // running job for a longer waiting one. docs/performance.md, "Lease handover", measured 5–26 s for a
  // 100 MB model.
  Seconds restart_seconds = 30;
};

// A lease the app holds: its GPU and when it ends, on the clock the agent's `now` values use (the daemon
// converts the coordinator's expiry with the grant's send time). +inf: not known.
struct HeldLease {
  GpuIndex gpu = 0;
  Seconds expiry = std::numeric_limits<double>::infinity();
};

// The least time a lease must have left for a job to be launched onto its GPU: a tenth of the lease, at most
// 1 s. Closer to its expiry the launch may reach the coordinator after the lease ended (a stale grant), and a
// job started then is stopped at the GPU's re-auction unless the app wins it back; the grant of that round
// says which, a batch window after the expiry (docs/protocols/control.md "Stale grants").
Seconds launch_margin(Seconds lease_seconds);

struct LaunchCommand {
  int job = 0;
  int attempt = 0;                 // 1 for the first launch
  std::vector<GpuIndex> gpus;      // sorted; rank r runs on gpus[r]
  std::int64_t iterations = 0;     // train to this cumulative iteration
};

struct StopCommand {
  int job = 0;
  int attempt = 0;
  std::string reason;
};

struct JobView {
  int job = 0;
  JobState state = JobState::kWaiting;
  JobStatus status = JobStatus::kActive;
  int attempt = 0;
  std::vector<GpuIndex> gpus;
  double iterations_done = 0;
  double target = 0;
  std::optional<double> loss;
  int preemptions = 0;
  int failures = 0;
  Seconds serial_iter_time = 0;
};

class Agent {
 public:
  // `cluster` must outlive the agent. `start` is the app's submission time (elapsed counts from it),
  // `active_apps` the number of active apps then (itself included). Throws std::invalid_argument.
  Agent(const Cluster& cluster, const AgentConfig& config, Seconds start, int active_apps);

  // ---- inputs
  // Every GPU the app holds from now on (its active leases). Running jobs on a GPU no longer held stop;
  // so does a running job that a waiting one with more time left should replace (the app's jobs run
  // longest first, as its ρ estimate packs them: stop_shorter_jobs_for_longer_ones).
  // `probe`: the holding is the app's first-iteration probe (docs/reliability.md "Probe"): one attempt of
  // one job runs on one GPU, whatever gpus_per_job, so that a job that fails at once fails before the app
  // competes for gangs. Once the probe is over, a job still on fewer GPUs than a gang stops (checkpoint)
  // and resumes on a whole gang.
  void set_held_gpus(std::vector<GpuIndex> held, bool probe = false);
  // The same with each lease's expiry: take_launches(now) puts no job on a GPU whose lease ends within
  // launch_margin(lease_seconds) of `now`.
  void set_held_leases(const std::vector<HeldLease>& leases, bool probe = false);
  void set_active_apps(int active_apps, Seconds now);
  // The apps it will share the cluster with on average over the rest of its life, as the coordinator forecasts
  // them (AppStatusAck.contentionAhead, bidder::contention_ahead); its ranking key counts N_avg over its whole life
  // with it (bidder::with_contention_ahead). Not finite or below 1: none (the average so far stands for the future).
  void set_contention_ahead(double ahead) { contention_ahead_ = ahead; }
  // Seconds it still needs on its fair share (bidder::AppModel::remaining_at_fair_share): how long it stays, for
  // the other apps' forecasts (AppStatus.remaining).
  Seconds remaining_at_fair_share(Seconds now) const;
  // The worker of (job, attempt) started, resuming from `resumed_from` (-1: fresh).
  // `now` on the clock take_launches was given: launch to start is timed (TimingModel::observe_start).
  void on_worker_start(int job, int attempt, std::int64_t resumed_from, Seconds now = std::numeric_limits<double>::quiet_NaN());
  // One completed iteration reported by `rank` (only rank 0's count), received at `now` (the clock of
  // take_launches): the probe's first one ends its time (AppContext::probe_time).
  void on_iteration(int job, int attempt, int rank, std::int64_t iteration, Seconds seconds,
                    std::optional<double> loss, Seconds now = std::numeric_limits<double>::quiet_NaN());
  // The job's attempt ended (all ranks gone, or rank 0's exit event).
  void on_exit(int job, int attempt, ExitKind kind, std::int64_t iteration, Seconds now);

  // A restarted launcher continues the attempt numbering the coordinator has (the next launch is
  // attempt + 1). Only for a waiting job.
  void restore_attempt(int job, int attempt);
  // A restarted launcher takes over its predecessor's scheduler progress and failure counts (before any
  // launch). Jobs whose phase target was reached become idle.
  void restore_progress(const SchedulerProgress& progress, const std::vector<int>& failures);
  // The probe's time (AppContext::probe_time) once it is known; a restarted launcher takes its predecessor's
  // (its probe is over, and T_id counts it all the same). Throws std::invalid_argument unless >= 0 and finite.
  std::optional<Seconds> probe_time() const { return probe_time_; }
  void restore_probe_time(Seconds seconds);

  // The coordinator refused to launch (job, attempt) (e.g. a GPU not leased any more, a stale grant): it
  // waits again, and is not retried before the next set_held_gpus().
  void on_launch_refused(int job, int attempt);
  // A rank of an attempt this agent did not start (an earlier launcher's) exited: the job's GPUs may be
  // free now, so a refused launch is tried again.
  void on_earlier_attempt_exit(int job);

  // ---- decisions
  // Puts waiting runnable jobs on free held GPUs whose leases have launch_margin() left at `now` (the
  // default: every lease counts as long enough); returns what to launch since the last call.
  std::vector<LaunchCommand> take_launches(Seconds now = -std::numeric_limits<double>::infinity());
  std::vector<StopCommand> take_stops();
  // The bid for an offer: rows over whole gangs only; rho_no_new per architecture.md §3.
  Bid bid(const Offer& offer, Seconds now) const;
  // ρ now: with what the app holds if it can run on it; holding nothing usable, ρ after one more lease on
  // its fair share ⌊R_C / N_avg⌋ (at most its demand); at the end, the achieved ρ (finish − start) / T_id.
  double current_rho(Seconds now) const;
  double rho_no_new(Seconds now) const;
  // GPUs it could still use on top of the usable ones it holds.
  int extra_demand() const;
  // Held GPUs it gives back before their leases end: none of its jobs runs there and none waits to start
  // (a waiting job, also one whose launch was refused, or one stopping to start again elsewhere, may start
  // on them). Empty during a probe and once the app is over (its end releases every lease).
  std::vector<GpuIndex> idle_gpus() const;
  // The launcher told the coordinator it gives `gpus` back (AppStatus.release): they are no longer the app's,
  // whatever a grant said before, so no job launches there while the coordinator releases them (a launch that
  // arrives after the release is refused as a stale grant). A GPU a job uses now is kept.
  void give_back(const std::vector<GpuIndex>& gpus);

  // ---- state
  bool finished() const;
  bool failed() const;
  std::optional<Seconds> finished_at() const { return finished_at_; }
  const std::vector<GpuIndex>& held_gpus() const { return held_; }
  std::vector<GpuIndex> free_gpus() const;
  JobView job(int job) const;
  int job_count() const { return static_cast<int>(jobs_.size()); }
  const HyperparameterScheduler& scheduler() const { return scheduler_; }
  const TimingModel& timing() const { return timing_; }
  AppContext context(Seconds now) const;
  // Best loss over the jobs that finished (or over all when none did yet).
  std::optional<double> best_loss() const;

 private:
  struct Job {
    JobState state = JobState::kWaiting;
    int attempt = 0;
    std::vector<GpuIndex> gpus;
    std::int64_t first_timed_iteration = 0;
    int preemptions = 0;
    int failures = 0;
    bool blocked = false;  // a launch was refused: wait for the next set of leases before retrying
    Seconds launched_at = std::numeric_limits<double>::quiet_NaN();  // the attempt's launch, until it starts
  };
  Job& job_ref(int job);
  const Job& job_at(int job) const;
  bool uses_gpus(JobState state) const;
  // GPUs it could use on top of `held` usable ones.
  int demand_beyond(int held) const;
  // The bidder's app model of its state at `now` (ρ, idle ρ, T_id and bids come from it), and that state.
  bidder::AppModel model(Seconds now) const;
  bidder::AppState model_state(Seconds now) const;
  // "No new GPUs" if it keeps only `kept` (bidder::AppModel::rho_without_new).
  double rho_keeping(const bidder::AppModel& model, const bidder::SlowdownModel& slowdown,
                     const std::vector<GpuIndex>& kept) const;
  // The slowdown it runs at on `gpus` (sorted): the widest span of one of its gangs there.
  double running_slowdown(const bidder::SlowdownModel& slowdown, const std::vector<GpuIndex>& gpus) const;
  // The jobs using GPUs (starting, running, stopping) on at least `min_gpus`, every one of them among `gpus`
  // (sorted); and `gpus` without those jobs' GPUs.
  std::vector<const Job*> jobs_within(const std::vector<GpuIndex>& gpus, int min_gpus) const;
  static std::vector<GpuIndex> gpus_outside(const std::vector<GpuIndex>& gpus, const std::vector<const Job*>& jobs);
  void after_scheduler_change();
  // Work left of `job` on one gang at the measured speed, without placement slowdown.
  Seconds time_left(int job) const;
  // With no free gang, stops running jobs for waiting ones with more time left where that ends the
  // phase sooner, counting a restart for every start (bidder::list_schedule_finish).
  void stop_shorter_jobs_for_longer_ones();

  const Cluster& cluster_;
  AgentConfig config_;
  Seconds start_;
  bidder::ContentionAverage contention_;
  Seconds last_contention_time_;
  double contention_ahead_ = std::numeric_limits<double>::quiet_NaN();  // set_contention_ahead
  HyperparameterScheduler scheduler_;
  TimingModel timing_;
  std::vector<Job> jobs_;
  std::vector<GpuIndex> held_;
  std::map<GpuIndex, Seconds> expiry_;  // of the held leases whose expiry is known
  bool probe_ = false;           // the holding is the probe
  bool probe_launched_ = false;  // its one attempt was asked for
  // The probe's attempt (job, attempt) and its launch; probe_time_ is set by its first iteration (or its end).
  std::pair<int, int> probe_attempt_{-1, 0};
  Seconds probe_launched_at_ = std::numeric_limits<double>::quiet_NaN();
  std::optional<Seconds> probe_time_;
  void end_probe_time(int job, int attempt, Seconds now);
  std::vector<StopCommand> stops_;
  std::optional<Seconds> finished_at_;
};

}  // namespace themis::launcher
