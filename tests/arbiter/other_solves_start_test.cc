// Starts from the packings other solves without a winner ended with (other_solves_start.h): on random shape problems
// with racks, given every other winner's optimum without it (exhaustive search), a start for the solve without winner i
// is feasible, leaves i out, beats the floor it was given and never the optimum without i; it often reaches that
// optimum where the PF packing less i, refilled and improved, does not. Then a case worked by hand.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <vector>

#include "brute_force.h"
#include "core/rng.h"
#include "policy/arbiter/greedy_packing.h"
#include "policy/arbiter/other_solves_start.h"
#include "policy/arbiter/winner_solver.h"
#include "random_rack_problem.h"

namespace themis::arbiter {
namespace {

TEST(OtherSolvesStart, IsAFeasiblePackingWithoutTheWinnerBetweenTheFloorAndTheOptimum) {
  Rng rng(20261207);
  int taken = 0, reached = 0, improvable = 0;
  for (int instance = 0; instance < 1000; ++instance) {
    SCOPED_TRACE(instance);
    const PackingProblem problem = testing::random_rack_problem(rng);
    const testing::BruteForceResult pf = testing::brute_force(problem);
    std::vector<int> winners;
    std::vector<PackingChoice> ends;
    std::vector<double> optimum;
    for (std::size_t i = 0; i < problem.bidders.size(); ++i) {
      if (pf.choice[i] < 0) continue;
      const testing::BruteForceResult without = testing::brute_force(problem, static_cast<int>(i));
      winners.push_back(static_cast<int>(i));
      ends.push_back(without.choice);
      optimum.push_back(without.value);
    }
    for (std::size_t k = 0; k < winners.size(); ++k) {
      const int i = winners[k];
      std::vector<OtherSolve> others;
      for (std::size_t other = 0; other < winners.size(); ++other)
        if (other != k) others.push_back({winners[other], &ends[other]});
      PackingChoice own = pf.choice;
      own[static_cast<std::size_t>(i)] = -1;
      own = improve_packing(problem, i, std::move(own));
      const double floor = packing_value(problem, own);
      if (floor < optimum[k] - kImprovementTolerance) ++improvable;
      const std::optional<PackingChoice> start = start_from_other_solves(problem, i, others, floor);
      if (!start) continue;
      ++taken;
      ASSERT_EQ(start->size(), problem.bidders.size());
      EXPECT_EQ((*start)[static_cast<std::size_t>(i)], -1);
      EXPECT_TRUE(packing_feasible(problem, *start, i));
      const double value = packing_value(problem, *start);
      EXPECT_GT(value, floor + kImprovementTolerance);
      EXPECT_LE(value, optimum[k] + 1e-9);
      if (value >= optimum[k] - 1e-9) ++reached;
    }
  }
  std::printf("other solves' starts: %d taken of %d starts below their optimum, %d of them at it\n", taken, improvable,
              reached);
  EXPECT_GT(improvable, 100);
  EXPECT_GT(taken, improvable / 4);
  EXPECT_GT(reached, taken / 2);
}

// Four GPUs of one machine, one unit each. The PF packing is a on {0, 1} (1.0), b on {2} and c on {3} (0.6 each): 2.2
// against d's 2.1 for all four. Without b the optimum is d alone (2.1); the solve without a starts from b and c
// (1.2), and from the packing without b less a, with b back where it fits (nowhere), it starts at d's 2.1.
TEST(OtherSolvesStart, TakesTheWinnersSharedShape) {
  PackingProblem problem;
  problem.item_count = 4;
  problem.bidders = {{1, {{0, 1.0, {0, 1}}}}, {2, {{0, 0.6, {2}}}}, {3, {{0, 0.6, {3}}}}, {4, {{0, 2.1, {0, 1, 2, 3}}}}};
  const PackingChoice without_b{-1, -1, -1, 0};
  const std::vector<OtherSolve> others{{1, &without_b}};
  const std::optional<PackingChoice> start = start_from_other_solves(problem, 0, others, 1.2);
  ASSERT_TRUE(start.has_value());
  EXPECT_EQ(*start, (PackingChoice{-1, -1, -1, 0}));
  EXPECT_FALSE(start_from_other_solves(problem, 0, others, 2.1).has_value());  // no better than the floor
  EXPECT_FALSE(start_from_other_solves(problem, 3, std::vector<OtherSolve>{{3, &without_b}}, 0).has_value());
}

}  // namespace
}  // namespace themis::arbiter
