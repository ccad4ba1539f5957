// Launchers: the per-app agents that bid, pick their jobs' GPUs and report ρ (docs/launcher.md).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <variant>
#include <vector>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "bidder/contention.h"
#include "coordinator/coordinator.h"
#include "net/curve_keys.h"

namespace themis::coordinator {

using nlohmann::json;

namespace {

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f s", seconds);
  return text;
}

// How lease `id`, one of app `app`'s leases of `gpu`, ended before `now` ("expired 0.031 s before this launch
// arrived"); nullopt when it is no such lease. Called only when no lease of `gpu` to the app is active now.
std::optional<std::string> lease_end(store::JobLaunchStore& job_launches, std::int64_t id, std::int64_t app, GpuIndex gpu,
                                     double now) {
  const auto lease = job_launches.lease_of(id, app, static_cast<std::int64_t>(gpu));
  if (!lease) return std::nullopt;
  // A released lease was ended early; any other ended at its expiry (an active row past it is re-auctioned by
  // the next round).
  const bool released = lease->state == "released" && lease->released_at.has_value();
  const double ended_at = released ? *lease->released_at : lease->expiry;
  const std::string how = released ? "was released (" + lease->release_reason + ")" : "expired";
  return how + " " + seconds_text(now - ended_at) + " before this launch arrived";
}

}  // namespace

bool Coordinator::has_launcher(std::int64_t app) const { return launchers_.count(app) > 0; }

void Coordinator::check_app_access(const Caller& caller, std::int64_t app, const std::string& what) {
  const auto owner = launcher_store_.owner(app);
  if (!owner) throw not_found("app " + std::to_string(app));
  if (caller.role != net::Role::kAdmin && caller.name != *owner) {
    throw denied("app " + std::to_string(app) + " belongs to " + *owner + "; " + caller.name +
                             " cannot " + what);
  }
}

void Coordinator::require_launcher(const std::string& routing_id, std::int64_t app) {
  const auto it = launchers_.find(app);
  if (it == launchers_.end() || it->second.routing_id != routing_id) {
    throw not_found("this connection is not app " + std::to_string(app) + "'s launcher; attach first");
  }
}

bool Coordinator::app_has_ended(std::int64_t app) { return launcher_store_.has_ended(app); }

void Coordinator::on_attach(const std::string& routing_id, const Caller& caller, const net::InMessage& in) {
  const auto attach = in.envelope().getBody().getAttach();
  const std::int64_t app = attach.getApp();
  check_app_access(caller, app, "run its launcher");
  if (const auto managed = managed_.find(app);
      attach.getGeneration() != 0 && (managed == managed_.end() || managed->second.generation != attach.getGeneration())) {
    throw denied("launcher generation " + std::to_string(attach.getGeneration()) + " of app " +
                             std::to_string(app) + " is not the current one");
  }
  const auto row = launcher_store_.attached_app(app);
  if (row.state != "PENDING" && row.state != "RUNNING") throw not_found("app " + std::to_string(app) + " is " + row.state);
  net::OutMessage out(in.request_id());
  auto attached = out.body().initAttached();
  attached.setApp(app);
  attached.setName(row.name);
  attached.setSpec(row.spec);
  attached.setSubmittedAt(row.submitted_at);
  attached.setGpusPerJob(static_cast<std::uint32_t>(row.gpus_per_job));
  attached.setMaxConcurrentJobs(static_cast<std::uint32_t>(row.max_concurrent_jobs));
  attached.setLeaseMs(static_cast<std::uint32_t>(config_.lease_duration_ms));
  attached.setActiveApps(static_cast<std::uint32_t>(launcher_store_.active_app_count()));
  const auto hosts = launcher_store_.host_layouts();
  auto list = attached.initHosts(static_cast<unsigned>(hosts.size()));
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    auto host = list[static_cast<unsigned>(i)];
    host.setName(hosts[i].name);
    host.setRack(hosts[i].rack);
    host.setFirstGpu(static_cast<std::int32_t>(hosts[i].first_gpu));
    const auto& slots = hosts[i].gpus_per_slot;
    auto s = host.initGpusPerSlot(static_cast<unsigned>(slots.size()));
    for (std::size_t k = 0; k < slots.size(); ++k) s.set(static_cast<unsigned>(k), slots[k]);
  }
  const auto jobs = launcher_store_.jobs_of(app);
  auto jl = attached.initJobs(static_cast<unsigned>(jobs.size()));
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    auto job = jl[static_cast<unsigned>(i)];
    job.setJob(jobs[i].job);
    job.setHparams(jobs[i].hparams);
    job.setAttempt(static_cast<std::uint32_t>(jobs[i].attempt));
    job.setState(jobs[i].state);
  }
  if (const auto it = launchers_.find(app); it != launchers_.end() && !it->second.state.empty()) {
    attached.setLauncherState(it->second.state);
  } else if (const auto saved = launcher_store_.saved_launcher_state(app)) {
    attached.setLauncherState(*saved);
  }
  const bool replaced = launchers_.count(app) > 0;
  launchers_[app].routing_id = routing_id;
  reply(routing_id, out);
  event(env_->now(), "LauncherAttached", app, std::nullopt, "", std::nullopt,
        std::string(replaced ? "replaced the previous launcher" : "attached") + " (" + caller.name +
            (attach.getGeneration() ? ", generation " + std::to_string(attach.getGeneration()) : std::string(", by hand")) +
            ")");
  send_grant(app, 0);
  trigger("launcher attached");
}

