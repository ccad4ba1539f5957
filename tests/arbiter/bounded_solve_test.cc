// The bounded path: on an instance too large to finish, both solvers stop at their budget with a
// feasible packing, a bound at least its value, and a gap >= 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

#include "policy/arbiter/branch_and_bound_solver.h"
#include "policy/arbiter/greedy_packing.h"
#include "policy/arbiter/partial_allocation.h"
#include "policy/arbiter/shape_solver.h"
#include "core/rng.h"

namespace themis::arbiter {
namespace {

// 120 bidders × 20 scattered rows over 256 GPUs: scattered sets make the LP relaxation weak.
PackingProblem hard_instance() {
  Rng rng(99);
  PackingProblem p;
  p.item_count = 256;
  for (int b = 0; b < 120; ++b) {
    PackingBidder bidder{b, {}};
    for (int r = 0; r < 20; ++r) {
      const int size = 1 + static_cast<int>(rng.below(8));
      std::vector<int> items;
      while (static_cast<int>(items.size()) < size) {
        const int g = static_cast<int>(rng.below(256));
        if (std::find(items.begin(), items.end(), g) == items.end()) items.push_back(g);
      }
      std::sort(items.begin(), items.end());
      bidder.rows.push_back({r, 0.1 + size * rng.uniform(), items});
    }
    p.bidders.push_back(std::move(bidder));
  }
  return p;
}

TEST(BoundedSolve, StopsAtBudgetWithFeasibleSolutionAndGap) {
  const PackingProblem p = hard_instance();
  const double greedy = packing_value(p, greedy_packing(p, -1));
  for (SolverKind kind : {SolverKind::kBranchAndBound, SolverKind::kCbc, SolverKind::kShape}) {
    SCOPED_TRACE(std::string(to_string(kind)));
    auto solver = make_winner_solver(kind);
    const PackingSolution s = solver->solve(p, -1, SolveLimits{0.2, 0}, SolveHints{});
    EXPECT_TRUE(packing_feasible(p, s.choice));
    EXPECT_NEAR(s.value, packing_value(p, s.choice), 1e-9);
    EXPECT_GE(s.value, greedy - 1e-9);
    EXPECT_GE(s.bound, s.value - 1e-9);
    EXPECT_GE(s.gap(), 0.0);
    EXPECT_LE(s.gap(), 1.0);
    if (!s.proven_optimal) {
      EXPECT_GT(s.gap(), 0.0);
    }
  }
}

TEST(BoundedSolve, NodeLimitIsDeterministic) {
  const PackingProblem p = hard_instance();
  auto solver = make_winner_solver(SolverKind::kBranchAndBound);
  const PackingSolution a = solver->solve(p, -1, SolveLimits{0, 2000}, SolveHints{});
  const PackingSolution b = solver->solve(p, -1, SolveLimits{0, 2000}, SolveHints{});
  EXPECT_EQ(a.choice, b.choice);
  EXPECT_EQ(a.value, b.value);
  EXPECT_LE(a.nodes, 2000);
}

TEST(BoundedSolve, LpSearchNodeLimitIsDeterministic) {
  const PackingProblem p = hard_instance();
  BranchAndBoundSolver solver(0);
  const PackingSolution a = solver.solve(p, -1, SolveLimits{0, 8}, SolveHints{});
  const PackingSolution b = solver.solve(p, -1, SolveLimits{0, 8}, SolveHints{});
  EXPECT_TRUE(packing_feasible(p, a.choice));
  EXPECT_EQ(a.choice, b.choice);
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.bound, b.bound);
  EXPECT_LE(a.nodes, 8);
  EXPECT_GE(a.bound, a.value);
}

// Winners whose solve the budget skips: W*_{-i} <= W* <= the PF bound, which is tighter than the sum of
// every other bidder's best row. a: {0,1} gain 3; b: {0} gain 2; c: {1} gain 2. The PF optimum b + c = 4
// is proven at once; the budget is spent before the winners' solves, and without b the greedy a = 3
// stands in for W*_{-b}: gap (4 − 3)/4, not (3 + 2 − 3)/(3 + 2). Solvers that pass item prices on (shape,
// bnb) bound it lower still: the Lagrangian bound at the PF solve's prices without b's term is a bound on
// W*_{-b} too, above its value 3 (so the gap stays above 0).
TEST(BoundedSolve, SkippedWinnersGapIsBoundedByThePfBound) {
  const PackingProblem p{2, {{1, {{0, 3.0, {0, 1}}}}, {2, {{0, 2.0, {0}}}}, {3, {{0, 2.0, {1}}}}}, {}, {}};
  for (SolverKind kind : {SolverKind::kBranchAndBound, SolverKind::kCbc, SolverKind::kShape}) {
    SCOPED_TRACE(std::string(to_string(kind)));
    auto solver = make_winner_solver(kind);
    const PartialAllocation pa = partial_allocation(p, *solver, AuctionLimits{1e-9, 0});
    ASSERT_EQ(pa.pf.choice, (PackingChoice{-1, 0, 0}));
    ASSERT_TRUE(pa.pf.proven_optimal);
    EXPECT_FALSE(pa.proven_optimal);
    EXPECT_EQ(pa.solves, 1);
    if (kind == SolverKind::kCbc) {
      EXPECT_NEAR(pa.gap, 0.25, 1e-12);
    } else {
      EXPECT_LE(pa.gap, 0.25 + 1e-12);
      EXPECT_GT(pa.gap, 0.0);
    }
  }
}

// A winner skipped for want of time gets the PF packing less it, refilled: a bidder that fits the winner's freed
// GPUs moves there, which the greedy packing misses (its first row, the largest gain, blocks both others).
TEST(BoundedSolve, SkippedWinnerStandsInWithThePfPackingRefilled) {
  // GPUs 0-3. a {0,1} 3.0, b {2,3} 3.0, c {0,1} 2.0, d {1,2} 3.5: the PF packing is a and b (6.0); without a the
  // optimum is b and c (5.0), where b alone (3.0) is the PF packing less a and the greedy packing takes d (3.5).
  const PackingProblem p{4,
                         {{1, {{0, 3.0, {0, 1}}}}, {2, {{0, 3.0, {2, 3}}}}, {3, {{0, 2.0, {0, 1}}}}, {4, {{0, 3.5, {1, 2}}}}},
                         {},
                         {}};
  ASSERT_NEAR(packing_value(p, greedy_packing(p, 0)), 3.5, 1e-12);
  for (SolverKind kind : {SolverKind::kBranchAndBound, SolverKind::kCbc, SolverKind::kShape}) {
    SCOPED_TRACE(std::string(to_string(kind)));
    auto solver = make_winner_solver(kind);
    const PartialAllocation pa = partial_allocation(p, *solver, AuctionLimits{1e-9, 0});
    ASSERT_EQ(pa.pf.choice, (PackingChoice{0, 0, -1, -1}));  // found, if not proven, within the budget
    EXPECT_EQ(pa.solves, 1);  // the PF solve alone: both winners skipped
    EXPECT_NEAR(pa.value_without[0], 5.0, 1e-12);
    EXPECT_NEAR(pa.c[0], std::exp(3.0 - 5.0), 1e-12);
    EXPECT_NEAR(pa.value_without[1], 3.5, 1e-12);  // without b the greedy packing (d) is the better stand-in
    EXPECT_NEAR(pa.c[1], std::exp(3.0 - 3.5), 1e-12);
  }
}

// A solver whose PF solve is proven and whose solves without a bidder stop with the loosest bound.
class StoppedWinnerSolver final : public WinnerSolver {
 public:
  std::string_view name() const override { return "stopped"; }
  PackingSolution solve(const PackingProblem& problem, int excluded, const SolveLimits&, const SolveHints&) override {
    PackingSolution s;
    s.choice = excluded < 0 ? PackingChoice{-1, 0, 0} : PackingChoice{0, -1, -1};
    if (excluded == 0) s.choice = {-1, 0, 0};
    s.value = packing_value(problem, s.choice);
    s.proven_optimal = excluded < 0;
    s.bound = excluded < 0 ? s.value : 100.0;
    return s;
  }
};

TEST(BoundedSolve, StoppedWinnersGapIsBoundedByThePfBound) {
  const PackingProblem p{2, {{1, {{0, 3.0, {0, 1}}}}, {2, {{0, 2.0, {0}}}}, {3, {{0, 2.0, {1}}}}}, {}, {}};
  StoppedWinnerSolver solver;
  const PartialAllocation pa = partial_allocation(p, solver, AuctionLimits{});
  EXPECT_EQ(pa.solves, 3);
  EXPECT_FALSE(pa.proven_optimal);
  EXPECT_NEAR(pa.gap, 0.25, 1e-12);  // (4 − 3)/4 for b and c, not (100 − 3)/100
}

// A solver whose PF solve stops unproven with bounds without each bidder (PackingSolution::bound_without) and whose
// solves without a bidder stop with the loosest bound.
class BoundsWithoutSolver final : public WinnerSolver {
 public:
  std::string_view name() const override { return "bounds without"; }
  PackingSolution solve(const PackingProblem& problem, int excluded, const SolveLimits&, const SolveHints&) override {
    PackingSolution s;
    s.choice = excluded < 0 ? PackingChoice{-1, 0, 0} : PackingChoice{0, -1, -1};
    s.value = packing_value(problem, s.choice);
    s.bound = excluded < 0 ? 4.1 : 100.0;
    if (excluded < 0) s.bound_without = {4.1, 3.3, 3.2};
    return s;
  }
};

// The PF solve's bound without a winner bounds that winner's solve where the solve's own bound is looser: a: {0,1} 3.0,
// b: {0} 2.0, c: {1} 2.0; the PF packing b + c = 4 under a bound of 4.1; without b (or c) the solves find a alone, 3.0,
// under bounds of 100. The gap is b's, (3.3 − 3)/3.3, not (4.1 − 3)/4.1 from the PF bound; and with a time budget
// that skips both solves, the same.
TEST(BoundedSolve, StoppedWinnersGapIsBoundedByThePfBoundWithoutThem) {
  const PackingProblem p{2, {{1, {{0, 3.0, {0, 1}}}}, {2, {{0, 2.0, {0}}}}, {3, {{0, 2.0, {1}}}}}, {}, {}};
  BoundsWithoutSolver solver;
  const PartialAllocation stopped = partial_allocation(p, solver, AuctionLimits{});
  EXPECT_EQ(stopped.solves, 3);
  EXPECT_FALSE(stopped.proven_optimal);
  EXPECT_NEAR(stopped.gap, 0.3 / 3.3, 1e-12);
  const PartialAllocation skipped = partial_allocation(p, solver, AuctionLimits{1e-9, 0});
  EXPECT_EQ(skipped.solves, 1);
  EXPECT_NEAR(skipped.gap, 0.3 / 3.3, 1e-12);
}

// A solver whose PF solve takes 300 ms and stops unproven with one gang of four GPUs (1.0) under the LP's bound (1.5),
// and whose solve without that winner finds the other gang, proven.
class SlowUnprovenPfSolver final : public WinnerSolver {
 public:
  std::string_view name() const override { return "slow unproven PF"; }
  PackingSolution solve(const PackingProblem& problem, int excluded, const SolveLimits&, const SolveHints&) override {
    PackingSolution s;
    if (excluded < 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    s.choice = excluded == 0 ? PackingChoice{-1, 0} : PackingChoice{0, -1};
    s.value = packing_value(problem, s.choice);
    s.bound = excluded < 0 ? 1.5 : s.value;
    s.proven_optimal = excluded >= 0;
    return s;
  }
};

// One machine of six GPUs and two gangs of four, 1.0 each: the cuts see that only one fits (cut_bound.h), so the PF
// packing the search left unproven under the LP's bound is proven, and the auction's gap is 0. On two threads the cut
// bound runs beside the PF solve, from 50 ms of the 0.8 s budget on (its rounds take a millisecond; the 300 ms solve
// leaves room for a thread that starts late), on one after it: the same outcome.
TEST(BoundedSolve, TheCutBoundProvesThePfPackingTheSearchLeftUnprovenOnOneThreadOrTwo) {
  PackingProblem p;
  p.item_count = 1;
  p.item_capacity = {6};
  for (int b = 0; b < 2; ++b) p.bidders.push_back({b + 1, {PackingRow{0, 1.0, {0, 0, 0, 0}}}});
  SlowUnprovenPfSolver solver;
  for (const int threads : {1, 2}) {
    AuctionLimits limits{0.8, 0};
    limits.threads = threads;
    const PartialAllocation pa = partial_allocation(p, solver, limits);
    EXPECT_TRUE(pa.pf.proven_optimal) << threads << " thread(s)";
    EXPECT_NEAR(pa.pf.bound, 1.0, 1e-7) << threads << " thread(s)";
    EXPECT_EQ(pa.gap, 0) << threads << " thread(s)";
    EXPECT_TRUE(pa.proven_optimal) << threads << " thread(s)";
  }
}

// A solver whose solves without a bidder stop unproven on a first call with their memory, on their optimum (a alone,
// 3.0) under a bound of 100, after `first_nodes` nodes, and prove it on a call given that memory again.
class SecondCallSolver final : public WinnerSolver {
 public:
  struct Memory final : SolverMemory {
    int calls = 0;
    std::unique_ptr<SolverMemory> clone() const override { return std::make_unique<Memory>(*this); }
  };
  explicit SecondCallSolver(std::int64_t first_nodes) : first_nodes_(first_nodes) {}
  std::string_view name() const override { return "second call"; }
  PackingSolution solve(const PackingProblem& problem, int excluded, const SolveLimits&, const SolveHints& hints) override {
    PackingSolution s;
    s.choice = excluded < 0 ? PackingChoice{-1, 0, 0} : PackingChoice{0, -1, -1};
    s.value = packing_value(problem, s.choice);
    s.bound = s.value;
    s.proven_optimal = true;
    if (excluded < 0) {
      *hints.memory = std::make_unique<Memory>();
      return s;
    }
    s.nodes = 10;
    if (dynamic_cast<Memory&>(**hints.memory).calls++ == 0) {
      s.bound = 100;
      s.proven_optimal = false;
      s.nodes = first_nodes_;
    } else {
      EXPECT_EQ(*hints.warm_start, s.choice);  // the first call's packing
    }
    return s;
  }

