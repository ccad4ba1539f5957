#pragma once
// The LP relaxation of a packing, kept warm across re-solves (branch and bound nodes, the N+1 solves of
// the partial allocation): maximise Σ gain·x over rows, Σ x <= 1 per bidder, Σ units·x <= capacity per
// item, lower_r <= x_r <= upper_r with bounds in {0, 1}. Only a guide for the searches: its item duals
// are the best Lagrangian prices (with them the Lagrangian bound Σ_i λ_i·capacity_i + Σ_b max(0, max_r
// gain_r − Σ_i λ_i·units_ri) equals the LP bound), but the searches compute every bound they prune or
// report with themselves, from λ >= 0, so LP tolerances never decide optimality.
//
// Solved by a dual simplex of its own (dense_dual_lp.h) where it has at most DenseDualLp::kMaxRows rows, else by CLP.
#include <memory>
#include <span>
#include <vector>

namespace themis::arbiter {

struct LpColumn {
  int bidder = 0;  // 0 .. bidder_count − 1
  double gain = 0;
  // 0 .. item_count − 1, sorted; an item repeats once per unit the row takes of it.
  const std::vector<int>* items = nullptr;
};

// Appends the column's matrix entries: its bidder's row (coefficient 1), then one entry per item, in item order, its
// coefficient the units taken (rows numbered bidders first, then items).
void append_entries(const LpColumn& column, int bidder_count, std::vector<int>& rows, std::vector<double>& values);

class PackingLp {
 public:
  enum class Engine {
    automatic,  // dense_dual_lp.h where small enough, else CLP
    clp,        // CLP from the start (the tests compare the two)
  };
  // `capacity`: units of each item; empty: one unit each.
  PackingLp(int item_count, int bidder_count, std::span<const LpColumn> columns,
            std::span<const int> capacity = {}, Engine engine = Engine::automatic);
  ~PackingLp();
  PackingLp(const PackingLp&) = delete;
  PackingLp& operator=(const PackingLp&) = delete;
  // A copy with the same bounds and the same basis, so that it re-solves warm.
  std::unique_ptr<PackingLp> clone() const;

  void set_bounds(int column, double lower, double upper);
  void set_capacity(int item, double capacity);
  // A least use of the item (-inf: none), for the LPs of displacement.h.
  void set_item_minimum(int item, double minimum);
  void set_gain(int column, double gain);
  // Dual simplex from the current basis, for at most `max_seconds` (<= 0: no limit); false if the LP
  // was not solved to optimality. With a `cutoff`, the dense engine may stop once its dual objective, an upper bound
  // on the LP's optimum, is at most that (still true, the duals those of that dual feasible basis; cut_off() says
  // so): a search that prunes at the cutoff needs no more. CLP solves on to the optimum.
  bool solve(double max_seconds, double cutoff = kNoCutoff);
  static constexpr double kNoCutoff = 1e300;
  bool cut_off() const;  // the last solve stopped at its cutoff
  std::span<const double> x() const;
  // The item constraints' duals, clamped at 0 (size item_count).
  void item_prices(std::vector<double>& prices) const;
  // The same unclamped, in CLP's sign (size item_count).
  void item_duals(std::vector<double>& duals) const;
  // Whether the last solve proved that no x meets the constraints.
  bool proven_infeasible() const;
  // After the dense engine found the LP infeasible: the items' part of the direction in which its duals could move
  // without bound (DenseDualLp::dual_ray), in item_duals' sign; false where there is none (CLP, or no such solve).
  bool item_ray(std::vector<double>& ray) const;

 private:
  PackingLp();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace themis::arbiter
