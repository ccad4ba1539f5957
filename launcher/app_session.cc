#include "launcher/app_session.h"

#include <algorithm>
#include <csignal>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "launcher/launch_spec.h"
#include "worker/report_format.h"

namespace themis::launcher {
namespace {

template <typename T>
bool parse_number(std::string_view text, T& out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::optional<JobName> parse_job_name(std::string_view name) {
  const auto underscore = name.find('_');
  const auto at = name.find('@');
  if (underscore == std::string_view::npos || at == std::string_view::npos || at < underscore) return std::nullopt;
  JobName out;
  if (!parse_number(name.substr(0, underscore), out.app) ||
      !parse_number(name.substr(underscore + 1, at - underscore - 1), out.job) ||
      !parse_number(name.substr(at + 1), out.attempt)) {
    return std::nullopt;
  }
  return out;
}

AppSession::AppSession(const Cluster& cluster, const AgentConfig& config,
                       std::vector<std::map<std::string, std::string>> hparams, std::map<std::string, std::string> report_env,
                       Seconds start, int active_apps)
    : config_(config),
      agent_(cluster, config, start, active_apps),
      hparams_(std::move(hparams)),
      report_env_(std::move(report_env)) {
  hparams_.resize(static_cast<std::size_t>(config.scheduler.jobs));
  stopped_early_told_.assign(hparams_.size(), false);
}

void AppSession::on_launch_refused(int job, int attempt, const std::string& why) {
  attempts_.erase({job, attempt});
  agent_.on_launch_refused(job, attempt);
  notes_.push_back("job " + std::to_string(job) + " attempt " + std::to_string(attempt) + " refused: " + why);
}

std::vector<std::string> AppSession::take_notes() {
  std::vector<std::string> out;
  out.swap(notes_);
  return out;
}

std::vector<int> AppSession::take_stopped_early() {
  std::vector<int> out;
  for (int j = 0; j < agent_.job_count(); ++j) {
    if (agent_.scheduler().status(j) == JobStatus::kStoppedEarly && !stopped_early_told_[static_cast<std::size_t>(j)]) {
      stopped_early_told_[static_cast<std::size_t>(j)] = true;
      out.push_back(j);
    }
  }
  return out;
}

std::string AppSession::job_name(int job, int attempt) const {
  return std::to_string(config_.app) + "_" + std::to_string(job) + "@" + std::to_string(attempt);
}

Bid AppSession::on_offer(const Offer& offer, int active_apps, Seconds now) {
  agent_.set_active_apps(active_apps, now);
  return agent_.bid(offer, now);
}

void AppSession::on_contention(int active_apps, double ahead, Seconds now) {
  agent_.set_active_apps(active_apps, now);
  agent_.set_contention_ahead(ahead);
}

void AppSession::on_leases(std::vector<GpuIndex> held, Seconds /*now*/, bool probe) {
  agent_.set_held_gpus(std::move(held), probe);
}

void AppSession::on_held_leases(const std::vector<HeldLease>& leases, Seconds /*now*/, bool probe) {
  agent_.set_held_leases(leases, probe);
}

void AppSession::on_rank_exit(int job, int attempt, int /*rank*/, int exit_code, int signal, bool stop_ordered, Seconds now) {
  const auto it = attempts_.find({job, attempt});
  if (it == attempts_.end()) {
    if (job >= 0 && job < agent_.job_count()) agent_.on_earlier_attempt_exit(job);
    return;
  }
  auto& a = it->second;
  ++a.ranks_exited;
  a.all_zero = a.all_zero && exit_code == 0 && signal == 0;
  a.only_stop_signal = a.only_stop_signal && ((exit_code == 0 && signal == 0) || signal == SIGTERM);
  a.stop_requested = a.stop_requested || stop_ordered;
  if (a.ranks_exited >= a.world_size) finish_attempt(job, attempt, now);
}

void AppSession::finish_attempt(int job, int attempt, Seconds now) {
  const auto it = attempts_.find({job, attempt});
  if (it == attempts_.end()) return;
  const Attempt a = it->second;
  attempts_.erase(it);
  ExitKind kind = ExitKind::kFailed;
  // An ordered stop that the ranks obeyed before rank 0 reported anything (say, still loading LibTorch) is
  // a preemption with nothing checkpointed, not a failure: it must not spend the job's retry budget.
  const bool stopped_before_reporting = !a.rank0_status && a.stop_requested && a.only_stop_signal;
  if (a.rank0_status) {
    if (*a.rank0_status == "completed") kind = ExitKind::kCompleted;
    else if (*a.rank0_status == "preempted") kind = ExitKind::kPreempted;
  } else if (a.all_zero) {
    kind = a.stop_requested ? ExitKind::kPreempted : ExitKind::kCompleted;
  } else if (stopped_before_reporting) {
    kind = ExitKind::kPreempted;
  }
  // A rank that died does not make a completed or checkpointed exit a failure if rank 0 said so and
  // every rank exited 0; a non-zero exit with a "completed" status is still a failure.
  if (!a.all_zero && kind != ExitKind::kFailed && !stopped_before_reporting) kind = ExitKind::kFailed;
  const int phase_before = agent_.scheduler().phase();
  agent_.on_exit(job, attempt, kind, a.last_iteration, now);
  const char* what = kind == ExitKind::kCompleted ? "completed"
                     : stopped_before_reporting   ? "stopped by the coordinator (rank 0 sent no exit status)"
                     : kind == ExitKind::kPreempted ? "preempted (checkpointed)"
                                                    : "failed";
  notes_.push_back("job " + std::to_string(job) + " attempt " + std::to_string(attempt) + " " + what + " at iteration " +
                   std::to_string(a.last_iteration));
  if (agent_.scheduler().phase() != phase_before) {
    std::string kept;
    for (int j : agent_.scheduler().current_jobs()) kept += (kept.empty() ? "" : ", ") + std::to_string(j);
    notes_.push_back("phase " + std::to_string(phase_before + 1) + " done: jobs " + kept + " go on (lowest loss)");
  }
}

void AppSession::on_report_line(std::string_view line, Seconds now) {
  worker::Report report;
  try {
    report = worker::parse_report_line(line);
  } catch (const std::invalid_argument&) {
    ++dropped_reports_;
    return;
  }
  const auto name = parse_job_name(report.job);
  if (!name || name->app != config_.app || name->job < 0 || name->job >= agent_.job_count()) {
    ++dropped_reports_;
    return;
  }
  const auto it = attempts_.find({name->job, name->attempt});
  if (report.iteration) {
    const auto& r = *report.iteration;
    std::optional<double> loss;
    if (std::isfinite(r.loss)) loss = r.loss;
    agent_.on_iteration(name->job, name->attempt, report.rank, r.iteration, r.seconds, loss, now);
    if (it != attempts_.end() && report.rank == 0) it->second.last_iteration = r.iteration;
  } else if (report.event) {
    const auto& e = *report.event;
    if (e.event == "start" && report.rank == 0) {
      std::int64_t resumed = -1;
      if (const auto f = e.fields.find("resumed_from"); f != e.fields.end()) parse_number(std::string_view(f->second), resumed);
      agent_.on_worker_start(name->job, name->attempt, resumed, now);
      notes_.push_back("job " + std::to_string(name->job) + " attempt " + std::to_string(name->attempt) + " started" +
                       (resumed >= 0 ? " (resumed from iteration " + std::to_string(resumed) + ")" : " (fresh)"));
    } else if (e.event == "exit" && report.rank == 0 && it != attempts_.end()) {
      const auto status = e.fields.find("status");
      it->second.rank0_status = status == e.fields.end() ? "unknown" : status->second;
      it->second.last_iteration = std::max(it->second.last_iteration, e.iteration);
    }
  }
}

std::vector<JobLaunch> AppSession::take_launches(Seconds now) {
  std::vector<JobLaunch> out;
  for (auto& launch : agent_.take_launches(now)) {
    JobLaunch j{launch.job, launch.attempt, launch.gpus, {}};
    j.env["THEMIS_HPARAMS"] = hparams_json(hparams_[static_cast<std::size_t>(launch.job)], launch.iterations);
    j.env["THEMIS_JOB_ID"] = job_name(launch.job, launch.attempt);
    j.env.insert(report_env_.begin(), report_env_.end());
    Attempt a;
    a.world_size = static_cast<int>(launch.gpus.size());
    a.launch = j;
    attempts_[{launch.job, launch.attempt}] = a;
    out.push_back(std::move(j));
  }
  return out;
}

std::optional<JobLaunch> AppSession::launch_of(int job, int attempt) const {
  const auto it = attempts_.find({job, attempt});
  if (it == attempts_.end() || it->second.launch.gpus.empty()) return std::nullopt;
  return it->second.launch;
}

std::vector<StopCommand> AppSession::take_stops() {
  auto stops = agent_.take_stops();
  for (const auto& stop : stops) {
    if (const auto it = attempts_.find({stop.job, stop.attempt}); it != attempts_.end()) it->second.stop_requested = true;
  }
  return stops;
}

AppStatus AppSession::status(Seconds now) const {
  AppStatus s;
  s.rho = agent_.current_rho(now);
  s.remaining = agent_.remaining_at_fair_share(now);
  s.finished = agent_.finished();
  s.failed = agent_.failed();
  s.best_loss = agent_.best_loss();
  s.demand = agent_.extra_demand();
  s.release = agent_.idle_gpus();
  const bidder::SlowdownModel slowdown = agent_.timing().slowdown();
  for (int level = 0; level < kLocalityLevels; ++level) s.slowdowns[static_cast<std::size_t>(level)] = slowdown.slowdown(static_cast<Locality>(level));
  const auto& scheduler = agent_.scheduler();
  // Iterations the scheduler runs in all: Σ_i J_i · I_i (phase i runs J_i jobs for I_i more iterations).
  double planned = 0, done = 0;
  for (int phase = 0; phase < scheduler.phases(); ++phase) {
    const int jobs = scheduler.spec().kind == SchedulerKind::kSuccessiveHalving ? std::max(1, scheduler.spec().jobs >> phase)
                                                                                 : scheduler.spec().jobs;
    planned += jobs * scheduler.spec().phase_iterations[static_cast<std::size_t>(phase)];
  }
  for (int j = 0; j < agent_.job_count(); ++j) {
    const auto view = agent_.job(j);
    done += std::min(view.iterations_done, view.target);
  }
  s.progress = planned > 0 ? std::clamp(done / planned, 0.0, 1.0) : 0;
  if (s.finished) s.progress = 1;
  s.iterations_planned = static_cast<std::uint64_t>(std::llround(planned));
  s.iterations_done = std::min(s.iterations_planned, static_cast<std::uint64_t>(std::llround(done)));
  if (s.finished) s.phase = "done";
  else if (scheduler.spec().kind == SchedulerKind::kSuccessiveHalving) {
    s.phase = "halving " + std::to_string(scheduler.phase() + 1) + "/" + std::to_string(scheduler.phases());
  } else {
    s.phase = "train";
  }
  int running = 0, waiting = 0, stopped = 0, finished = 0;
  for (int j = 0; j < agent_.job_count(); ++j) {
    const auto view = agent_.job(j);
    if (view.status == JobStatus::kStoppedEarly) ++stopped;
    else if (view.status == JobStatus::kFinished) ++finished;
    else if (view.state == JobState::kStarting || view.state == JobState::kRunning || view.state == JobState::kStopping) ++running;
    else if (view.state == JobState::kWaiting) ++waiting;
  }
  std::ostringstream out;
  if (scheduler.spec().kind == SchedulerKind::kSuccessiveHalving) {
    out << "phase " << scheduler.phase() + 1 << "/" << scheduler.phases() << ", ";
  }
  out << running << " running, " << waiting << " waiting, " << finished << " finished";
  if (stopped) out << ", " << stopped << " stopped early";
  s.summary = out.str();
  return s;
}

std::string AppSession::saved_state() const {
  const auto progress = agent_.scheduler().progress();
  nlohmann::json jobs = nlohmann::json::array();
  for (int j = 0; j < agent_.job_count(); ++j) {
    const auto i = static_cast<std::size_t>(j);
    const bool reached = progress.status[i] != JobStatus::kActive;
    nlohmann::json job = {{"status", to_string(progress.status[i])}, {"failures", agent_.job(j).failures}};
    if (reached) {
      job["done"] = progress.done[i];
      job["loss"] = progress.loss[i] ? nlohmann::json(*progress.loss[i]) : nlohmann::json(nullptr);
    }
    jobs.push_back(std::move(job));
  }
  nlohmann::json state = {{"phase", progress.phase}, {"jobs", jobs}};
  if (const auto probe = agent_.probe_time()) state["probe_time"] = *probe;
  return state.dump();
}

void AppSession::restore_state(const std::string& state) {
  const auto doc = nlohmann::json::parse(state, nullptr, false);
  if (!doc.is_object() || !doc.contains("phase") || !doc.contains("jobs") || !doc["jobs"].is_array() ||
      static_cast<int>(doc["jobs"].size()) != agent_.job_count()) {
    throw std::invalid_argument("saved launcher state does not fit this app: " + state.substr(0, 200));
  }
  SchedulerProgress progress;
  std::vector<int> failures;
  try {
    progress.phase = doc["phase"].get<int>();
    for (const auto& job : doc["jobs"]) {
      const std::string status = job.at("status").get<std::string>();
      std::optional<JobStatus> parsed;
      for (const auto s : {JobStatus::kActive, JobStatus::kPhaseDone, JobStatus::kStoppedEarly, JobStatus::kFinished}) {
        if (to_string(s) == status) parsed = s;
      }
      if (!parsed) throw std::invalid_argument("unknown job status \"" + status + "\"");
      progress.status.push_back(*parsed);
      progress.done.push_back(job.value("done", 0.0));
      const auto loss = job.find("loss");
      progress.loss.push_back(loss != job.end() && loss->is_number() ? std::optional<double>(loss->get<double>())
                                                                     : std::nullopt);
      failures.push_back(job.value("failures", 0));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("saved launcher state: ") + e.what());
  }
  std::optional<Seconds> probe_time;
  if (const auto probe = doc.find("probe_time"); probe != doc.end()) {
    probe_time = probe->is_number() ? probe->get<double>() : -1.0;
    if (!(*probe_time >= 0) || !std::isfinite(*probe_time))
      throw std::invalid_argument("saved launcher state: probe_time must be a number >= 0, got " + probe->dump());
  }
  agent_.restore_progress(progress, failures);
  if (probe_time) agent_.restore_probe_time(*probe_time);
  notes_.push_back("resumed the scheduler of an earlier launcher: phase " + std::to_string(progress.phase + 1) + ", " +
                   status(0).summary);
}

}  // namespace themis::launcher
