#include "policy/arbiter/shape_solver.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <utility>

#include "policy/arbiter/deadline.h"
#include "policy/arbiter/greedy_packing.h"
#include "policy/arbiter/packing_lp.h"
#include "policy/arbiter/rack_decomposition.h"
#include "policy/arbiter/search_layout.h"
#include "policy/arbiter/subproblem_bounds.h"
#include "policy/arbiter/usable_capacity.h"

namespace themis::arbiter {

namespace {

using Load = ItemLoad;

using Row = SearchRow;
using Bidder = SearchBidder;

// The shape problem's LP relaxation (packing_lp.h) over the search's rows, columns in flat_rows_ order, with
// the bounds last set on it, so that the next solve changes only what differs and starts from its basis.
struct LpState {
  const PackingProblem* problem = nullptr;
  std::unique_ptr<PackingLp> lp;
  std::vector<char> open;      // per column: upper bound 1 (else 0)
  std::vector<int> capacity;   // per item: the row's upper bound
  // The solve with every bidder turned to LP bounds. The solves without one winner then do so from their first
  // node: on the gang apps at (50, 256) each of them otherwise spent its first 5,000 nodes on bounds that prove
  // nothing, also where it started from the optimum (docs/arbiter.md, "Hard auctions turn to LP bounds at once").
  bool pf_solve_turned = false;
  // The rack decomposition (rack_decomposition.h), its patterns kept across the N+1 solves, and whether the solves
  // without a winner run it: 0 not yet tried, 1 yes (it settled the PF solve or bounds it well below the LP), -1 no.
  RackDecomposition racks;
  int racks_state = 0;
};

// What one problem's solves share (SolveHints::memory).
struct ShapeMemory final : SolverMemory {
  ShapeMemory() = default;
  ShapeMemory(const ShapeMemory& other) : layout(other.layout), bounds(other.bounds) {
    lp.problem = other.lp.problem;
    if (other.lp.lp) lp.lp = other.lp.lp->clone();
    lp.open = other.lp.open;
    lp.capacity = other.lp.capacity;
    lp.pf_solve_turned = other.lp.pf_solve_turned;
    lp.racks = other.lp.racks;
    lp.racks_state = other.lp.racks_state;
  }
  // The copy and this memory then share the bounds recorded so far (SubproblemBounds::share). The solves without
  // each winner copy the PF solve's memory on several threads at once, and neither that nor copying the LP (CLP does
  // not promise that copying a model only reads it) may run twice at once, so the copies are taken one at a time.
  std::unique_ptr<SolverMemory> clone() const override {
    static std::mutex cloning;
    const std::lock_guard<std::mutex> lock(cloning);
    const_cast<SubproblemBounds&>(bounds).share();
    return std::make_unique<ShapeMemory>(*this);
  }
  std::shared_ptr<const SearchLayout> layout;  // built by the first solve, read by all
  SubproblemBounds bounds;
  LpState lp;
};

ShapeMemory& shape_memory(std::unique_ptr<SolverMemory>* memory, ShapeMemory& own) {
  if (memory == nullptr) return own;
  auto* kept = dynamic_cast<ShapeMemory*>(memory->get());
  if (kept == nullptr) {
    *memory = std::make_unique<ShapeMemory>();
    kept = static_cast<ShapeMemory*>(memory->get());
  }
  return *kept;
}

const SearchLayout& layout_of(const PackingProblem& problem, ShapeMemory& memory) {
  if (!memory.layout || memory.layout->problem != &problem) memory.layout = make_search_layout(problem);
  return *memory.layout;
}

class Search {
 public:
  // The excluded bidder keeps its place in the order (taking nothing), so that every solve of the
  // problem searches the same positions and `memory` (when given) can be shared between them.
  Search(const PackingProblem& problem, int excluded, const SolveLimits& limits, std::unique_ptr<SolverMemory>* memory)
      : problem_(problem),
        excluded_(excluded),
        deadline_(limits.max_seconds),
        memory_(shape_memory(memory, own_memory_)),
        layout_(layout_of(problem, memory_)),
        bidders_(layout_.bidders),
        flat_rows_(layout_.rows),
        flat_loads_(layout_.loads),
        row_ranges_(layout_.row_ranges),
        items_from_(layout_.items_from),
        usable_capacity_(layout_.usable),
        max_nodes_(limits.max_nodes),
        residual_(layout_.capacity),
        usable_(layout_.capacity) {
    for (std::size_t k = 0; k < bidders_.size(); ++k)
      if (bidders_[k].index == excluded) excluded_position_ = k;
    pick_.assign(bidders_.size(), -1);
    fitting_ranges_.assign(bidders_.size(), {0, 0});
    best_lambda_.resize(residual_.size());
    subgradient_.resize(residual_.size());
    orders_.resize(bidders_.size());
    best_choice_.assign(problem.bidders.size(), -1);
    path_.assign(bidders_.size(), -1);
    keys_.resize(bidders_.size());
    bounds_ = &memory_.bounds;
    bounds_->use_for(&problem, layout_.bidders, residual_.size());
    lp_ = &memory_.lp;
    if (lp_->problem != &problem) *lp_ = LpState{};
  }

  void offer_incumbent(const PackingChoice& choice) {
    const double value = packing_value(problem_, choice);
    if (value > best_value_ + kImprovementTolerance || (best_value_ == 0 && value > 0)) {
      best_value_ = value;
      best_choice_ = choice;
    }
  }