 private:
  std::int64_t first_nodes_;
};

// Under a time budget, the solves the budget stopped get a second round with the time left, each from its packing: a:
// {0,1} 3.0, b: {0} 2.0, c: {1} 2.0, the PF packing b + c. A solve that searched 2,000 nodes or more goes on with its
// own memory (here: proven on that second call); one that searched fewer starts again from the PF solve's (here:
// stopped again). Without a budget nothing stops a solve for time and there is no second round.
TEST(BoundedSolve, SolvesTheBudgetStoppedGetASecondRoundWithTheTimeLeft) {
  const PackingProblem p{2, {{1, {{0, 3.0, {0, 1}}}}, {2, {{0, 2.0, {0}}}}, {3, {{0, 2.0, {1}}}}}, {}, {}};
  SecondCallSolver large(2000);
  const PartialAllocation continued = partial_allocation(p, large, AuctionLimits{60, 0});
  EXPECT_EQ(continued.solves, 3);
  EXPECT_TRUE(continued.proven_optimal);
  EXPECT_EQ(continued.gap, 0.0);
  EXPECT_EQ(continued.nodes, 2 * (2000 + 10));
  EXPECT_NEAR(continued.value_without[1], 3.0, 1e-12);
  SecondCallSolver small(1999);
  const PartialAllocation restarted = partial_allocation(p, small, AuctionLimits{60, 0});
  EXPECT_FALSE(restarted.proven_optimal);
  EXPECT_EQ(restarted.nodes, 2 * (1999 + 1999));
  EXPECT_NEAR(restarted.gap, 0.25, 1e-12);  // (4 − 3)/4: the PF bound
  const PartialAllocation unbudgeted = partial_allocation(p, large, AuctionLimits{});
  EXPECT_FALSE(unbudgeted.proven_optimal);
  EXPECT_EQ(unbudgeted.nodes, 2 * 2000);
}

// A solver that stops every solve unproven, the PF solve on a packing a local search improves.
class UnprovenPfSolver final : public WinnerSolver {
 public:
  std::string_view name() const override { return "unproven"; }
  PackingSolution solve(const PackingProblem& problem, int excluded, const SolveLimits&, const SolveHints&) override {
    PackingSolution s;
    s.choice = excluded < 0 ? PackingChoice{0, 0} : PackingChoice{-1, -1};
    s.value = packing_value(problem, s.choice);
    s.bound = 10.0;
    return s;
  }
};

// Item 0 of 4 units, item 1 of one: a holds 2 units of item 0 (1.0) and could take all 4 (3.0) once b, holding the
// other 2 (0.5), moves to item 1 (0.4). The PF packing the solver left unproven is improved before the winners'
// solves: a on all of item 0 and b on item 1, worth 3.4, under the solver's bound.
TEST(BoundedSolve, UnprovenPfPackingIsImprovedByLocalSearch) {
  PackingProblem p;
  p.item_count = 2;
  p.item_capacity = {4, 1};
  p.bidders = {{1, {{0, 1.0, {0, 0}}, {1, 3.0, {0, 0, 0, 0}}}}, {2, {{0, 0.5, {0, 0}}, {1, 0.4, {1}}}}};
  UnprovenPfSolver solver;
  const PartialAllocation pa = partial_allocation(p, solver, AuctionLimits{});
  EXPECT_EQ(pa.pf.choice, (PackingChoice{1, 1}));
  EXPECT_NEAR(pa.pf.value, 3.4, 1e-12);
  EXPECT_FALSE(pa.pf.proven_optimal);
  EXPECT_NEAR(pa.pf.bound, 10.0, 1e-12);
  EXPECT_NEAR(pa.gap, (10.0 - 0.4) / 10.0, 1e-12);  // without a: b's row on item 1 (the PF packing less a) against 10
}

// Items X and Y of 2 units: a takes X (2.0) or Y (1.9), b only X (1.95). Every greedy order gives X to a (2.0);
// the optimum moves a to Y for b (3.85), which only an eviction finds.
PackingProblem eviction_instance() {
  PackingProblem p;
  p.item_count = 2;
  p.item_capacity = {2, 2};
  p.bidders = {{1, {{0, 2.0, {0, 0}}, {1, 1.9, {1, 1}}}}, {2, {{0, 1.95, {0, 0}}}}};
  return p;
}

// The PF solve, given no start, starts from the greedy packing improved by the local search with evictions: cut
// short at its first node it still returns the optimum the greedy packing misses.
TEST(BoundedSolve, ShapeSolveGivenNoStartBeginsFromTheImprovedGreedyPacking) {
  const PackingProblem p = eviction_instance();
  ASSERT_NEAR(packing_value(p, greedy_packing(p, -1)), 2.0, 1e-12);
  ShapeSolver solver;
  const PackingSolution s = solver.solve(p, -1, SolveLimits{0, 1}, SolveHints{});
  EXPECT_EQ(s.choice, (PackingChoice{1, 0}));
  EXPECT_NEAR(s.value, 3.85, 1e-12);
}

// A solver whose PF solve is proven after `pf_nodes` nodes and whose solves without a bidder return the start they
// were given, unproven.
class EchoStartSolver final : public WinnerSolver {
 public:
  explicit EchoStartSolver(PackingChoice pf, std::int64_t pf_nodes) : pf_(std::move(pf)), pf_nodes_(pf_nodes) {}
  std::string_view name() const override { return "echo"; }
  PackingSolution solve(const PackingProblem& problem, int excluded, const SolveLimits&, const SolveHints& hints) override {
    PackingSolution s;
    s.choice = excluded < 0 ? pf_ : *hints.warm_start;
    s.value = packing_value(problem, s.choice);
    s.proven_optimal = excluded < 0;
    s.bound = excluded < 0 ? s.value : s.value + 1.0;
    s.nodes = excluded < 0 ? pf_nodes_ : 1;
    return s;
  }

