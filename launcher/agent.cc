#include "launcher/agent.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "bidder/job_packing.h"
#include "launcher/gpu_assignment.h"

namespace themis::launcher {

std::string_view to_string(JobState state) {
  switch (state) {
    case JobState::kWaiting: return "waiting";
    case JobState::kStarting: return "starting";
    case JobState::kRunning: return "running";
    case JobState::kStopping: return "stopping";
    case JobState::kIdle: return "idle";
    case JobState::kFailed: return "failed";
  }
  return "?";
}

Seconds launch_margin(Seconds lease_seconds) { return std::min(1.0, lease_seconds / 10); }

Agent::Agent(const Cluster& cluster, const AgentConfig& config, Seconds start, int active_apps)
    : cluster_(cluster),
      config_(config),
      start_(start),
      contention_(start, std::max(1, active_apps)),
      last_contention_time_(start),
      scheduler_(config.scheduler),
      timing_(config.default_serial_iter_time, config.slowdown_priors),
      jobs_(static_cast<std::size_t>(config.scheduler.jobs)) {
  if (config.gpus_per_job < 1) {
    throw std::invalid_argument("agent: gpus_per_job must be >= 1, got " + std::to_string(config.gpus_per_job));
  }
  if (config.max_concurrent_jobs < 0) {
    throw std::invalid_argument("agent: max_concurrent_jobs must be >= 0, got " +
                                std::to_string(config.max_concurrent_jobs));
  }
  if (!(config.lease_seconds > 0)) throw std::invalid_argument("agent: lease_seconds must be > 0");
}

const Agent::Job& Agent::job_at(int job) const {
  if (job < 0 || job >= job_count()) {
    throw std::invalid_argument("agent: job " + std::to_string(job) + " out of range 0.." + std::to_string(job_count() - 1));
  }
  return jobs_[static_cast<std::size_t>(job)];
}

Agent::Job& Agent::job_ref(int job) {
  job_at(job);
  return jobs_[static_cast<std::size_t>(job)];
}

bool Agent::uses_gpus(JobState state) const {
  return state == JobState::kStarting || state == JobState::kRunning || state == JobState::kStopping;
}

void Agent::set_held_leases(const std::vector<HeldLease>& leases, bool probe) {
  std::vector<GpuIndex> held;
  for (const auto& lease : leases) held.push_back(lease.gpu);
  set_held_gpus(std::move(held), probe);
  for (const auto& lease : leases) {
    if (lease.expiry < std::numeric_limits<double>::infinity()) expiry_[lease.gpu] = lease.expiry;
  }
}

void Agent::set_held_gpus(std::vector<GpuIndex> held, bool probe) {
  std::sort(held.begin(), held.end());
  held.erase(std::unique(held.begin(), held.end()), held.end());
  for (GpuIndex g : held) {
    if (g < 0 || g >= cluster_.size()) throw std::invalid_argument("agent: held GPU " + std::to_string(g) + " is outside the cluster");
  }
  held_ = std::move(held);
  expiry_.clear();
  if (!probe) probe_launched_ = false;
  probe_ = probe;
  for (auto& job : jobs_) job.blocked = false;
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    auto& job = jobs_[j];
    if (job.state != JobState::kStarting && job.state != JobState::kRunning) continue;
    const bool all_held = std::all_of(job.gpus.begin(), job.gpus.end(),
                                      [&](GpuIndex g) { return std::binary_search(held_.begin(), held_.end(), g); });
    const bool whole_gang = probe_ || static_cast<int>(job.gpus.size()) >= config_.gpus_per_job;
    if (all_held && whole_gang) continue;
    job.state = JobState::kStopping;
    stops_.push_back({static_cast<int>(j), job.attempt, all_held ? "probe over: resumes on a whole gang" : "lease lost"});
  }
  stop_shorter_jobs_for_longer_ones();
}

Seconds Agent::time_left(int job) const {
  return std::max(0.0, scheduler_.target(job) - scheduler_.iterations_done(job)) * timing_.serial_iter_time(job) /
         config_.gpus_per_job;
}

