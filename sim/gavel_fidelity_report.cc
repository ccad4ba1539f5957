#include "sim/gavel_fidelity_report.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace themis::sim {
namespace {

const char* status_of(const GavelJobResult& job) {
  if (job.completed) return "completed";
  return job.dropped ? "dropped" : "unfinished";
}

long long count_if_status(const GavelFidelityResult& result, bool completed) {
  long long n = 0;
  for (const GavelJobResult& j : result.jobs) n += (completed ? j.completed : j.dropped) ? 1 : 0;
  return n;
}

std::string format(const char* fmt, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

}  // namespace

Seconds gavel_average_jct(const GavelFidelityResult& result) {
  Seconds sum = 0;
  long long n = 0;
  for (const GavelJobResult& j : result.jobs)
    if (j.completed) {
      sum += j.jct;
      ++n;
    }
  return n == 0 ? 0 : sum / static_cast<double>(n);
}

std::string gavel_fidelity_table(const GavelFidelityResult& result, const GavelFidelitySettings& settings) {
  std::string out;
  out += format("fidelity gavel, policy fifo: %d GPUs, %.0f s rounds, re-solve at most every %.0f s\n",
                settings.gpus, settings.round, settings.resolve_interval);
  out += format("jobs %zu, completed %lld, dropped %lld\n", result.jobs.size(), count_if_status(result, true),
                count_if_status(result, false));
  out += format("average JCT (completed jobs) %.1f s, makespan %.1f s\n", gavel_average_jct(result), result.makespan);
  out += format("rounds %lld, re-solves %lld, idle waits for a re-solve %lld\n", result.rounds, result.resolves,
                result.idle_waits);
  out += "job\tarrival\tgpus\tstatus\tjct\n";
  for (const GavelJobResult& j : result.jobs)
    out += format("%zu\t%.1f\t%d\t%s\t%.1f\n", j.index, j.arrival, j.gpus, status_of(j), j.completed ? j.jct : 0.0);
  return out;
}

std::string gavel_fidelity_json(const GavelFidelityResult& result, const GavelFidelitySettings& settings) {
  nlohmann::ordered_json j;
  j["fidelity"] = "gavel";
  j["policy"] = "fifo";
  j["gpus"] = settings.gpus;
  j["round"] = settings.round;
  j["resolve_interval"] = settings.resolve_interval;
  j["completed"] = count_if_status(result, true);
  j["dropped"] = count_if_status(result, false);
  j["avg_jct"] = gavel_average_jct(result);
  j["makespan"] = result.makespan;
  j["rounds"] = result.rounds;
  j["resolves"] = result.resolves;
  j["idle_waits"] = result.idle_waits;
  auto& jobs = j["jobs"] = nlohmann::ordered_json::array();
  for (const GavelJobResult& r : result.jobs)
    jobs.push_back({{"index", r.index}, {"name", r.name}, {"arrival", r.arrival}, {"gpus", r.gpus},
                    {"total_steps", r.total_steps}, {"status", status_of(r)}, {"finish", r.finish}, {"jct", r.jct}});
  return j.dump() + "\n";
}

}  // namespace themis::sim
