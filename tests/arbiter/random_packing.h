#pragma once
// Random packing LPs for the LP solvers' tests (master_lp_test.cc, dense_dual_lp_test.cc): a row per bidder (Σ x ≤ 1
// over its columns), a row per item (Σ units·x ≤ capacity), 0 ≤ x ≤ 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "policy/arbiter/packing_lp.h"

namespace themis::arbiter {

struct RandomPacking {
  int bidders = 0, items = 0;
  std::vector<int> capacity;
  std::vector<int> bidder;                  // per column
  std::vector<double> gain;                 // per column
  std::vector<std::vector<int>> units;      // per column: item per unit, sorted (PackingLp's form)
  std::vector<double> rhs() const {
    std::vector<double> out(static_cast<std::size_t>(bidders), 1.0);
    for (int c : capacity) out.push_back(c);
    return out;
  }
  std::vector<std::pair<int, double>> entries(std::size_t c) const {
    std::vector<std::pair<int, double>> out{{bidder[c], 1.0}};
    for (int item : units[c]) {
      if (out.back().first == bidders + item) {
        out.back().second += 1;
      } else {
        out.push_back({bidders + item, 1.0});
      }
    }
    return out;
  }
};

// 2 to most_bidders bidders of 1 to 8 columns, each taking 1 to 5 units of 2 to most_items items of capacity 1 to 4.
inline RandomPacking random_packing(std::mt19937& rng, int most_bidders = 20, int most_items = 30) {
  RandomPacking p;
  p.bidders = std::uniform_int_distribution<int>(2, most_bidders)(rng);
  p.items = std::uniform_int_distribution<int>(2, most_items)(rng);
  for (int i = 0; i < p.items; ++i) p.capacity.push_back(std::uniform_int_distribution<int>(1, 4)(rng));
  // Gains from a few values, so that many columns tie, as the masters' do.
  const std::vector<double> gains{0.25, 0.5, 0.75, 1.0, 1.5, 2.0};
  for (int b = 0; b < p.bidders; ++b) {
    const int rows = std::uniform_int_distribution<int>(1, 8)(rng);
    for (int r = 0; r < rows; ++r) {
      std::vector<int> units;
      const int size = std::uniform_int_distribution<int>(1, 5)(rng);
      for (int u = 0; u < size; ++u) units.push_back(std::uniform_int_distribution<int>(0, p.items - 1)(rng));
      std::sort(units.begin(), units.end());
      p.bidder.push_back(b);
      p.gain.push_back(gains[std::uniform_int_distribution<std::size_t>(0, gains.size() - 1)(rng)]);
      p.units.push_back(std::move(units));
    }
  }
  return p;
}

// The LP solved by CLP (PackingLp on its CLP engine): its objective.
inline double clp_objective(const RandomPacking& p) {
  std::vector<LpColumn> columns;
  for (std::size_t c = 0; c < p.gain.size(); ++c) columns.push_back({p.bidder[c], p.gain[c], &p.units[c]});
  PackingLp lp(p.items, p.bidders, columns, p.capacity, PackingLp::Engine::clp);
  EXPECT_TRUE(lp.solve(0));
  double total = 0;
  for (std::size_t c = 0; c < columns.size(); ++c) total += lp.x()[c] * p.gain[c];
  return total;
}

}  // namespace themis::arbiter
