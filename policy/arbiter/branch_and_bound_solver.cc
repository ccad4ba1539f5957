#include "policy/arbiter/branch_and_bound_solver.h"

#include <algorithm>
#include <stdexcept>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <span>

#include "policy/arbiter/deadline.h"
#include "policy/arbiter/greedy_packing.h"
#include "policy/arbiter/packing_lp.h"

namespace themis::arbiter {

namespace {

constexpr double kEpsilon = kImprovementTolerance;  // values within this of the incumbent are ties

using Word = std::uint64_t;

// The search's own copy of the problem: dominance-filtered rows with bitsets and reduced values.
struct Row {
  int bidder = 0;       // position in the search order
  int original = 0;     // index into PackingBidder::rows
  double gain = 0;
  double reduced = 0;   // gain − Σ λ over its items
  std::vector<int> items;
};

bool subset_of(const std::vector<int>& a, const std::vector<int>& b) {
  return std::includes(b.begin(), b.end(), a.begin(), a.end());
}

class Search {
 public:
  Search(const PackingProblem& problem, int excluded, const SolveLimits& limits)
      : problem_(problem), limits_(limits), deadline_(limits.max_seconds) {
    build_rows(excluded);
    best_choice_.assign(problem.bidders.size(), -1);
  }

  void offer_incumbent(const PackingChoice& choice, int excluded) {
    if (!packing_feasible(problem_, choice, excluded)) return;
    const double value = packing_value(problem_, choice);
    if (value > best_value_) {
      best_value_ = value;
      best_choice_ = choice;
    }
  }

  // Subgradient steps on the prices; returns the best (lowest) bound seen and leaves those prices set.
  double optimise_prices(std::vector<double>& prices, int iterations) {
    const auto items = static_cast<std::size_t>(problem_.item_count);
    if (prices.size() != items) prices.assign(items, 0.0);
    std::vector<double> best_prices = prices;
    double best_bound = lagrangian(prices, nullptr);
    std::vector<int> usage(items);
    double step_scale = 2.0;
    int since_improvement = 0;
    for (int it = 0; it < iterations && best_bound > best_value_ + kEpsilon; ++it) {
      std::fill(usage.begin(), usage.end(), 0);
      const double bound = lagrangian(prices, &usage);
      if (bound < best_bound - 1e-12) {
        best_bound = bound;
        best_prices = prices;
        since_improvement = 0;
      } else if (++since_improvement >= 10) {
        step_scale /= 2;
        since_improvement = 0;
        if (step_scale < 1e-4) break;
      }
      if (it % 8 == 0) price_guided_greedy(prices);
      double norm = 0;
      for (std::size_t g = 0; g < items; ++g) {
        const double s = 1.0 - usage[g];
        if (s < 0 || prices[g] > 0) norm += s * s;  // components the projection would not freeze
      }
      if (norm == 0) break;  // every GPU used exactly once or unused at price 0: bound is tight
      const double step = step_scale * (bound - best_value_) / norm;
      for (std::size_t g = 0; g < items; ++g)
        prices[g] = std::max(0.0, prices[g] - step * (1.0 - usage[g]));
      if (deadline_.passed()) break;
    }
    prices = best_prices;
    price_guided_greedy(prices);
    return best_bound;
  }

  // Phase 2, LP-based branch and bound: at each node the LP relaxation (warm dual simplex) gives prices,
  // the node's Lagrangian bound with them prunes, a greedy by LP value finds packings, and a column with
  // a fractional value is fixed to 1, then to 0.
  bool run_lp() {
    std::vector<LpColumn> columns;
    columns.reserve(rows_.size());
    for (const Row& row : rows_) columns.push_back(LpColumn{row.bidder, row.gain, &row.items});
    if (columns.empty()) return true;
    aborted_ = false;
    lp_ = std::make_unique<PackingLp>(problem_.item_count, static_cast<int>(order_.size()), columns);
    lower_.assign(rows_.size(), 0);
    upper_.assign(rows_.size(), 1);
    forced_.assign(order_.size(), -1);
    by_gain_.resize(rows_.size());
    std::iota(by_gain_.begin(), by_gain_.end(), 0);
    std::stable_sort(by_gain_.begin(), by_gain_.end(), [&](int a, int b) {
      return rows_[static_cast<std::size_t>(a)].gain > rows_[static_cast<std::size_t>(b)].gain;
    });
    lp_node();
    return !aborted_;
  }

