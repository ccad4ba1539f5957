#include "policy/arbiter/shape_solver.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "policy/arbiter/deadline.h"
#include "policy/arbiter/greedy_packing.h"

namespace themis::arbiter {

namespace {

struct Load {
  int item;
  int units;
};

struct Row {
  int source;  // index into PackingBidder::rows
  double gain;
  std::vector<Load> loads;
};

struct Bidder {
  int index;  // into PackingProblem::bidders
  std::vector<Row> rows;
};

std::vector<Load> loads_of(const PackingRow& row) {
  std::vector<Load> loads;
  for (int item : row.items) {
    if (!loads.empty() && loads.back().item == item)
      ++loads.back().units;
    else
      loads.push_back({item, 1});
  }
  return loads;
}

// Whether `a` uses no more of any item than `b` (both sorted by item).
bool within(const std::vector<Load>& a, const std::vector<Load>& b) {
  std::size_t j = 0;
  for (const Load& l : a) {
    while (j < b.size() && b[j].item < l.item) ++j;
    if (j == b.size() || b[j].item != l.item || b[j].units < l.units) return false;
  }
  return true;
}

class Search {
 public:
  Search(const PackingProblem& problem, int excluded, const SolveLimits& limits)
      : problem_(problem), deadline_(limits.max_seconds), max_nodes_(limits.max_nodes) {
    residual_.resize(static_cast<std::size_t>(problem.item_count));
    for (int i = 0; i < problem.item_count; ++i) residual_[static_cast<std::size_t>(i)] = problem.capacity(i);
    for (std::size_t b = 0; b < problem.bidders.size(); ++b) {
      if (static_cast<int>(b) == excluded) continue;
      Bidder bidder{static_cast<int>(b), {}};
      const auto& rows = problem.bidders[b].rows;
      for (std::size_t r = 0; r < rows.size(); ++r) {
        if (!(rows[r].gain > 0)) continue;
        Row row{static_cast<int>(r), rows[r].gain, loads_of(rows[r])};
        const bool fits = std::all_of(row.loads.begin(), row.loads.end(), [&](const Load& l) {
          return l.units <= residual_[static_cast<std::size_t>(l.item)];
        });
        if (fits) bidder.rows.push_back(std::move(row));
      }
      // Dominance: a row needing at least what another needs, for no more gain, is never needed.
      std::stable_sort(bidder.rows.begin(), bidder.rows.end(), [](const Row& x, const Row& y) { return x.gain > y.gain; });
      std::vector<Row> kept;
      for (Row& row : bidder.rows)
        if (std::none_of(kept.begin(), kept.end(), [&](const Row& k) { return within(k.loads, row.loads); }))
          kept.push_back(std::move(row));
      bidder.rows = std::move(kept);
      if (!bidder.rows.empty()) bidders_.push_back(std::move(bidder));
    }
    // Bidders with the most at stake first: their choice moves the bound most.
    std::stable_sort(bidders_.begin(), bidders_.end(),
                     [](const Bidder& x, const Bidder& y) { return x.rows.front().gain > y.rows.front().gain; });
    best_choice_.assign(problem.bidders.size(), -1);
    path_.assign(bidders_.size(), -1);
  }

  void offer_incumbent(const PackingChoice& choice) {
    const double value = packing_value(problem_, choice);
    if (value > best_value_ + kImprovementTolerance || (best_value_ == 0 && value > 0)) {
      best_value_ = value;
      best_choice_ = choice;
    }
  }

  // Lagrangian bound of bidders [depth, end) on the residual capacities with prices `lambda`;
  // `pick` receives each bidder's best row (-1: none) when given.
  double bound(std::size_t depth, const std::vector<double>& lambda, std::vector<int>* pick) const {
    double total = 0;
    for (std::size_t i = 0; i < residual_.size(); ++i) total += lambda[i] * residual_[i];
    for (std::size_t k = depth; k < bidders_.size(); ++k) {
      double best = 0;
      int best_row = -1;
      const auto& rows = bidders_[k].rows;
      for (std::size_t r = 0; r < rows.size(); ++r) {
        if (rows[r].gain <= best) break;  // sorted by gain: reduced gain cannot beat `best`
        double reduced = rows[r].gain;
        bool fits = true;
        for (const Load& l : rows[r].loads) {
          if (l.units > residual_[static_cast<std::size_t>(l.item)]) {
            fits = false;
            break;
          }
          reduced -= lambda[static_cast<std::size_t>(l.item)] * l.units;
        }
        if (fits && reduced > best) {
          best = reduced;
          best_row = static_cast<int>(r);
        }
      }
      total += best;
      if (pick != nullptr) (*pick)[k] = best_row;
    }
    return total;
  }

  // Subgradient steps on `lambda` at this node; returns the lowest bound seen (and leaves its λ).
  double optimise(std::size_t depth, std::vector<double>& lambda, int steps, double target) {
    std::vector<int> pick(bidders_.size(), -1);
    std::vector<double> best_lambda = lambda, subgradient(residual_.size());
    double best = bound(depth, lambda, &pick);
    double current = best;
    double theta = 1.0;
    int stale = 0;
    for (int step = 0; step < steps && best > target + kImprovementTolerance; ++step) {
      for (std::size_t i = 0; i < residual_.size(); ++i) subgradient[i] = residual_[i];
      for (std::size_t k = depth; k < bidders_.size(); ++k)
        if (pick[k] >= 0)
          for (const Load& l : bidders_[k].rows[static_cast<std::size_t>(pick[k])].loads)
            subgradient[static_cast<std::size_t>(l.item)] -= l.units;
      double norm = 0;
      for (std::size_t i = 0; i < residual_.size(); ++i)
        if (!(lambda[i] <= 0 && subgradient[i] > 0)) norm += subgradient[i] * subgradient[i];
      if (norm <= 0) break;  // λ is optimal: the bound is the LP bound
      const double t = theta * (current - target) / norm;
      for (std::size_t i = 0; i < residual_.size(); ++i) lambda[i] = std::max(0.0, lambda[i] - t * subgradient[i]);
      current = bound(depth, lambda, &pick);
      if (current < best - 1e-12) {
        best = current;
        best_lambda = lambda;
        stale = 0;
      } else if (++stale >= 3) {
        theta /= 2;
        stale = 0;
      }
    }
    lambda = std::move(best_lambda);
    return best;
  }

