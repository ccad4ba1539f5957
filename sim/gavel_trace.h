#pragma once
// Gavel's job traces (stanford-futuredata/gavel, scheduler/traces/), read and written so that the same
// jobs replay in themis-sim and in Gavel's simulator. One job per line, tab-separated, no header:
//   physical_cluster (10 fields): job_type, command, working_directory, num_steps_arg, needs_data_dir,
//                                 total_steps, scale_factor, priority_weight, SLO, arrival_time
//   msr (7 fields, older):        job_type, command, num_steps_arg, needs_data_dir, total_steps,
//                                 arrival_time, scale_factor
// scale_factor is the job's GPU count; total_steps counts the steps of all its workers together.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "sim/gavel_throughputs.h"
#include "sim/trace.h"

namespace themis::sim {

struct GavelJob {
  std::string job_type;           // "ResNet-50 (batch size 64)"
  std::string command;
  std::string working_directory;  // empty in the msr format
  std::string num_steps_arg;
  bool needs_data_dir = true;
  long long total_steps = 1;
  int scale_factor = 1;
  double priority_weight = 1;
  double slo = -1;                // -1: none
  Seconds arrival = 0;
  int line = 0;                   // line in the source file
};

// Each line is read by its own field count (10 or 7). Blank lines are skipped. Errors read
// "file:line: field: reason" (TraceError).
std::vector<GavelJob> parse_gavel_trace(std::string_view text, std::string_view source_name);
std::vector<GavelJob> load_gavel_trace(const std::filesystem::path& path);

struct GavelImportOptions {
  GavelGpu gpu = GavelGpu::kV100;  // whose throughputs set iteration time and slowdown
  std::string name_prefix = "g";   // app k is named prefix + its source line
  long long max_jobs = 0;          // keep the first N kept jobs by arrival (0: all)
};

struct GavelImport {
  std::vector<AppSpec> apps;
  long long dropped = 0;                   // jobs with no throughput at their scale factor on the GPU
  std::vector<std::string> dropped_kinds;  // "job_type at scale factor N: count", sorted
  Seconds rebased_by = 0;                  // the earliest kept arrival, subtracted from every arrival
};

// One single-job app per Gavel job: demand = scale_factor, iterations = total_steps, serial iteration
// time = scale_factor / consolidated steps/s (the job's Gavel duration at its demand on one server),
// slowdown across machines = consolidated / unconsolidated steps/s (at least 1; across racks 1 + 3(s - 1)
// as in the model catalog; 1 where Gavel did not measure the spread placement). Jobs whose (job type,
// scale factor) has no throughput on the chosen GPU are dropped and counted; a job type the table does not know at all is an error naming its line. Arrivals are rebased
// so that the first kept job arrives at 0.
GavelImport gavel_to_apps(const std::vector<GavelJob>& jobs, const GavelThroughputs& throughputs,
                          const GavelImportOptions& options, std::string_view source_name);

// Gavel's 10-field format, one line per job, apps in trace order: job_type = the job's model, which
// must be a Gavel job type with a throughput at scale factor = its demand; total_steps = iterations;
// arrival = the app's arrival; priority 1, no SLO. Commands are Gavel's physical-cluster commands for
// the job type. Successive-halving apps have no Gavel equivalent and are refused. Errors name the app.
std::string apps_to_gavel(const std::vector<AppSpec>& apps, const GavelThroughputs& throughputs);

}  // namespace themis::sim
