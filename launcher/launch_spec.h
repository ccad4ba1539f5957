#pragma once
// The launcher's part of an app spec (docs/launcher.md): the [scheduler] table, parsed and checked by the
// spec library (spec/scheduler_spec.h, the same code the coordinator runs at submit) and turned into the
// launcher's scheduler settings. The rest of the spec (command, hyper-parameters, resources) is
// spec/app_spec.h's.
#include <map>
#include <string>

#include "bidder/slowdown.h"
#include "launcher/hyperparameter_scheduler.h"

namespace themis::launcher {

struct LaunchSpec {
  SchedulerSpec scheduler;  // jobs filled in from the job count
  double serial_iter_time = 1.0;
  int max_restarts = 3;
  // The coordinator starts the app's launcher through a nodelet (and restarts it); false: the user runs
  // themis-launch in the foreground.
  bool started_by_coordinator = true;
  bidder::SlowdownPriors slowdown_priors;  // [scheduler.slowdown] over the bidder's defaults
};

// `jobs`: how many hyper-parameter jobs the spec expands to. Throws std::invalid_argument
// "<source>:<line>:<column>: scheduler.<field>: <reason>".
LaunchSpec parse_launch_spec(const std::string& toml_text, const std::string& source, int jobs);

// THEMIS_HPARAMS for a launch: the job's hyper-parameters with numbers and booleans typed (the spec keeps
// them as text), plus "iterations": the target the launcher sets.
std::string hparams_json(const std::map<std::string, std::string>& hparams, long long iterations);

}  // namespace themis::launcher