  // The residual capacities bidders [depth, end) can use: each the largest total of their units within it (0
  // where none of them draws from the item). The bounds, their prices, the LP and the subproblem keys read these.
  void set_usable(std::size_t depth) {
    for (std::size_t i = 0; i < residual_.size(); ++i) usable_[i] = usable_capacity_.of(depth, i, residual_[i]);
  }

  // The root's usable capacities and fitting rows, before its subgradient steps.
  void prepare_root() {
    set_usable(0);
    collect_fitting(0);
  }

  // The rows of bidders [depth, end) that fit the residual capacities, for the bounds and children of one
  // node (the residual does not change while its bound is computed and its subgradient steps run).
  // The rows that fit depend on the residual alone, and each bidder's are kept apart: where the residual has not changed
  // since the rows of bidders [d, end) were collected for some d <= depth (a child that takes nothing, entered with
  // no row child of its parent entered before it), bidders [depth, end)'s are still there.
  void collect_fitting(std::size_t depth) {
    if (fitting_at_ == residual_changes_ && fitting_depth_ <= depth) return;
    fitting_at_ = residual_changes_;
    fitting_depth_ = depth;
    fitting_.clear();
    for (std::size_t k = depth; k < bidders_.size(); ++k) {
      const int begin = static_cast<int>(fitting_.size());
      if (k != excluded_position_) {
        const auto [first, last] = row_ranges_[k];
        for (int r = first; r < last; ++r) {
          const FlatRow& row = flat_rows_[static_cast<std::size_t>(r)];
          bool fits = true;
          for (int l = row.begin; l < row.end && fits; ++l) {
            const Load& load = flat_loads_[static_cast<std::size_t>(l)];
            fits = load.units <= residual_[static_cast<std::size_t>(load.item)];
          }
          if (fits) fitting_.push_back(r);
        }
      }
      fitting_ranges_[k] = {begin, static_cast<int>(fitting_.size())};
    }
  }

  // Lagrangian bound of bidders [depth, end) on the residual capacities with prices `lambda`, over the rows
  // collect_fitting(depth) found; `pick` receives each bidder's best row (-1: none) when given.
  // `priced`: Σ_i λ_i·usable_i when the caller has it.
  double bound(std::size_t depth, const std::vector<double>& lambda, std::vector<int>* pick,
               double priced = std::numeric_limits<double>::quiet_NaN()) const {
    double total = priced;
    if (std::isnan(total)) {
      total = 0;
      for (std::size_t i = 0; i < usable_.size(); ++i) total += lambda[i] * usable_[i];
    }
    for (std::size_t k = depth; k < bidders_.size(); ++k) {
      double best = 0;
      int best_row = -1;
      const auto [begin, end] = fitting_ranges_[k];  // empty for the excluded bidder
      for (int f = begin; f < end; ++f) {
        const int r = fitting_[static_cast<std::size_t>(f)];
        const FlatRow& row = flat_rows_[static_cast<std::size_t>(r)];
        if (row.gain <= best) break;  // sorted by gain: reduced gain cannot beat `best`
        const double reduced = reduced_gain(row, lambda);
        if (reduced > best) {
          best = reduced;
          best_row = r - row_ranges_[k].first;
        }
      }
      total += best;
      if (pick != nullptr) (*pick)[k] = best_row;
    }
    return total;
  }

  // Subgradient steps on `lambda` at this node; returns the lowest bound seen (and leaves its λ).
  // `start`: the bound at `lambda`, with each bidder's best row in pick_, when the caller has it.
  double optimise(std::size_t depth, std::vector<double>& lambda, int steps, double target,
                  double start = std::numeric_limits<double>::quiet_NaN()) {
    std::vector<int>& pick = pick_;
    std::vector<double>& best_lambda = best_lambda_;
    std::vector<double>& subgradient = subgradient_;
    best_lambda = lambda;
    double best = std::isnan(start) ? bound(depth, lambda, &pick) : start;
    double current = best;
    double theta = 1.0;
    int stale = 0;
    // The steps touch only the items whose terms can be non-zero: those bidders [depth, end) draw from, and
    // others with a price and free units (their prices only fall). Leaving out terms that are exactly zero
    // keeps every sum as it was.
    std::vector<int>& active = active_;
    if (steps > 0 && best > target + kImprovementTolerance) {
      active.clear();
      const std::vector<int>& drawn = items_from_[depth];
      std::size_t next = 0;
      for (std::size_t i = 0; i < residual_.size(); ++i) {
        const bool is_drawn = next < drawn.size() && drawn[next] == static_cast<int>(i);
        if (is_drawn) ++next;
        if (is_drawn || (lambda[i] > 0 && usable_[i] > 0)) active.push_back(static_cast<int>(i));
      }
    }
    for (int step = 0; step < steps && best > target + kImprovementTolerance; ++step) {
      for (const int i : active) subgradient[static_cast<std::size_t>(i)] = usable_[static_cast<std::size_t>(i)];
      for (std::size_t k = depth; k < bidders_.size(); ++k)
        if (pick[k] >= 0) {
          const FlatRow& row = flat_rows_[static_cast<std::size_t>(row_ranges_[k].first + pick[k])];
          for (int l = row.begin; l < row.end; ++l)
            subgradient[static_cast<std::size_t>(flat_loads_[static_cast<std::size_t>(l)].item)] -=
                flat_loads_[static_cast<std::size_t>(l)].units;
        }
      double norm = 0;
      for (const int a : active) {
        const auto i = static_cast<std::size_t>(a);
        if (!(lambda[i] <= 0 && subgradient[i] > 0)) norm += subgradient[i] * subgradient[i];
      }
      if (norm <= 0) break;  // λ is optimal: the bound is the LP bound
      const double t = theta * (current - target) / norm;
      double priced = 0;
      for (const int a : active) {
        const auto i = static_cast<std::size_t>(a);
        lambda[i] = std::max(0.0, lambda[i] - t * subgradient[i]);
        priced += lambda[i] * usable_[i];
      }
      current = bound(depth, lambda, &pick, priced);
      if (current < best - 1e-12) {
        best = current;
        std::copy(lambda.begin(), lambda.end(), best_lambda.begin());
        stale = 0;
      } else if (++stale >= 3) {
        theta /= 2;
        stale = 0;
      }
    }
    lambda.swap(best_lambda);
    return best;
  }

