#pragma once
// The packing LP of packing_lp.h, solved without CLP where it has at most kMaxRows rows: maximise gain·x subject to a
// row per bidder (Σ x ≤ 1 over its columns), a row per item (Σ units·x ≤ capacity ≥ 0) and 0 ≤ x ≤ upper.
//
// The searches re-solve it at their nodes, changing only columns' upper bounds and items' capacities. Neither touches
// the duals, and every column is boxed (a column whose reduced gain has either sign has a bound to sit at), so the last
// optimal basis stays dual feasible: each re-solve is a dual simplex from it, its basic values updated for what changed. The leaving row is the one whose basic
// value is furthest out of its bounds for its dual steepest-edge weight (the squared norm of its row of B⁻¹, exact
// here: B⁻¹ is kept whole and dense, row-major, since rows are what the dual simplex reads); the ratio test flips
// boxed columns to their other bound as long as the leaving row stays infeasible (bound flipping), then takes the
// largest pivot within a tolerance of the first breakpoint left (Harris). These LPs are small (the gang (50, 256)
// auctions': some 85 rows, 300 columns, 10 pivots a solve), where CLP took about 90 µs a solve (docs/performance.md,
// "The nodes' LP without CLP").
//
// Nothing here makes a bound valid: the searches bound at the duals they read, clamped at 0, whatever their quality.
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "policy/arbiter/deadline.h"
#include "policy/arbiter/packing_lp.h"

namespace themis::arbiter {

class DenseDualLp {
 public:
  static constexpr int kMaxRows = 256;

  // As PackingLp's constructor; every upper bound 1. Rows: the bidders', then the items'.
  DenseDualLp(int item_count, int bidder_count, std::span<const LpColumn> columns, std::span<const int> capacity);

  void set_upper(int column, double upper);  // ≥ 0 (the searches set 0 or 1)
  void set_capacity(int item, double capacity);
  // For the displacement checks (displacement.h): a least use of an item (Σ units·x ≥ minimum; -inf: none), and a
  // column's gain. Either restarts the next solve from the last basis with the duals and basic values computed afresh.
  // Every slack is boxed from then on (a row's slack lies between 0 and its right-hand side less its minimum, as A and
  // x are ≥ 0), so that for any gains each nonbasic variable has a bound where its reduced gain keeps the basis dual
  // feasible, and the dual simplex goes on from there.
  void set_minimum(int item, double minimum);
  void set_gain(int column, double gain);

  enum class Status { optimal, cut_off, infeasible, stopped, failed };
  // From the last basis. `cut_off`: the dual objective fell to `cutoff` or below before the optimum: every basis the
  // dual simplex visits is dual feasible, so its objective bounds the LP's optimum from above, and a search that
  // prunes at `cutoff` needs no more (duals() are that basis's; x() is its primal values clamped to their bounds, not
  // a feasible point). `infeasible`: an infeasible row that no column can enter for (within the tolerances: the
  // caller certifies it where it matters; without minimums only rounding can make the LP infeasible). `failed`: a
  // singular basis or the pivot limit; the caller then solves it otherwise.
  Status solve(const Deadline& deadline, double cutoff = kNoCutoff);
  static constexpr double kNoCutoff = 1e300;

  // After an optimal solve: the columns' values, and the rows' duals (bidders', then items'; ≥ 0 up to the tolerances).
  const std::vector<double>& x() const { return x_; }
  const std::vector<double>& duals() const { return y_; }
  // After an infeasible solve: the direction (per row) in which the duals could move without bound, each step keeping
  // them feasible for the columns' reduced gains seen then and lowering the dual objective (its row of B⁻¹, signed).
  // The LP is infeasible because of it; prices along it are for the caller to check.
  const std::vector<double>& dual_ray() const { return ray_; }
  // The columns' upper bounds and the rows' right-hand sides as now set (for handing the LP to another solver).
  const std::vector<double>& upper() const { return upper_; }
  const std::vector<double>& rhs() const { return rhs_; }
  const std::vector<double>& minimum() const { return minimum_; }  // per row, -inf where none
  const std::vector<double>& gains() const { return cost_; }
  bool has_minimum() const { return has_minimum_; }  // a row has had a finite minimum

 private:
  enum class At : std::uint8_t { basic, lower, upper };

