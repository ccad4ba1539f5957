#include "policy/arbiter/small_search.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "policy/arbiter/winner_solver.h"

namespace themis::arbiter {
namespace {

class Search {
 public:
  Search(const PackingProblem& problem, int excluded, const PackingChoice& start, std::int64_t max_nodes)
      : problem_(problem), max_nodes_(max_nodes), used_(static_cast<std::size_t>(problem.item_count), 0),
        current_(problem.bidders.size(), -1), best_(start), best_value_(packing_value(problem, start)) {
    for (std::size_t b = 0; b < problem.bidders.size(); ++b) {
      if (static_cast<int>(b) == excluded) continue;
      std::vector<int> rows;
      for (std::size_t r = 0; r < problem.bidders[b].rows.size(); ++r)
        if (problem.bidders[b].rows[r].gain > 0) rows.push_back(static_cast<int>(r));
      if (rows.empty()) continue;
      std::stable_sort(rows.begin(), rows.end(), [&](int x, int y) { return gain(b, x) > gain(b, y); });
      order_.push_back({static_cast<int>(b), std::move(rows)});
    }
    std::stable_sort(order_.begin(), order_.end(), [&](const Bidder& x, const Bidder& y) {
      return gain(static_cast<std::size_t>(x.index), x.rows.front()) > gain(static_cast<std::size_t>(y.index), y.rows.front());
    });
    suffix_.assign(order_.size() + 1, 0.0);
    for (std::size_t k = order_.size(); k-- > 0;)
      suffix_[k] = suffix_[k + 1] + gain(static_cast<std::size_t>(order_[k].index), order_[k].rows.front());
  }

  bool run() {
    descend(0, 0.0);
    return nodes_ <= max_nodes_;
  }
  const PackingChoice& best() const { return best_; }
  double best_value() const { return best_value_; }
  std::int64_t nodes() const { return nodes_; }

 private:
  struct Bidder {
    int index;
    std::vector<int> rows;  // rows with gain > 0, best first
  };

  double gain(std::size_t bidder, int row) const { return problem_.bidders[bidder].rows[static_cast<std::size_t>(row)].gain; }

  bool take(const PackingRow& row) {
    std::size_t k = 0;
    for (; k < row.items.size(); ++k) {
      int& u = used_[static_cast<std::size_t>(row.items[k])];
      if (u >= problem_.capacity(row.items[k])) break;
      ++u;
    }
    if (k == row.items.size()) return true;
    while (k-- > 0) --used_[static_cast<std::size_t>(row.items[k])];
    return false;
  }
  void give_back(const PackingRow& row) {
    for (int item : row.items) --used_[static_cast<std::size_t>(item)];
  }

  bool fits(const PackingRow& row) const {
    for (std::size_t k = 0; k < row.items.size();) {  // items sorted: a repeated item needs that many units
      std::size_t end = k;
      while (end < row.items.size() && row.items[end] == row.items[k]) ++end;
      if (used_[static_cast<std::size_t>(row.items[k])] + static_cast<int>(end - k) > problem_.capacity(row.items[k]))
        return false;
      k = end;
    }
    return true;
  }

  // The best gain of bidder order_[k] over its rows that fit what is left: rows only lose room as the
  // search goes deeper, so the sum over the later bidders bounds what they can still add.
  double best_fitting(std::size_t k) const {
    const auto bi = static_cast<std::size_t>(order_[k].index);
    for (int r : order_[k].rows)
      if (fits(problem_.bidders[bi].rows[static_cast<std::size_t>(r)])) return gain(bi, r);
    return 0;
  }

  void descend(std::size_t k, double value) {
    if (++nodes_ > max_nodes_) return;
    if (value > best_value_ + kImprovementTolerance) {
      best_value_ = value;
      best_ = current_;
    }
    if (k == order_.size() || value + suffix_[k] <= best_value_ + kImprovementTolerance) return;
    double later = 0;  // what bidders k+1.. can add at most, given what is taken now
    for (std::size_t j = k + 1; j < order_.size(); ++j) later += best_fitting(j);
    if (value + best_fitting(k) + later <= best_value_ + kImprovementTolerance) return;
    const Bidder& b = order_[k];
    const auto bi = static_cast<std::size_t>(b.index);
    for (int r : b.rows) {
      if (value + gain(bi, r) + later <= best_value_ + kImprovementTolerance) break;  // rows best first
      const PackingRow& row = problem_.bidders[bi].rows[static_cast<std::size_t>(r)];
      if (!take(row)) continue;
      current_[bi] = r;
      descend(k + 1, value + row.gain);
      current_[bi] = -1;
      give_back(row);
      if (nodes_ > max_nodes_) return;
    }
    descend(k + 1, value);  // this bidder wins nothing
  }

  const PackingProblem& problem_;
  const std::int64_t max_nodes_;
  std::vector<Bidder> order_;
  std::vector<double> suffix_;  // Σ best gain of order_[k..]
  std::vector<int> used_;
  PackingChoice current_;
  PackingChoice best_;
  double best_value_;
  std::int64_t nodes_ = 0;
};

}  // namespace

std::optional<PackingSolution> small_search(const PackingProblem& problem, int excluded, const PackingChoice& start,
                                            std::int64_t max_nodes) {
  if (max_nodes <= 0) return std::nullopt;
  Search search(problem, excluded, start, max_nodes);
  if (!search.run()) return std::nullopt;
  PackingSolution solution;
  solution.choice = search.best();
  solution.value = search.best_value();
  solution.bound = solution.value;
  solution.proven_optimal = true;
  solution.nodes = search.nodes();
  return solution;
}

}  // namespace themis::arbiter
