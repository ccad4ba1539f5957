#include "policy/arbiter/branch_and_bound_solver.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "policy/arbiter/deadline.h"
#include "policy/arbiter/greedy_packing.h"

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

  // Depth-first search with the given prices; returns whether it completed (proved optimality).
  bool run(const std::vector<double>& prices) {
    prices_ = prices;
    prepare_search();
    if (root_bound_ <= best_value_ + kEpsilon) return true;
    current_.assign(problem_.bidders.size(), -1);
    dfs(0, 0.0);
    return !aborted_;
  }

  double best_value() const { return best_value_; }
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
    if (limits_.max_nodes > 0 && nodes_ >= limits_.max_nodes) return true;
    return (nodes_ & 255) == 0 && deadline_.passed();
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
  double best_value_ = 0;
  PackingChoice best_choice_;
  std::int64_t nodes_ = 0;
  bool aborted_ = false;
};

}  // namespace

PackingSolution BranchAndBoundSolver::solve(const PackingProblem& problem, int excluded,
                                            const SolveLimits& limits, const SolveHints& hints) {
  Search search(problem, excluded, limits);
  if (hints.warm_start != nullptr && packing_feasible(problem, *hints.warm_start, excluded))
    search.offer_incumbent(improve_packing(problem, excluded, *hints.warm_start), excluded);
  search.offer_incumbent(improve_packing(problem, excluded, greedy_packing(problem, excluded)), excluded);

  std::vector<double> local_prices;
  std::vector<double>& prices = hints.item_prices != nullptr ? *hints.item_prices : local_prices;
  const bool warm_prices = prices.size() == static_cast<std::size_t>(problem.item_count);
  const double root_bound = search.optimise_prices(prices, warm_prices ? 40 : 300);
  const bool complete = search.run(prices);

  PackingSolution solution;
  solution.choice = search.best_choice();
  solution.value = search.best_value();
  solution.proven_optimal = complete;
  solution.bound = complete ? solution.value : std::max(solution.value, root_bound);
  solution.nodes = search.nodes();
  return solution;
}

}  // namespace themis::arbiter
