// The racks' master LP (master_lp.h): a worked example, then random packing LPs against CLP (PackingLp solves the same
// LP: a row per bidder, a row per item), warm re-solves as columns enter, columns fixed at 1, and a highly degenerate
// master. Its right-hand sides are raised by about 1e-7 (kPerturbation), so objectives match within 1e-5.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "policy/arbiter/deadline.h"
#include "policy/arbiter/master_lp.h"
#include "policy/arbiter/packing_lp.h"
#include "random_packing.h"

namespace themis::arbiter {
namespace {

constexpr double kClose = 1e-5;

// Every column's reduced gain at the duals is at most 0 where the column is below 1, and the duals are at least 0:
// they prove the bound Σ y·b + Σ max(0, reduced gain), which strong duality makes the objective.
double dual_bound(const MasterLp& lp, const std::vector<double>& rhs,
                  const std::vector<std::pair<double, std::vector<std::pair<int, double>>>>& columns) {
  double bound = 0;
  for (std::size_t r = 0; r < rhs.size(); ++r) {
    EXPECT_GE(lp.duals()[r], -1e-9) << "row " << r;
    bound += std::max(0.0, lp.duals()[r]) * rhs[r];
  }
  for (const auto& [gain, entries] : columns) {
    double reduced = gain;
    for (const auto& [row, value] : entries) reduced -= std::max(0.0, lp.duals()[static_cast<std::size_t>(row)]) * value;
    bound += std::max(0.0, reduced);
  }
  return bound;
}

// Rows of capacity 1 and 3. a takes 2 of row 0 for 3, b takes 1 of row 0 for 1, d takes 2 of row 1 for 1. The optimum
// takes half of a (1.5 for row 0's one unit, where b would give 1) and all of d: 2.5. Row 0's dual is a's gain per
// unit, 1.5; row 1 has a unit to spare, its dual is 0.
TEST(MasterLp, SolvesAWorkedExample) {
  MasterLp lp({1.0, 3.0});
  const std::vector<std::pair<int, double>> a{{0, 2.0}}, b{{0, 1.0}}, d{{1, 2.0}};
  lp.add_column(3.0, a);
  lp.add_column(1.0, b);
  lp.add_column(1.0, d);
  ASSERT_EQ(lp.solve(Deadline(0)), MasterLp::Status::optimal);
  EXPECT_NEAR(lp.objective(), 2.5, kClose);
  EXPECT_NEAR(lp.x()[0], 0.5, kClose);
  EXPECT_NEAR(lp.x()[1], 0.0, kClose);
  EXPECT_NEAR(lp.x()[2], 1.0, kClose);
  EXPECT_NEAR(lp.duals()[0], 1.5, 1e-9);
  EXPECT_NEAR(lp.duals()[1], 0.0, 1e-9);
  // With b at 1, row 0 is full: b and d, 2.
  ASSERT_TRUE(lp.fix_at_one(1));
  ASSERT_EQ(lp.solve(Deadline(0)), MasterLp::Status::optimal);
  EXPECT_NEAR(lp.objective(), 2.0, kClose);
  EXPECT_EQ(lp.x()[1], 1.0);
  // a's two units no longer fit beside b.
  EXPECT_FALSE(lp.fix_at_one(0));
}

TEST(MasterLp, MatchesClpOnRandomPackingsColdAndWarm) {
  std::mt19937 rng(20261206);
  for (int instance = 0; instance < 300; ++instance) {
    SCOPED_TRACE(instance);
    const RandomPacking p = random_packing(rng);
    const double expected = clp_objective(p);
    std::vector<std::pair<double, std::vector<std::pair<int, double>>>> columns;
    for (std::size_t c = 0; c < p.gain.size(); ++c) columns.push_back({p.gain[c], p.entries(c)});
    // Cold: every column, then one solve.
    MasterLp cold(p.rhs());
    for (const auto& [gain, entries] : columns) cold.add_column(gain, entries);
    ASSERT_EQ(cold.solve(Deadline(0)), MasterLp::Status::optimal);
    EXPECT_NEAR(cold.objective(), expected, kClose);
    EXPECT_NEAR(dual_bound(cold, p.rhs(), columns), expected, kClose);
    // Warm: the columns in four batches, a solve after each, as column generation adds them.
    MasterLp warm(p.rhs());
    const std::size_t batch = (columns.size() + 3) / 4;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      warm.add_column(columns[c].first, columns[c].second);
      if ((c + 1) % batch == 0 || c + 1 == columns.size()) {
        ASSERT_EQ(warm.solve(Deadline(0)), MasterLp::Status::optimal);
      }
    }
    EXPECT_NEAR(warm.objective(), expected, kClose);
    EXPECT_NEAR(dual_bound(warm, p.rhs(), columns), expected, kClose);
    // Each solution within its rows and bounds.
    std::vector<double> used(p.rhs().size(), 0.0);
    for (std::size_t c = 0; c < columns.size(); ++c) {
      EXPECT_GE(warm.x()[c], -1e-9);
      EXPECT_LE(warm.x()[c], 1 + 1e-9);
      for (const auto& [row, value] : columns[c].second) used[static_cast<std::size_t>(row)] += value * warm.x()[c];
    }
    for (std::size_t r = 0; r < used.size(); ++r) EXPECT_LE(used[r], p.rhs()[r] + kClose) << "row " << r;
  }
}

TEST(MasterLp, AColumnFixedAtOneIsTheLpWithItsRowsTaken) {
  std::mt19937 rng(7);
  int fixed = 0;
  for (int instance = 0; instance < 100; ++instance) {
    SCOPED_TRACE(instance);
    RandomPacking p = random_packing(rng);
    MasterLp lp(p.rhs());
    for (std::size_t c = 0; c < p.gain.size(); ++c) lp.add_column(p.gain[c], p.entries(c));
    ASSERT_EQ(lp.solve(Deadline(0)), MasterLp::Status::optimal);
    // A column whose units fit the capacities (some take more of an item than it has, and only fractionally fit).
    std::size_t c = static_cast<std::size_t>(instance) % p.gain.size();
    auto fits = [&](std::size_t d) {
      for (const auto& [row, value] : p.entries(d))
        if (value > p.rhs()[static_cast<std::size_t>(row)]) return false;
      return true;
    };
    while (!fits(c)) c = (c + 1) % p.gain.size();
    ASSERT_TRUE(lp.fix_at_one(static_cast<int>(c)));
    ASSERT_EQ(lp.solve(Deadline(0)), MasterLp::Status::optimal);
    EXPECT_EQ(lp.x()[c], 1.0);
    // The same LP by CLP: the column's gain, and the rest with its bidder gone and its units taken.
    RandomPacking rest = p;
    for (int item : p.units[c]) --rest.capacity[static_cast<std::size_t>(item)];
    for (std::size_t d = 0; d < p.gain.size(); ++d)
      if (p.bidder[d] == p.bidder[c]) rest.gain[d] = 0;
    EXPECT_NEAR(lp.objective(), p.gain[c] + clp_objective(rest), kClose);
    ++fixed;
  }
  EXPECT_EQ(fixed, 100);
}

// More than kMaxDenseRows rows: the master goes to CLP, with the same answers (unperturbed: within 1e-7).
TEST(MasterLp, ALargeMasterGoesToClpWithTheSameAnswers) {
  std::mt19937 rng(11);
  for (int instance = 0; instance < 10; ++instance) {
    SCOPED_TRACE(instance);
    RandomPacking p;
    do p = random_packing(rng, 200, 200);
    while (p.bidders + p.items <= MasterLp::kMaxDenseRows);
    std::vector<std::pair<double, std::vector<std::pair<int, double>>>> columns;
    for (std::size_t c = 0; c < p.gain.size(); ++c) columns.push_back({p.gain[c], p.entries(c)});
    MasterLp lp(p.rhs());
    for (std::size_t c = 0; c < columns.size() / 2; ++c) lp.add_column(columns[c].first, columns[c].second);
    ASSERT_EQ(lp.solve(Deadline(0)), MasterLp::Status::optimal);
    for (std::size_t c = columns.size() / 2; c < columns.size(); ++c) lp.add_column(columns[c].first, columns[c].second);
    ASSERT_EQ(lp.solve(Deadline(0)), MasterLp::Status::optimal);
    const double expected = clp_objective(p);
    EXPECT_NEAR(lp.objective(), expected, 1e-7);
    EXPECT_NEAR(dual_bound(lp, p.rhs(), columns), expected, 1e-7);
  }
}

// Forty identical bidders, each with the same four rows over four items of capacity 1: every basis on the way is
// degenerate many times over. The optimum is 4 (one row per item, fractional among the bidders or not).
TEST(MasterLp, EndsOnAHighlyDegenerateMaster) {
  constexpr int kBidders = 40, kItems = 4;
  std::vector<double> rhs(kBidders, 1.0);
  rhs.insert(rhs.end(), kItems, 1.0);
  MasterLp lp(rhs);
  for (int b = 0; b < kBidders; ++b)
    for (int i = 0; i < kItems; ++i) {
      const std::vector<std::pair<int, double>> entries{{b, 1.0}, {kBidders + i, 1.0}};
      lp.add_column(1.0, entries);
    }
  ASSERT_EQ(lp.solve(Deadline(0)), MasterLp::Status::optimal);
  EXPECT_NEAR(lp.objective(), 4.0, kClose);
}

}  // namespace
}  // namespace themis::arbiter