void Agent::stop_shorter_jobs_for_longer_ones() {
  const int gang = config_.gpus_per_job;
  const int free = static_cast<int>(free_gpus().size());
  if (probe_ || failed() || free >= gang) return;
  std::vector<int> running;  // may be stopped
  std::vector<int> waiting;
  std::vector<bidder::RunningGang> staying;  // starting or stopping: left as they are
  for (int job : scheduler_.runnable_jobs()) {
    const auto& j = jobs_[static_cast<std::size_t>(job)];
    if (j.state == JobState::kRunning) running.push_back(job);
    if (j.state == JobState::kWaiting && !j.blocked) waiting.push_back(job);
  }
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    if (jobs_[j].state == JobState::kStarting) staying.push_back({time_left(static_cast<int>(j)), gang});
    if (jobs_[j].state == JobState::kStopping) staying.push_back({0, static_cast<int>(jobs_[j].gpus.size())});
  }
  if (running.empty() || waiting.empty()) return;
  auto longest_first = [&](std::vector<int>& jobs) {
    std::stable_sort(jobs.begin(), jobs.end(), [&](int a, int b) {
      const Seconds ta = time_left(a);
      const Seconds tb = time_left(b);
      if (ta != tb) return ta > tb;
      return jobs_[static_cast<std::size_t>(a)].state == JobState::kRunning &&
             jobs_[static_cast<std::size_t>(b)].state != JobState::kRunning;
    });
  };
  auto queued = [&](const std::vector<int>& jobs) {
    std::vector<bidder::QueuedGang> out;
    for (int job : jobs) out.push_back({.time = time_left(job), .gpus = gang, .restart = config_.restart_seconds});
    return out;
  };
  // As it is: the running jobs go on, the waiting ones start longest first as gangs free up.
  longest_first(waiting);
  std::vector<bidder::RunningGang> keep = staying;
  for (int job : running) keep.push_back({time_left(job), gang});
  const Seconds keep_finish = bidder::list_schedule_finish(keep, free, queued(waiting));
  // Longest first over both: as many jobs run as run now, the longest of all of them.
  std::vector<int> all = running;
  all.insert(all.end(), waiting.begin(), waiting.end());
  longest_first(all);
  std::vector<int> stopped;
  std::vector<int> starting;
  std::vector<int> later;
  std::vector<bidder::RunningGang> swap = staying;
  for (std::size_t k = 0; k < all.size(); ++k) {
    const bool runs = k < running.size();
    const bool was_running = jobs_[static_cast<std::size_t>(all[k])].state == JobState::kRunning;
    if (runs && was_running) swap.push_back({time_left(all[k]), gang});
    if (runs && !was_running) starting.push_back(all[k]);
    if (!runs) later.push_back(all[k]);
    if (!runs && was_running) stopped.push_back(all[k]);
  }
  if (stopped.empty()) return;
  starting.insert(starting.end(), later.begin(), later.end());
  const Seconds swap_finish =
      bidder::list_schedule_finish(swap, free + static_cast<int>(stopped.size()) * gang, queued(starting));
  if (!(swap_finish < keep_finish)) return;
  for (int job : stopped) {
    auto& j = jobs_[static_cast<std::size_t>(job)];
    j.state = JobState::kStopping;
    stops_.push_back({job, j.attempt, "a waiting job with more time left takes its GPUs"});
  }
}

void Agent::restore_attempt(int job, int attempt) {
  auto& j = job_ref(job);
  if (j.state == JobState::kWaiting && attempt > j.attempt) j.attempt = attempt;
}

void Agent::restore_progress(const SchedulerProgress& progress, const std::vector<int>& failures) {
  scheduler_.restore(progress);
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    auto& job = jobs_[j];
    if (j < failures.size()) job.failures = std::max(0, failures[j]);
    const auto status = scheduler_.status(static_cast<int>(j));
    if (status == JobStatus::kPhaseDone || status == JobStatus::kFinished) job.state = JobState::kIdle;
    if (job.failures > config_.max_restarts) job.state = JobState::kFailed;
  }
}

void Agent::on_earlier_attempt_exit(int job) { job_ref(job).blocked = false; }

void Agent::on_launch_refused(int job, int attempt) {
  auto& j = job_ref(job);
  if (attempt != j.attempt || (j.state != JobState::kStarting && j.state != JobState::kStopping)) return;
  j.state = JobState::kWaiting;  // it never ran, so even a stop asked meanwhile leaves nothing to wait for
  j.gpus.clear();
  j.blocked = true;
  probe_launched_ = false;
}

