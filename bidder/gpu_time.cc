#include "bidder/gpu_time.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "bidder/input_checks.h"

namespace themis::bidder {
namespace {
constexpr const char* kWhere = "GPU-time record";

template <class Map, class Key>
Seconds lookup(const Map& map, const Key& key) {
  auto it = map.find(key);
  return it == map.end() ? 0 : it->second;
}
}  // namespace

void GpuTimeLedger::record(AppId app, JobId job, std::span<const GpuIndex> gpus, Seconds from, Seconds to) {
  if (gpus.empty()) detail::reject(kWhere, "gpus", "non-empty", 0);
  std::vector<GpuIndex> sorted(gpus.begin(), gpus.end());
  std::sort(sorted.begin(), sorted.end());
  if (sorted.front() < 0) detail::reject(kWhere, "gpus", "GPU indices >= 0", sorted.front());
  if (auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end())
    detail::reject(kWhere, "gpus", "distinct; listed twice", *dup);
  if (!std::isfinite(from)) detail::reject(kWhere, "from", "finite", from);
  if (!std::isfinite(to) || to < from)
    detail::reject(kWhere, "to", ">= from (" + detail::format_number(from) + ")", to);
  const Seconds duration = to - from;
  for (GpuIndex g : sorted) tasks_[{app, job, g}] += duration;
  const Seconds gpu_time = duration * static_cast<double>(sorted.size());
  jobs_[{app, job}] += gpu_time;
  apps_[app] += gpu_time;
  total_ += gpu_time;
}

Seconds GpuTimeLedger::task(AppId app, JobId job, GpuIndex gpu) const { return lookup(tasks_, std::tuple{app, job, gpu}); }
Seconds GpuTimeLedger::job(AppId app, JobId job) const { return lookup(jobs_, std::pair{app, job}); }
Seconds GpuTimeLedger::app(AppId app) const { return lookup(apps_, app); }

}  // namespace themis::bidder
