#pragma once
// An app spec's [scheduler] table (docs/launcher.md): how the app's launcher schedules its jobs. Checked
// here, by the code both the coordinator (at submit) and the launcher (when it starts) run, so a spec the
// launcher would refuse is refused at submit instead of after a launcher crash.
//
//   [scheduler]
//   kind = "successive-halving"        # or "all-jobs" (the default: every job to `iterations`)
//   phase_iterations = [20, 20, 40]    # successive halving: iterations added in each phase
//   iterations = 200                   # all-jobs: iterations of every job
//   serial_iter_time = 0.05            # optional: seconds per iteration on one GPU before any is measured
//   max_restarts = 3                   # optional: failures per job before the app fails
//   launcher = "coordinator"           # or "foreground": who starts themis-launch
//   [scheduler.slowdown]               # optional: how much slower one job runs placed at a level, each >= 1,
//   same_rack = 2.0                    # until its own iterations measure it (same_slot, same_machine,
//   cross_rack = 4.0                   # same_rack, cross_rack; unset: the launcher's priors)
#include <array>
#include <optional>
#include <string>
#include <vector>

namespace themis::spec {

enum class SchedulerKind { kAllJobs, kSuccessiveHalving };

struct SchedulerTable {
  bool present = false;  // the spec has a [scheduler] table
  SchedulerKind kind = SchedulerKind::kAllJobs;
  // Iterations added per phase, each >= 1: one entry for all-jobs; for successive halving at most
  // log2(jobs) + 1 entries, the job count a power of two.
  std::vector<double> phase_iterations{100};
  double serial_iter_time = 1.0;
  int max_restarts = 3;
  // The coordinator starts the app's launcher through a nodelet (and restarts it); false: the user runs
  // themis-launch in the foreground.
  bool started_by_coordinator = true;
  // [scheduler.slowdown]: S per locality level (same slot, same machine, same rack, cross rack), each >= 1;
  // an unset level keeps the launcher's prior (bidder/slowdown.h).
  std::array<std::optional<double>, 4> slowdown{};
};
inline constexpr std::array<const char*, 4> kSlowdownKeys = {"same_slot", "same_machine", "same_rack", "cross_rack"};

// `jobs`: how many hyper-parameter jobs the spec expands to. Throws std::invalid_argument
// "<source>:<line>:<column>: scheduler.<field>: <reason>" (the table itself: "scheduler: <reason>").
SchedulerTable parse_scheduler_table(const std::string& toml_text, const std::string& source, int jobs);

}  // namespace themis::spec
