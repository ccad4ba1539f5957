#pragma once
// The simulator's workload trace: one app per line, JSON lines (docs/trace-format.md).
//
//   {"name":"a1","arrival":0,"scheme":"single",
//    "jobs":[{"model":"VGG16","gpus":4,"serial_iter_time":1.0,"iterations":2400}]}
//
// Optional per job: "loss":{"a":..,"b":..,"c":..} (loss(k) = c + a/(1+k)^b) and
// "slowdown":[same_slot,same_machine,same_rack,cross_rack] (overrides the model's sensitivity),
// "elastic":true (runs on fewer GPUs than "gpus"; default false: only on all of them).
// Optional per app: "max_job_gpus" (successive halving: cap on a job's demand in later phases).
// Blank lines and lines starting with '#' are skipped.
#include <array>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"

namespace themis::sim {

// A trace that cannot be used. what() reads "<file>:<line>: <field>: <reason>".
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class HyperScheme { kSingle, kSuccessiveHalving };
std::string_view to_string(HyperScheme scheme);

// loss(k) = c + a / (1 + k)^b after k iterations.
struct LossCurve {
  double a = 1.0;
  double b = 0.5;
  double c = 0.0;
  double at(double iterations) const;
};

struct JobSpec {
  std::string model;
  int gpus = 1;                  // demand (tasks); in successive halving, the demand in phase 0
  Seconds serial_iter_time = 1;  // one iteration on one GPU
  long long iterations = 1;      // total (single) or per phase (successive halving)
  LossCurve loss;
  std::array<double, 4> slowdown{1, 1, 1, 1};  // by Locality; filled from the model if not given
  // false (the default): a gang of `gpus` workers (synchronous SGD, as Gavel's and Philly's jobs) that
  // runs only on all of its GPUs. true: it runs on fewer, at proportionally lower speed.
  bool elastic = false;
};

struct AppSpec {
  std::string name;
  Seconds arrival = 0;
  HyperScheme scheme = HyperScheme::kSingle;
  int max_job_gpus = 0;  // 0 = no cap
  std::vector<JobSpec> jobs;
};

// Parses one JSON object (one trace line). `where` prefixes errors ("file:line").
AppSpec parse_app_json(std::string_view line, std::string_view where);
// Parses a whole trace; apps are returned sorted by arrival (stable).
std::vector<AppSpec> parse_trace(std::string_view text, std::string_view source_name = "<trace>");
std::vector<AppSpec> load_trace(const std::filesystem::path& path);
// TraceError "path:0: file: cannot open (why)" unless `path` is a file this process can read; why: "no such file",
// "a directory", or the system's reason ("Permission denied").
void check_readable_file(const std::filesystem::path& path);
// A trace file's whole text; check_readable_file's TraceError when it cannot be read.
std::string read_trace_file(const std::filesystem::path& path);
// One line per app, in the same format (round-trips through parse_trace).
std::string app_to_json_line(const AppSpec& app);
std::string trace_to_jsonl(const std::vector<AppSpec>& apps);

}  // namespace themis::sim