void Coordinator::on_bid(const std::string& routing_id, const Caller& /*caller*/, const net::InMessage& in) {
  const auto bid = in.envelope().getBody().getBid();
  const std::int64_t app = bid.getApp();
  require_launcher(routing_id, app);
  // A list of empty structs costs one wire word per element: without a bound one bid could hold millions of
  // rows for the auction thread to validate. The bidder library sends 32 at most, the arbiter reads 64.
  constexpr unsigned kMaxBidRows = 4096;
  if (bid.getRows().size() > kMaxBidRows)
    throw std::runtime_error("bid: rows: app " + std::to_string(app) + " sent " + std::to_string(bid.getRows().size()) +
                             " rows; at most " + std::to_string(kMaxBidRows));
  if (!pending_offer_ || bid.getRound() != pending_offer_->round) {
    spdlog::info("late bid of app {} for round {} dropped", app, bid.getRound());
    return;
  }
  Bid out{app, bid.getRhoNoNew(), {}};
  for (const auto row : bid.getRows()) {
    // An unknown scope value stays as sent, so that validation drops the row and says why.
    BidRow r{{}, row.getRho(), static_cast<ShapeScope>(row.getScope())};
    for (const auto g : row.getGpus()) r.gpus.push_back(g);
    out.rows.push_back(std::move(r));
  }
  pending_offer_->bids[app] = std::move(out);
}

