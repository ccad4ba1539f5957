#pragma once
// Exhaustive winner determination for small instances: the reference the solvers are checked against.
// Items may have capacities (shape problems): a row uses one unit per occurrence of an item.
#include <cmath>
#include <vector>

#include "policy/arbiter/packing_problem.h"

namespace themis::arbiter::testing {

struct BruteForceResult {
  double value = 0;
  PackingChoice choice;
};

inline void brute_force_step(const PackingProblem& p, int excluded, std::size_t b, std::vector<int>& used,
                             PackingChoice& current, double value, BruteForceResult& best) {
  if (b == p.bidders.size()) {
    if (value > best.value) best = {value, current};
    return;
  }
  brute_force_step(p, excluded, b + 1, used, current, value, best);
  if (static_cast<int>(b) == excluded) return;
  const auto& rows = p.bidders[b].rows;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    bool clash = false;
    for (int g : rows[r].items)
      if (++used[static_cast<std::size_t>(g)] > p.capacity(g)) clash = true;
    if (!clash) {
      current[b] = static_cast<int>(r);
      brute_force_step(p, excluded, b + 1, used, current, value + rows[r].gain, best);
      current[b] = -1;
    }
    for (int g : rows[r].items) --used[static_cast<std::size_t>(g)];
  }
}

inline BruteForceResult brute_force(const PackingProblem& p, int excluded = -1) {
  BruteForceResult best{0, PackingChoice(p.bidders.size(), -1)};
  std::vector<int> used(static_cast<std::size_t>(p.item_count), 0);
  PackingChoice current(p.bidders.size(), -1);
  brute_force_step(p, excluded, 0, used, current, 0, best);
  return best;
}

// c_i by the definition, from exhaustive solves.
inline std::vector<double> brute_force_c(const PackingProblem& p) {
  const BruteForceResult all = brute_force(p);
  std::vector<double> c(p.bidders.size(), 1.0);
  for (std::size_t i = 0; i < p.bidders.size(); ++i) {
    if (all.choice[i] < 0) continue;
    const double others = all.value - p.bidders[i].rows[static_cast<std::size_t>(all.choice[i])].gain;
    c[i] = std::exp(others - brute_force(p, static_cast<int>(i)).value);
  }
  return c;
}

}  // namespace themis::arbiter::testing