  // The LP bound of bidders [depth, end) on the residual capacities, over the rows collect_fitting(depth)
  // found: CLP's item duals priced by bound() itself, so it is valid whatever CLP's tolerances; +inf when the
  // LP was not solved. Leaves the duals in lp_prices_ and each bidder's best row under them in lp_pick_. The LP may
  // stop short of its optimum once its bound is at most `cutoff` (PackingLp::solve): the node is then pruned, and
  // neither its duals nor its solution are read below it.
  double lp_bound(std::size_t depth, double cutoff) {
    std::fill(lp_want_.begin(), lp_want_.end(), 0);
    for (std::size_t k = depth; k < bidders_.size(); ++k) {
      const auto [begin, end] = fitting_ranges_[k];
      for (int f = begin; f < end; ++f) lp_want_[static_cast<std::size_t>(fitting_[static_cast<std::size_t>(f)])] = 1;
    }
    if (!lp_solve(cutoff)) return std::numeric_limits<double>::infinity();
    lp_pick_.resize(bidders_.size());
    const double b = bound(depth, lp_prices_, &lp_pick_);
    // Rounding may leave the bound of a basis cut off just above the cutoff: the LP then goes on to its optimum.
    if (b <= cutoff || !lp_->lp->cut_off()) return b;
    if (!lp_solve()) return std::numeric_limits<double>::infinity();
    return bound(depth, lp_prices_, &lp_pick_);
  }

  // Whether the LP solution of the node at depth `ancestor` (on the current path) gives every bidder in
  // [ancestor, depth) exactly what the path gave it: its row whole, or nothing.
  bool lp_solution_holds(std::size_t ancestor, std::size_t depth) const {
    const std::vector<double>& x = lp_x_stack_[ancestor];
    for (std::size_t k = ancestor; k < depth; ++k) {
      const auto [first, last] = row_ranges_[k];
      if (path_[k] >= 0) {
        if (x[static_cast<std::size_t>(first + path_[k])] < 1 - 1e-9) return false;
      } else {
        for (int r = first; r < last; ++r)
          if (x[static_cast<std::size_t>(r)] > 1e-9) return false;
      }
    }
    return true;
  }

  // The root's LP bound, for the reported bound of a solve the limits stopped; +inf when not solved.
  double lp_root_bound() {
    for (std::size_t k = 0; k < bidders_.size(); ++k) {
      const auto [first, last] = row_ranges_[k];
      for (int r = first; r < last; ++r) lp_want_[static_cast<std::size_t>(r)] = k == excluded_position_ ? 0 : 1;
    }
    const std::vector<int> usable = usable_;
    for (int i = 0; i < problem_.item_count; ++i) usable_[static_cast<std::size_t>(i)] = problem_.capacity(i);
    const bool solved = lp_solve();
    usable_ = usable;
    if (solved) offer_incumbent(improve_packing(problem_, excluded_, round_lp(), deadline_));
    return solved ? lagrangian_bound(problem_, excluded_, lp_prices_) : std::numeric_limits<double>::infinity();
  }

  // The root LP's solution rounded: rows by their value in it, largest first (ties by gain), each taken where its
  // bidder has none yet and it fits. Where a budget stops the PF solve of a large auction it lifts the packing the
  // search had (docs/performance.md, "The root LP rounded").
  PackingChoice round_lp() const {
    const std::span<const double> x = lp_->lp->x();
    std::vector<std::pair<double, int>> taken;
    for (std::size_t r = 0; r < flat_rows_.size() && r < x.size(); ++r)
      if (x[r] > 1e-9) taken.push_back({x[r], static_cast<int>(r)});
    std::stable_sort(taken.begin(), taken.end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first > b.first;
      return flat_rows_[static_cast<std::size_t>(a.second)].gain > flat_rows_[static_cast<std::size_t>(b.second)].gain;
    });
    std::vector<RowPick> order;
    order.reserve(taken.size());
    for (const auto& [value, r] : taken) {
      // The position whose rows hold r: the first whose range ends past it.
      const auto k = static_cast<std::size_t>(
          std::upper_bound(row_ranges_.begin(), row_ranges_.end(), r,
                           [](int row, const std::pair<int, int>& range) { return row < range.second; }) -
          row_ranges_.begin());
      order.push_back({bidders_[k].index, bidders_[k].rows[static_cast<std::size_t>(r - row_ranges_[k].first)].source});
    }
    return pack_in_order(problem_, excluded_, order).choice;
  }

