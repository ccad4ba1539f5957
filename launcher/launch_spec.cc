#include "launcher/launch_spec.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "spec/scheduler_spec.h"

namespace themis::launcher {

LaunchSpec parse_launch_spec(const std::string& toml_text, const std::string& source, int jobs) {
  // The checks are the spec library's, the same the coordinator runs at submit.
  const spec::SchedulerTable table = spec::parse_scheduler_table(toml_text, source, jobs);
  LaunchSpec spec;
  spec.scheduler.kind =
      table.kind == spec::SchedulerKind::kAllJobs ? SchedulerKind::kAllJobs : SchedulerKind::kSuccessiveHalving;
  spec.scheduler.jobs = jobs;
  spec.scheduler.phase_iterations = table.phase_iterations;
  spec.serial_iter_time = table.serial_iter_time;
  spec.max_restarts = table.max_restarts;
  spec.started_by_coordinator = table.started_by_coordinator;
  double* priors[] = {&spec.slowdown_priors.same_slot, &spec.slowdown_priors.same_machine, &spec.slowdown_priors.same_rack,
                      &spec.slowdown_priors.cross_rack};
  for (std::size_t level = 0; level < table.slowdown.size(); ++level)
    if (table.slowdown[level]) *priors[level] = *table.slowdown[level];
  try {
    HyperparameterScheduler check(spec.scheduler);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(source + ": " + e.what());
  }
  return spec;
}

std::string hparams_json(const std::map<std::string, std::string>& hparams, long long iterations) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, text] : hparams) {
    if (text == "true" || text == "false") {
      out[name] = text == "true";
      continue;
    }
    std::size_t used = 0;
    try {
      if (text.find_first_of(".eE") == std::string::npos) {
        const long long i = std::stoll(text, &used);
        if (used == text.size()) {
          out[name] = i;
          continue;
        }
      }
      const double d = std::stod(text, &used);
      if (used == text.size() && std::isfinite(d)) {
        out[name] = d;
        continue;
      }
    } catch (const std::exception&) {
    }
    out[name] = text;
  }
  out["iterations"] = iterations;
  return out.dump();
}

}  // namespace themis::launcher
