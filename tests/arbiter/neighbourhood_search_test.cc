// neighbourhood_search (neighbourhood_search.h): its packing is feasible and worth at least its start; where every
// item lies in two racks or above them, one neighbourhood is the whole problem and the packing is optimal (on these
// problems of up to 9 bidders, one more than the default max_idle); it reaches a packing that needs three bidders to
// move at once, which the local search with evictions does not; and it frees at most max_idle bidders holding nothing.
#include "policy/arbiter/neighbourhood_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/rng.h"
#include "policy/arbiter/greedy_packing.h"
#include "policy/arbiter/winner_solver.h"
#include "tests/arbiter/brute_force.h"

namespace themis::arbiter {
namespace {

// Items X, W (rack 0) and Y, Z (rack 1), one unit each. a holds W (1.0) and would take X (3.0); b holds X (2.0) and
// could take Y (1.5); c holds Y (2.0) and could take Z (1.8). The packing a:X, b:Y, c:Z (6.3) beats the start (5.0),
// but no bidder gains by moving alone, and a taking X from b leaves b nothing that fits (c holds Y).
PackingProblem chain_instance() {
  PackingProblem p;
  p.item_count = 4;  // X, W, Y, Z
  p.item_capacity = {1, 1, 1, 1};
  p.item_rack = {0, 0, 1, 1};
  p.bidders = {{1, {{0, 1.0, {1}}, {1, 3.0, {0}}}}, {2, {{0, 2.0, {0}}, {1, 1.5, {2}}}}, {3, {{0, 2.0, {2}}, {1, 1.8, {3}}}}};
  return p;
}

TEST(NeighbourhoodSearch, MovesThreeBiddersAtOnceWhereTheEvictionsCannot) {
  const PackingProblem p = chain_instance();
  const PackingChoice start{0, 0, 0};
  ASSERT_NEAR(packing_value(p, improve_packing(p, -1, start)), 5.0, 1e-12);
  const PackingChoice got = neighbourhood_search(p, -1, start, Deadline(0));
  EXPECT_EQ(got, (PackingChoice{1, 1, 1}));
  EXPECT_NEAR(packing_value(p, got), 6.3, 1e-12);
}

TEST(NeighbourhoodSearch, LeavesAPackingAsItIsWithoutTwoRacksOrWhenInfeasible) {
  PackingProblem p = chain_instance();
  EXPECT_EQ(neighbourhood_search(p, -1, {1, 0, 0}, Deadline(0)), (PackingChoice{1, 0, 0}));  // a and b both on X
  p.item_rack = {0, 0, 0, 0};
  EXPECT_EQ(neighbourhood_search(p, -1, {0, 0, 0}, Deadline(0)), (PackingChoice{0, 0, 0}));
  p.item_rack.clear();
  EXPECT_EQ(neighbourhood_search(p, -1, {0, 0, 0}, Deadline(0)), (PackingChoice{0, 0, 0}));
}

// Ten bidders holding nothing, each with one row on an item of its own in rack 1 (gains 1.0 to 1.9, the larger the
// later), and one holding item 0 of rack 0: a neighbourhood frees at most max_idle of those holding nothing, the ones
// with the best rows, so one pass with max_idle 3 places the three best; with every one freed it places all ten.
TEST(NeighbourhoodSearch, FreesAtMostMaxIdleOfTheBiddersHoldingNothingTheBestFirst) {
  PackingProblem p;
  p.item_count = 11;
  p.item_capacity.assign(11, 1);
  p.item_rack.assign(11, 1);
  p.item_rack[0] = 0;
  p.bidders.push_back({1, {{0, 1.0, {0}}}});
  for (int b = 0; b < 10; ++b) p.bidders.push_back({b + 2, {{0, 1.0 + 0.1 * b, {b + 1}}}});
  PackingChoice start(11, -1);
  start[0] = 0;
  NeighbourhoodLimits limits;
  limits.max_passes = 1;
  limits.max_idle = 3;
  PackingChoice three = start;
  three[8] = three[9] = three[10] = 0;
  EXPECT_EQ(neighbourhood_search(p, -1, start, Deadline(0), limits), three);
  limits.max_idle = 10;
  EXPECT_EQ(neighbourhood_search(p, -1, start, Deadline(0), limits), PackingChoice(11, 0));
}

// Up to 8 items of 1 to 3 units over `racks` racks (an item above them now and then), up to 9 bidders of up to 4 rows
// of 1 to 4 units.
PackingProblem random_problem(Rng& rng, int racks) {
  PackingProblem problem;
  problem.item_count = 2 + static_cast<int>(rng.below(7));
  for (int i = 0; i < problem.item_count; ++i) {
    problem.item_capacity.push_back(1 + static_cast<int>(rng.below(3)));
    problem.item_rack.push_back(rng.below(8) == 0 ? -1 : static_cast<int>(rng.below(static_cast<std::uint64_t>(racks))));
  }
  const int bidders = 1 + static_cast<int>(rng.below(9));
  for (int b = 0; b < bidders; ++b) {
    PackingBidder bidder{b + 1, {}};
    const int rows = 1 + static_cast<int>(rng.below(4));
    for (int r = 0; r < rows; ++r) {
      std::vector<int> items;
      const int units = 1 + static_cast<int>(rng.below(4));
      for (int u = 0; u < units; ++u) items.push_back(static_cast<int>(rng.below(static_cast<std::uint64_t>(problem.item_count))));
      std::sort(items.begin(), items.end());
      bidder.rows.push_back({r, 0.1 + rng.uniform(), items});
    }
    problem.bidders.push_back(std::move(bidder));
  }
  return problem;
}

TEST(NeighbourhoodSearch, IsFeasibleNoWorseAndOptimalWhereOnePairOfRacksHoldsEverything) {
  Rng rng(20261208);
  int improved = 0;
  for (int instance = 0; instance < 1000; ++instance) {
    const bool two_racks = instance % 2 == 0;
    const PackingProblem problem = random_problem(rng, two_racks ? 2 : 4);
    const int excluded = static_cast<int>(rng.below(problem.bidders.size() + 1)) - 1;
    SCOPED_TRACE("instance " + std::to_string(instance) + " without " + std::to_string(excluded));
    const PackingChoice start = greedy_packing(problem, excluded);
    const PackingChoice got = neighbourhood_search(problem, excluded, start, Deadline(0));
    ASSERT_TRUE(packing_feasible(problem, got, excluded));
    const double value = packing_value(problem, got);
    EXPECT_GE(value, packing_value(problem, start) - kImprovementTolerance);
    if (value > packing_value(problem, start) + kImprovementTolerance) ++improved;
    const bool one_rack = std::none_of(problem.item_rack.begin(), problem.item_rack.end(), [](int rack) { return rack > 0; });
    if (two_racks && !one_rack) {
      EXPECT_NEAR(value, testing::brute_force(problem, excluded).value, 1e-9);
    }
  }
  EXPECT_GT(improved, 100) << improved;  // 159 with these seeds
}

}  // namespace
}  // namespace themis::arbiter
