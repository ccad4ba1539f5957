#pragma once
// GPU-time accounting. A task is one job's process on one GPU; an interval of a job on k GPUs for d
// seconds is k tasks of d GPU-seconds each. Job time = Σ its tasks; app time = Σ its jobs.
// Paper (§6.1): an app of 2 jobs × 2 GPUs for 10 minutes: each task 10, each job 20, the app 40 GPU-min.
#include <map>
#include <span>
#include <tuple>
#include <utility>

#include "core/ids.h"

namespace themis::bidder {

class GpuTimeLedger {
 public:
  // Job `job` of app `app` ran on `gpus` (non-empty, distinct) over [from, to], to >= from.
  // Throws std::invalid_argument on a bad interval.
  void record(AppId app, JobId job, std::span<const GpuIndex> gpus, Seconds from, Seconds to);

  Seconds task(AppId app, JobId job, GpuIndex gpu) const;  // 0 when never recorded
  Seconds job(AppId app, JobId job) const;
  Seconds app(AppId app) const;
  Seconds total() const { return total_; }

 private:
  std::map<std::tuple<AppId, JobId, GpuIndex>, Seconds> tasks_;
  std::map<std::pair<AppId, JobId>, Seconds> jobs_;
  std::map<AppId, Seconds> apps_;
  Seconds total_ = 0;
};

}  // namespace themis::bidder
