#pragma once
// Exhaustive winner determination for small instances: the reference the solvers are checked against.
// Items may have capacities (shape problems): a row uses one unit per occurrence of an item.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "policy/arbiter/packing_problem.h"
#include "policy/arbiter/small_search.h"

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

// layered_search from an empty start, with everybody and without each bidder in turn, against exhaustive
// solves: proven, feasible, the optimum's value (and its packing with everybody: continuous random gains
// make it unique). `improved` counts the solves whose optimum beats winning nothing.
// Problems whose taken counts need more than 64 bits (each item's count in a field wide enough for its
// capacity) are refused, as documented, and counted in `refused`.
inline void expect_layered_search_exact(const PackingProblem& p, int& improved, int& refused) {
  int bits = 0;
  for (int i = 0; i < p.item_count; ++i) {
    int width = 1;
    while ((1 << width) <= p.capacity(i)) ++width;
    bits += width;
  }
  for (int excluded = -1; excluded < static_cast<int>(p.bidders.size()); ++excluded) {
    const BruteForceResult expected = brute_force(p, excluded);
    const auto got = layered_search(p, excluded, PackingChoice(p.bidders.size(), -1), 1'000'000);
    if (bits > 64) {
      EXPECT_FALSE(got.has_value());
      ++refused;
      continue;
    }
    ASSERT_TRUE(got.has_value()) << "excluded " << excluded;
    EXPECT_TRUE(got->proven_optimal);
    EXPECT_TRUE(packing_feasible(p, got->choice, excluded)) << "excluded " << excluded;
    EXPECT_NEAR(got->value, expected.value, 1e-9) << "excluded " << excluded;
    EXPECT_NEAR(packing_value(p, got->choice), got->value, 1e-9);
    if (excluded < 0) {
      EXPECT_EQ(got->choice, expected.choice);
    }
    if (expected.value > 0) ++improved;
  }
}

}  // namespace themis::arbiter::testing
