// The cut bound (cut_bound.h) against exhaustive search: never below the optimum, with everybody and without each
// bidder; and the cuts see what the LP does not (one machine of 6 GPUs, two gangs of 4).
#include "policy/arbiter/cut_bound.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <optional>
#include <vector>

#include "policy/arbiter/cut_bound_beside.h"

#include "brute_force.h"
#include "random_rack_problem.h"

namespace themis::arbiter {
namespace {

const Deadline kNoDeadline(0);

using testing::random_rack_problem;

TEST(CutBound, NeverLiesBelowTheOptimumWithEverybodyOrWithoutABidder) {
  Rng rng(11);
  int tightened = 0, checked = 0;
  for (int instance = 0; instance < 400; ++instance) {
    const PackingProblem problem = random_rack_problem(rng);
    const CutBound cuts = cut_bound(problem, kNoDeadline);
    const CutBound lp = cut_bound(problem, kNoDeadline, /*rounds=*/0);
    const double optimum = testing::brute_force(problem).value;
    ASSERT_GE(cuts.bound, optimum - 1e-7) << "instance " << instance;
    EXPECT_LE(cuts.bound, lp.bound + 1e-9) << "instance " << instance;
    if (cuts.bound < lp.bound - 1e-6) ++tightened;
    for (std::size_t b = 0; b < problem.bidders.size(); ++b) {
      const double without = testing::brute_force(problem, static_cast<int>(b)).value;
      EXPECT_GE(cuts.bound_without(static_cast<int>(b)), without - 1e-7) << "instance " << instance << " without " << b;
      EXPECT_LE(cuts.bound_without(static_cast<int>(b)), cuts.bound + 1e-12);
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000);
  EXPECT_GT(tightened, 10);  // the cuts do something on these problems, not only on the one below
}

// One machine of 6 GPUs (an item of capacity 6), two bidders that each want 4 of them: the LP takes three quarters of
// each (1.5); with the cuts only one fits (1.0).
TEST(CutBound, SeesThatOnlyOneGangOfFourFitsSixGpus) {
  PackingProblem problem;
  problem.item_count = 1;
  problem.item_capacity = {6};
  for (int b = 0; b < 2; ++b) problem.bidders.push_back({b + 1, {PackingRow{0, 1.0, {0, 0, 0, 0}}}});
  EXPECT_NEAR(cut_bound(problem, kNoDeadline, 0).bound, 1.5, 1e-9);
  const CutBound cuts = cut_bound(problem, kNoDeadline);
  EXPECT_GT(cuts.cuts, 0);
  EXPECT_NEAR(cuts.bound, 1.0, 1e-7);
  EXPECT_GE(cuts.bound_without(0), 1.0 - 1e-7);
}

TEST(CutBound, AProblemWithoutRowsIsBoundedByNothing) {
  PackingProblem problem;
  problem.item_count = 1;
  problem.item_capacity = {4};
  problem.bidders.push_back({1, {}});
  EXPECT_EQ(cut_bound(problem, kNoDeadline).bound, 0);
}

TEST(CutBound, SolvesNothingOnceStopped) {
  Rng rng(5);
  const PackingProblem problem = random_rack_problem(rng);
  const std::atomic<bool> stop{true};
  const CutBound stopped = cut_bound(problem, kNoDeadline, CutBound::kDefaultRounds, &stop);
  EXPECT_TRUE(std::isinf(stopped.bound));
  EXPECT_EQ(stopped.cuts, 0);
  const std::atomic<bool> go{false};
  EXPECT_EQ(cut_bound(problem, kNoDeadline, CutBound::kDefaultRounds, &go).bound, cut_bound(problem, kNoDeadline).bound);
}

// Beside a PF solve left unproven, the thread's bound is the cut bound of the problem: the same prices, the same parts
// per bidder.
TEST(CutBoundBeside, HandsOverTheCutBoundWhereThePfSolveNeedsIt) {
  Rng rng(17);
  int compared = 0;
  for (int instance = 0; instance < 20; ++instance) {
    const PackingProblem problem = random_rack_problem(rng);
    const CutBound alone = cut_bound(problem, kNoDeadline);
    CutBoundBeside beside(problem, /*start_after=*/0, /*end_after=*/600);
    const std::optional<CutBound> handed = beside.finish();
    ASSERT_TRUE(handed.has_value()) << "instance " << instance;
    EXPECT_EQ(handed->bound, alone.bound) << "instance " << instance;
    EXPECT_EQ(handed->cuts, alone.cuts) << "instance " << instance;
    EXPECT_EQ(handed->own, alone.own) << "instance " << instance;
    if (alone.cuts > 0) ++compared;
  }
  EXPECT_GT(compared, 0);  // some of them with rounds of cuts
}

// A PF solve that ends before the thread's start leaves it unstarted (nothing handed over, and no waiting for the rest of
// its start: the test would take ten minutes); one proven stops it.
TEST(CutBoundBeside, NeverStartsAfterThePfSolveEndedAndStopsWhereItIsProven) {
  Rng rng(23);
  const PackingProblem problem = random_rack_problem(rng);
  {
    CutBoundBeside beside(problem, /*start_after=*/600, /*end_after=*/600);
    EXPECT_FALSE(beside.finish().has_value());
  }
  {
    CutBoundBeside beside(problem, /*start_after=*/0, /*end_after=*/600);
    beside.cancel();
  }  // the destructor waits for the thread: at once, or after the round it was in
  {
    CutBoundBeside unfinished(problem, /*start_after=*/600, /*end_after=*/600);  // the destructor ends its wait
  }
}

}  // namespace
}  // namespace themis::arbiter
