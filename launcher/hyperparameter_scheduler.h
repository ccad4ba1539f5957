#pragma once
// The app's hyper-parameter scheduler (Themis §4.3.2: the "app-scheduler" beside the Agent).
//
// Two kinds:
//   - kAllJobs: every job runs its phase_iterations[0] iterations (a single-job app is one such job;
//     a grid of independent jobs is several);
//   - kSuccessiveHalving: n jobs (a power of two); phase i runs J_i = n / 2^i jobs for I_i more
//     iterations each; when the last job of a phase reaches its target, the half with the lowest latest
//     loss goes on (early stopping by loss) and the rest stop. Phases: len(phase_iterations), at most
//     log2(n) + 1 (4 jobs: 4, 2, 1). A job's target is cumulative: a survivor resumes from its checkpoint
//     and trains to I_0 + ... + I_i.
// Ranking: lower latest loss first; a job that reported no loss ranks after every job that did; ties
// go to the lower job index. Pure: progress comes in through report().
#include <optional>
#include <string_view>
#include <vector>

namespace themis::launcher {

enum class SchedulerKind { kAllJobs, kSuccessiveHalving };
std::string_view to_string(SchedulerKind kind);

enum class JobStatus {
  kActive,       // in the current phase, below its target
  kPhaseDone,    // reached the current phase's target; waits for the phase to end
  kStoppedEarly, // dropped at the end of a phase
  kFinished,     // reached the last phase's target
};
std::string_view to_string(JobStatus status);

struct SchedulerSpec {
  SchedulerKind kind = SchedulerKind::kAllJobs;
  int jobs = 1;                          // >= 1; a power of two for successive halving
  std::vector<double> phase_iterations;  // iterations added per phase; each >= 1; one entry for kAllJobs
};

// What a restarted launcher resumes the scheduler from (docs/launcher.md, "Managed launchers").
struct SchedulerProgress {
  int phase = 0;
  std::vector<JobStatus> status;               // one per job
  std::vector<double> done;                    // iterations done
  std::vector<std::optional<double>> loss;     // latest loss
};

class HyperparameterScheduler {
 public:
  // Throws std::invalid_argument naming the bad field.
  explicit HyperparameterScheduler(const SchedulerSpec& spec);

  const SchedulerSpec& spec() const { return spec_; }
  int phase() const { return phase_; }
  int phases() const { return static_cast<int>(spec_.phase_iterations.size()); }
  // Jobs of the current phase (its survivors), in job order.
  const std::vector<int>& current_jobs() const { return current_; }
  JobStatus status(int job) const;
  // Cumulative iteration the job trains to in the current phase (its total if it finished).
  double target(int job) const;
  double iterations_done(int job) const;
  std::optional<double> latest_loss(int job) const;
  // Jobs that should be running now: active ones.
  std::vector<int> runnable_jobs() const;
  bool finished() const;

  // Progress of `job` (iterations completed so far, its latest loss if any). Never moves back.
  void report(int job, double iterations_done, std::optional<double> loss);
  // Ends the phase once every current job reached its target: the best half by latest loss goes on.
  // Returns the jobs stopped early by this call (empty when the phase is not over).
  std::vector<int> advance_if_phase_done();

  SchedulerProgress progress() const;
  // Takes over a progress saved by progress() for the same spec. Throws std::invalid_argument when it
  // does not fit (job count, phase out of range).
  void restore(const SchedulerProgress& progress);

 private:
  void check_job(int job) const;
  double cumulative_target(int phase) const;

  SchedulerSpec spec_;
  int phase_ = 0;
  std::vector<int> current_;
  std::vector<JobStatus> status_;
  std::vector<double> done_;
  std::vector<std::optional<double>> loss_;
};

}  // namespace themis::launcher
