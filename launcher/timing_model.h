#pragma once
// Live timing of an app's jobs, learned from their workers' per-iteration reports (Themis §4.3.1 and
// footnote 3: S is profiled online, starting from placement priors).
//
// A sample is one iteration of job j on k GPUs whose widest level is L, taking t seconds. A job's gang
// size is fixed, so one iteration is a fixed amount of work and its serial time (that work on one GPU,
// no slowdown) is t · k / S(L):
//   - the job's reference level is the narrowest level it has run at; serial = mean(t · k) there divided
//     by that level's prior (1.0 for a slot or a machine, so a machine-local run measures serial time
//     directly);
//   - every wider level the job ran at gives a slowdown sample mean(t) · k / serial for the app's
//     bidder::SlowdownModel, rebuilt from these means whenever it is asked for (so an early estimate
//     of serial time does not leave stale samples behind);
//   - a job that has not run yet takes the upper median of the app's measured jobs, else the default.
// Means are running means for the first 20 samples of a level, then exponentially weighted (weight
// 1/20), so that they follow a machine whose speed drifts.
//
// It also times the attempts' starts (launch to the worker's start event), whose median the app model adds to
// T_id and T_sh once per phase (bidder::AppState::start_overhead).
#include <array>
#include <cstddef>
#include <deque>
#include <map>
#include <optional>

#include "bidder/slowdown.h"
#include "core/ids.h"
#include "core/topology.h"

namespace themis::launcher {

class TimingModel {
 public:
  // default_serial_iter_time: serial time of a job nobody has measured yet (> 0).
  explicit TimingModel(Seconds default_serial_iter_time, const bidder::SlowdownPriors& priors = {});

  // One iteration of `job` on `gpus` GPUs spanning `placement`. Throws std::invalid_argument on
  // gpus < 1 or seconds not > 0 and finite.
  void observe(int job, int gpus, Locality placement, Seconds seconds);

  // Learned serial iteration time of `job` (see above).
  Seconds serial_iter_time(int job) const;
  bool measured(int job) const;
  // The app's slowdown model: priors, replaced per level by what its jobs showed.
  bidder::SlowdownModel slowdown() const;
  // Mean seconds per iteration of `job` at `placement`, if it ran there.
  std::optional<Seconds> mean_iter_time(int job, Locality placement) const;

  // One attempt's start: seconds from its launch to its worker's start event (process start, model build,
  // checkpoint restore). Throws std::invalid_argument unless >= 0 and finite.
  void observe_start(Seconds seconds);
  // The upper median of the last kStartSamples starts; 0 before any. A median, not a mean: a launch that waited
  // for its GPUs' previous holder to checkpoint took longer for sharing, which T_id must not count as starting.
  Seconds start_overhead() const;
  static constexpr std::size_t kStartSamples = 64;

 private:
  struct LevelStats {
    int samples = 0;
    int gpus = 0;
    Seconds mean = 0;  // seconds per iteration
  };
  using JobStats = std::array<LevelStats, kLocalityLevels>;
  std::optional<Seconds> measured_serial(const JobStats& stats) const;

  std::deque<Seconds> starts_;  // the last kStartSamples attempts' starts
  Seconds default_serial_;
  bidder::SlowdownPriors priors_;
  std::map<int, JobStats> jobs_;
};

}  // namespace themis::launcher
