#pragma once
// N_avg of Eq. 1/2: "the weighted average of the number of apps in the system during the lifetime of
// the app" (Themis §4.3.1). The paper leaves the weighting and the future open (papers.md §1.13.5).
// Here: the average over the app's life so far, each count weighted by how long it lasted. The count
// includes the app itself (the paper's example: the app + 3 others gives N_avg = 4), so it is >= 1.
// The future is assumed to look like the past; the value is re-estimated at every bid.
//
// For ranking apps (the filter's key, AppModel::ranking_rho) the future is forecast instead
// (contention_ahead, lifetime_contention): the apps present now, each counted until its own expected
// finish. An app's ρ at completion divides by T_id over its whole life's N_avg; an app arriving in a crowd
// that will thin out before it finishes sees its past average overstate that N_avg, ranks as better off than
// it will end, and waits (docs/bidder.md, "N_avg ahead").
#include <cstddef>
#include <span>

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

// How many apps, itself included, an app will share the cluster with on average over the `own_remaining`
// seconds it still needs, counted from the apps present now: every other app until its own expected finish
// (`others_remaining`, seconds; a NaN or +inf one throughout, a value <= 0 not at all), itself throughout.
// Apps that have not arrived are not counted: nobody knows them.
//   1 + (1/R) · Σ_j min(r_j, R)
// An `own_remaining` that is not > 0 and finite gives the count now, 1 + the others.
double contention_ahead(Seconds own_remaining, std::span<const Seconds> others_remaining);
// The same for the app at `self` among `remaining`, the remaining seconds of every app present (itself included),
// without a copy of the others per app.
double contention_ahead(std::span<const Seconds> remaining, std::size_t self);

// N_avg over an app's whole life: `past_average` (ContentionAverage) over the `elapsed` seconds it has lived,
// `ahead` (contention_ahead) over the `remaining` seconds it still needs. `past_average` when remaining is not
// > 0 and finite or ahead is not >= 1 and finite.
double lifetime_contention(double past_average, Seconds elapsed, double ahead, Seconds remaining);

}  // namespace themis::bidder