void Agent::set_active_apps(int active_apps, Seconds now) {
  now = std::max(now, last_contention_time_);
  contention_.observe(now, std::max(1, active_apps));
  last_contention_time_ = now;
}

void Agent::on_worker_start(int job, int attempt, std::int64_t resumed_from, Seconds now) {
  auto& j = job_ref(job);
  if (attempt != j.attempt) return;
  if (std::isfinite(j.launched_at) && std::isfinite(now) && now >= j.launched_at) timing_.observe_start(now - j.launched_at);
  j.launched_at = std::numeric_limits<double>::quiet_NaN();
  if (j.state == JobState::kStarting) j.state = JobState::kRunning;
  j.first_timed_iteration = std::max<std::int64_t>(0, resumed_from) + config_.warmup_iterations + 1;
}

void Agent::end_probe_time(int job, int attempt, Seconds now) {
  if (probe_time_ || probe_attempt_ != std::make_pair(job, attempt)) return;
  if (std::isfinite(now) && std::isfinite(probe_launched_at_) && now >= probe_launched_at_) probe_time_ = now - probe_launched_at_;
}

void Agent::restore_probe_time(Seconds seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds))
    throw std::invalid_argument("agent: probe time must be >= 0 and finite, got " + std::to_string(seconds));
  probe_time_ = seconds;
}

void Agent::on_iteration(int job, int attempt, int rank, std::int64_t iteration, Seconds seconds,
                         std::optional<double> loss, Seconds now) {
  auto& j = job_ref(job);
  if (attempt != j.attempt || rank != 0) return;
  end_probe_time(job, attempt, now);
  if (j.state == JobState::kStarting) j.state = JobState::kRunning;
  // An iteration's work is set by its gang's size (each rank takes its own batch), so only runs on a whole
  // gang are timed: a probe's run on one GPU does a fraction of the work per iteration (TimingModel).
  const bool whole_gang = static_cast<int>(j.gpus.size()) == config_.gpus_per_job;
  if (iteration >= j.first_timed_iteration && seconds > 0 && std::isfinite(seconds) && whole_gang) {
    timing_.observe(job, static_cast<int>(j.gpus.size()), cluster_.locality(j.gpus), seconds);
  }
  if (scheduler_.status(job) == JobStatus::kActive) {
    // The target is reached only when the worker exits "completed" (it saves a checkpoint first).
    scheduler_.report(job, std::min(static_cast<double>(iteration), scheduler_.target(job) - 0.5), loss);
  }
}

void Agent::on_exit(int job, int attempt, ExitKind kind, std::int64_t iteration, Seconds now) {
  auto& j = job_ref(job);
  if (attempt != j.attempt || !uses_gpus(j.state)) return;
  if (kind == ExitKind::kCompleted) end_probe_time(job, attempt, now);  // done before it reported an iteration
  j.gpus.clear();
  switch (kind) {
    case ExitKind::kCompleted:
      j.state = JobState::kIdle;
      scheduler_.report(job, std::max(static_cast<double>(iteration), scheduler_.target(job)), std::nullopt);
      after_scheduler_change();
      break;
    case ExitKind::kPreempted:
      j.state = JobState::kWaiting;
      ++j.preemptions;
      if (iteration > 0) scheduler_.report(job, std::min(static_cast<double>(iteration), scheduler_.target(job) - 0.5), std::nullopt);
      break;
    case ExitKind::kFailed:
      ++j.failures;
      j.state = j.failures > config_.max_restarts ? JobState::kFailed : JobState::kWaiting;
      break;
  }
  if ((finished() || failed()) && !finished_at_) finished_at_ = now;
}

void Agent::after_scheduler_change() {
  scheduler_.advance_if_phase_done();
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    auto& job = jobs_[j];
    if (job.state == JobState::kIdle && scheduler_.status(static_cast<int>(j)) == JobStatus::kActive) {
      job.state = JobState::kWaiting;  // a survivor: resumes from its checkpoint with the next target
    }
  }
}

std::vector<GpuIndex> Agent::free_gpus() const {
  std::vector<GpuIndex> used;
  for (const auto& job : jobs_) {
    if (uses_gpus(job.state)) used.insert(used.end(), job.gpus.begin(), job.gpus.end());
  }
  std::sort(used.begin(), used.end());
  std::vector<GpuIndex> free;
  std::set_difference(held_.begin(), held_.end(), used.begin(), used.end(), std::back_inserter(free));
  return free;
}