  // Brings the LP to columns lp_want_ and capacities usable_, and solves it within the deadline (to `cutoff`).
  bool lp_solve(double cutoff = PackingLp::kNoCutoff) {
    if (!lp_->lp) {
      std::vector<LpColumn> columns;
      columns.reserve(flat_rows_.size());
      for (std::size_t k = 0; k < bidders_.size(); ++k) {
        const auto& rows = problem_.bidders[static_cast<std::size_t>(bidders_[k].index)].rows;
        for (const Row& row : bidders_[k].rows)
          columns.push_back({static_cast<int>(k), row.gain, &rows[static_cast<std::size_t>(row.source)].items});
      }
      std::vector<int> capacity(residual_.size());
      for (int i = 0; i < problem_.item_count; ++i) capacity[static_cast<std::size_t>(i)] = problem_.capacity(i);
      lp_->lp = std::make_unique<PackingLp>(problem_.item_count, static_cast<int>(bidders_.size()), columns, capacity);
      lp_->problem = &problem_;
      lp_->open.assign(flat_rows_.size(), 1);
      lp_->capacity = capacity;
    }
    for (std::size_t r = 0; r < flat_rows_.size(); ++r)
      if (lp_->open[r] != lp_want_[r]) {
        lp_->open[r] = lp_want_[r];
        lp_->lp->set_bounds(static_cast<int>(r), 0, lp_want_[r]);
      }
    for (std::size_t i = 0; i < usable_.size(); ++i)
      if (lp_->capacity[i] != usable_[i]) {
        lp_->capacity[i] = usable_[i];
        lp_->lp->set_capacity(static_cast<int>(i), usable_[i]);
      }
    if (!lp_->lp->solve(deadline_.budget_left(), cutoff)) return false;
    lp_->lp->item_prices(lp_prices_);
    return true;
  }

  // Depth-first search from the root; false when a limit stopped it.
  bool run(std::vector<double> lambda, int node_steps, std::int64_t lp_from_nodes, double lp_worth, bool racks) {
    racks_ = racks;
    node_steps_ = node_steps;
    lp_from_nodes_ = lp_from_nodes > 0 && excluded_ >= 0 && lp_->pf_solve_turned ? 1 : lp_from_nodes;
    lp_worth_ = lp_worth;
    lp_want_.assign(flat_rows_.size(), 0);
    lp_stack_.assign(bidders_.size() + 1, {});
    lp_x_stack_.assign(bidders_.size() + 1, {});
    lp_ancestor_.assign(bidders_.size() + 1, -1);
    lambda_stack_.assign(bidders_.size() + 1, {});
    lambda_stack_[0] = std::move(lambda);
    if (deadline_.enabled()) left_at_read_ = deadline_.remaining();
    dfs(0, 0.0);
    return !aborted_ || settled_;
  }

  bool over_limit() {
    if (max_nodes_ > 0 && nodes_ >= max_nodes_) return true;
    // The clock is read every 16 nodes, and at every node once the nodes solve LPs (a millisecond each at 200 bidders)
    // or 16 nodes took more than kSlowNodes (at 200 bidders 16 nodes of subgradient steps took 2 ms): every 256 let a
    // solve overrun its share by tens of milliseconds.
    if ((nodes_ & 15) == 0 || lp_nodes_ || slow_nodes_) {
      constexpr double kSlowNodes = 2e-4;
      const double left = deadline_.remaining();
      if (left <= 0) return true;
      if (!slow_nodes_ && left_at_read_ >= 0 && left_at_read_ - left > kSlowNodes) slow_nodes_ = true;
      left_at_read_ = left;
      // A solve that has spent half its time is a hard one too, however few nodes that was (the solves without
      // a winner in a large auction get a short share each): the rest of its time goes to LP bounds.
      if (!lp_due_ && deadline_.half_passed()) lp_due_ = true;
    }
    return false;
  }

  const Deadline& deadline() const { return deadline_; }
  const PackingChoice& best_choice() const { return best_choice_; }
  double best_value() const { return best_value_; }
  std::int64_t nodes() const { return nodes_; }
  std::size_t item_count() const { return residual_.size(); }
  // The root's LP bound once the search reached lp_from_nodes nodes or half its time (+inf before, or when CLP
  // did not solve it).
  double lp_root() const { return lp_root_; }
  // The rack decomposition's bound (+inf where it did not run).
  double racks_bound() const { return racks_bound_; }
  // Per bidder, the decomposition's bound without it as well (RackBound::bound_without); empty where it gave no prices.
  const std::vector<double>& racks_bound_without() const { return racks_bound_without_; }
  // The root's bound from the subgradient steps, which the LP's must beat to be used at the nodes.
  void set_root_steps_bound(double bound) { root_steps_bound_ = bound; }

 private:
  // Stops the search: the best packing is proven optimal.
  void settle() {
    settled_ = true;
    aborted_ = true;
  }

