#include "sim/gavel_fidelity.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

namespace themis::sim {
namespace {

struct ActiveJob {
  std::size_t index = 0;
  int gpus = 1;
  long long total_steps = 0;
  double throughput = 0;
  Seconds arrival = 0;
  Seconds latest = 0;      // end of its last micro-task
  long long steps_run = 0;
  int failures = 0;        // failed micro-tasks in a row
  Seconds time_received = 0;  // since the last re-solve, seeded with half a round (as Gavel)
  double priority = 0;
  double deficit = 0;
};

struct MicroTask {
  Seconds finish = 0;
  std::size_t index = 0;
  long long steps = 0;
};

class GavelFifoRun {
 public:
  GavelFifoRun(const std::vector<AppSpec>& apps, const GavelFidelitySettings& settings)
      : apps_(apps), settings_(settings) {
    if (settings.gpus <= 0) throw std::invalid_argument("gavel fidelity: the cluster has no GPUs");
    if (settings.round <= 0) throw std::invalid_argument("gavel fidelity: the round length must be positive");
    for (std::size_t i = 0; i < apps.size(); ++i) {
      const AppSpec& app = apps[i];
      if (app.scheme != HyperScheme::kSingle || app.jobs.size() != 1)
        throw std::invalid_argument("gavel fidelity: app '" + app.name +
                                    "' is not one job (Gavel's traces have one job per line)");
      const JobSpec& job = app.jobs.front();
      if (job.gpus > settings.gpus)
        throw std::invalid_argument("gavel fidelity: app '" + app.name + "' needs " + std::to_string(job.gpus) +
                                    " GPUs, the cluster has " + std::to_string(settings.gpus));
      if (job.gpus <= 0 || job.serial_iter_time <= 0)
        throw std::invalid_argument("gavel fidelity: app '" + app.name +
                                    "' has no positive GPU count or iteration time");
      if (i > 0 && app.arrival < apps[i - 1].arrival)
        throw std::invalid_argument("gavel fidelity: apps must be sorted by arrival");
      GavelJobResult r;
      r.index = i;
      r.name = app.name;
      r.arrival = app.arrival;
      r.gpus = job.gpus;
      r.total_steps = job.iterations;
      // serial_iter_time is one iteration on one GPU, so the gang does gpus / serial_iter_time steps/s.
      r.throughput = static_cast<double>(job.gpus) / job.serial_iter_time;
      result_.jobs.push_back(r);
    }
  }

  GavelFidelityResult run() {
    if (apps_.empty()) return result_;
    std::size_t remaining = apps_.size();
    Seconds now = apps_.front().arrival;
    Seconds round_start = 0;
    std::optional<Seconds> round_end;
    while (remaining > 0) {
      const std::optional<Seconds> next_arrival =
          next_ < apps_.size() ? std::optional<Seconds>(apps_[next_].arrival) : std::nullopt;
      Seconds latest_finish = 0;
      for (const MicroTask& t : running_) latest_finish = std::max(latest_finish, t.finish);
      if (!running_.empty() && latest_finish > 0) {
        if (round_end) round_start = *round_end;
        round_end = latest_finish;
        now = latest_finish;
      } else if (next_arrival) {
        now = *next_arrival;
      } else if (need_resolve_) {
        now = std::max(now, last_resolve_ + settings_.resolve_interval);
        ++result_.idle_waits;
      } else {
        throw std::runtime_error("gavel fidelity: stalled at t=" + std::to_string(now) + " s with " +
                                 std::to_string(active_.size()) + " jobs left and nothing to schedule");
      }
      remaining -= settle(now, round_start);
      admit(now);
      if (remaining > 0) dispatch(now);
    }
    result_.makespan = now;
    return result_;
  }

 private:
  // Ends every micro-task of the round (all end by now); returns the jobs that left (completed or dropped).
  std::size_t settle(Seconds now, Seconds round_start) {
    std::sort(running_.begin(), running_.end(), [](const MicroTask& a, const MicroTask& b) {
      return std::tie(b.finish, a.index) < std::tie(a.finish, b.index);
    });
    std::vector<std::size_t> leaving;
    std::vector<MicroTask> still;
    for (const MicroTask& t : running_) {
      if (t.finish > now) {
        still.push_back(t);
        continue;
      }
      ActiveJob& job = active_.at(t.index);
      const Seconds execution = t.finish - round_start;
      job.latest = t.finish;
      // Each worker but the last reports steps / gpus, the last the rest: a worker with none fails it.
      const long long per_worker = t.steps / job.gpus;
      const bool succeeded = (job.gpus == 1 ? t.steps > 0 : per_worker > 0) && execution > 0;
      if (!succeeded) {
        need_resolve_ = true;
        if (++job.failures >= settings_.max_failed_attempts) {
          result_.jobs[t.index].dropped = true;
          leaving.push_back(t.index);
        }
        continue;
      }
      job.failures = 0;
      job.steps_run += t.steps;
      job.time_received += execution;
      worker_time_ += execution;
      if (job.steps_run >= job.total_steps) {
        GavelJobResult& r = result_.jobs[t.index];
        r.completed = true;
        r.finish = job.latest;
        r.jct = job.latest - job.arrival;
        leaving.push_back(t.index);
      }
    }
    running_ = std::move(still);
    for (std::size_t index : leaving) {
      active_.erase(index);
      need_resolve_ = true;
    }
    return leaving.size();
  }