std::vector<GpuIndex> Agent::idle_gpus() const {
  if (probe_ || finished() || failed()) return {};
  // A runnable job that is stopping (its lease was lost or moved, or it yields to a longer job) will start
  // again: it waits as much as a waiting one.
  for (int job : scheduler_.runnable_jobs()) {
    const JobState state = jobs_[static_cast<std::size_t>(job)].state;
    if (state == JobState::kWaiting || state == JobState::kStopping) return {};
  }
  return free_gpus();
}

void Agent::give_back(const std::vector<GpuIndex>& gpus) {
  const std::vector<GpuIndex> free = free_gpus();  // held and not used by a job: only those go back
  for (GpuIndex g : gpus) {
    if (!std::binary_search(free.begin(), free.end(), g)) continue;
    held_.erase(std::remove(held_.begin(), held_.end(), g), held_.end());
    expiry_.erase(g);
  }
}

std::vector<LaunchCommand> Agent::take_launches(Seconds now) {
  std::vector<LaunchCommand> launches;
  if (failed()) return launches;
  int running = 0;
  for (const auto& job : jobs_) running += uses_gpus(job.state) ? 1 : 0;
  std::vector<int> waiting;
  for (int job : scheduler_.runnable_jobs()) {
    const auto& j = jobs_[static_cast<std::size_t>(job)];
    if (j.state == JobState::kWaiting && !j.blocked) waiting.push_back(job);
  }
  // Jobs with the most time left first (ties: the most progress, so a preempted job resumes before a
  // fresh one of equal length): the order the app's ρ estimate packs its jobs in (bidder::phase_finish_time,
  // longest first). Starting the most advanced first left the longest job waiting while the bids priced
  // it as running, so the app bid "no gain" for GPUs it needed (docs/launcher.md, "GPU assignment").
  std::stable_sort(waiting.begin(), waiting.end(), [&](int a, int b) {
    const Seconds ta = time_left(a);
    const Seconds tb = time_left(b);
    if (ta != tb) return ta > tb;
    return scheduler_.iterations_done(a) > scheduler_.iterations_done(b);
  });
  if (config_.max_concurrent_jobs > 0) {
    const int slots = std::max(0, config_.max_concurrent_jobs - running);
    if (static_cast<int>(waiting.size()) > slots) waiting.resize(static_cast<std::size_t>(slots));
  }
  auto free = free_gpus();
  const Seconds margin = launch_margin(config_.lease_seconds);
  std::erase_if(free, [&](GpuIndex g) {
    const auto expiry = expiry_.find(g);
    return expiry != expiry_.end() && expiry->second < now + margin;
  });
  if (probe_) {
    // The probe: one attempt of the first job due, alone on the probe's GPU, with the job's real environment.
    if (running > 0 || probe_launched_ || waiting.empty() || free.empty()) return launches;
    auto& job = jobs_[static_cast<std::size_t>(waiting.front())];
    job.state = JobState::kStarting;
    ++job.attempt;
    job.gpus = {free.front()};
    job.first_timed_iteration = std::numeric_limits<std::int64_t>::max();
    job.launched_at = now;
    probe_launched_ = true;
    probe_attempt_ = {waiting.front(), job.attempt};
    probe_launched_at_ = now;
    launches.push_back({waiting.front(), job.attempt, job.gpus,
                        static_cast<std::int64_t>(std::llround(scheduler_.target(waiting.front())))});
    return launches;
  }
  for (auto& gang : assign_gangs(cluster_, free, waiting, config_.gpus_per_job)) {
    auto& job = jobs_[static_cast<std::size_t>(gang.job)];
    job.state = JobState::kStarting;
    ++job.attempt;
    job.gpus = gang.gpus;
    job.first_timed_iteration = std::numeric_limits<std::int64_t>::max();  // until its start event
    job.launched_at = now;
    launches.push_back({gang.job, job.attempt, gang.gpus, static_cast<std::int64_t>(std::llround(scheduler_.target(gang.job)))});
  }
  return launches;
}

std::vector<StopCommand> Agent::take_stops() {
  std::vector<StopCommand> out;
  out.swap(stops_);
  return out;
}

