#include "launcher/hyperparameter_scheduler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace themis::launcher {

std::string_view to_string(SchedulerKind kind) {
  return kind == SchedulerKind::kAllJobs ? "all-jobs" : "successive-halving";
}

std::string_view to_string(JobStatus status) {
  switch (status) {
    case JobStatus::kActive: return "active";
    case JobStatus::kPhaseDone: return "phase-done";
    case JobStatus::kStoppedEarly: return "stopped-early";
    case JobStatus::kFinished: return "finished";
  }
  return "?";
}

HyperparameterScheduler::HyperparameterScheduler(const SchedulerSpec& spec) : spec_(spec) {
  const std::string where = "scheduler (" + std::string(to_string(spec.kind)) + "): ";
  if (spec.jobs < 1) throw std::invalid_argument(where + "jobs must be >= 1, got " + std::to_string(spec.jobs));
  if (spec.phase_iterations.empty()) throw std::invalid_argument(where + "phase_iterations must not be empty");
  for (std::size_t i = 0; i < spec.phase_iterations.size(); ++i) {
    const double it = spec.phase_iterations[i];
    if (!(it >= 1) || !std::isfinite(it)) {
      throw std::invalid_argument(where + "phase_iterations[" + std::to_string(i) + "] must be >= 1, got " +
                                  std::to_string(it));
    }
  }
  if (spec.kind == SchedulerKind::kAllJobs && spec.phase_iterations.size() != 1) {
    throw std::invalid_argument(where + "phase_iterations must have exactly one entry, got " +
                                std::to_string(spec.phase_iterations.size()));
  }
  if (spec.kind == SchedulerKind::kSuccessiveHalving) {
    if ((spec.jobs & (spec.jobs - 1)) != 0) {
      throw std::invalid_argument(where + "jobs must be a power of two, got " + std::to_string(spec.jobs));
    }
    const int max_phases = static_cast<int>(std::log2(spec.jobs)) + 1;
    if (static_cast<int>(spec.phase_iterations.size()) > max_phases) {
      throw std::invalid_argument(where + "phase_iterations has " + std::to_string(spec.phase_iterations.size()) +
                                  " phases; " + std::to_string(spec.jobs) + " jobs allow at most " +
                                  std::to_string(max_phases));
    }
  }
  current_.resize(static_cast<std::size_t>(spec.jobs));
  std::iota(current_.begin(), current_.end(), 0);
  status_.assign(current_.size(), JobStatus::kActive);
  done_.assign(current_.size(), 0.0);
  loss_.assign(current_.size(), std::nullopt);
}

void HyperparameterScheduler::check_job(int job) const {
  if (job < 0 || job >= spec_.jobs) {
    throw std::invalid_argument("scheduler: job " + std::to_string(job) + " out of range 0.." +
                                std::to_string(spec_.jobs - 1));
  }
}

double HyperparameterScheduler::cumulative_target(int phase) const {
  double sum = 0;
  for (int i = 0; i <= phase; ++i) sum += spec_.phase_iterations[static_cast<std::size_t>(i)];
  return sum;
}

JobStatus HyperparameterScheduler::status(int job) const {
  check_job(job);
  return status_[static_cast<std::size_t>(job)];
}

double HyperparameterScheduler::target(int job) const {
  check_job(job);
  return cumulative_target(phase_);
}

double HyperparameterScheduler::iterations_done(int job) const {
  check_job(job);
  return done_[static_cast<std::size_t>(job)];
}

std::optional<double> HyperparameterScheduler::latest_loss(int job) const {
  check_job(job);
  return loss_[static_cast<std::size_t>(job)];
}

std::vector<int> HyperparameterScheduler::runnable_jobs() const {
  std::vector<int> jobs;
  for (int job : current_) {
    if (status_[static_cast<std::size_t>(job)] == JobStatus::kActive) jobs.push_back(job);
  }
  return jobs;
}

bool HyperparameterScheduler::finished() const {
  return std::all_of(status_.begin(), status_.end(),
                     [](JobStatus s) { return s == JobStatus::kFinished || s == JobStatus::kStoppedEarly; });
}

void HyperparameterScheduler::report(int job, double iterations_done, std::optional<double> loss) {
  check_job(job);
  const auto j = static_cast<std::size_t>(job);
  if (!(iterations_done >= 0) || !std::isfinite(iterations_done)) {
    throw std::invalid_argument("scheduler: job " + std::to_string(job) + ": iterations must be >= 0, got " +
                                std::to_string(iterations_done));
  }
  done_[j] = std::max(done_[j], iterations_done);
  if (loss && std::isfinite(*loss)) loss_[j] = loss;
  if (status_[j] == JobStatus::kActive && done_[j] >= cumulative_target(phase_)) {
    status_[j] = phase_ + 1 == phases() ? JobStatus::kFinished : JobStatus::kPhaseDone;
  }
}

std::vector<int> HyperparameterScheduler::advance_if_phase_done() {
  if (phase_ + 1 >= phases()) return {};
  for (int job : current_) {
    if (status_[static_cast<std::size_t>(job)] != JobStatus::kPhaseDone) return {};
  }
  std::vector<int> ranked = current_;
  std::stable_sort(ranked.begin(), ranked.end(), [&](int a, int b) {
    const auto& la = loss_[static_cast<std::size_t>(a)];
    const auto& lb = loss_[static_cast<std::size_t>(b)];
    if (la.has_value() != lb.has_value()) return la.has_value();
    if (la && *la != *lb) return *la < *lb;
    return a < b;
  });
  const std::size_t keep = std::max<std::size_t>(1, ranked.size() / 2);
  std::vector<int> stopped(ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end());
  current_.assign(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep));
  std::sort(current_.begin(), current_.end());
  std::sort(stopped.begin(), stopped.end());
  ++phase_;
  for (int job : stopped) status_[static_cast<std::size_t>(job)] = JobStatus::kStoppedEarly;
  const double next_target = cumulative_target(phase_);
  for (int job : current_) {
    const auto j = static_cast<std::size_t>(job);
    status_[j] = done_[j] >= next_target ? (phase_ + 1 == phases() ? JobStatus::kFinished : JobStatus::kPhaseDone)
                                         : JobStatus::kActive;
  }
  return stopped;
}

SchedulerProgress HyperparameterScheduler::progress() const { return {phase_, status_, done_, loss_}; }

void HyperparameterScheduler::restore(const SchedulerProgress& progress) {
  const auto n = static_cast<std::size_t>(spec_.jobs);
  if (progress.status.size() != n || progress.done.size() != n || progress.loss.size() != n) {
    throw std::invalid_argument("scheduler: saved progress has " + std::to_string(progress.status.size()) +
                                " jobs, the app has " + std::to_string(n));
  }
  if (progress.phase < 0 || progress.phase >= phases()) {
    throw std::invalid_argument("scheduler: saved phase " + std::to_string(progress.phase) + " out of range");
  }
  phase_ = progress.phase;
  status_ = progress.status;
  done_ = progress.done;
  loss_ = progress.loss;
  current_.clear();
  for (std::size_t j = 0; j < n; ++j) {
    if (status_[j] != JobStatus::kStoppedEarly) current_.push_back(static_cast<int>(j));
    // A job in this phase finished the previous ones (a saved state may leave its iterations out).
    if (status_[j] == JobStatus::kActive && phase_ > 0) done_[j] = std::max(done_[j], cumulative_target(phase_ - 1));
  }
}

}  // namespace themis::launcher