void Coordinator::on_launch_job(const std::string& routing_id, const Caller& /*caller*/, const net::InMessage& in) {
  const auto launch = in.envelope().getBody().getLaunchJob();
  const std::int64_t app = launch.getApp(), job = launch.getJob();
  const std::int64_t attempt = launch.getAttempt();
  require_launcher(routing_id, app);
  const double now = env_->now();
  std::vector<GpuIndex> gpus;
  for (const auto g : launch.getGpus()) gpus.push_back(g);
  if (gpus.empty()) throw std::runtime_error("launch: job " + std::to_string(job) + ": no GPUs");
  store::Database::Transaction tx(db_);
  const auto stored = job_launch_store_.job_attempt(app, job);
  if (!stored) throw not_found("job " + std::to_string(app) + "_" + std::to_string(job));
  const std::string state = stored->state;
  auto keep_env = [&] {
    auto& env = launch_env_[{app, job}];
    env.clear();
    for (const auto v : launch.getEnv()) env.emplace_back(v.getName(), v.getValue());
  };
  // The same launch again (the attempt it names is the job's current one): a launcher attaching to a restarted
  // coordinator sends the launches that were STARTING. One this process never sent to its hosts lost the
  // environment the coordinator keeps in memory only (the ranks' report keys are secret; jobs.launcher_env): it
  // takes it now and goes out as it would have. Once sent, or ended, a repeat changes nothing.
  if (attempt == stored->attempt && state != "PENDING") {
    net::OutMessage out(in.request_id());
    if (state == "STARTING" && !launched_.count(JobKey{app, job, attempt})) {
      const auto placed = json::parse(stored->placement_json).get<std::vector<GpuIndex>>();
      if (placed != gpus) {
        throw std::runtime_error("launch: job " + std::to_string(app) + "_" + std::to_string(job) + " attempt " +
                                 std::to_string(attempt) + " is STARTING on GPUs " + json(placed).dump() + ", not " +
                                 json(gpus).dump());
      }
      keep_env();
      awaiting_launch_env_.erase(JobKey{app, job, attempt});
      spdlog::info("job {}_{} attempt {}: its launcher sent the launch again; launching with its environment", app,
                   job, attempt);
      out.body().initAck().setMessage("launching");
    } else {
      out.body().initAck().setMessage("attempt " + std::to_string(attempt) + " is already " + state);
    }
    reply(routing_id, out);
    return;
  }
  if (state == "STARTING" || state == "RUNNING" || state == "STOPPING" || state == "CANCELLED") {
    throw std::runtime_error("launch: job " + std::to_string(app) + "_" + std::to_string(job) + " is " + state);
  }
  if (attempt <= stored->attempt) {
    throw std::runtime_error("launch: job " + std::to_string(app) + "_" + std::to_string(job) + ": attempt " +
                             std::to_string(attempt) + " is not after attempt " + std::to_string(stored->attempt));
  }
  const auto named = launch.getLeases();
  if (named.size() != 0 && named.size() != gpus.size()) {
    throw std::runtime_error("launch: job " + std::to_string(app) + "_" + std::to_string(job) + ": names " +
                             std::to_string(named.size()) + " leases for " + std::to_string(gpus.size()) + " GPUs");
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const GpuIndex g = gpus[i];
    if (!job_launch_store_.gpu_leased_to(app, static_cast<std::int64_t>(g), now)) {
      if (named.size() == 0) {
        throw denied("launch: GPU " + std::to_string(g) + " is not leased to app " + std::to_string(app));
      }
      // The launch names the lease its grant gave: if that lease has ended since, the launcher acted on a
      // grant that was out of date by the time the launch arrived (docs/protocols/control.md "Stale grants").
      const auto ended = lease_end(job_launch_store_, named[static_cast<unsigned>(i)], app, g, now);
      if (!ended) {
        throw denied("launch: lease " + std::to_string(named[static_cast<unsigned>(i)]) +
                                 " is not a lease of GPU " + std::to_string(g) + " to app " + std::to_string(app));
      }
      const std::string why = "stale grant: job " + std::to_string(app) + "_" + std::to_string(job) + " attempt " +
                              std::to_string(attempt) + ": GPU " + std::to_string(g) + "'s lease " +
                              std::to_string(named[static_cast<unsigned>(i)]) + " " + *ended +
                              "; not launched, wait for the next grant";
      spdlog::info("{}", why);
      auto out = net::make_error(in.request_id(), wire::ErrorCode::STALE_GRANT, why);
      reply(routing_id, out);
      return;  // nothing was written: the transaction rolls back
    }
    // The GPU is leased to this app, so a worker of another app (or an earlier attempt) still on it is being
    // stopped: the launch waits in STARTING until it is gone (launch_ready_jobs). Only a job of this app that is
    // still meant to run there makes the request wrong.
    if (job_launch_store_.other_job_on_gpu(app, job, static_cast<std::int64_t>(g))) {
      throw std::runtime_error("launch: GPU " + std::to_string(g) + " is in use by another job of app " +
                               std::to_string(app));
    }
  }
  // A launcher may run an ended job again (successive halving's next phase); the coordinator's rounds never do.
  const bool ended = state == "COMPLETED" || state == "FAILED";
  if (!states_.start_job(app, job, attempt, json(gpus).dump(), now, ended ? JobEvent::kRelaunched : JobEvent::kStarted)) {
    throw std::runtime_error("launch: job " + std::to_string(app) + "_" + std::to_string(job) + " is " + state +
                             "; it cannot start from there");
  }
  states_.move_app(app, AppState::kRunning, now);
  for (GpuIndex g : gpus) job_launch_store_.assign_lease_to_job(app, static_cast<std::int64_t>(g), job);
  event(now, "LaunchRequested", app, job, "", std::nullopt, "attempt " + std::to_string(attempt) + " on " + json(gpus).dump());
  tx.commit();
  keep_env();
  net::OutMessage out(in.request_id());
  out.body().initAck().setMessage("launching");
  reply(routing_id, out);
}