 private:
  PackingChoice pf_;
  std::int64_t pf_nodes_;
};

// The eviction instance with a third bidder w that takes Y (10.0): the PF packing is w and a on X (12.0). Without w,
// refilling it changes nothing (a stays on X, b finds no room), and only an eviction reaches b on X and a on Y (3.85).
// After a PF solve of at least AuctionLimits::improved_starts_from_nodes nodes, the solve without w starts from that;
// after a smaller one, from the refill.
TEST(BoundedSolve, SolvesWithoutAWinnerStartFromTheRefillImprovedAfterALargePfSolve) {
  PackingProblem p = eviction_instance();
  p.bidders.push_back({3, {{0, 10.0, {1, 1}}}});
  const PackingChoice pf{0, -1, 0};
  ASSERT_EQ(upgrade_packing(p, 2, {0, -1, -1}), (PackingChoice{0, -1, -1}));
  const AuctionLimits limits;
  for (const std::int64_t pf_nodes : {limits.improved_starts_from_nodes, limits.improved_starts_from_nodes - 1}) {
    SCOPED_TRACE(pf_nodes);
    EchoStartSolver solver(pf, pf_nodes);
    const PartialAllocation pa = partial_allocation(p, solver, limits);
    ASSERT_EQ(pa.pf.choice, pf);
    EXPECT_NEAR(pa.value_without[2], pf_nodes >= limits.improved_starts_from_nodes ? 3.85 : 2.0, 1e-12);
  }
}

TEST(BoundedSolve, WholeAuctionWithinBudgetReportsGap) {
  const PackingProblem p = hard_instance();
  auto solver = make_winner_solver(SolverKind::kBranchAndBound);
  const PartialAllocation pa = partial_allocation(p, *solver, AuctionLimits{0.5, 0});
  EXPECT_TRUE(packing_feasible(p, pa.pf.choice));
  EXPECT_GE(pa.gap, 0.0);
  for (double c : pa.c) {
    EXPECT_GT(c, 0.0);
    EXPECT_LE(c, 1.0);
  }
}

// Winners the budget leaves no time for, taken by the threads of the solves: each still gets the better of the PF
// packing less it, refilled, and the greedy packing without it (a solve that ran starts from both, so it holds for
// every winner however the budget fell). The hard instance takes the budget; after its bidders come 20 pairs, each
// pair alone on two GPUs of its own (a: gain 2, b: gain 1), so that without a the refill gives b its GPUs: a winner
// left without its stand-in would count only the PF packing less it.
TEST(BoundedSolve, EveryWinnerGetsAtLeastItsStandInOnTwoThreads) {
  PackingProblem p = hard_instance();
  for (int k = 0; k < 20; ++k) {
    const std::vector<int> gpus{p.item_count, p.item_count + 1};
    p.item_count += 2;
    p.bidders.push_back({1000 + 2 * k, {{0, 2.0, gpus}}});
    p.bidders.push_back({1001 + 2 * k, {{0, 1.0, gpus}}});
  }
  ShapeSolver solver;
  AuctionLimits limits{0.05, 0};
  limits.threads = 2;
  limits.threads_from_nodes = 0;  // the threads take every solve without a winner, and every stand-in
  const PartialAllocation pa = partial_allocation(p, solver, limits);
  int winners = 0;
  for (std::size_t i = 0; i < p.bidders.size(); ++i) {
    if (pa.pf.choice[i] < 0) continue;
    ++winners;
    PackingChoice less = pa.pf.choice;
    less[i] = -1;
    const double refill = packing_value(p, upgrade_packing(p, static_cast<int>(i), less));
    const double greedy = packing_value(p, greedy_packing(p, static_cast<int>(i)));
    EXPECT_GE(pa.value_without[i], std::max(refill, greedy) - 1e-9) << "winner " << i;
    EXPECT_GT(pa.c[i], 0.0);
    EXPECT_LE(pa.c[i], 1.0);
  }
  EXPECT_LE(pa.solves, 1 + winners);
  std::printf("budget 0.05 s on two threads: %d of %d solves without a winner ran\n", pa.solves - 1, winners);
}

// A solver whose solves without a winner take 150 ms whatever their share (a start that cannot be cut short), each
// returning the PF packing less the winner; the PF solve is proven at once. It records which winners it was asked about.
class SlowStartSolver final : public WinnerSolver {
 public:
  std::string_view name() const override { return "slow-start"; }
  PackingSolution solve(const PackingProblem& problem, int excluded, const SolveLimits&, const SolveHints&) override {
    PackingSolution s;
    s.choice.assign(problem.bidders.size(), 0);
    if (excluded >= 0) {
      asked.push_back(excluded);
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      s.choice[static_cast<std::size_t>(excluded)] = -1;
    }
    s.value = packing_value(problem, s.choice);
    s.bound = excluded < 0 ? s.value : s.value + 1;
    s.proven_optimal = excluded < 0;
    return s;
  }
  std::vector<int> asked;
};

// Ten bidders, each alone on a GPU of its own, all winners; 0.5 s for the auction. The solve without the first winner
// gets about a tenth of it, 49 ms, and takes 150: it overran its share by 101 ms. The next winner's share, at most
// 340 ms over the nine left (38 ms), is less than that, so it gets its stand-in without a solver call (before, it was
// solved, ending 100 ms further past its share). The stand-in is the PF packing less it, W*_{-i} = 9.
TEST(BoundedSolve, AWinnerWhoseShareIsLessThanTheLeastOverrunSoFarGetsItsStandIn) {
  PackingProblem p;
  p.item_count = 10;
  for (int b = 0; b < 10; ++b) p.bidders.push_back({b + 1, {{0, 1.0, {b}}}});
  SlowStartSolver solver;
  const PartialAllocation pa = partial_allocation(p, solver, AuctionLimits{0.5, 0});
  ASSERT_EQ(pa.pf.choice, PackingChoice(10, 0));
  EXPECT_EQ(std::count(solver.asked.begin(), solver.asked.end(), 1), 0) << "the second winner was solved";
  EXPECT_NEAR(pa.value_without[1], 9.0, 1e-12);
  EXPECT_NEAR(pa.c[1], 1.0, 1e-12);
  EXPECT_FALSE(pa.proven_optimal);
}

}  // namespace
}  // namespace themis::arbiter
