// greedy_packing's orders sorted once (GreedyOrders): without each bidder, the greedy of the problem without its rows.
// The Lagrangian bounds without each bidder in one pass (packing_problem.h) against one bound per bidder.
// upgrade_packing (greedy_packing.h): on capacitated and unit problems its packing is feasible, worth at least its
// start, and no bidder has a better row that fits the capacities the others leave it. improve_packing on capacitated
// problems: feasible, and worth at least what upgrade_packing makes of the same start; past its deadline, no move.
#include "policy/arbiter/greedy_packing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/rng.h"
#include "policy/arbiter/winner_solver.h"

namespace themis::arbiter {
namespace {

// Up to 6 items of 1 to 4 units (all of 1: a unit problem), up to 8 bidders of up to 4 rows of 1 to 5 units.
PackingProblem random_problem(Rng& rng, bool unit) {
  PackingProblem problem;
  problem.item_count = 1 + static_cast<int>(rng.below(6));
  if (!unit)
    for (int i = 0; i < problem.item_count; ++i) problem.item_capacity.push_back(1 + static_cast<int>(rng.below(4)));
  const int bidders = 1 + static_cast<int>(rng.below(8));
  for (int b = 0; b < bidders; ++b) {
    PackingBidder bidder{b + 1, {}};
    const int rows = 1 + static_cast<int>(rng.below(4));
    for (int r = 0; r < rows; ++r) {
      std::vector<int> items;
      const int units = 1 + static_cast<int>(rng.below(5));
      for (int u = 0; u < units; ++u) items.push_back(static_cast<int>(rng.below(static_cast<std::uint64_t>(problem.item_count))));
      std::sort(items.begin(), items.end());
      if (unit) items.erase(std::unique(items.begin(), items.end()), items.end());
      bidder.rows.push_back({r, 0.1 + rng.uniform(), items});
    }
    problem.bidders.push_back(std::move(bidder));
  }
  return problem;
}

// A feasible start: the bidders in turn take a random row where it fits, or nothing.
PackingChoice random_start(Rng& rng, const PackingProblem& problem, int excluded) {
  PackingChoice choice(problem.bidders.size(), -1);
  for (std::size_t b = 0; b < choice.size(); ++b) {
    if (static_cast<int>(b) == excluded) continue;
    choice[b] = static_cast<int>(rng.below(problem.bidders[b].rows.size() + 1)) - 1;
    if (!packing_feasible(problem, choice, excluded)) choice[b] = -1;
  }
  return choice;
}

TEST(UpgradePacking, IsFeasibleNoWorseAndNoBidderCanMoveToABetterRowThatFits) {
  Rng rng(20261206);
  int improved = 0;
  for (int instance = 0; instance < 2000; ++instance) {
    const PackingProblem problem = random_problem(rng, instance % 2 == 0);
    const int excluded = static_cast<int>(rng.below(problem.bidders.size() + 1)) - 1;
    SCOPED_TRACE("instance " + std::to_string(instance) + " without " + std::to_string(excluded));
    const PackingChoice start = instance % 3 == 0 ? greedy_packing(problem, excluded) : random_start(rng, problem, excluded);
    ASSERT_TRUE(packing_feasible(problem, start, excluded));
    const PackingChoice got = upgrade_packing(problem, excluded, start);
    ASSERT_TRUE(packing_feasible(problem, got, excluded));
    const double value = packing_value(problem, got);
    EXPECT_GE(value, packing_value(problem, start));
    if (value > packing_value(problem, start) + kImprovementTolerance) ++improved;
    for (std::size_t b = 0; b < got.size(); ++b) {
      if (static_cast<int>(b) == excluded) continue;
      const double held = got[b] < 0 ? 0.0 : problem.bidders[b].rows[static_cast<std::size_t>(got[b])].gain;
      for (std::size_t r = 0; r < problem.bidders[b].rows.size(); ++r) {
        PackingChoice moved = got;
        moved[b] = static_cast<int>(r);
        if (packing_feasible(problem, moved, excluded)) {
          EXPECT_LE(problem.bidders[b].rows[r].gain, held + kImprovementTolerance) << "bidder " << b << " row " << r;
        }
      }
    }
  }
  EXPECT_GT(improved, 500);
}

// One item of 4 units: a holds 1 unit (gain 1) and has a row of 3 (gain 2); b holds 1 unit; c holds nothing and has a
// row of 1. a moves to its row of 3 (3 + 1 units), which leaves c nothing.
TEST(UpgradePacking, MovesABidderToABetterRowWithinTheCapacityLeft) {
  PackingProblem problem;
  problem.item_count = 1;
  problem.item_capacity = {4};
  problem.bidders = {{1, {{0, 1.0, {0}}, {1, 2.0, {0, 0, 0}}}}, {2, {{0, 0.5, {0}}}}, {3, {{0, 0.3, {0}}}}};
  const PackingChoice got = upgrade_packing(problem, -1, {0, 0, -1});
  EXPECT_EQ(got, (PackingChoice{1, 0, -1}));
  // Without b, its unit goes to c.
  EXPECT_EQ(upgrade_packing(problem, 1, {0, -1, -1}), (PackingChoice{1, -1, 0}));
}

TEST(UpgradePacking, LeavesAnInfeasibleChoiceAsItIs) {
  PackingProblem problem;
  problem.item_count = 1;
  problem.item_capacity = {1};
  problem.bidders = {{1, {{0, 1.0, {0}}}}, {2, {{0, 1.0, {0}}}}};
  EXPECT_EQ(upgrade_packing(problem, -1, {0, 0}), (PackingChoice{0, 0}));
}

TEST(ImprovePacking, OnCapacitatedProblemsIsFeasibleAndNoWorseThanUpgradePacking) {
  Rng rng(20261207);
  int beyond_upgrade = 0;
  for (int instance = 0; instance < 2000; ++instance) {
    const PackingProblem problem = random_problem(rng, false);
    const int excluded = static_cast<int>(rng.below(problem.bidders.size() + 1)) - 1;
    SCOPED_TRACE("instance " + std::to_string(instance) + " without " + std::to_string(excluded));
    const PackingChoice start = instance % 3 == 0 ? greedy_packing(problem, excluded) : random_start(rng, problem, excluded);
    const PackingChoice got = improve_packing(problem, excluded, start);
    ASSERT_TRUE(packing_feasible(problem, got, excluded));
    const double upgraded = packing_value(problem, upgrade_packing(problem, excluded, start));
    EXPECT_GE(packing_value(problem, got), upgraded - kImprovementTolerance);
    if (packing_value(problem, got) > upgraded + kImprovementTolerance) ++beyond_upgrade;
  }
  EXPECT_GT(beyond_upgrade, 400) << beyond_upgrade;  // 586 with these seeds
}

// Item 0 has 4 units, item 1 one. a holds 2 units of item 0 (gain 1) and has a row of all 4 (gain 3); b holds the other
// 2 (gain 0.5) and has a row on item 1 (gain 0.4). No bidder can move on its own (upgrade_packing keeps the start); a
// takes item 0 whole once b, its holder, makes room and re-picks its row on item 1.
TEST(ImprovePacking, EvictsTheHolderOnACapacitatedItemAndLetsItRepick) {
  PackingProblem problem;
  problem.item_count = 2;
  problem.item_capacity = {4, 1};
  problem.bidders = {{1, {{0, 1.0, {0, 0}}, {1, 3.0, {0, 0, 0, 0}}}}, {2, {{0, 0.5, {0, 0}}, {1, 0.4, {1}}}}};
  EXPECT_EQ(upgrade_packing(problem, -1, {0, 0}), (PackingChoice{0, 0}));
  EXPECT_EQ(improve_packing(problem, -1, {0, 0}), (PackingChoice{1, 1}));
  // An eviction that does not pay is undone: b's other row worth nothing left, a stays.
  problem.bidders[1].rows[1].gain = 0.0;
  problem.bidders[1].rows[0].gain = 2.5;
  EXPECT_EQ(improve_packing(problem, -1, {0, 0}), (PackingChoice{0, 0}));
}

// A local search whose deadline has passed makes no move of its own: on a capacitated problem it returns what
// upgrade_packing makes of its start (the eviction above is not tried), on a unit problem its start.
TEST(ImprovePacking, StopsAtItsDeadline) {
  PackingProblem capacitated;
  capacitated.item_count = 2;
  capacitated.item_capacity = {4, 1};
  capacitated.bidders = {{1, {{0, 1.0, {0, 0}}, {1, 3.0, {0, 0, 0, 0}}}}, {2, {{0, 0.5, {0, 0}}, {1, 0.4, {1}}}}};
  ASSERT_EQ(improve_packing(capacitated, -1, {0, 0}, Deadline(60)), (PackingChoice{1, 1}));
  EXPECT_EQ(improve_packing(capacitated, -1, {0, 0}, Deadline(1e-9)), (PackingChoice{0, 0}));
  // GPUs 0-2: a holds {0} (gain 1) and would take {0, 1} (gain 3) once b, on {1}, moves to {2}.
  PackingProblem unit;
  unit.item_count = 3;
  unit.bidders = {{1, {{0, 1.0, {0}}, {1, 3.0, {0, 1}}}}, {2, {{0, 1.0, {1}}, {1, 0.9, {2}}}}};
  ASSERT_EQ(improve_packing(unit, -1, {0, 0}, Deadline(60)), (PackingChoice{1, 1}));
  EXPECT_EQ(improve_packing(unit, -1, {0, 0}, Deadline(1e-9)), (PackingChoice{0, 0}));
}

// GreedyOrders, sorted once with every bidder, packs without bidder i as greedy_packing does on the problem where i
// has no rows (its own sorts without i's rows), on capacitated and unit problems.
TEST(GreedyOrders, PacksWithoutEachBidderAsTheGreedyOfTheProblemWithoutItsRows) {
  Rng rng(23);
  for (int t = 0; t < 400; ++t) {
    const PackingProblem problem = random_problem(rng, t % 2 == 0);
    const GreedyOrders orders(problem);
    for (std::size_t i = 0; i < problem.bidders.size(); ++i) {
      SCOPED_TRACE("problem " + std::to_string(t) + ", without bidder " + std::to_string(i));
      PackingProblem without = problem;
      without.bidders[i].rows.clear();
      EXPECT_EQ(orders.packing(static_cast<int>(i)), greedy_packing(without, -1));
    }
    EXPECT_EQ(orders.packing(-1), greedy_packing(problem, -1));
  }
}

// lagrangian_bounds_without gives every bidder's lagrangian_bound without it, at any prices (negative ones read as 0).
TEST(LagrangianBound, WithoutEachBidderInOnePassIsTheBoundWithoutIt) {
  Rng rng(29);
  for (int t = 0; t < 400; ++t) {
    const PackingProblem problem = random_problem(rng, t % 2 == 0);
    std::vector<double> prices;
    for (int i = 0; i < problem.item_count; ++i) prices.push_back(rng.uniform() - 0.2);
    const std::vector<double> without = lagrangian_bounds_without(problem, prices);
    ASSERT_EQ(without.size(), problem.bidders.size());
    for (std::size_t i = 0; i < problem.bidders.size(); ++i)
      EXPECT_NEAR(without[i], lagrangian_bound(problem, static_cast<int>(i), prices), 1e-12)
          << "problem " << t << ", bidder " << i;
  }
  const PackingProblem problem = random_problem(rng, false);
  const std::vector<double> one_too_many(static_cast<std::size_t>(problem.item_count) + 1, 0.0);
  for (double bound : lagrangian_bounds_without(problem, one_too_many)) EXPECT_TRUE(std::isinf(bound));
}

}  // namespace
}  // namespace themis::arbiter
