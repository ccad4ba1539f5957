#pragma once
// Admission control (Themis NSDI'20, footnote 2): an app is admitted only while the GPUs demanded by all
// admitted apps stay within a cap, max_demand_ratio x the cluster's GPUs. Apps over the cap wait, first
// come first served, with a reason saying so. Pure: the caller reads the store and applies the plan.
#include <cstdint>
#include <string>
#include <vector>

namespace themis::coordinator {

struct AdmissionConfig {
  double max_demand_ratio = 0;  // 0: admission control off, every app is admitted at once
};

struct QueuedApp {
  std::int64_t app = 0;
  std::int64_t demand_gpus = 0;  // gpus_per_job x min(max_concurrent_jobs, jobs)
};

struct AdmissionInput {
  std::int64_t cluster_gpus = 0;          // GPUs of the hosts that are up
  std::int64_t admitted_demand_gpus = 0;  // summed demand of the admitted apps still active
  std::vector<QueuedApp> queue; // apps waiting for admission, oldest first
};

// Where a plan stands after deciding part of the queue: the demand counted so far (the admitted apps' and
// that of every queued app decided, admitted or waiting) and whether one of those apps waits.
struct AdmissionProgress {
  std::int64_t demand_gpus = 0;
  bool blocked = false;
  bool operator==(const AdmissionProgress&) const = default;
};

struct AdmissionPlan {
  std::vector<std::int64_t> admit;  // in queue order
  struct Waiting {
    std::int64_t app = 0;
    std::string reason;  // "queued: admission (demand X GPUs would exceed cap Y)"
  };
  std::vector<Waiting> wait;
  AdmissionProgress after;  // after the last app of the queue
};

// The cap in GPUs: floor(ratio x cluster GPUs).
std::int64_t admission_cap_gpus(const AdmissionConfig& config, std::int64_t cluster_gpus);

// Admits queued apps in order while the aggregate demand stays within the cap. Strict FIFO: once one app
// waits, every later one waits too, so a large app is not starved by small ones. An app is always
// admitted when no admitted app is active (even one larger than the cap), so nothing waits forever.
AdmissionPlan plan_admission(const AdmissionConfig& config, const AdmissionInput& input);

// Decides apps that join the end of a queue already decided up to `before` (the `after` of its plan, with
// the same cluster). An app's decision depends only on the apps ahead of it, so this gives exactly the
// decisions plan_admission gives these apps when it plans the whole queue: a new arrival costs O(1)
// instead of a re-plan of everything ahead of it.
AdmissionPlan plan_admission_after(const AdmissionConfig& config, std::int64_t cluster_gpus, AdmissionProgress before,
                                   const std::vector<QueuedApp>& arrivals);

}  // namespace themis::coordinator