AppContext Agent::context(Seconds now) const {
  return {.elapsed = std::max(0.0, now - start_),
          .n_avg = contention_.average(std::max(now, last_contention_time_)),
          .cluster_gpus = cluster_.size(),
          .gpus_per_job = config_.gpus_per_job,
          .max_concurrent_jobs = config_.max_concurrent_jobs,
          .probe_time = probe_time_.value_or(0)};
}

int Agent::extra_demand() const { return demand_beyond(static_cast<int>(held_.size())); }

int Agent::demand_beyond(int held) const {
  if (finished() || failed()) return 0;
  int runnable = 0;
  for (int job : scheduler_.runnable_jobs()) {
    const auto state = jobs_[static_cast<std::size_t>(job)].state;
    if (state == JobState::kWaiting || state == JobState::kStarting || state == JobState::kRunning) ++runnable;
  }
  if (config_.max_concurrent_jobs > 0) runnable = std::min(runnable, config_.max_concurrent_jobs);
  const auto ctx = context(start_);
  const int usable_held = usable_gpus(ctx, scheduler_, held);
  return std::max(0, runnable * config_.gpus_per_job - usable_held);
}

bidder::AppState Agent::model_state(Seconds now) const {
  auto state = app_state(scheduler_, timing_, context(now));
  state.demand_now = demand_beyond(0);
  state.lease = config_.lease_seconds;
  return state;
}

bidder::AppModel Agent::model(Seconds now) const { return bidder::AppModel(model_state(now)); }

Seconds Agent::remaining_at_fair_share(Seconds now) const {
  if (finished() || failed()) return 0;
  return model(now).remaining_at_fair_share();
}

double Agent::rho_no_new(Seconds now) const { return rho_keeping(model(now), timing_.slowdown(), held_); }

double Agent::rho_keeping(const bidder::AppModel& model, const bidder::SlowdownModel& slowdown,
                          const std::vector<GpuIndex>& kept) const {
  // Waiting is priced at the best placement this cluster has for its smallest bundle, as in themis-sim
  // (sim/sim_app.h, attainable_slowdown): a faster placement that no group of GPUs here offers would make
  // every bundle on offer look worse than waiting, and a wide gang would never bid.
  const double ideal = slowdown.slowdown(cluster_.tightest_locality(model.smallest_bundle()));
  const double at_kept = kept.empty() ? ideal : running_slowdown(slowdown, kept);
  return model.rho_without_new(static_cast<int>(kept.size()), at_kept, ideal);
}

double Agent::running_slowdown(const bidder::SlowdownModel& slowdown, const std::vector<GpuIndex>& gpus) const {
  // Each gang is slowed by its own span (a gang is one job's ranks; two gangs do not communicate), as
  // themis-sim's apps take the widest job's (sim/sim_app.cc, `app_slowdown`): the widest span among the
  // jobs whose gang lies within `gpus`, and the span of the GPUs no such gang uses, which start one together.
  const std::vector<const Job*> jobs = jobs_within(gpus, 1);
  double s = 1.0;
  for (const Job* job : jobs) s = std::max(s, slowdown.slowdown(cluster_.locality(job->gpus)));
  const std::vector<GpuIndex> rest = gpus_outside(gpus, jobs);
  if (!rest.empty()) s = std::max(s, slowdown.slowdown(cluster_.locality(rest)));
  return s;
}

std::vector<const Agent::Job*> Agent::jobs_within(const std::vector<GpuIndex>& gpus, int min_gpus) const {
  std::vector<const Job*> out;
  for (const Job& job : jobs_) {
    if (!uses_gpus(job.state) || static_cast<int>(job.gpus.size()) < min_gpus) continue;
    if (std::all_of(job.gpus.begin(), job.gpus.end(),
                    [&](GpuIndex g) { return std::binary_search(gpus.begin(), gpus.end(), g); }))
      out.push_back(&job);
  }
  return out;
}

std::vector<GpuIndex> Agent::gpus_outside(const std::vector<GpuIndex>& gpus, const std::vector<const Job*>& jobs) {
  std::vector<GpuIndex> used;
  for (const Job* job : jobs) used.insert(used.end(), job->gpus.begin(), job->gpus.end());
  std::sort(used.begin(), used.end());
  std::vector<GpuIndex> out;
  std::set_difference(gpus.begin(), gpus.end(), used.begin(), used.end(), std::back_inserter(out));
  return out;
}