  // Variables: a slack per row first (A·x + s = b, s ≥ 0), then the columns.
  double upper_of(int j) const;
  double dot(const double* v, int j) const;  // v·a_j
  void add_column(std::vector<double>& v, std::size_t c, double amount) const;  // v += amount·(column c)
  // A slack's upper bound: none until the slacks are boxed (box_slacks), then its row's right-hand side less its
  // minimum (the minimum counted from 0).
  void box_slacks();
  void set_slack_upper(std::size_t row);
  // A solve's start: every nonbasic column (and boxed slack) at the bound its reduced gain asks for, the duals and
  // basic values computed afresh; or from the last solve's, updated for the bounds and capacities changed since.
  void start_from_scratch();
  void start_from_changes();
  // x_B += sign·B⁻¹·change, over change's nonzeros, which are then cleared.
  void move_basic_values(std::vector<double>& change, double sign);
  // The basic values from B⁻¹ and the nonbasic variables' values; the duals and reduced gains from B⁻¹.
  void compute_basic_values();
  void compute_duals();
  // B⁻¹ from the basic columns (Gauss-Jordan with partial pivoting), and with it the basic values, duals and weights;
  // false if singular.
  bool refactor();
  double residual() const;  // max |B·x_B + N·x_N − b|
  // The dual objective of the basis: Σ y·b plus, over the nonbasic variables at their upper bound, the bound times
  // the reduced gain (= the gain of its primal values, c_B·x_B + c_N·x_N).
  double dual_objective() const;
  // The basis position of the row to leave, -1 where every basic value is within its bounds.
  int leaving_row() const;
  // One dual simplex iteration on leaving row r; false where no column can enter.
  bool iterate(int r);
  // B⁻¹ after column alpha (= B⁻¹·a_q) replaces position r, with the weights of the rows it changes.
  void pivot(int r, const std::vector<double>& alpha);
  void fill_x();

  int m_ = 0;        // rows
  int n_ = 0;        // columns
  int bidders_ = 0;  // rows [0, bidders_) are the bidders', the rest the items'
  std::vector<int> start_;  // columns, compressed: entries [start_[c], start_[c + 1]) of row_ / value_
  std::vector<int> row_;
  std::vector<double> value_;
  std::vector<int> row_start_;  // the same by rows: entries [row_start_[r], row_start_[r + 1]) of the two below
  std::vector<int> by_row_column_;  // variable index (m_ + column)
  std::vector<double> by_row_value_;
  std::vector<double> cost_;
  std::vector<double> upper_;
  std::vector<double> rhs_;
  std::vector<double> minimum_;      // per row
  std::vector<double> slack_upper_;  // per row: unbounded (1e300) until the slacks are boxed
  bool boxed_ = false;
  bool has_minimum_ = false;
  bool restart_ = false;  // a minimum or a gain changed: the next solve starts as start_from_scratch() does
  std::vector<At> at_;            // per variable
  std::vector<int> head_;         // the variable basic in each position
  std::vector<double> xb_;        // their values
  std::vector<double> binv_;      // B⁻¹, row-major: row i (basis position i) at i·m
  std::vector<double> weight_;    // per basis position: the squared norm of its row of B⁻¹
  std::vector<double> basic_cost_;  // per basis position: its variable's gain (a slack's 0), set by solve() with a cutoff
  bool track_objective_ = false;    // solve() has a cutoff: objective_ follows the pivots
  double objective_ = 0;            // dual_objective(), up to drift, while track_objective_
  std::vector<double> y_;         // duals per row
  std::vector<double> ray_;       // dual_ray()
  std::vector<double> d_;         // reduced gains per variable (nonbasic ones kept up to date)
  std::vector<double> x_;
  std::int64_t pivots_ = 0;
  int since_check_ = 0;  // pivots and solves since the basic values were last checked against the basis
  bool fresh_ = true;    // no solve yet: the first starts from scratch
  // Since the last solve: the change to b − N·x_N not yet in x_B, and the columns whose upper bound changed.
  std::vector<double> shift_;
  std::vector<char> changed_;  // per column
  std::vector<int> changed_columns_;

  // Scratch of iterate().
  struct Candidate {
    int j;
    double alpha;  // its entry in the pivot row
    double slack;  // its reduced gain's distance to 0 (signed: below 0 where it is past 0 within the tolerance)
    double ratio;  // |d_j| / |alpha|: the dual step at which its reduced gain reaches 0
  };
  std::vector<Candidate> candidates_;
  std::vector<std::pair<int, double>> touched_;  // the nonbasic columns open and slacks with an entry in the pivot row
  std::vector<double> row_alpha_;    // per variable: that entry, while it is summed (0 otherwise)
  std::vector<double> column_;       // B⁻¹·a_q
  std::vector<double> flipped_;      // Σ a_j·Δx_j over the columns flipped
  std::vector<std::size_t> nonzero_;  // pivot(): the entries of the pivot row that are not 0
};

}  // namespace themis::arbiter