  // Lagrangian bound of the node (fixings in lower_/upper_/forced_) for prices λ >= 0.
  double node_bound(const std::vector<double>& prices) const {
    std::vector<double> best;
    return node_bound(prices, best);
  }
  double node_bound(const std::vector<double>& prices, std::vector<double>& best) const {
    double total = std::accumulate(prices.begin(), prices.end(), 0.0);
    best.assign(order_.size(), 0.0);
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      const auto b = static_cast<std::size_t>(rows_[r].bidder);
      if (upper_[r] == 0 || (forced_[b] >= 0 && forced_[b] != static_cast<int>(r))) continue;
      double reduced = rows_[r].gain;
      for (int g : rows_[r].items) reduced -= prices[static_cast<std::size_t>(g)];
      if (forced_[b] == static_cast<int>(r)) {
        best[b] = reduced;  // forced: may be negative
      } else {
        best[b] = std::max(best[b], reduced);
      }
    }
    return std::accumulate(best.begin(), best.end(), total);
  }

  bool forced_rows_clash() const {
    std::vector<char> used(static_cast<std::size_t>(problem_.item_count), 0);
    for (int r : forced_) {
      if (r < 0) continue;
      for (int g : rows_[static_cast<std::size_t>(r)].items) {
        if (used[static_cast<std::size_t>(g)]) return true;
        used[static_cast<std::size_t>(g)] = 1;
      }
    }
    return false;
  }

  // Rows by LP value (forced first), each taken if its bidder is free and its GPUs unused.
  void lp_rounding(std::span<const double> x) {
    std::vector<int> ranked;
    for (std::size_t r = 0; r < rows_.size(); ++r)
      if (upper_[r] != 0 && x[r] > 1e-6) ranked.push_back(static_cast<int>(r));
    std::stable_sort(ranked.begin(), ranked.end(), [&](int a, int b) {
      const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
      if (lower_[ua] != lower_[ub]) return lower_[ua] > lower_[ub];
      if (x[ua] != x[ub]) return x[ua] > x[ub];
      return rows_[ua].gain > rows_[ub].gain;
    });
    std::vector<char> used(static_cast<std::size_t>(problem_.item_count), 0);
    std::vector<char> taken(order_.size(), 0);
    PackingChoice choice(problem_.bidders.size(), -1);
    double value = 0;
    auto take_if_free = [&](std::size_t r) {
      const Row& row = rows_[r];
      if (taken[static_cast<std::size_t>(row.bidder)]) return;
      for (int g : row.items)
        if (used[static_cast<std::size_t>(g)]) return;
      for (int g : row.items) used[static_cast<std::size_t>(g)] = 1;
      taken[static_cast<std::size_t>(row.bidder)] = 1;
      choice[static_cast<std::size_t>(order_[static_cast<std::size_t>(row.bidder)])] = row.original;
      value += row.gain;
    };
    for (int r : ranked) take_if_free(static_cast<std::size_t>(r));
    // Then every other row by gain, to fill what the LP left free.
    for (int r : by_gain_) if (upper_[static_cast<std::size_t>(r)] != 0) take_if_free(static_cast<std::size_t>(r));
    if (value > best_value_ + kEpsilon) {
      best_value_ = value;
      best_choice_ = std::move(choice);
    }
  }