void Coordinator::on_stop_job(const std::string& routing_id, const Caller& /*caller*/, const net::InMessage& in) {
  const auto stop = in.envelope().getBody().getStopJob();
  const std::int64_t app = stop.getApp(), job = stop.getJob();
  require_launcher(routing_id, app);
  const std::string reason = stop.getReason();
  const double now = env_->now();
  store::Database::Transaction tx(db_);
  const auto stored = job_launch_store_.job_attempt(app, job);
  if (!stored) throw not_found("job " + std::to_string(app) + "_" + std::to_string(job));
  const std::string state = stored->state;
  if (reason == "EarlyStopped") {
    if (state == "PENDING" || state == "COMPLETED") {
      states_.move_job(app, job, JobEvent::kDropped, "EarlyStopped", now);
      event(now, "EarlyStopped", app, job, "", std::nullopt, "successive halving dropped it");
    }
  } else if (static_cast<std::int64_t>(stop.getAttempt()) == stored->attempt && (state == "STARTING" || state == "RUNNING")) {
    event(now, "StopRequested", app, job, "", std::nullopt, reason);
    stop_job(app, job, now, "Preempted");
  }
  tx.commit();
  net::OutMessage out(in.request_id());
  out.body().initAck().setMessage("ok");
  reply(routing_id, out);
}

void Coordinator::on_app_status(const std::string& routing_id, const Caller& /*caller*/, const net::InMessage& in) {
  const auto status = in.envelope().getBody().getAppStatus();
  const std::int64_t app = status.getApp();
  if (!launchers_.count(app) && app_has_ended(app)) return;  // a repeat of the final status: the app is already over
  require_launcher(routing_id, app);
  if (!status.getFinished() && !status.getFailed() && app_has_ended(app)) {
    // It ended here (a failed probe, a cancel) while its launcher runs: the error makes the launcher attach
    // again, which is refused with the app's state, and exit, also when it was started by hand.
    launchers_.erase(app);
    throw not_found("app " + std::to_string(app) + " has ended");
  }
  auto& launcher = launchers_[app];
  const double rho = status.getRho();
  if (std::isfinite(rho) && rho > 0) launcher.rho = rho;
  // A launcher that wants more than it said (a job preempted while it was silent, a new phase) may find
  // free GPUs that no other event would hand out: a round looks at them.
  const bool wants_more = static_cast<int>(status.getDemand()) > launcher.demand.value_or(0);
  launcher.demand = static_cast<int>(status.getDemand());
  if (const auto reported = status.getSlowdowns(); reported.size() > 0) {
    // A malformed list leaves the last good one in force and the rest of the status stands.
    std::vector<double> values;
    for (const double v : reported) values.push_back(v);
    const auto parsed = planner::parse_level_slowdowns(values);
    if (const auto* why = std::get_if<std::string>(&parsed)) {
      if (*why != launcher.slowdowns_problem) spdlog::warn("app {}: AppStatus {}; ignored", app, *why);
      launcher.slowdowns_problem = *why;
    } else {
      launcher.slowdowns = std::get<planner::LevelSlowdowns>(parsed);
      launcher.slowdowns_problem.clear();
    }
  }
  // How long it stays, for the other apps' forecasts; a launcher that says it is answered with its own (below).
  const double remaining = status.getRemaining();
  const bool says_remaining = std::isfinite(remaining) && remaining > 0;
  if (says_remaining) launcher.remaining = remaining;
  const bool first_progress = launcher.progress <= 0 && status.getProgress() > 0;
  launcher.progress = status.getProgress();
  launcher.iterations_done = status.getIterationsDone();
  launcher.iterations_planned = status.getIterationsPlanned();
  launcher.phase = status.getPhase();
  const double now = env_->now();
  store::Database::Transaction tx(db_);
  if (launcher.rho) launcher_store_.set_rho(app, *launcher.rho);
  const std::string summary = status.getSummary();
  const bool done = status.getFinished() || status.getFailed();
  if (const std::string state = status.getState(); !state.empty() && state != launcher.state) {
    launcher.state = state;
    event(now, "LauncherState", app, std::nullopt, "", std::nullopt, state);
  }
  if (summary != launcher.last_summary || done) {
    launcher.last_summary = summary;
    json message = {{"rho", rho}, {"progress", status.getProgress()}, {"summary", summary}};
    if (std::isfinite(status.getBestLoss())) message["best_loss"] = status.getBestLoss();
    event(now, "LauncherStatus", app, std::nullopt, "", std::nullopt, message.dump());
  }
  if (done) {
    end_launcher_app(app, status.getFailed(), "launcher: " + summary, now);
    settle_probes(now);  // an app that ended during its probe
  }
  // GPUs it gives back: no job of its runs there and none waits to start (Agent::idle_gpus). A GPU one of
  // its jobs is placed on, or no longer leased to it, stays as it is: the launcher's view may lag a launch
  // or a lease's end, and the grant that follows tells it what it holds.
  std::vector<std::int64_t> released;
  if (!done) {
    for (const std::int32_t gpu : status.getRelease()) {
      if (lease_releases_.release_unused_gpu(app, gpu, now, "given back by its launcher: no job of the app used it")) {
        released.push_back(gpu);
        event(now, "LeaseReleased", app, std::nullopt, "", std::nullopt,
              "GPU " + std::to_string(gpu) + " given back by the app's launcher before its lease ended");
      }
    }
  }
  tx.commit();
  if (!released.empty()) {
    spdlog::info("app {} gave back {} leased GPUs its jobs did not use", app, released.size());
    send_grant(app, 0);
    trigger("GPUs given back");
  }
  if (!done && says_remaining && config_.contention_ahead) send_contention_ahead(routing_id, in.request_id(), app, remaining);
  if (done) {
    launchers_.erase(app);
    trigger("app finished");
  } else if (wants_more) {
    trigger("app wants more GPUs");
  }
  if (!done && first_progress && launcher_store_.probe_running(app)) {
    trigger("probe job trained");  // the round settles the probe
  }
}

