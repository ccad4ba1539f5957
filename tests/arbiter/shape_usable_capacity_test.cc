// The shape solver's bounds count only the capacity the bidders still to choose can use together: a residual
// rounded down to the largest total of their units within it (usable_capacity.h; shape_solver.cc, set_usable).
#include <gtest/gtest.h>

#include "policy/arbiter/shape_solver.h"

namespace themis::arbiter {
namespace {

// One item of `capacity` units and bidders of one row each, taking `units` of it for gain 1.
PackingProblem one_item(int capacity, std::vector<int> units) {
  PackingProblem p;
  p.item_count = 1;
  p.item_capacity = {capacity};
  for (std::size_t b = 0; b < units.size(); ++b) {
    const std::vector<int> items(static_cast<std::size_t>(units[b]), 0);  // `units` units of item 0
    p.bidders.push_back({static_cast<AppId>(b + 1), {{0, 1.0, items}}});
  }
  return p;
}

// Stopped at its first node, the solve reports its root bound.
PackingSolution root_only(const PackingProblem& p) {
  ShapeSolver solver(ShapeSolver::kDefaultNodeSteps, 0);  // no LP: the Lagrangian bound alone
  return solver.solve(p, -1, SolveLimits{0, 1}, SolveHints{});
}

TEST(ShapeUsableCapacity, TwoGangsOfFourOnSixUnitsAreBoundedByOne) {
  // Two 4-unit rows on 6 units: one fits. With the full 6 the best Lagrangian bound is 1.5 (λ = 1/4:
  // 6λ + 2·max(0, 1 − 4λ)); only 4 of the 6 can be taken together, and at 4 units it is the optimum, 1.
  const PackingSolution s = root_only(one_item(6, {4, 4}));
  EXPECT_NEAR(s.value, 1.0, 1e-12);
  EXPECT_LT(s.bound, 1.0 + 1e-6);
}

TEST(ShapeUsableCapacity, TotalsOfMixedUnitsAreReachableOnes) {
  // Rows of 3 and 5 units on 7: totals 0, 3, 5 (8 does not fit), so 5 are usable. The best Lagrangian bound
  // at 5 units is 7/5 (λ = 1/5: 5λ + max(0, 1 − 3λ) + max(0, 1 − 5λ)), at 7 units 9/5; the optimum is 1.
  const PackingSolution s = root_only(one_item(7, {3, 5}));
  EXPECT_NEAR(s.value, 1.0, 1e-12);
  EXPECT_LT(s.bound, 1.4 + 1e-3);
  EXPECT_GE(s.bound, 1.4 - 1e-9);
}

TEST(ShapeUsableCapacity, WhereEveryTotalIsReachableTheBoundStaysTheLagrangians) {
  // 2 + 4 = 6 fits 6: both win, nothing is rounded away, optimum 2.
  const PackingSolution s = ShapeSolver().solve(one_item(6, {2, 4}), -1, SolveLimits{}, SolveHints{});
  EXPECT_TRUE(s.proven_optimal);
  EXPECT_NEAR(s.value, 2.0, 1e-12);
}

}  // namespace
}  // namespace themis::arbiter