  // A hard solve (at its turn to LP bounds) also bounds its problem by racks (rack_decomposition.h), whose bound
  // reaches the optimum on most elastic solves where the LP stays about 1% above: where the best rounding of its master
  // solutions meets it, the solve is settled; otherwise that packing is offered, the nodes are bounded at the
  // decomposition's prices too (RackTable), and the search stops as soon as a packing meets the bound. The solves
  // without a winner run it unless the PF solve found it not worth it: it neither settled that solve nor lay at least
  // kRacksWorth of the LP's bound below it (on the gang apps it mostly equals the LP's, and each run costs
  // milliseconds; docs/performance.md, "Racks as blocks").
  void try_racks() {
    if (lp_->racks_state < 0) return;
    const RackBound result = lp_->racks.solve(problem_, excluded_, deadline_, &best_choice_);
    if (!result.available) {
      lp_->racks_state = -1;
      return;
    }
    if (!result.choice.empty()) offer_incumbent(result.choice);
    racks_bound_ = result.bound;
    if (!result.prices.empty()) {
      racks_bound_without_.resize(problem_.bidders.size());
      for (std::size_t b = 0; b < problem_.bidders.size(); ++b) racks_bound_without_[b] = result.bound_without(static_cast<int>(b));
    }
    if (!result.proven && !result.prices.empty()) {
      std::vector<int> order;
      for (const Bidder& bidder : bidders_) order.push_back(bidder.index);
      rack_table_ = std::make_unique<RackTable>(problem_, excluded_, order, result.prices);
    }
    if (excluded_ < 0 || lp_->racks_state == 0)
      lp_->racks_state = result.proven || racks_worth(result.bound) ? 1 : -1;
    if (best_value_ >= racks_bound_ - kImprovementTolerance) settle();
  }

  // Whether a rack decomposition's bound lies at least kRacksWorth of the root's LP bound below it.
  bool racks_worth(double racks_bound) const {
    constexpr double kRacksWorth = 0.002;
    return std::isfinite(lp_root_) && lp_root_ - racks_bound >= kRacksWorth * lp_root_;
  }