  void lp_node() {
    if (aborted_) return;
    if (out_of_budget()) {
      aborted_ = true;
      return;
    }
    const bool solved = lp_->solve(deadline_.budget_left());
    if (solved) {
      lp_->item_prices(prices_);
    } else {
      if (forced_rows_clash()) return;  // no packing here at all
      prices_.assign(static_cast<std::size_t>(problem_.item_count), 0.0);  // still a valid bound
    }
    std::vector<double> bidder_best;
    const double bound = node_bound(prices_, bidder_best);
    if (!lp_root_bound_) lp_root_bound_ = bound;
    if (bound <= best_value_ + kEpsilon) return;
    const std::span<const double> x = lp_->x();
    if (solved) {
      lp_rounding(x);
      if (bound <= best_value_ + kEpsilon) return;
    }
    // Reduced-cost fixing: taking row r instead of its bidder's best bounds the subtree by
    // bound − best_b + reduced_r; rows for which that is no better than the incumbent are dropped here.
    std::vector<int> dropped;
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      if (lower_[r] != 0 || upper_[r] == 0) continue;
      const auto b = static_cast<std::size_t>(rows_[r].bidder);
      if (forced_[b] >= 0) continue;
      double reduced = rows_[r].gain;
      for (int g : rows_[r].items) reduced -= prices_[static_cast<std::size_t>(g)];
      if (bound - bidder_best[b] + reduced <= best_value_ + kEpsilon) {
        upper_[r] = 0;
        lp_->set_bounds(static_cast<int>(r), 0, 0);
        dropped.push_back(static_cast<int>(r));
      }
    }
    branch_lp(solved, x);
    for (int r : dropped) {
      upper_[static_cast<std::size_t>(r)] = 1;
      lp_->set_bounds(r, 0, 1);
    }
  }

