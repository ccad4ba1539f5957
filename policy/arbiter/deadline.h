#pragma once
// The solvers' time budget. This is the arbiter's only clock read (besides the timed wait of the cut bound's thread
// for its start, cut_bound_beside.h, and CLP's own limit), and only when a budget is set: a
// round must finish in bounded time on instances too large to solve exactly. For byte-for-byte
// reproducible runs (the simulator) set no time budget and bound the search by nodes instead.
#include <algorithm>
#include <chrono>

namespace themis::arbiter {

class Deadline {
 public:
  // seconds <= 0: no deadline.
  explicit Deadline(double seconds)
      : enabled_(seconds > 0),
        start_(enabled_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{}),
        end_(start_ +
             std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                 std::chrono::duration<double>(enabled_ ? seconds : 0))) {}
  bool passed() const { return enabled_ && std::chrono::steady_clock::now() >= end_; }
  // Seconds left (a large number when there is no deadline).
  double remaining() const {
    if (!enabled_) return 1e9;
    const std::chrono::duration<double> left = end_ - std::chrono::steady_clock::now();
    return left.count() > 0 ? left.count() : 0;
  }
  bool enabled() const { return enabled_; }
  // The budget to hand a nested solve (an LP, a check): what is left, but at least 1e-6 s, since a budget of 0 means
  // none; 0 (none) where there is no deadline.
  double budget_left() const { return enabled_ ? std::max(1e-6, remaining()) : 0; }
  // Whether at least half of the budget is spent (never without a deadline).
  bool half_passed() const {
    return enabled_ && std::chrono::steady_clock::now() >= end_ - (end_ - start_) / 2;
  }

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point end_;
};

}  // namespace themis::arbiter