// The apps the launcher of `app` shares the cluster with, now and over the `remaining` seconds it still needs:
// every other active app until its own expected finish, as its launcher last reported it, or throughout when it
// reported none (an older launcher, an app without one). Its ranking key (AppStatus.rho) uses both.
void Coordinator::send_contention_ahead(const std::string& routing_id, std::uint64_t request_id, std::int64_t app,
                                        double remaining) {
  // Every launcher asks about once a second: the count is read from the database at most once a second too.
  const double now = env_->now();
  if (!active_count_read_at_ || now - *active_count_read_at_ >= 1.0 || now < *active_count_read_at_) {
    active_count_ = launcher_store_.active_app_count();
    active_count_read_at_ = now;
  }
  const std::int64_t active = std::max<std::int64_t>({1, active_count_, static_cast<std::int64_t>(launchers_.size())});
  std::vector<Seconds> others;
  for (const auto& [other, session] : launchers_)
    if (other != app) others.push_back(session.remaining.value_or(std::numeric_limits<double>::quiet_NaN()));
  while (static_cast<std::int64_t>(others.size()) < active - 1) others.push_back(std::numeric_limits<double>::quiet_NaN());
  net::OutMessage out(request_id);
  auto ack = out.body().initAppStatusAck();
  ack.setActiveApps(static_cast<std::uint32_t>(active));
  ack.setContentionAhead(bidder::contention_ahead(remaining, others));
  reply(routing_id, out);
}

// Inside a transaction. Stops what still runs, closes the pending jobs and the leases, ends the app.
void Coordinator::end_launcher_app(std::int64_t app, bool failed, const std::string& message, double now) {
  for (auto job : launcher_store_.running_jobs(app)) stop_job(app, job, now, failed ? "RankFailed" : "Cancelled");
  // Jobs that never ran end with their app, as dropped (a COMPLETED job already ended and stays as it is).
  states_.move_jobs_of_app(app, JobState::kPending, JobEvent::kDropped, "EarlyStopped", now);
  lease_releases_.release_app(app, now, "app finished");
  if (states_.move_app(app, failed ? AppState::kFailed : AppState::kCompleted, now)) {
    event(now, failed ? "AppFailed" : "AppCompleted", app, std::nullopt, "", std::nullopt, message);
  }
}

Coordinator::LostRanks Coordinator::ranks_on_host(std::int64_t app, std::int64_t job, const std::string& host) {
  auto ranks = job_launch_store_.ranks_on_host(app, job, host);
  return LostRanks{app, job, ranks.attempt, std::move(ranks.ranks), ""};
}

