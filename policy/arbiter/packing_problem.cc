#include "policy/arbiter/packing_problem.h"

#include <algorithm>
#include <limits>
#include <cmath>
#include <numeric>

namespace themis::arbiter {

double PackingSolution::gap() const {
  if (proven_optimal || bound <= 0) return 0;
  return std::max(0.0, (bound - value) / bound);
}

PackingProblem make_packing_problem(const Offer& offer, std::span<const Bid> bids, int max_rows) {
  PackingProblem problem;
  problem.item_count = static_cast<int>(offer.gpus.size());
  for (const Bid& bid : bids) {
    PackingBidder bidder{bid.app, {}};
    for (std::size_t r = 0; r < bid.rows.size(); ++r) {
      const BidRow& row = bid.rows[r];
      const double gain = std::log(bid.rho_no_new) - std::log(row.rho);
      if (!(gain > 0) || !std::isfinite(gain)) continue;
      PackingRow packed{static_cast<int>(r), gain, {}};
      packed.items.reserve(row.gpus.size());
      for (GpuIndex g : row.gpus) {
        const auto it = std::lower_bound(offer.gpus.begin(), offer.gpus.end(), g);
        packed.items.push_back(static_cast<int>(it - offer.gpus.begin()));
      }
      bidder.rows.push_back(std::move(packed));
    }
    std::stable_sort(bidder.rows.begin(), bidder.rows.end(),
                     [](const PackingRow& a, const PackingRow& b) { return a.gain > b.gain; });
    if (max_rows >= 0 && bidder.rows.size() > static_cast<std::size_t>(max_rows))
      bidder.rows.resize(static_cast<std::size_t>(max_rows));
    problem.bidders.push_back(std::move(bidder));
  }
  return problem;
}

double packing_value(const PackingProblem& problem, const PackingChoice& choice) {
  double value = 0;
  for (std::size_t b = 0; b < choice.size() && b < problem.bidders.size(); ++b)
    if (choice[b] >= 0) value += problem.bidders[b].rows[static_cast<std::size_t>(choice[b])].gain;
  return value;
}

bool packing_feasible(const PackingProblem& problem, const PackingChoice& choice, int excluded) {
  if (choice.size() != problem.bidders.size()) return false;
  std::vector<int> used(static_cast<std::size_t>(problem.item_count), 0);
  for (std::size_t b = 0; b < choice.size(); ++b) {
    if (choice[b] < 0) continue;
    if (static_cast<int>(b) == excluded) return false;
    const auto& rows = problem.bidders[b].rows;
    if (static_cast<std::size_t>(choice[b]) >= rows.size()) return false;
    for (int item : rows[static_cast<std::size_t>(choice[b])].items) {
      if (item < 0 || item >= problem.item_count) return false;
      if (++used[static_cast<std::size_t>(item)] > problem.capacity(item)) return false;
    }
  }
  return true;
}

namespace {

// A bidder's term of the Lagrangian bound: its best row's gain less its units' prices, at least 0.
double lagrangian_term(const PackingBidder& bidder, const std::vector<double>& prices) {
  double best = 0;
  for (const PackingRow& row : bidder.rows) {
    double reduced = row.gain;
    for (int item : row.items) reduced -= std::max(0.0, prices[static_cast<std::size_t>(item)]);
    best = std::max(best, reduced);
  }
  return best;
}

double priced_capacity(const PackingProblem& problem, const std::vector<double>& prices) {
  double total = 0;
  for (int i = 0; i < problem.item_count; ++i) total += std::max(0.0, prices[static_cast<std::size_t>(i)]) * problem.capacity(i);
  return total;
}

}  // namespace

double lagrangian_bound(const PackingProblem& problem, int excluded, const std::vector<double>& prices) {
  if (prices.size() != static_cast<std::size_t>(problem.item_count)) return std::numeric_limits<double>::infinity();
  double total = priced_capacity(problem, prices);
  for (std::size_t b = 0; b < problem.bidders.size(); ++b)
    if (static_cast<int>(b) != excluded) total += lagrangian_term(problem.bidders[b], prices);
  return total;
}

std::vector<double> lagrangian_bounds_without(const PackingProblem& problem, const std::vector<double>& prices) {
  const auto n = problem.bidders.size();
  if (prices.size() != static_cast<std::size_t>(problem.item_count))
    return std::vector<double>(n, std::numeric_limits<double>::infinity());
  std::vector<double> term(n);
  double total = priced_capacity(problem, prices);
  for (std::size_t b = 0; b < n; ++b) total += term[b] = lagrangian_term(problem.bidders[b], prices);
  for (double& t : term) t = total - t;
  return term;
}

void append_item_loads(const PackingRow& row, std::vector<ItemLoad>& out) {
  for (std::size_t k = 0; k < row.items.size(); ++k) {
    if (k > 0 && row.items[k] == row.items[k - 1])
      ++out.back().units;
    else
      out.push_back({row.items[k], 1});
  }
}

std::vector<ItemLoad> item_loads(const PackingRow& row) {
  std::vector<ItemLoad> loads;
  append_item_loads(row, loads);
  return loads;
}

}  // namespace themis::arbiter
