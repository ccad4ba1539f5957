#include "policy/arbiter/displacement.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "policy/arbiter/deadline.h"
#include "policy/arbiter/winner_solver.h"

namespace themis::arbiter {
namespace {

int units_of(const PackingRow& row, int item) {
  return static_cast<int>(std::count(row.items.begin(), row.items.end(), item));
}

}  // namespace

DisplacementChecker::DisplacementChecker(const PackingProblem& problem, const PackingSolution& pf, double max_seconds)
    : problem_(problem), pf_(pf) {
  if (!pf.proven_optimal) return;
  std::vector<LpColumn> columns;
  for (std::size_t b = 0; b < problem.bidders.size(); ++b)
    for (const PackingRow& row : problem.bidders[b].rows) {
      if (!(row.gain > 0)) continue;
      rows_.push_back(&row);
      bidder_.push_back(static_cast<int>(b));
      columns.push_back({static_cast<int>(b), row.gain, &row.items});
    }
  std::vector<int> capacity(static_cast<std::size_t>(problem.item_count));
  for (int i = 0; i < problem.item_count; ++i) capacity[static_cast<std::size_t>(i)] = problem.capacity(i);
  lp_ = std::make_unique<PackingLp>(problem.item_count, static_cast<int>(problem.bidders.size()), columns, capacity);
  if (!lp_->solve(max_seconds)) lp_.reset();
}

DisplacementChecker::~DisplacementChecker() = default;

DisplacementCheck DisplacementChecker::check(int excluded, double incumbent, double max_seconds) const {
  DisplacementCheck out;
  const Deadline deadline(max_seconds);
  const auto solve = [&](PackingLp& lp) {
    return lp.solve(deadline.budget_left());
  };
  const auto& bidders = problem_.bidders;
  if (!lp_ || excluded < 0 || static_cast<std::size_t>(excluded) >= bidders.size()) return out;
  const int won_row = pf_.choice[static_cast<std::size_t>(excluded)];
  if (won_row < 0) return out;
  const PackingRow& won = bidders[static_cast<std::size_t>(excluded)].rows[static_cast<std::size_t>(won_row)];
  // The packings that leave room for the won row are worth at most W* − its gain; the incumbent must be that much.
  if (incumbent < pf_.value - won.gain - kImprovementTolerance) return out;

  std::unique_ptr<PackingLp> lp;
  {
    const std::lock_guard<std::mutex> lock(copying_);
    lp = lp_->clone();
  }
  for (std::size_t k = 0; k < rows_.size(); ++k)
    if (bidder_[k] == excluded) lp->set_bounds(static_cast<int>(k), 0, 0);

  // Σ_i λ_i·capacity_i − μ·least + Σ_{b ≠ excluded} max(0, max_row (value(row) − λ·units(row) + μ·units(row, item))):
  // for λ, μ ≥ 0 an upper bound on Σ value over the packings without `excluded` that use at least `least` of `item`.
  std::vector<double> duals, lambda;
  const auto bound = [&](int item, double mu, int least, const auto& value) {
    double total = -mu * least;
    for (int i = 0; i < problem_.item_count; ++i) total += lambda[static_cast<std::size_t>(i)] * problem_.capacity(i);
    double best = 0;
    int current = -1;
    for (std::size_t k = 0; k < rows_.size(); ++k) {
      if (bidder_[k] == excluded) continue;
      if (bidder_[k] != current) {
        total += best;
        best = 0;
        current = bidder_[k];
      }
      const PackingRow& row = *rows_[k];
      double reduced = value(row) + mu * units_of(row, item);
      for (int i : row.items) reduced -= lambda[static_cast<std::size_t>(i)];
      best = std::max(best, reduced);
    }
    return total + best;
  };
  // λ from the item duals; μ, the least use's dual where that bound is the active one, from the item's own.
  const auto take_prices = [&](int item) {
    lp->item_duals(duals);
    lp->item_prices(lambda);
    return std::max(0.0, -duals[static_cast<std::size_t>(item)]);
  };
  const auto gain = [](const PackingRow& row) { return row.gain; };
  constexpr double kNoMinimum = -std::numeric_limits<double>::infinity();
  // Where the dense LP found the least use infeasible, its duals move without bound along a ray and the LP's bound
  // falls with them: prices y + t·ray for growing t, each checked by bound() as any prices are, settle the item once
  // that bound is no higher than the incumbent, without the LP that maximises the use.
  std::vector<double> ray;
  const auto settled_along_ray = [&](int item, int least) {
    if (!lp->item_ray(ray)) return false;
    lp->item_duals(duals);
    lambda.resize(duals.size());
    for (double t = 1; t <= 1e12; t *= 8) {
      for (std::size_t i = 0; i < duals.size(); ++i) lambda[i] = std::max(0.0, duals[i] + t * ray[i]);
      const double mu = std::max(0.0, -(duals[static_cast<std::size_t>(item)] + t * ray[static_cast<std::size_t>(item)]));
      if (bound(item, mu, least, gain) <= incumbent + kImprovementTolerance) return true;
    }
    return false;
  };

  // The machine-level items first: where the others can take the freed GPUs, it is mostly there, and a check that
  // cannot settle stops at its first such item.
  std::vector<ItemLoad> loads = item_loads(won);
  std::reverse(loads.begin(), loads.end());
  for (const ItemLoad& load : loads) {
    const int least = problem_.capacity(load.item) - load.units + 1;
    lp->set_item_minimum(load.item, least);
    ++out.lps;
    if (solve(*lp)) {
      const double mu = take_prices(load.item);
      if (bound(load.item, mu, least, gain) > incumbent + kImprovementTolerance) return out;
    } else if (lp->proven_infeasible() && settled_along_ray(load.item, least)) {
      // Settled by prices along the direction the dense LP found infeasible in (below).
    } else if (lp->proven_infeasible()) {
      // Certified by the prices of the LP that maximises the others' use of the item: their bound on it below `least`.
      lp->set_item_minimum(load.item, kNoMinimum);
      for (std::size_t k = 0; k < rows_.size(); ++k) lp->set_gain(static_cast<int>(k), units_of(*rows_[k], load.item));
      ++out.lps;
      bool certified = solve(*lp);
      if (certified) {
        take_prices(load.item);
        const auto use = [&](const PackingRow& row) { return static_cast<double>(units_of(row, load.item)); };
        // Uses are whole units: a bound below `least` by more than rounding proves that least unreachable.
        certified = bound(load.item, 0.0, 0, use) < least - 1e-6;
      }
      for (std::size_t k = 0; k < rows_.size(); ++k) lp->set_gain(static_cast<int>(k), rows_[k]->gain);
      if (!certified) return out;
    } else {
      return out;
    }
    lp->set_item_minimum(load.item, kNoMinimum);
  }
  out.settled = true;
  return out;
}

}  // namespace themis::arbiter