  // Searches the subtree of this node and returns an upper bound on what bidders [depth, end) can add
  // to `value` (+inf when a limit stopped it), which is recorded for the subproblem.
  double dfs(std::size_t depth, double value) {
    constexpr double kStopped = std::numeric_limits<double>::infinity();
    if (aborted_) return kStopped;
    ++nodes_;
    if (over_limit()) {
      aborted_ = true;
      return kStopped;
    }
    if (depth == bidders_.size()) {
      if (value > best_value_ + kImprovementTolerance) {
        best_value_ = value;
        std::fill(best_choice_.begin(), best_choice_.end(), -1);
        for (std::size_t k = 0; k < bidders_.size(); ++k)
          if (path_[k] >= 0)
            best_choice_[static_cast<std::size_t>(bidders_[k].index)] = bidders_[k].rows[static_cast<std::size_t>(path_[k])].source;
        if (best_value_ >= racks_bound_ - kImprovementTolerance) settle();
      }
      return 0;
    }
    const double target = best_value_ - value;
    // Up to the excluded bidder's position the subproblem lacks it; past it, it is the full problem's.
    const bool without_excluded = excluded_position_ != kNone && depth <= excluded_position_;
    const int tag = without_excluded ? static_cast<int>(excluded_position_) : SubproblemBounds::kFull;
    SubproblemBounds::Key& key = keys_[depth];
    set_usable(depth);
    bounds_->make_key(depth, usable_, key);
    double known = bounds_->find(depth, SubproblemBounds::kFull, key);
    if (without_excluded) known = std::min(known, bounds_->find(depth, tag, key));
    if (known <= target + kImprovementTolerance) return known;
    // The rack decomposition's bound at its fixed prices, where a hard solve computed it.
    double racks_node = std::numeric_limits<double>::infinity();
    if (rack_table_ != nullptr) {
      racks_node = rack_table_->bound(depth, usable_);
      if (racks_node <= target + kImprovementTolerance) {
        bounds_->record(depth, tag, key, racks_node);
        return racks_node;
      }
    }

    std::vector<double>& lambda = lambda_stack_[depth + 1];
    lambda = lambda_stack_[depth];
    collect_fitting(depth);
    double b = bound(depth, lambda, &pick_);
    if (b > target + kImprovementTolerance && node_steps_ > 0 && !table_nodes_)
      b = optimise(depth, lambda, node_steps_, target, b);
    b = std::min({b, known, racks_node});
    // A solve that reaches lp_from_nodes_ nodes is a hard one: its root gets the LP bound (for the bound it reports),
    // and where that is much tighter than the subgradient steps' its nodes the Lagrangian bound does not cut get
    // the LP's too. Between the steps' prices inherited from the parent and the LP's duals, the LP bound follows
    // the residual capacities where a few steps cannot; each LP solve costs 50-100 nodes, so only then.
    bool lp_priced = false;
    double lp_node_bound = std::numeric_limits<double>::infinity();
    const bool lp_on = lp_from_nodes_ > 0 && (nodes_ >= lp_from_nodes_ || lp_due_);
    if (lp_on && !lp_started_) {
      lp_started_ = true;
      if (excluded_ < 0) lp_->pf_solve_turned = true;
      lp_root_ = lp_root_bound();
      lp_nodes_ = std::isinf(lp_worth_) ? lp_worth_ < 0
                                        : root_steps_bound_ - lp_root_ >= lp_worth_ * (root_steps_bound_ - best_value_);
      if (racks_) try_racks();
      if (aborted_ || deadline_.passed()) {  // the root's LP and racks may end at the deadline
        aborted_ = true;
        return kStopped;
      }
      // Where the decomposition lies well below the LP, its table bounds the nodes for a lookup per rack where an LP
      // solve costs 50-100 nodes and prunes what the table already does (docs/performance.md, "The table instead of LP
      // solves at the nodes"), and it takes the place of the subgradient steps as well: on the elastic (20, 64)
      // auctions they pruned 11% of the nodes the table left open, and without them the auctions ran 16% fewer
      // instructions for 4% more nodes (docs/performance.md, "The rack table instead of the steps at the nodes").
      table_nodes_ = rack_table_ != nullptr && racks_worth(racks_bound_);
      if (table_nodes_) lp_nodes_ = false;
    }
    // The nearest ancestor's LP prices often still cut a node, without an LP solve of its own.
    const int ancestor = lp_ancestor_[depth];
    // Where the path since that ancestor took only what its LP solution took whole (a row at 1, or nothing where it
    // gave the bidder nothing), that solution less those rows is feasible here and the ancestor's duals still price
    // it at its value: an LP solve here would mostly find them again, so they stand for this node's (half the LP
    // solves of the gang auctions at 50 and 200 bidders, docs/performance.md, "LP solutions that still hold").
    const bool open = lp_on && b > target + kImprovementTolerance;
    const bool inherits = open && lp_nodes_ && ancestor >= 0 && lp_solution_holds(static_cast<std::size_t>(ancestor), depth);
    if (open && ancestor >= 0 && !inherits) b = std::min(b, bound(depth, lp_stack_[static_cast<std::size_t>(ancestor)], nullptr));
    lp_ancestor_[depth + 1] = ancestor;
    if (inherits) {
      lp_prices_ = lp_stack_[static_cast<std::size_t>(ancestor)];
      lp_pick_.resize(bidders_.size());
      lp_node_bound = bound(depth, lp_prices_, &lp_pick_);
      lp_priced = true;
      b = std::min(b, lp_node_bound);
    } else if (lp_on && lp_nodes_ && b > target + kImprovementTolerance) {
      lp_node_bound = lp_bound(depth, target + kImprovementTolerance);
      if (std::isfinite(lp_node_bound)) {
        lp_priced = true;
        b = std::min(b, lp_node_bound);
        lp_stack_[depth] = lp_prices_;  // no other node at this depth runs while its subtree is searched
        const std::span<const double> x = lp_->lp->x();
        lp_x_stack_[depth].assign(x.begin(), x.end());
        lp_ancestor_[depth + 1] = static_cast<int>(depth);
      }
    }
    if (b <= target + kImprovementTolerance) {
      bounds_->record(depth, tag, key, b);
      return b;
    }
    double best = 0;  // over the children: a row's gain plus the bound of its subtree
    // With the LP's prices, a child taking row r adds at most its reduced gain under them to the LP bound less
    // this bidder's term; the children that cannot beat the incumbent so are settled here, their bound kept.
    double lp_term = 0;
    if (lp_priced && lp_pick_[depth] >= 0)
      lp_term = reduced_gain(flat_rows_[static_cast<std::size_t>(row_ranges_[depth].first + lp_pick_[depth])], lp_prices_);
    // Each child's bound at this node's prices λ (≥ 0), known before the child is entered: the row's gain, the
    // later bidders' best reduced gains over the rows that fit here (a superset of those that fit the child), and
    // λ times the capacities they can use once the row's units are taken. A child it settles would have stopped
    // at its own first bound (the same prices, no more rows, the same capacities) without a child of its own, so
    // no packing is missed; such a child records no bound and is not counted as a node (the counts that start LP
    // bounds and threads and meet the node cap count the nodes entered).
    const std::size_t items = residual_.size();
    auto usable_after = [&](std::size_t i, int taken) { return usable_capacity_.of(depth + 1, i, residual_[i] - taken); };
    double later = bound(depth + 1, lambda, nullptr, 0.0);  // the child that takes nothing
    for (std::size_t i = 0; i < items; ++i)
      if (lambda[i] > 0) later += lambda[i] * usable_after(i, 0);
    // Where the rack table bounds the nodes and lies well below the LP (racks_worth), it bounds each child too before
    // the child is entered, from the entries it holds (RackTable::peek): a child it settles is not entered. Children
    // keep their order, so the search meets the same packings in the same order with fewer nodes (docs/performance.md,
    // "Children settled by the rack table").
    const bool table_children = table_nodes_;
    double table_none = std::numeric_limits<double>::infinity();
    if (depth != excluded_position_) {
      // Children: the rows that fit, best reduced gain first, then none.
      const int first = row_ranges_[depth].first;
      std::vector<std::pair<double, int>>& order = orders_[depth];
      order.clear();
      const auto [begin, end] = fitting_ranges_[depth];
      if (table_children) {
        child_usable_.resize(items);
        for (std::size_t i = 0; i < items; ++i) child_usable_[i] = usable_after(i, 0);
        table_none = rack_table_->bound(depth + 1, child_usable_);
      }
      for (int f = begin; f < end; ++f) {
        const int r = fitting_[static_cast<std::size_t>(f)];
        const FlatRow& row = flat_rows_[static_cast<std::size_t>(r)];
        if (lp_priced) {
          const double child = lp_node_bound - lp_term + reduced_gain(row, lp_prices_);
          if (child <= target + kImprovementTolerance) {
            best = std::max(best, child);
            continue;
          }
        }
        if (table_children) {
          changes_.clear();
          for (int l = row.begin; l < row.end; ++l) {
            const Load& load = flat_loads_[static_cast<std::size_t>(l)];
            const auto i = static_cast<std::size_t>(load.item);
            changes_.push_back({load.item, child_usable_[i], usable_after(i, load.units)});
          }
          const double child = row.gain + rack_table_->peek(depth + 1, changes_);
          if (child <= target + kImprovementTolerance) {
            best = std::max(best, child);
            continue;
          }
        }
        order.push_back({reduced_gain(row, lambda), r - first});
      }
      std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
      for (const auto& [reduced, r] : order) {
        const FlatRow& row = flat_rows_[static_cast<std::size_t>(first + r)];
        double child = row.gain + later;
        for (int l = row.begin; l < row.end; ++l) {
          const Load& load = flat_loads_[static_cast<std::size_t>(l)];
          const auto i = static_cast<std::size_t>(load.item);
          child -= lambda[i] * (usable_after(i, 0) - usable_after(i, load.units));
        }
        if (child <= best_value_ - value + kImprovementTolerance) {  // the incumbent may have risen since `target`
          best = std::max(best, child);
          continue;
        }
        for (int l = row.begin; l < row.end; ++l)
          residual_[static_cast<std::size_t>(flat_loads_[static_cast<std::size_t>(l)].item)] -=
              flat_loads_[static_cast<std::size_t>(l)].units;
        ++residual_changes_;
        path_[depth] = r;
        best = std::max(best, row.gain + dfs(depth + 1, value + row.gain));
        path_[depth] = -1;
        for (int l = row.begin; l < row.end; ++l)
          residual_[static_cast<std::size_t>(flat_loads_[static_cast<std::size_t>(l)].item)] +=
              flat_loads_[static_cast<std::size_t>(l)].units;
        ++residual_changes_;
        if (aborted_) return kStopped;
      }
    }
    if (const double none = lp_node_bound - lp_term; lp_priced && none <= target + kImprovementTolerance)
      best = std::max(best, none);
    else if (later <= best_value_ - value + kImprovementTolerance)
      best = std::max(best, later);
    else if (table_none <= best_value_ - value + kImprovementTolerance)
      best = std::max(best, table_none);
    else
      best = std::max(best, dfs(depth + 1, value));
    if (aborted_) return kStopped;
    best = std::min(best, b);
    bounds_->record(depth, tag, key, best);
    return best;
  }

  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  using FlatRow = SearchLayout::FlatRow;
  // A row's gain less the prices of the units it takes.
  double reduced_gain(const FlatRow& row, const std::vector<double>& lambda) const {
    double reduced = row.gain;
    for (int l = row.begin; l < row.end; ++l) {
      const Load& load = flat_loads_[static_cast<std::size_t>(l)];
      reduced -= lambda[static_cast<std::size_t>(load.item)] * load.units;
    }
    return reduced;
  }

