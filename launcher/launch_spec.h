#pragma once
// The launcher's part of an app spec (docs/launcher.md): the [scheduler] table. The rest of the spec
// (command, hyper-parameters, resources) is the coordinator's (spec/app_spec.h).
//
//   [scheduler]
//   kind = "successive-halving"        # or "all-jobs" (the default: every job to `iterations`)
//   phase_iterations = [20, 20, 40]    # successive halving: iterations added in each phase
//   iterations = 200                   # all-jobs: iterations of every job
//   serial_iter_time = 0.05            # optional: seconds per iteration on one GPU before any is measured
//   max_restarts = 3                   # optional: failures per job before the app fails
//   launcher = "coordinator"           # or "foreground": who starts themis-launch
#include <map>
#include <string>

#include "launcher/hyperparameter_scheduler.h"

namespace themis::launcher {

struct LaunchSpec {
  SchedulerSpec scheduler;  // jobs filled in from the job count
  double serial_iter_time = 1.0;
  int max_restarts = 3;
  // The coordinator starts the app's launcher through a nodelet (and restarts it); false: the user runs
  // themis-launch in the foreground.
  bool started_by_coordinator = true;
};

// `jobs`: how many hyper-parameter jobs the spec expands to. Throws std::invalid_argument
// "<source>:<line>:<column>: scheduler.<field>: <reason>".
LaunchSpec parse_launch_spec(const std::string& toml_text, const std::string& source, int jobs);

// THEMIS_HPARAMS for a launch: the job's hyper-parameters with numbers and booleans typed (the spec keeps
// them as text), plus "iterations": the target the launcher sets.
std::string hparams_json(const std::map<std::string, std::string>& hparams, long long iterations);

}  // namespace themis::launcher
