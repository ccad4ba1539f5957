#pragma once
// N_avg of Eq. 1/2: "the weighted average of the number of apps in the system during the lifetime of
// the app" (Themis §4.3.1). The paper leaves the weighting and the future open (papers.md §1.13.5).
// Here: the average over the app's life so far, each count weighted by how long it lasted. The count
// includes the app itself (the paper's example: the app + 3 others gives N_avg = 4), so it is >= 1.
// The future is assumed to look like the past; the value is re-estimated at every bid.
#include "core/ids.h"

namespace themis::bidder {

class ContentionAverage {
 public:
  // The app starts at `start` with `active_apps` apps (itself included) in the system.
  ContentionAverage(Seconds start, int active_apps);

  // From `t` on there are `active_apps` apps. t must not go back in time. Throws std::invalid_argument.
  void observe(Seconds t, int active_apps);

  // Time-weighted average over [start, now]; at now == start, the current count. now >= last observe.
  double average(Seconds now) const;

  int current() const { return current_; }

 private:
  Seconds start_;
  Seconds last_change_;
  int current_;
  double weighted_sum_ = 0;  // Σ count · duration over [start, last_change)
};

}  // namespace themis::bidder
