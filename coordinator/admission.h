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

struct AdmissionPlan {
  std::vector<std::int64_t> admit;  // in queue order
  struct Waiting {
    std::int64_t app = 0;
    std::string reason;  // "queued: admission (demand X GPUs would exceed cap Y)"
  };
  std::vector<Waiting> wait;
};

// The cap in GPUs: floor(ratio x cluster GPUs).
std::int64_t admission_cap_gpus(const AdmissionConfig& config, std::int64_t cluster_gpus);

// Admits queued apps in order while the aggregate demand stays within the cap. Strict FIFO: once one app
// waits, every later one waits too, so a large app is not starved by small ones. An app is always
// admitted when no admitted app is active (even one larger than the cap), so nothing waits forever.
AdmissionPlan plan_admission(const AdmissionConfig& config, const AdmissionInput& input);

}  // namespace themis::coordinator