void Coordinator::forward_lost_ranks(const LostRanks& lost) {
  const auto it = launchers_.find(lost.app);
  if (it == launchers_.end()) return;
  for (const auto rank : lost.ranks) {
    net::OutMessage out(next_request_id_++);
    auto exited = out.body().initExited();
    exited.setApp(lost.app);
    exited.setJob(lost.job);
    exited.setAttempt(static_cast<std::uint32_t>(lost.attempt));
    exited.setRank(rank);
    exited.setExitCode(-1);
    exited.setSignal(9);
    exited.setLogTail(lost.why);
    reply(it->second.routing_id, out);
  }
}

void Coordinator::forward_exit(std::int64_t app, wire::Exited::Reader exited) {
  const auto it = launchers_.find(app);
  if (it == launchers_.end()) return;
  net::OutMessage out(next_request_id_++);
  auto copy = out.body().initExited();
  copy.setApp(exited.getApp());
  copy.setJob(exited.getJob());
  copy.setAttempt(exited.getAttempt());
  copy.setRank(exited.getRank());
  copy.setExitCode(exited.getExitCode());
  copy.setSignal(exited.getSignal());
  copy.setLogTail(exited.getLogTail());
  copy.setStopOrdered(job_launch_store_.stop_ordered(app, exited.getJob(), static_cast<std::int64_t>(exited.getAttempt())));
  reply(it->second.routing_id, out);
}

void Coordinator::send_grant(std::int64_t app, std::int64_t round) {
  const auto it = launchers_.find(app);
  if (it == launchers_.end()) return;
  const auto leases = grant_store_.active_leases(app);
  net::OutMessage out(next_request_id_++);
  auto grant = out.body().initGrant();
  grant.setApp(app);
  grant.setRound(round);
  grant.setProbe(grant_store_.probe_running(app));  // its one lease is the probe's (probe.cc)
  auto list = grant.initLeases(static_cast<unsigned>(leases.size()));
  for (std::size_t i = 0; i < leases.size(); ++i) {
    list[static_cast<unsigned>(i)].setGpu(static_cast<std::int32_t>(leases[i].gpu));
    list[static_cast<unsigned>(i)].setJob(leases[i].job);
    list[static_cast<unsigned>(i)].setStart(leases[i].start);
    list[static_cast<unsigned>(i)].setExpiry(leases[i].expiry);
    list[static_cast<unsigned>(i)].setId(leases[i].id);
  }
  grant.setSentAt(env_->now());
  reply(it->second.routing_id, out);
}

// ---------------------------------------------------------------- managed launchers

Coordinator::LauncherMode Coordinator::launcher_mode(std::int64_t app) {
  if (const auto it = launcher_mode_.find(app); it != launcher_mode_.end()) return it->second;
  LauncherMode mode = LauncherMode::kNone;
  if (const auto spec = launcher_store_.spec(app)) {
    try {
      const auto root = toml::parse(*spec);
      if (const auto* scheduler = root["scheduler"].as_table()) {
        // Anything but "foreground" gets one; a bad value is then reported by the launcher itself.
        mode = (*scheduler)["launcher"].value_or<std::string>("coordinator") == "foreground" ? LauncherMode::kForeground
                                                                                             : LauncherMode::kManaged;
      }
    } catch (const toml::parse_error&) {
      // The spec was parsed at submit; a stored one that no longer parses gets no launcher.
    }
  }
  launcher_mode_[app] = mode;
  return mode;
}

// The ZAP handler admits the enrolled keys plus the key of every current managed launcher, which
// acts as its app's owner (a user principal): it can do what a launcher the owner ran by hand can.
void Coordinator::enrol_launcher_keys() {
  if (!zap_) return;
  auto principals = net::read_authorized_keys(config_.authorized_keys);
  for (const auto& [app, launcher] : managed_) {
    if (!launcher.public_key.empty()) principals.push_back({launcher.owner, launcher.public_key, net::Role::kUser});
  }
  zap_->replace_principals(principals);
}