  void branch_lp(bool solved, std::span<const double> x) {
    // Branch on the free column whose LP value is most fractional (x = 1 first, then x = 0); with an
    // integral LP (a bound above it only by tolerances), on a column at 1. A child whose bound with the
    // parent's prices is no better than the incumbent needs no LP solve.
    int branch = -1;
    double best_score = -1;
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      if (lower_[r] != 0 || upper_[r] == 0) continue;
      if (forced_[static_cast<std::size_t>(rows_[r].bidder)] >= 0) continue;
      const double v = solved ? std::clamp(x[r], 0.0, 1.0) : 0.5;
      // Most fractional, weighted by the GPUs the row holds: settling a large bundle moves the bound most.
      const double fractional = std::min(v, 1 - v) * static_cast<double>(rows_[r].items.size());
      // Fractional first; then a column at 1; then any free column, so that a bound above the
      // incumbent is never left unexplored whatever the LP's tolerances.
      const double score = v <= 1e-6 ? 0 : v >= 1 - 1e-6 ? 1 : 2 + fractional;
      if (score > best_score) {
        best_score = score;
        branch = static_cast<int>(r);
      }
    }
    if (branch < 0) return;  // every bidder settled: lp_rounding took the forced rows
    const auto r = static_cast<std::size_t>(branch);
    const auto b = static_cast<std::size_t>(rows_[r].bidder);
    const std::vector<double> parent_prices = prices_;
    lower_[r] = 1;
    forced_[b] = branch;
    if (node_bound(parent_prices) > best_value_ + kEpsilon) {
      lp_->set_bounds(branch, 1, 1);
      lp_node();
    }
    lower_[r] = 0;
    forced_[b] = -1;
    if (aborted_) {
      lp_->set_bounds(branch, 0, 1);
      return;
    }
    upper_[r] = 0;
    lp_->set_bounds(branch, 0, 0);
    if (node_bound(parent_prices) > best_value_ + kEpsilon) lp_node();
    upper_[r] = 1;
    lp_->set_bounds(branch, 0, 1);
  }

  // Depth-first search with the given prices; returns whether it completed (proved optimality).
  // Stops after `node_limit` nodes in all (<= 0: none) or at the solve's budget.
  bool run(const std::vector<double>& prices, std::int64_t node_limit) {
    prices_ = prices;
    prepare_search();
    if (root_bound_ <= best_value_ + kEpsilon) return true;
    current_.assign(problem_.bidders.size(), -1);
    phase_limit_ = node_limit;
    dfs(0, 0.0);
    phase_limit_ = 0;
    return !aborted_;
  }

  double best_value() const { return best_value_; }
  std::optional<double> lp_root_bound() const { return lp_root_bound_; }
  bool budget_spent() const { return budget_spent_; }
  const PackingChoice& best_choice() const { return best_choice_; }
  std::int64_t nodes() const { return nodes_; }

 private:
  void build_rows(int excluded) {
    std::vector<int> bidders;
    for (std::size_t b = 0; b < problem_.bidders.size(); ++b)
      if (static_cast<int>(b) != excluded && !problem_.bidders[b].rows.empty()) bidders.push_back(static_cast<int>(b));
    // Branch first on the bidders with the most to gain: their choice moves the bound most.
    auto max_gain = [&](int b) {
      double m = 0;
      for (const auto& r : problem_.bidders[static_cast<std::size_t>(b)].rows) m = std::max(m, r.gain);
      return m;
    };
    std::stable_sort(bidders.begin(), bidders.end(), [&](int a, int b) { return max_gain(a) > max_gain(b); });
    order_ = bidders;
    for (std::size_t pos = 0; pos < order_.size(); ++pos) {
      const auto& rows = problem_.bidders[static_cast<std::size_t>(order_[pos])].rows;
      for (std::size_t r = 0; r < rows.size(); ++r) {
        if (!(rows[r].gain > 0) || rows[r].items.empty()) continue;
        bool dominated = false;
        for (std::size_t s = 0; s < rows.size() && !dominated; ++s) {
          if (s == r || !(rows[s].gain > 0) || rows[s].items.empty()) continue;
          const bool better_or_equal = rows[s].gain > rows[r].gain ||
                                       (rows[s].gain == rows[r].gain &&
                                        (rows[s].items.size() < rows[r].items.size() ||
                                         (rows[s].items.size() == rows[r].items.size() && s < r)));
          dominated = better_or_equal && subset_of(rows[s].items, rows[r].items);
        }
        if (!dominated)
          rows_.push_back(Row{static_cast<int>(pos), static_cast<int>(r), rows[r].gain, rows[r].gain, rows[r].items});
      }
    }
  }

  // L(λ) = Σ λ + Σ_bidders max(0, max_row reduced). Fills usage with the items of the argmax rows.
  double lagrangian(const std::vector<double>& prices, std::vector<int>* usage) {
    double total = std::accumulate(prices.begin(), prices.end(), 0.0);
    std::vector<int> best_row(order_.size(), -1);
    std::vector<double> best_reduced(order_.size(), 0.0);
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      double reduced = rows_[r].gain;
      for (int g : rows_[r].items) reduced -= prices[static_cast<std::size_t>(g)];
      const auto b = static_cast<std::size_t>(rows_[r].bidder);
      if (reduced > best_reduced[b]) {
        best_reduced[b] = reduced;
        best_row[b] = static_cast<int>(r);
      }
    }
    for (std::size_t b = 0; b < order_.size(); ++b) {
      total += best_reduced[b];
      if (usage != nullptr && best_row[b] >= 0)
        for (int g : rows_[static_cast<std::size_t>(best_row[b])].items) ++(*usage)[static_cast<std::size_t>(g)];
    }
    return total;
  }

  void price_guided_greedy(const std::vector<double>& prices) {
    std::vector<std::pair<double, int>> ranked;
    ranked.reserve(rows_.size());
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      double reduced = rows_[r].gain;
      for (int g : rows_[r].items) reduced -= prices[static_cast<std::size_t>(g)];
      ranked.emplace_back(-reduced, static_cast<int>(r));
    }
    std::sort(ranked.begin(), ranked.end());
    std::vector<char> used(static_cast<std::size_t>(problem_.item_count), 0);
    std::vector<char> taken(order_.size(), 0);
    PackingChoice choice(problem_.bidders.size(), -1);
    double value = 0;
    for (const auto& [key, r] : ranked) {
      const Row& row = rows_[static_cast<std::size_t>(r)];
      if (taken[static_cast<std::size_t>(row.bidder)]) continue;
      if (std::any_of(row.items.begin(), row.items.end(), [&](int g) { return used[static_cast<std::size_t>(g)] != 0; }))
        continue;
      for (int g : row.items) used[static_cast<std::size_t>(g)] = 1;
      taken[static_cast<std::size_t>(row.bidder)] = 1;
      choice[static_cast<std::size_t>(order_[static_cast<std::size_t>(row.bidder)])] = row.original;
      value += row.gain;
    }
    if (value > best_value_) {
      best_value_ = value;
      best_choice_ = std::move(choice);
    }
  }

  void prepare_search() {
    const auto bidders = order_.size();
    for (Row& row : rows_) {
      row.reduced = row.gain;
      for (int g : row.items) row.reduced -= prices_[static_cast<std::size_t>(g)];
    }
    // Rows grouped by bidder in search order, best reduced value first (also the branching order).
    std::vector<int> sorted(rows_.size());
    std::iota(sorted.begin(), sorted.end(), 0);
    std::stable_sort(sorted.begin(), sorted.end(), [&](int a, int b) {
      const Row& ra = rows_[static_cast<std::size_t>(a)];
      const Row& rb = rows_[static_cast<std::size_t>(b)];
      if (ra.bidder != rb.bidder) return ra.bidder < rb.bidder;
      return ra.reduced > rb.reduced;
    });
    std::vector<Row> reordered;
    reordered.reserve(rows_.size());
    for (int r : sorted) reordered.push_back(std::move(rows_[static_cast<std::size_t>(r)]));
    rows_ = std::move(reordered);
    first_row_.assign(bidders + 1, 0);
    for (const Row& row : rows_) ++first_row_[static_cast<std::size_t>(row.bidder) + 1];
    for (std::size_t b = 0; b < bidders; ++b) first_row_[b + 1] += first_row_[b];

    item_rows_.assign(static_cast<std::size_t>(problem_.item_count), {});
    for (std::size_t r = 0; r < rows_.size(); ++r)
      for (int g : rows_[r].items) item_rows_[static_cast<std::size_t>(g)].push_back(static_cast<int>(r));
    blocked_.assign(rows_.size(), 0);

    static_suffix_.assign(bidders + 1, 0.0);
    for (std::size_t b = bidders; b-- > 0;) {
      const double best = first_row_[b] < first_row_[b + 1]
                              ? std::max(0.0, rows_[static_cast<std::size_t>(first_row_[b])].reduced)
                              : 0.0;
      static_suffix_[b] = static_suffix_[b + 1] + best;
    }
    free_price_ = std::accumulate(prices_.begin(), prices_.end(), 0.0);
    root_bound_ = free_price_ + static_suffix_[0];
  }

  double dynamic_suffix(std::size_t from) const {
    double total = 0;
    for (std::size_t b = from; b < order_.size(); ++b) {
      for (int r = first_row_[b]; r < first_row_[b + 1]; ++r) {
        if (blocked_[static_cast<std::size_t>(r)] != 0) continue;
        total += std::max(0.0, rows_[static_cast<std::size_t>(r)].reduced);
        break;
      }
    }
    return total;
  }

  void take(int r, int delta) {
    const Row& row = rows_[static_cast<std::size_t>(r)];
    for (int g : row.items) {
      free_price_ -= delta * prices_[static_cast<std::size_t>(g)];
      for (int other : item_rows_[static_cast<std::size_t>(g)]) blocked_[static_cast<std::size_t>(other)] += delta;
    }
  }

  bool out_of_budget() {
    ++nodes_;
    if ((limits_.max_nodes > 0 && nodes_ >= limits_.max_nodes) ||
        ((lp_ != nullptr || (nodes_ & 255) == 0) && deadline_.passed())) {  // an LP node is slow
      budget_spent_ = true;
      return true;
    }
    return phase_limit_ > 0 && nodes_ >= phase_limit_;
  }

  void dfs(std::size_t depth, double value) {
    if (aborted_) return;
    if (out_of_budget()) {
      aborted_ = true;
      return;
    }
    if (value > best_value_) {
      best_value_ = value;
      std::fill(best_choice_.begin(), best_choice_.end(), -1);
      for (std::size_t b = 0; b < order_.size(); ++b)
        best_choice_[static_cast<std::size_t>(order_[b])] = current_[b];
    }
    if (depth == order_.size()) return;
    if (value + free_price_ + static_suffix_[depth] <= best_value_ + kEpsilon) return;
    if (value + free_price_ + dynamic_suffix(depth) <= best_value_ + kEpsilon) return;
    for (int r = first_row_[depth]; r < first_row_[depth + 1]; ++r) {
      if (blocked_[static_cast<std::size_t>(r)] != 0) continue;
      const Row& row = rows_[static_cast<std::size_t>(r)];
      take(r, +1);
      current_[depth] = row.original;
      dfs(depth + 1, value + row.gain);
      current_[depth] = -1;
      take(r, -1);
      if (aborted_) return;
    }
    dfs(depth + 1, value);
  }

  const PackingProblem& problem_;
  std::unique_ptr<PackingLp> lp_;
  std::vector<char> lower_, upper_;
  std::vector<int> forced_;  // per search position: the row fixed to 1, or -1
  std::vector<int> by_gain_;

  SolveLimits limits_;
  Deadline deadline_;
  std::vector<int> order_;  // search position -> bidder index in the problem
  std::vector<Row> rows_;
  std::vector<int> first_row_;
  std::vector<std::vector<int>> item_rows_;
  std::vector<int> blocked_;
  std::vector<double> prices_;
  std::vector<double> static_suffix_;
  std::vector<int> current_;  // per search position: chosen original row or -1
  double free_price_ = 0;
  double root_bound_ = 0;
  std::optional<double> lp_root_bound_;
  std::int64_t phase_limit_ = 0;
  bool budget_spent_ = false;
  double best_value_ = 0;
  PackingChoice best_choice_;
  std::int64_t nodes_ = 0;
  bool aborted_ = false;
};

}  // namespace

