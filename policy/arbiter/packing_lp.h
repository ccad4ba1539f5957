#pragma once
// The LP relaxation of a packing, kept warm across re-solves (branch and bound nodes, the N+1 solves of
// the partial allocation): maximise Σ gain·x over rows, Σ x <= 1 per bidder and per item,
// lower_r <= x_r <= upper_r with bounds in {0, 1}. Only the branch and bound's guide: its item duals
// are the best Lagrangian prices (with them the Lagrangian bound Σ_g λ_g + Σ_b max(0, max_r gain_r −
// λ(r)) equals the LP bound), but the search computes every bound it prunes with itself, from λ >= 0,
// so LP tolerances never decide optimality.
#include <memory>
#include <span>
#include <vector>

namespace themis::arbiter {

struct LpColumn {
  int bidder = 0;  // 0 .. bidder_count − 1
  double gain = 0;
  const std::vector<int>* items = nullptr;  // 0 .. item_count − 1, sorted
};

class PackingLp {
 public:
  PackingLp(int item_count, int bidder_count, std::span<const LpColumn> columns);
  ~PackingLp();
  PackingLp(const PackingLp&) = delete;
  PackingLp& operator=(const PackingLp&) = delete;

  void set_bounds(int column, double lower, double upper);
  // Dual simplex from the current basis, for at most `max_seconds` (<= 0: no limit); false if the LP
  // was not solved to optimality.
  bool solve(double max_seconds);
  std::span<const double> x() const;
  // The item constraints' duals, clamped at 0 (size item_count).
  void item_prices(std::vector<double>& prices) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace themis::arbiter
