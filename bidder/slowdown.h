#pragma once
// Placement slowdown S per locality level (Themis Eq. 1 and footnote 3). Priors: same slot 1.0, same
// machine 1.0, same rack (cross-machine) 1.1, cross rack 1.3; the paper gives no slot-level value, and
// a slot is inside a machine, so it gets the machine's 1.0. Once the app runs at a level, its live
// iteration timings replace the prior for that level:
//   sample S = observed_iter_time · gpus / serial_iter_time   (linear speedup would give 1)
//   S(level) = max(1, mean of the level's samples)
// A level never observed keeps its prior. Placement score (Gandiva baseline, papers.md §1.13.9) = 1/S.
#include <array>

#include "core/ids.h"
#include "core/topology.h"

namespace themis::bidder {

struct SlowdownPriors {
  double same_slot = 1.0;
  double same_machine = 1.0;
  double same_rack = 1.1;
  double cross_rack = 1.3;
};

class SlowdownModel {
 public:
  // Throws std::invalid_argument if a prior is < 1 or not finite.
  explicit SlowdownModel(const SlowdownPriors& priors = {});

  // One measured iteration time of the app on `gpus` GPUs spanning `level`.
  void observe(Locality level, int gpus, Seconds observed_iter_time, Seconds serial_iter_time);

  double slowdown(Locality level) const;
  double placement_score(Locality level) const { return 1.0 / slowdown(level); }
  double prior(Locality level) const { return prior_[index(level)]; }
  int observations(Locality level) const { return count_[index(level)]; }

 private:
  static std::size_t index(Locality level);
  std::array<double, kLocalityLevels> prior_{};
  std::array<double, kLocalityLevels> sum_{};
  std::array<int, kLocalityLevels> count_{};
};

}  // namespace themis::bidder
