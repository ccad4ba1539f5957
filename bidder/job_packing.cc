#include "bidder/job_packing.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "bidder/input_checks.h"

namespace themis::bidder {
namespace {

constexpr const char* kWhere = "phase packing";

Seconds job_time(Seconds work, int gpus, double slowdown) {
  return gpus == 1 ? work : work * slowdown / gpus;
}

Seconds split_gpus(const std::vector<Seconds>& work, int gpus, int cap, double slowdown) {
  struct Running {
    Seconds finish;
    std::size_t job;
    int gpus;
    bool operator<(const Running& o) const { return finish < o.finish; }  // max-heap on finish
  };
  std::priority_queue<Running> heap;
  for (std::size_t j = 0; j < work.size(); ++j) heap.push({work[j], j, 1});
  int spare = gpus - static_cast<int>(work.size());
  while (spare > 0) {
    Running slowest = heap.top();
    if (slowest.gpus >= cap) break;
    const Seconds faster = job_time(work[slowest.job], slowest.gpus + 1, slowdown);
    if (faster >= slowest.finish) break;
    heap.pop();
    heap.push({faster, slowest.job, slowest.gpus + 1});
    --spare;
  }
  return heap.top().finish;
}

// Longest processing time first: each job (longest first) to the least-loaded GPU.
Seconds longest_first(const std::vector<Seconds>& sorted_desc, int gpus) {
  std::priority_queue<Seconds, std::vector<Seconds>, std::greater<>> loads;
  for (int g = 0; g < gpus; ++g) loads.push(0);
  Seconds makespan = 0;
  for (Seconds w : sorted_desc) {
    Seconds load = loads.top() + w;
    loads.pop();
    loads.push(load);
    makespan = std::max(makespan, load);
  }
  return makespan;
}

// Branch and bound over job -> GPU assignments, jobs longest first, from the LPT schedule. Stops at
// the lower bound (no schedule beats max(longest job, total / gpus)) or after a node budget (it runs
// inside every valuation of a bid, so its time must stay small), keeping the best found.
struct Search {
  const std::vector<Seconds>& jobs;
  Seconds lower_bound;
  Seconds best;
  long nodes_left = 2000;
};

void search(Search& s, std::size_t next, std::vector<Seconds>& loads) {
  const std::vector<Seconds>& jobs = s.jobs;
  Seconds& best = s.best;
  if (best <= s.lower_bound || --s.nodes_left < 0) return;
  if (next == jobs.size()) {
    best = std::min(best, *std::max_element(loads.begin(), loads.end()));
    return;
  }
  bool tried_idle = false;  // idle GPUs are interchangeable: try one of them
  for (std::size_t g = 0; g < loads.size(); ++g) {
    if (loads[g] == 0) {
      if (tried_idle) continue;
      tried_idle = true;
    }
    if (loads[g] + jobs[next] >= best) continue;
    loads[g] += jobs[next];
    search(s, next + 1, loads);
    loads[g] -= jobs[next];
  }
}

Seconds serialize(std::vector<Seconds> work, int gpus) {
  std::sort(work.begin(), work.end(), std::greater<>());
  Seconds best = longest_first(work, gpus);
  if (static_cast<int>(work.size()) <= kExactPackingJobs) {
    Seconds total = 0;
    for (Seconds w : work) total += w;
    Search s{work, std::max(work.front(), total / gpus), best};
    std::vector<Seconds> loads(static_cast<std::size_t>(gpus), 0);
    search(s, 0, loads);
    best = s.best;
  }
  return best;
}

}  // namespace

Seconds phase_finish_time(std::span<const Seconds> serial_work, int gpus, int job_demand_max,
                          double slowdown) {
  detail::require_non_negative(kWhere, "gpus", gpus);
  detail::require_at_least(kWhere, "job_demand_max", job_demand_max, 1);
  detail::require_at_least(kWhere, "slowdown", slowdown, 1);
  std::vector<Seconds> work;
  for (Seconds w : serial_work) {
    detail::require_non_negative(kWhere, "serial_work", w);
    if (w > 0) work.push_back(w);
  }
  if (work.empty()) return 0;
  if (gpus == 0) return std::numeric_limits<double>::infinity();
  if (gpus >= static_cast<int>(work.size())) return split_gpus(work, gpus, job_demand_max, slowdown);
  return serialize(std::move(work), gpus);
}

Seconds rigid_phase_finish_time(std::span<const Seconds> serial_work, std::span<const int> job_gpus, int gpus,
                                double slowdown) {
  detail::require_non_negative(kWhere, "gpus", gpus);
  detail::require_at_least(kWhere, "slowdown", slowdown, 1);
  if (serial_work.size() != job_gpus.size())
    detail::reject(kWhere, "job_gpus", "one entry per job (" + std::to_string(serial_work.size()) + ")",
                   static_cast<int>(job_gpus.size()));
  std::vector<QueuedGang> waiting;
  for (std::size_t j = 0; j < serial_work.size(); ++j) {
    detail::require_non_negative(kWhere, "serial_work", serial_work[j]);
    detail::require_at_least(kWhere, "job_gpus", job_gpus[j], 1);
    if (serial_work[j] <= 0) continue;
    if (job_gpus[j] > gpus) return std::numeric_limits<double>::infinity();
    waiting.push_back({.time = job_time(serial_work[j], job_gpus[j], slowdown), .gpus = job_gpus[j]});
  }
  std::stable_sort(waiting.begin(), waiting.end(), [](const QueuedGang& a, const QueuedGang& b) { return a.time > b.time; });
  return list_schedule_finish({}, gpus, waiting);
}

Seconds list_schedule_finish(std::span<const RunningGang> running, int free_gpus, std::span<const QueuedGang> queued) {
  // (end time, GPUs) of the gangs holding GPUs, earliest end first.
  std::priority_queue<std::pair<Seconds, int>, std::vector<std::pair<Seconds, int>>, std::greater<>> busy;
  Seconds last = 0;
  for (const RunningGang& gang : running) {
    busy.emplace(gang.time_left, gang.gpus);
    last = std::max(last, gang.time_left);
  }
  std::vector<bool> started(queued.size(), false);
  std::size_t left = queued.size();
  Seconds now = 0;
  int free = free_gpus;
  while (left > 0) {
    for (std::size_t q = 0; q < queued.size() && free > 0; ++q) {
      if (started[q] || queued[q].gpus > free) continue;
      const Seconds end = now + queued[q].time + (queued[q].resumes && now == 0 ? 0 : queued[q].restart);
      free -= queued[q].gpus;
      busy.emplace(end, queued[q].gpus);
      last = std::max(last, end);
      started[q] = true;
      --left;
    }
    if (left == 0) break;
    if (busy.empty()) return std::numeric_limits<double>::infinity();
    now = busy.top().first;
    while (!busy.empty() && busy.top().first <= now) {
      free += busy.top().second;
      busy.pop();
    }
  }
  return last;
}

}  // namespace themis::bidder