  const PackingProblem& problem_;
  int excluded_;  // index into PackingProblem::bidders, -1: none
  // Read from the start, so that the solve's time includes building the problem's layout where it is the first.
  Deadline deadline_;
  ShapeMemory own_memory_;  // when the caller keeps no memory
  ShapeMemory& memory_;     // the caller's, else own_memory_
  // The problem's layout (search_layout.h), shared by the solves of one memory; these name its parts (spans rather
  // than references to its vectors: the hot loops then read each part's data as from a member of their own, where
  // the references cost 1.5 times the instructions in dfs()).
  const SearchLayout& layout_;
  std::span<const Bidder> bidders_;
  std::span<const FlatRow> flat_rows_;
  std::span<const Load> flat_loads_;
  std::span<const std::pair<int, int>> row_ranges_;
  std::span<const std::vector<int>> items_from_;
  const UsableCapacity& usable_capacity_;
  SubproblemBounds* bounds_ = nullptr;
  std::vector<SubproblemBounds::Key> keys_;  // per depth
  std::size_t excluded_position_ = kNone;
  std::int64_t max_nodes_;
  std::vector<int> residual_;
  std::vector<int> usable_;    // set_usable(): the residual the bidders still to choose can use
  std::vector<int> pick_, active_;                      // scratch of optimise()
  std::vector<int> fitting_;                            // collect_fitting(): rows into flat_rows_, bidder after bidder
  std::vector<std::pair<int, int>> fitting_ranges_;     // per position: its fitting rows in fitting_
  std::uint64_t residual_changes_ = 0;                  // times residual_ changed
  std::uint64_t fitting_at_ = ~std::uint64_t{0};        // residual_changes_ when fitting_ was collected
  std::size_t fitting_depth_ = 0;                       // the depth it was collected for
  std::vector<double> best_lambda_, subgradient_;       // scratch of optimise()
  std::vector<std::vector<std::pair<double, int>>> orders_;  // per depth: the children, best first
  std::vector<int> path_;
  std::vector<std::vector<double>> lambda_stack_;
  PackingChoice best_choice_;
  double best_value_ = 0;
  std::int64_t nodes_ = 0;
  int node_steps_ = 0;
  double left_at_read_ = -1;  // over_limit(): the time left at its last clock read (from the first node), -1: none
  bool slow_nodes_ = false;   // over_limit() reads the clock at every node
  bool aborted_ = false;
  bool settled_ = false;                   // stopped because the best packing met a proven bound
  bool racks_ = false;                     // ShapeSolver's racks
  double racks_bound_ = std::numeric_limits<double>::infinity();
  std::vector<double> racks_bound_without_;
  std::unique_ptr<RackTable> rack_table_;  // the decomposition's bound at the nodes, at its prices
  bool table_nodes_ = false;  // the table lies well below the LP (racks_worth): it bounds the nodes without LP or steps
  std::vector<int> child_usable_;                 // dfs(): the usable capacities of the child that takes nothing
  std::vector<RackTable::Change> changes_;        // dfs(): a child's capacities that differ from those
  LpState* lp_ = nullptr;                  // in the shared memory, or own_memory_'s
  std::int64_t lp_from_nodes_ = 0;         // 0: no LP bounds
  bool lp_started_ = false;
  bool lp_due_ = false;                    // half of the solve's time is spent (only under a time budget)
  bool lp_nodes_ = false;                  // the nodes get LP bounds (decided at the root's LP)
  double lp_worth_ = 0;                    // ShapeSolver's lp_worth
  double root_steps_bound_ = std::numeric_limits<double>::infinity();
  double lp_root_ = std::numeric_limits<double>::infinity();
  std::vector<char> lp_want_;              // per column of the LP: open at this node
  std::vector<double> lp_prices_;          // lp_bound()'s duals
  std::vector<int> lp_pick_;               // lp_bound()'s best row per bidder
  std::vector<std::vector<double>> lp_stack_;  // per depth: the LP prices of the node on the current path
  std::vector<int> lp_ancestor_;               // per depth: the depth of its nearest LP-priced ancestor, -1: none
  std::vector<std::vector<double>> lp_x_stack_;  // per depth: the LP solution of the node on the current path
};

constexpr int kRootSteps = 300;
constexpr int kWarmRootSteps = 40;

}  // namespace

