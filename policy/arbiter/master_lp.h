#pragma once
// The rack decomposition's master LP (rack_decomposition.h): maximise c·x subject to A·x ≤ b and 0 ≤ x ≤ 1, where
// every entry of A and b is at least 0, so x = 0 is always feasible and the simplex needs no first phase. Solved by a
// bounded primal simplex on a dense basis inverse with Devex pricing: the master has a few dozen to a few hundred
// rows, columns enter between solves, and each re-solve takes a few dozen pivots from the last basis. On the elastic
// (20, 64) auctions CLP took 0.2 ms a solve, mostly set-up and factorisation, and this about a third of that
// (docs/performance.md, "The racks' master LP without CLP").
//
// The right-hand sides are lowered by 1–2·10⁻⁷ against degeneracy (master_lp.cc), so the solution is that of a master
// a little tighter than the one given. A master of more than kMaxDenseRows rows goes to CLP instead, unperturbed: at
// (200, 1024), some 465 rows, a dense pivot cost more than CLP's solve saved. Nothing here makes a bound valid: the
// caller bounds at the duals it reads, clamped at 0, whatever their quality.
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "policy/arbiter/deadline.h"

namespace themis::arbiter {

class MasterLp {
 public:
  static constexpr int kMaxDenseRows = 256;

  // One row per entry of `rhs` (each ≥ 0).
  explicit MasterLp(std::vector<double> rhs);
  ~MasterLp();
  MasterLp(const MasterLp&) = delete;
  MasterLp& operator=(const MasterLp&) = delete;

  // A column with gain `gain` and entries (row, coefficient ≥ 0), at 0 in the basis; returns its index.
  int add_column(double gain, std::span<const std::pair<int, double>> entries);
  // Fixes column `c` at 1: its entries leave the rows' right-hand sides (those that fall below 0 by no more than the
  // perturbation are set to 0) and the next solve starts from the slack basis. False, changing nothing, where a row
  // would fall further (the master with it at 1 is infeasible).
  bool fix_at_one(int c);

  enum class Status { optimal, stopped, failed };
  // From the present basis. `stopped`: the deadline passed; `failed`: a singular basis or the pivot limit (neither
  // seen on the masters of the benchmarks), or CLP found no optimum (a fixed column left no feasible solution).
  Status solve(const Deadline& deadline);
  bool optimal() const { return optimal_; }

  // After solve(): the columns' values and the rows' duals (each ≥ 0 at an optimum, up to the tolerances).
  const std::vector<double>& x() const { return x_; }
  const std::vector<double>& duals() const { return y_; }
  double objective() const;

 private:
  enum class At : std::uint8_t { basic, lower, upper, fixed };

  // Variables: one slack per row first (A·x + s = b, s ≥ 0), then the columns.
  double upper(int j) const { return j < m_ ? kInfinity : 1.0; }
  double cost(int j) const { return j < m_ ? 0.0 : cost_[static_cast<std::size_t>(j - m_)]; }
  // Variable j's column (a slack's: its row's unit vector) against a vector over the rows: v·a_j, and v += amount·a_j.
  double dot(const std::vector<double>& v, int j) const;
  void add_to(std::vector<double>& v, int j, double amount) const;
  // alpha = B⁻¹·a_j (dense, m entries).
  void direction(int j, std::vector<double>& alpha) const;
  // B⁻¹ from the basic columns (Gauss-Jordan with partial pivoting) and the basic values from it; false if singular.
  bool refactor();
  void compute_basic_values();
  void compute_duals();
  double residual() const;  // max |B·x_B + N·x_N − b|
  void pivot(int p, const std::vector<double>& alpha);
  // Before pivot(p, ·) with q entering and `leaving` leaving: the duals and the Devex weights after it.
  void update_duals_and_weights(int p, int q, int leaving, double pivot_entry, double entering_gain);
  void slack_basis();
  void fill_x();
  struct Clp;  // the master in CLP (more than kMaxDenseRows rows)
  Status solve_with_clp(const Deadline& deadline);

  static constexpr double kInfinity = 1e300;

  int m_ = 0;
  int n_ = 0;
  std::vector<double> b_;      // the right-hand sides, raised against degeneracy, less the columns fixed at 1
  std::vector<double> cost_;
  std::vector<int> start_{0};  // columns, compressed: entries [start_[c], start_[c + 1])
  std::vector<int> row_;
  std::vector<double> value_;
  std::vector<At> at_;         // per variable
  std::vector<int> head_;      // the variable basic in each position
  std::vector<double> xb_;     // their values
  std::vector<double> binv_;   // B⁻¹, column-major: entry (i, r) at r·m + i
  std::vector<double> y_;
  bool duals_stale_ = true;        // y_ is to be computed from B⁻¹ (else kept up to date pivot by pivot)
  std::vector<double> weight_;      // Devex reference weights, per variable
  std::vector<double> row_p_;       // update_duals_and_weights(): the pivot row of B⁻¹
  std::vector<double> basic_cost_;  // compute_duals(): the basic variables' gains
  std::vector<double> x_;
  std::int64_t pivots_ = 0;
  int since_check_ = 0;           // pivots since B⁻¹ was last checked against the basis
  std::vector<std::size_t> nonzero_;  // pivot(): the entries of alpha that are not 0
  bool optimal_ = false;
  std::unique_ptr<Clp> clp_;
};

}  // namespace themis::arbiter