PackingSolution BranchAndBoundSolver::solve(const PackingProblem& problem, int excluded,
                                            const SolveLimits& limits, const SolveHints& hints) {
  if (problem.capacitated())
    throw std::invalid_argument("bnb: a shape (capacitated) problem needs the shape or cbc solver");
  Search search(problem, excluded, limits);
  if (hints.warm_start != nullptr && packing_feasible(problem, *hints.warm_start, excluded))
    search.offer_incumbent(improve_packing(problem, excluded, *hints.warm_start), excluded);
  search.offer_incumbent(improve_packing(problem, excluded, greedy_packing(problem, excluded)), excluded);

  std::vector<double> local_prices;
  std::vector<double>& prices = hints.item_prices != nullptr ? *hints.item_prices : local_prices;
  const bool warm_prices = prices.size() == static_cast<std::size_t>(problem.item_count);
  double bound = search.optimise_prices(prices, warm_prices ? 40 : 300);
  // Small problems close within a few thousand cheap nodes; the rest go on with an LP at every node.
  bool complete = lagrangian_nodes_ > 0 && search.run(prices, lagrangian_nodes_);
  if (!complete && !search.budget_spent()) {
    complete = search.run_lp();
    if (search.lp_root_bound()) bound = std::min(bound, *search.lp_root_bound());
  }

  PackingSolution solution;
  solution.choice = search.best_choice();
  solution.value = packing_value(problem, solution.choice);  // in bidder order, as every solver reports it
  solution.proven_optimal = complete;
  solution.bound = complete ? solution.value : std::max(solution.value, bound);
  solution.nodes = search.nodes();
  return solution;
}

}  // namespace themis::arbiter