double Agent::current_rho(Seconds now) const {
  if (finished_at_) {
    const auto done = model(*finished_at_);
    return done.state().elapsed / done.independent_time();
  }
  // N_avg over its whole life where the coordinator forecast the rest of it, as themis-sim's apps rank.
  const bidder::AppModel app(bidder::with_contention_ahead(model_state(now), contention_ahead_));
  const auto slowdown = timing_.slowdown();
  const int held = static_cast<int>(held_.size());
  // The filter's key, the same model as themis-sim's (bidder::AppModel::ranking_rho): ρ on what it holds,
  // and while it holds less than all it can use no worse than ρ after one more lease on all of it.
  const double held_slowdown = held > 0 ? running_slowdown(slowdown, held_) : 1.0;
  return app.ranking_rho(held, held_slowdown, slowdown.slowdown(cluster_.tightest_locality(app.smallest_bundle())),
                         bidder::IdleRho::kWholeDemand);
}

Bid Agent::bid(const Offer& offer, Seconds now) const {
  // An offer made when leases expire includes the GPUs this app held on them: it keeps them only by
  // winning them back, so the bid values every offered GPU against what it keeps without them.
  std::vector<GpuIndex> offered = offer.gpus;
  std::sort(offered.begin(), offered.end());
  std::vector<GpuIndex> kept;
  std::set_difference(held_.begin(), held_.end(), offered.begin(), offered.end(), std::back_inserter(kept));
  const auto app = model(now);
  const auto slowdown = timing_.slowdown();
  // A gang launches only whole, so new GPUs either complete a gang with kept GPUs that no whole gang uses
  // (idle ones, or a running gang's whose other GPUs are on offer), which places the bundle, or start gangs
  // of their own, each on the best-placed GPUs of the bundle (assign_gangs): the bundle is then priced at
  // the widest level one of its gangs spans, as themis-sim's apps price it (sim/sim_app.cc, `bid`).
  const std::vector<GpuIndex> placing = gpus_outside(kept, jobs_within(kept, config_.gpus_per_job));
  bidder::BidQuery query;
  query.app = config_.app;
  query.placement_held = placing;
  query.held_gpus = static_cast<int>(kept.size());
  query.remaining_demand = demand_beyond(query.held_gpus);
  query.rho_no_new = rho_keeping(app, slowdown, kept);
  if (placing.empty()) query.gang = config_.gpus_per_job;
  // Its GPUs whose leases end now: won back, its jobs keep running there (no move to an equal placement).
  std::vector<GpuIndex> renewing;
  std::set_intersection(held_.begin(), held_.end(), offered.begin(), offered.end(), std::back_inserter(renewing));
  query.renewing = renewing;
  for (int l = 0; l < kLocalityLevels; ++l) {
    query.slowdown[static_cast<std::size_t>(l)] = slowdown.slowdown(static_cast<Locality>(l));
  }
  return app.bid(cluster_, Offer{offer.round, offered}, query);
}

bool Agent::finished() const { return scheduler_.finished(); }

bool Agent::failed() const {
  return std::any_of(jobs_.begin(), jobs_.end(), [](const Job& j) { return j.state == JobState::kFailed; });
}

JobView Agent::job(int index) const {
  const auto& j = job_at(index);
  return {.job = index,
          .state = j.state,
          .status = scheduler_.status(index),
          .attempt = j.attempt,
          .gpus = j.gpus,
          .iterations_done = scheduler_.iterations_done(index),
          .target = scheduler_.target(index),
          .loss = scheduler_.latest_loss(index),
          .preemptions = j.preemptions,
          .failures = j.failures,
          .serial_iter_time = timing_.serial_iter_time(index)};
}

std::optional<double> Agent::best_loss() const {
  std::optional<double> best;
  bool any_finished = false;
  for (int j = 0; j < job_count(); ++j) any_finished |= scheduler_.status(j) == JobStatus::kFinished;
  for (int j = 0; j < job_count(); ++j) {
    if (any_finished && scheduler_.status(j) != JobStatus::kFinished) continue;
    const auto loss = scheduler_.latest_loss(j);
    if (loss && (!best || *loss < *best)) best = loss;
  }
  return best;
}

}  // namespace themis::launcher