  // Depth-first search from the root; false when a limit stopped it.
  bool run(std::vector<double> lambda, int node_steps) {
    node_steps_ = node_steps;
    lambda_stack_.assign(bidders_.size() + 1, {});
    lambda_stack_[0] = std::move(lambda);
    dfs(0, 0.0);
    return !aborted_;
  }

  bool over_limit() {
    if (max_nodes_ > 0 && nodes_ >= max_nodes_) return true;
    if ((nodes_ & 255) == 0 && deadline_.passed()) return true;
    return false;
  }

  const PackingChoice& best_choice() const { return best_choice_; }
  double best_value() const { return best_value_; }
  std::int64_t nodes() const { return nodes_; }
  std::size_t item_count() const { return residual_.size(); }

 private:
  void dfs(std::size_t depth, double value) {
    if (aborted_) return;
    ++nodes_;
    if (over_limit()) {
      aborted_ = true;
      return;
    }
    if (depth == bidders_.size()) {
      if (value > best_value_ + kImprovementTolerance) {
        best_value_ = value;
        std::fill(best_choice_.begin(), best_choice_.end(), -1);
        for (std::size_t k = 0; k < bidders_.size(); ++k)
          if (path_[k] >= 0)
            best_choice_[static_cast<std::size_t>(bidders_[k].index)] = bidders_[k].rows[static_cast<std::size_t>(path_[k])].source;
      }
      return;
    }
    std::vector<double>& lambda = lambda_stack_[depth + 1];
    lambda = lambda_stack_[depth];
    const double target = best_value_ - value;
    double b = bound(depth, lambda, nullptr);
    if (b <= target + kImprovementTolerance) return;
    if (node_steps_ > 0) {
      b = optimise(depth, lambda, node_steps_, target);
      if (b <= target + kImprovementTolerance) return;
    }
    // Children: the rows that fit, best reduced gain first, then none.
    const Bidder& bidder = bidders_[depth];
    std::vector<std::pair<double, int>> order;
    for (std::size_t r = 0; r < bidder.rows.size(); ++r) {
      double reduced = bidder.rows[r].gain;
      bool fits = true;
      for (const Load& l : bidder.rows[r].loads) {
        if (l.units > residual_[static_cast<std::size_t>(l.item)]) {
          fits = false;
          break;
        }
        reduced -= lambda[static_cast<std::size_t>(l.item)] * l.units;
      }
      if (fits) order.push_back({reduced, static_cast<int>(r)});
    }
    std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    for (const auto& [reduced, r] : order) {
      const Row& row = bidder.rows[static_cast<std::size_t>(r)];
      for (const Load& l : row.loads) residual_[static_cast<std::size_t>(l.item)] -= l.units;
      path_[depth] = r;
      dfs(depth + 1, value + row.gain);
      path_[depth] = -1;
      for (const Load& l : row.loads) residual_[static_cast<std::size_t>(l.item)] += l.units;
      if (aborted_) return;
    }
    dfs(depth + 1, value);
  }

  const PackingProblem& problem_;
  Deadline deadline_;
  std::int64_t max_nodes_;
  std::vector<int> residual_;
  std::vector<Bidder> bidders_;
  std::vector<int> path_;
  std::vector<std::vector<double>> lambda_stack_;
  PackingChoice best_choice_;
  double best_value_ = 0;
  std::int64_t nodes_ = 0;
  int node_steps_ = 0;
  bool aborted_ = false;
};

constexpr int kRootSteps = 300;
constexpr int kWarmRootSteps = 40;

}  // namespace

PackingSolution ShapeSolver::solve(const PackingProblem& problem, int excluded, const SolveLimits& limits,
                                   const SolveHints& hints) {
  Search search(problem, excluded, limits);
  if (hints.warm_start != nullptr && packing_feasible(problem, *hints.warm_start, excluded))
    search.offer_incumbent(*hints.warm_start);
  search.offer_incumbent(greedy_packing(problem, excluded));

  std::vector<double> local_prices;
  std::vector<double>& prices = hints.item_prices != nullptr ? *hints.item_prices : local_prices;
  const bool warm = prices.size() == search.item_count();
  if (!warm) prices.assign(search.item_count(), 0.0);
  std::vector<double> lambda = prices;
  const double root_bound = search.optimise(0, lambda, warm ? kWarmRootSteps : kRootSteps, search.best_value());
  prices = lambda;
  const bool complete = search.run(std::move(lambda), node_steps_);

  PackingSolution solution;
  solution.choice = search.best_choice();
  solution.value = search.best_value();
  solution.proven_optimal = complete;
  solution.bound = complete ? solution.value : std::max(solution.value, root_bound);
  solution.nodes = search.nodes();
  return solution;
}

}  // namespace themis::arbiter
