#pragma once
// Microsoft ITP cluster traces (microsoft/elasticflow-traces, data/raw-traces.tar.gz, cluster01..10.csv):
//   job_id,submission_time,duration,num_gpu
// with times in seconds from the trace's start. Extract one cluster first, e.g.
//   tar -xzf raw-traces.tar.gz -C /tmp/itp cluster04.csv
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "sim/trace.h"

namespace themis::sim {

struct ItpJob {
  std::string id;
  Seconds submit = 0;
  Seconds duration = 0;  // wall-clock run time on num_gpu GPUs
  int gpus = 1;
  int line = 0;
};

// Header line first. Errors read "file:line: field: reason" (TraceError).
std::vector<ItpJob> parse_itp_csv(std::string_view text, std::string_view source_name);
std::vector<ItpJob> load_itp_csv(const std::filesystem::path& path);

struct ItpImportOptions {
  std::uint64_t seed = 1;         // the model draw
  double network_fraction = -1;   // < 0: Table 4's mix; else as --net-frac
  Seconds from_time = 0;          // keep jobs submitted in [from_time, until_time) ...
  Seconds until_time = -1;        // ... (< 0: no end)
  long long max_jobs = 0;         // then the first N by submission (0: all)
};

struct ItpImport {
  std::vector<AppSpec> apps;
  Seconds rebased_by = 0;  // the earliest kept submission, subtracted from every arrival
};

// One app per ITP job, holding one job: demand = num_gpu, serial work = duration x num_gpu GPU-seconds
// as iterations of 1 s on one GPU (so the job lasts its recorded duration on num_gpu GPUs of one
// machine), model drawn by the paper's mix with `seed` (same inputs and seed, same trace), default loss
// curve. Apps are named by job_id and sorted by submission; arrivals are rebased to 0.
ItpImport itp_to_apps(const std::vector<ItpJob>& jobs, const ItpImportOptions& options);

}  // namespace themis::sim