void Coordinator::start_launcher(std::int64_t app, double now) {
  auto& launcher = managed_[app];
  // The host with a live session that runs the fewest launchers; ties by name.
  std::map<std::string, int> load;
  for (const auto& [host, session] : sessions_) {
    if (!session.routing_id.empty()) load[host] = 0;
  }
  if (load.empty()) return;  // no nodelet yet: try again on a later tick
  for (const auto& [other, l] : managed_) {
    if (l.running && load.count(l.host)) ++load[l.host];
  }
  std::string host = load.begin()->first;
  for (const auto& [h, n] : load) {
    if (n < load[host]) host = h;
  }
  const auto starts = launcher_store_.launcher_starts(app);
  if (!starts) return;
  launcher.owner = starts->owner;
  // Generations count every start of the app's launcher, across coordinator restarts.
  launcher.generation = std::max<std::uint32_t>(launcher.generation, static_cast<std::uint32_t>(starts->starts)) + 1;
  launcher.host = host;
  launcher.running = true;
  launcher.started_at = now;
  net::CurveKeyPair keys;
  if (!config_.insecure) keys = net::generate_curve_keypair();
  launcher.public_key = keys.public_key;
  enrol_launcher_keys();
  auto message = std::make_unique<net::OutMessage>(next_request_id_++);
  auto start = message->body().initStartLauncher();
  start.setApp(app);
  start.setGeneration(launcher.generation);
  start.setPublicKey(keys.public_key);
  start.setSecretKey(keys.secret_key);
  start.setAccount(unix_account(config_, launcher.owner));
  outbox_.push_back({host, std::move(message)});
  event(now, "LauncherStarted", app, std::nullopt, host, std::nullopt,
        json({{"generation", launcher.generation}, {"public_key", keys.public_key}}).dump());
  spdlog::info("app {}: starting its launcher (generation {}) on {}", app, launcher.generation, host);
}

void Coordinator::supervise_launchers(double now) {
  // After a restart, give the remembered hosts time to re-register and report the launchers they run.
  const double settle = static_cast<double>(config_.heartbeat_interval_ms * config_.heartbeat_lives) / 1000.0;
  if (now - started_at_ < settle &&
      std::any_of(sessions_.begin(), sessions_.end(), [](const auto& s) { return s.second.routing_id.empty(); })) {
    return;
  }
  const std::vector<std::int64_t> active = launcher_store_.active_app_ids();
  for (const auto app : active) {
    if (!wants_managed_launcher(app)) continue;
    auto& launcher = managed_[app];
    // A launcher on a host that went down (its session is gone) is lost with it.
    if (launcher.running && !sessions_.count(launcher.host)) {
      launcher.running = false;
      ++launcher.failures;
      launcher.next_start = now;
      event(now, "LauncherLost", app, std::nullopt, launcher.host, std::nullopt,
            "generation " + std::to_string(launcher.generation) + ": its host is down");
    }
    if (launcher.running || now < launcher.next_start) continue;
    if (launcher.failures >= kLauncherMaxFailures) {
      store::Database::Transaction tx(db_);
      end_launcher_app(app, true,
                       "its launcher died " + std::to_string(launcher.failures) + " times in a row; giving up", now);
      tx.commit();
      launchers_.erase(app);
      trigger("app failed");
      continue;
    }
    start_launcher(app, now);
  }
  // Launchers of apps that ended go; their keys are withdrawn once they exited.
  std::set<std::int64_t> live(active.begin(), active.end());
  bool keys_changed = false;
  for (auto it = managed_.begin(); it != managed_.end();) {
    auto& [app, launcher] = *it;
    if (live.count(app)) {
      ++it;
      continue;
    }
    if (launcher.running && !launcher.stop_sent && sessions_.count(launcher.host)) {
      auto message = std::make_unique<net::OutMessage>(next_request_id_++);
      auto stop = message->body().initStopLauncher();
      stop.setApp(app);
      stop.setGeneration(launcher.generation);
      stop.setGraceMs(10000);
      outbox_.push_back({launcher.host, std::move(message)});
      launcher.stop_sent = true;
    }
    if (launcher.running && sessions_.count(launcher.host)) {
      ++it;
      continue;
    }
    keys_changed = keys_changed || !launcher.public_key.empty();
    it = managed_.erase(it);
  }
  if (keys_changed) enrol_launcher_keys();
}

