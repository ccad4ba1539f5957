#include "bidder/successive_halving.h"

#include <algorithm>
#include <cmath>

#include "bidder/input_checks.h"
#include "bidder/job_packing.h"

namespace themis::bidder {
namespace {

constexpr const char* kWhere = "successive-halving app";

bool power_of_two(int n) { return n >= 1 && (n & (n - 1)) == 0; }

int max_phases(int initial_jobs) {
  int phases = 1;
  while ((initial_jobs >> (phases - 1)) > 1) ++phases;
  return phases;
}

}  // namespace

int jobs_in_phase(int initial_jobs, int phase) {
  if (phase < 0 || phase >= 31) return 1;
  return std::max(1, initial_jobs >> phase);
}

void validate(const SuccessiveHalvingApp& app) {
  detail::require_non_negative(kWhere, "elapsed", app.elapsed);
  if (!power_of_two(app.initial_jobs))
    detail::reject(kWhere, "initial_jobs", "a power of two >= 1", app.initial_jobs);
  const int phases = static_cast<int>(app.phase_iterations.size());
  if (phases < 1 || phases > max_phases(app.initial_jobs))
    detail::reject(kWhere, "phase_iterations",
                   "1 .. log2(initial_jobs) + 1 = " + std::to_string(max_phases(app.initial_jobs)) +
                       " entries long",
                   phases);
  for (std::size_t i = 0; i < app.phase_iterations.size(); ++i)
    detail::require_positive(kWhere, "phase_iterations[" + std::to_string(i) + "]", app.phase_iterations[i]);
  if (app.current_phase < 0 || app.current_phase >= phases)
    detail::reject(kWhere, "current_phase", "in 0 .. " + std::to_string(phases - 1), app.current_phase);
  const int expected = jobs_in_phase(app.initial_jobs, app.current_phase);
  if (static_cast<int>(app.current_jobs.size()) != expected)
    detail::reject(kWhere, "current_jobs", "the " + std::to_string(expected) + " jobs of phase " +
                                               std::to_string(app.current_phase),
                   static_cast<double>(app.current_jobs.size()));
  const double phase_iters = app.phase_iterations[static_cast<std::size_t>(app.current_phase)];
  for (std::size_t j = 0; j < app.current_jobs.size(); ++j) {
    const std::string field = "current_jobs[" + std::to_string(j) + "]";
    detail::require_positive(kWhere, field + ".serial_iter_time", app.current_jobs[j].serial_iter_time);
    detail::require_non_negative(kWhere, field + ".iters_left", app.current_jobs[j].iters_left);
    if (app.current_jobs[j].iters_left > phase_iters)
      detail::reject(kWhere, field + ".iters_left", "<= the phase's iterations", app.current_jobs[j].iters_left);
  }
  detail::require_at_least(kWhere, "job_demand_max", app.job_demand_max, 1);
  detail::require_at_least(kWhere, "app_demand_max", app.app_demand_max, 1);
  detail::require_positive(kWhere, "budget", app.budget);
  detail::require_at_least(kWhere, "cluster_gpus", app.cluster_gpus, 1);
  detail::require_at_least(kWhere, "n_avg", app.n_avg, 1);
}

Seconds median_serial_iter_time(const SuccessiveHalvingApp& app) {
  validate(app);
  std::vector<Seconds> times;
  for (const PhaseJob& j : app.current_jobs) times.push_back(j.serial_iter_time);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::vector<Seconds> phase_finish_times(const SuccessiveHalvingApp& app, int gpus, double slowdown,
                                        PhaseTimeModel model) {
  const Seconds median = median_serial_iter_time(app);  // validates
  detail::require_non_negative(kWhere, "gpus", gpus);
  detail::require_at_least(kWhere, "slowdown", slowdown, 1);
  std::vector<Seconds> times;
  std::vector<Seconds> work;
  for (const PhaseJob& j : app.current_jobs) {
    const Seconds t = model == PhaseTimeModel::kMedianForAllPhases ? median : j.serial_iter_time;
    work.push_back(j.iters_left * t);
  }
  times.push_back(phase_finish_time(work, gpus, app.job_demand_max, slowdown));
  for (int i = app.current_phase + 1; i < static_cast<int>(app.phase_iterations.size()); ++i) {
    work.assign(static_cast<std::size_t>(jobs_in_phase(app.initial_jobs, i)),
                app.phase_iterations[static_cast<std::size_t>(i)] * median);
    times.push_back(phase_finish_time(work, gpus, app.job_demand_max, slowdown));
  }
  return times;
}

Seconds shared_finish_time(const SuccessiveHalvingApp& app, int gpus, double slowdown, PhaseTimeModel model) {
  Seconds total = app.elapsed;
  for (Seconds t : phase_finish_times(app, gpus, slowdown, model)) total += t;
  return total;
}

Seconds cluster_finish_time(const SuccessiveHalvingApp& app) {
  validate(app);
  return app.budget / std::min(app.cluster_gpus, app.app_demand_max);
}

Seconds independent_finish_time(const SuccessiveHalvingApp& app) { return cluster_finish_time(app) * app.n_avg; }

double finish_time_fairness(const SuccessiveHalvingApp& app, int gpus, double slowdown, PhaseTimeModel model) {
  return shared_finish_time(app, gpus, slowdown, model) / independent_finish_time(app);
}

std::vector<double> iterations_from_budget(Seconds budget, int initial_jobs, int phases,
                                           Seconds serial_iter_time) {
  detail::require_positive(kWhere, "budget", budget);
  if (!power_of_two(initial_jobs)) detail::reject(kWhere, "initial_jobs", "a power of two >= 1", initial_jobs);
  if (phases < 1 || phases > max_phases(initial_jobs))
    detail::reject(kWhere, "phases", "in 1 .. log2(initial_jobs) + 1", phases);
  detail::require_positive(kWhere, "serial_iter_time", serial_iter_time);
  std::vector<double> iterations;
  Seconds left = budget;
  for (int i = 0; i < phases; ++i) {
    const double per_iteration = jobs_in_phase(initial_jobs, i) * serial_iter_time;  // GPU-seconds
    const Seconds share = i + 1 == phases ? left : budget / phases;
    // The small tolerance keeps an exact quotient (e.g. 3600 / 100) from rounding down to 35.
    const double iters = std::floor(share / per_iteration + 1e-9);
    if (iters < 1)
      detail::reject(kWhere, "budget", "enough for one iteration of every phase's jobs", budget);
    iterations.push_back(iters);
    left -= iters * per_iteration;
  }
  return iterations;
}

}  // namespace themis::bidder
