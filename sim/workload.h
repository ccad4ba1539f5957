#pragma once
// Synthetic workloads in the shape of the Themis paper's (§6.1), built from the real Philly job table
// (arrivals, GPU counts, durations) and the model mix of Table 4. Same options and seed, same workload.
//
// Workload 1: hyper-parameter exploration apps. 10% have one job; the rest have n jobs with n uniform
//   in [50, 100] (median 75, Themis Fig 2) divided by `job_divisor` (default 5, so median 15) to keep
//   runs fast. Jobs take 1 or 2 GPUs and their serial work from Philly rows with 1-2 GPUs.
// Workload 2: the same app arrivals; each app is successive halving (Hyperband) with n in {4, 8, 16}
//   jobs, 1 or 2 GPUs per job in phase 0 doubling every phase up to 8 ("more tasks per job").
// Arrivals are Philly submission times from a random two-week window, compressed so that the
//   offered work is `load` times what the cluster can do while apps arrive.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/rng.h"
#include "sim/model_catalog.h"
#include "sim/trace.h"

namespace themis::sim {

struct PhillyJob {
  Seconds submit = 0;  // seconds since the trace's epoch
  Seconds duration = 0;
  int gpus = 1;
};

// Reads pollux-adaptdl's philly.csv (timestamp,duration,num_gpus,gpu_time,cluster). Bad rows raise
// TraceError "file:line: field: reason".
std::vector<PhillyJob> load_philly_csv(const std::filesystem::path& path);

struct WorkloadOptions {
  int apps = 100;
  std::uint64_t seed = 1;
  double load = 3.0;
  int job_divisor = 5;
  Seconds max_job_seconds = 24 * 3600;  // Philly's longest jobs are clipped to this much serial work
  int cluster_gpus = 256;
  // Themis Figs 15-16: < 0 keeps Table 4's model mix; in [0, 1] it is the fraction of apps that train a
  // network-intensive model (VGG16/19, AlexNet, LangModel, GNMT: slowdown >= 1.19 across machines),
  // the others a compute-intensive one (Inception-v3, ResNet50: slowdown 1).
  double network_fraction = -1;
  // Workload 2 only. false: its arrivals are compressed to its own work (`load`), as every figure of
  // docs/evaluation.md uses; true: it takes Workload 1's arrival times for the same options and seed,
  // as the paper does (§6.1: "app arrival times from Workload 1"), which contends less.
  bool w2_arrivals_from_w1 = false;
};

// One model drawn by Table 4's mix (CV 10%, NLP 60%, Speech 30%, uniform within a category), or with
// network_fraction in [0, 1], network-intensive with that probability, else compute-intensive.
const ModelInfo& draw_model(Rng& rng, double network_fraction);

std::vector<AppSpec> workload1(const std::vector<PhillyJob>& philly, const WorkloadOptions& options);
std::vector<AppSpec> workload2(const std::vector<PhillyJob>& philly, const WorkloadOptions& options);

// Where the Philly table is looked for when no path is given: $THEMIS_PHILLY_CSV, then the shared
// traces folder of this repository's layout.
std::filesystem::path default_philly_csv();

}  // namespace themis::sim