void Coordinator::on_launcher_exited(const std::string& routing_id, const Caller& /*caller*/, const net::InMessage& in) {
  const std::string host = host_of_routing(routing_id);
  const auto exited = in.envelope().getBody().getLauncherExited();
  const std::int64_t app = exited.getApp();
  const double now = env_->now();
  net::OutMessage ack(in.request_id());
  ack.body().initAck().setMessage("launcher exit recorded");
  reply(routing_id, ack);
  const auto it = managed_.find(app);
  if (it == managed_.end() || it->second.generation != exited.getGeneration() || it->second.host != host) {
    spdlog::info("exit of launcher generation {} of app {} on {} is not the current one; ignored", exited.getGeneration(),
                 app, host);
    return;
  }
  auto& launcher = it->second;
  launcher.running = false;
  const double ran = now - launcher.started_at;
  launcher.failures = ran >= kLauncherStableSeconds ? 1 : launcher.failures + 1;
  const double backoff = std::min(kLauncherBackoffMax, std::pow(2.0, launcher.failures - 1));
  launcher.next_start = now + backoff;
  std::string tail = exited.getLogTail();
  if (tail.size() > 600) tail = tail.substr(tail.size() - 600);
  event(now, "LauncherExited", app, std::nullopt, host, std::nullopt,
        "generation " + std::to_string(launcher.generation) + ": exit " + std::to_string(exited.getExitCode()) +
            " signal " + std::to_string(exited.getSignal()) + " after " + std::to_string(static_cast<int>(ran)) + " s" +
            (tail.empty() || (exited.getExitCode() == 0 && exited.getSignal() == 0) ? "" : "; log: " + tail));
  if (const auto state = states_.app_state(app); state == AppState::kPending || state == AppState::kRunning) {
    spdlog::warn("app {}: its launcher (generation {}) exited with code {} signal {}; restart {} in {:.0f} s", app,
                 launcher.generation, exited.getExitCode(), exited.getSignal(), launcher.failures, backoff);
  }
}

// What a nodelet runs against what the coordinator expects: a launcher that is not the app's current
// one, or whose app ended, is stopped; after a coordinator restart, the current one is adopted.
void Coordinator::reconcile_launchers(const std::string& host, capnp::List<wire::RunningLauncher>::Reader running,
                                      double now) {
  std::set<std::int64_t> here;
  std::set<std::pair<std::int64_t, std::uint32_t>> stopped;  // one StopLauncher per launcher, however often listed
  bool keys_changed = false;
  for (const auto l : running) {
    const std::int64_t app = l.getApp();
    here.insert(app);
    const auto row = launcher_store_.state_and_owner(app);
    const bool active = row && (row->state == "PENDING" || row->state == "RUNNING");
    auto it = managed_.find(app);
    if (active && it == managed_.end() && wants_managed_launcher(app)) {
      // Started by an earlier coordinator process: adopt it, with the key recorded when it started.
      auto& launcher = managed_[app];
      launcher.host = host;
      launcher.generation = l.getGeneration();
      launcher.owner = row->owner;
      launcher.running = true;
      launcher.started_at = now;
      for (const auto& text : launcher_store_.launcher_started_messages(app)) {
        const auto message = json::parse(text, nullptr, false);
        if (message.is_object() && message.value("generation", 0u) == l.getGeneration()) {
          launcher.public_key = message.value("public_key", "");
          break;
        }
      }
      keys_changed = true;
      spdlog::info("app {}: adopted its launcher (generation {}) on {}", app, l.getGeneration(), host);
      continue;
    }
    const bool current = active && it != managed_.end() && it->second.generation == l.getGeneration() &&
                         it->second.host == host;
    if (current || (it != managed_.end() && it->second.stop_sent)) continue;
    if (!stopped.insert({app, l.getGeneration()}).second) continue;
    spdlog::warn("host {} runs launcher generation {} of app {}, which is not its current launcher: stopping it", host,
                 l.getGeneration(), app);
    auto message = std::make_unique<net::OutMessage>(next_request_id_++);
    auto stop = message->body().initStopLauncher();
    stop.setApp(app);
    stop.setGeneration(l.getGeneration());
    stop.setGraceMs(10000);
    outbox_.push_back({host, std::move(message)});
  }
  // A launcher started here a while ago that the nodelet does not run (its exit was lost, or the
  // nodelet restarted): restart it.
  for (auto& [app, launcher] : managed_) {
    if (launcher.host != host || !launcher.running || here.count(app) || now - launcher.started_at < 10) continue;
    launcher.running = false;
    ++launcher.failures;
    launcher.next_start = now;
    event(now, "LauncherLost", app, std::nullopt, host, std::nullopt,
          "generation " + std::to_string(launcher.generation) + ": the nodelet does not run it");
  }
  if (keys_changed) enrol_launcher_keys();
}

}  // namespace themis::coordinator