PackingSolution ShapeSolver::solve(const PackingProblem& problem, int excluded, const SolveLimits& limits,
                                   const SolveHints& hints) {
  Search search(problem, excluded, limits, hints.memory);
  // A solve given no start (the PF solve) starts from the greedy packing improved by the local search with evictions:
  // on the auctions that reach this solver (the small searches gave up) it saves more nodes than it costs
  // (docs/performance.md, "Improved starts for the searches"). The solves without a winner get theirs improved so.
  const bool started = hints.warm_start != nullptr && packing_feasible(problem, *hints.warm_start, excluded);
  if (started) search.offer_incumbent(*hints.warm_start);
  PackingChoice greedy = greedy_packing(problem, excluded);
  search.offer_incumbent(greedy);
  if (!started) search.offer_incumbent(improve_packing(problem, excluded, std::move(greedy), search.deadline()));

  std::vector<double> local_prices;
  std::vector<double>& prices = hints.item_prices != nullptr ? *hints.item_prices : local_prices;
  const bool warm = prices.size() == search.item_count();
  if (!warm) prices.assign(search.item_count(), 0.0);
  // A solve handed a start that runs out of time before its search reports the best packing so far, bounded at the
  // prices it has: at 200 bidders the greedy packing and the root's steps take 0.4-1 ms each and the first 16 nodes
  // about 1.5 ms, and a solve without a winner given the end of a budget ran them all past its share. A solve without
  // a start (the PF solve) searches its first 16 nodes.
  const auto stopped_before_search = [&](double bound) {
    PackingSolution solution;
    solution.choice = search.best_choice();
    solution.value = packing_value(problem, solution.choice);
    solution.bound = std::max(solution.value, bound);
    solution.nodes = search.nodes();
    return solution;
  };
  if (started && search.deadline().passed()) return stopped_before_search(lagrangian_bound(problem, excluded, prices));
  std::vector<double> lambda = prices;
  search.prepare_root();
  const double root_bound = search.optimise(0, lambda, warm ? kWarmRootSteps : kRootSteps, search.best_value());
  prices = lambda;
  if (started && search.deadline().passed()) return stopped_before_search(root_bound);
  search.set_root_steps_bound(root_bound);
  const bool complete = search.run(std::move(lambda), node_steps_, lp_from_nodes_, lp_worth_, racks_);

  PackingSolution solution;
  solution.choice = search.best_choice();
  // Summed in bidder order (as every solver reports it), not in the search's: the same packing has the same
  // value whichever order found it, so c_i, the exp of a difference of values, does not move with the order.
  solution.value = packing_value(problem, solution.choice);
  solution.proven_optimal = complete;
  solution.bound =
      complete ? solution.value : std::max(solution.value, std::min({root_bound, search.lp_root(), search.racks_bound()}));
  solution.nodes = search.nodes();
  if (!search.racks_bound_without().empty()) {
    solution.bound_without = search.racks_bound_without();
    for (double& bound : solution.bound_without) bound = std::min(bound, solution.bound);
  }
  return solution;
}

}  // namespace themis::arbiter