  void admit(Seconds now) {
    while (next_ < apps_.size() && apps_[next_].arrival <= now) {
      const GavelJobResult& r = result_.jobs[next_];
      ActiveJob job;
      job.index = next_;
      job.gpus = r.gpus;
      job.total_steps = r.total_steps;
      job.throughput = r.throughput;
      job.arrival = r.arrival;
      job.time_received = settings_.round / 2;
      active_.emplace(next_, job);
      need_resolve_ = true;
      ++next_;
    }
  }

  // Gavel's FIFO allocation: jobs keep their GPUs until they complete; a completed job's slot goes to
  // the queue's head if it fits (counting only the jobs before it in id order), then the queue is
  // served in order until its head does not fit.
  void resolve_fifo() {
    std::deque<std::size_t> queue;
    for (const auto& [index, job] : active_)
      if (!fifo_allocated_.contains(index)) queue.push_back(index);
    int available = settings_.gpus;
    const std::vector<std::size_t> allocated(fifo_allocated_.begin(), fifo_allocated_.end());
    for (std::size_t index : allocated) {
      const auto it = active_.find(index);
      if (it == active_.end()) {
        if (!queue.empty()) {
          const std::size_t head = queue.front();
          queue.pop_front();
          if (active_.at(head).gpus <= available) {
            fifo_allocated_.insert(head);
            available -= active_.at(head).gpus;
          }
        }
        fifo_allocated_.erase(index);
      } else {
        available -= it->second.gpus;
      }
    }
    while (!queue.empty() && available > 0) {
      const std::size_t head = queue.front();
      queue.pop_front();
      if (active_.at(head).gpus > available) break;
      fifo_allocated_.insert(head);
      available -= active_.at(head).gpus;
    }
    allocation_.clear();
    for (const auto& [index, job] : active_) allocation_[index] = fifo_allocated_.contains(index) ? 1.0 : 0.0;
  }

  void reset_time_received(Seconds now) {
    const Seconds elapsed = now - last_resolve_;
    worker_time_ = 0;
    for (auto& [index, job] : active_) {
      const Seconds received = job.time_received - settings_.round / 2;
      const auto a = allocation_.find(index);
      const Seconds owed = a == allocation_.end() ? 0 : a->second * elapsed;
      job.deficit += owed - received;
      job.time_received = settings_.round / 2;
      worker_time_ += job.time_received;
    }
    last_resolve_ = now;
  }

  void update_priorities(Seconds now) {
    if (need_resolve_ && (now - last_resolve_ >= settings_.resolve_interval || last_resolve_ == 0)) {
      reset_time_received(now);
      resolve_fifo();
      need_resolve_ = false;
      ++result_.resolves;
    }
    for (auto& [index, job] : active_) {
      const double fraction = worker_time_ == 0 ? 0 : job.time_received / worker_time_;
      const auto a = allocation_.find(index);
      if (a == allocation_.end() || a->second == 0 || job.throughput == 0) {
        job.priority = 0;
      } else {
        job.priority = fraction > 0 ? a->second / fraction : a->second * 1e9;
      }
    }
  }

  void dispatch(Seconds now) {
    update_priorities(now);
    struct Entry {
      std::size_t index;
      double priority, deficit, allocation;
    };
    std::vector<Entry> entries;
    for (const auto& [index, job] : active_) {
      const auto a = allocation_.find(index);
      entries.push_back({index, job.priority, job.deficit, a == allocation_.end() ? 0.0 : a->second});
    }
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& x, const Entry& y) {
      return std::tie(y.priority, y.deficit, y.allocation) < std::tie(x.priority, x.deficit, x.allocation);
    });
    int left = settings_.gpus;
    bool any = false;
    for (const Entry& e : entries) {
      const ActiveJob& job = active_.at(e.index);
      if (left == 0 || e.priority <= 0 || job.gpus > left) continue;
      left -= job.gpus;
      const long long steps = std::min(static_cast<long long>(job.throughput * settings_.round),
                                       job.total_steps - job.steps_run);
      running_.push_back({now + static_cast<double>(steps) / job.throughput, e.index, steps});
      any = true;
    }
    if (any) ++result_.rounds;
  }

  const std::vector<AppSpec>& apps_;
  GavelFidelitySettings settings_;
  GavelFidelityResult result_;
  std::map<std::size_t, ActiveJob> active_;  // id order, which is Gavel's arrival order
  std::set<std::size_t> fifo_allocated_;
  std::map<std::size_t, double> allocation_;
  std::vector<MicroTask> running_;
  std::size_t next_ = 0;
  bool need_resolve_ = true;
  Seconds last_resolve_ = 0;
  Seconds worker_time_ = 0;
};

}  // namespace

GavelFidelityResult simulate_gavel_fifo(const std::vector<AppSpec>& apps, const GavelFidelitySettings& settings) {
  return GavelFifoRun(apps, settings).run();
}

}  // namespace themis::sim
