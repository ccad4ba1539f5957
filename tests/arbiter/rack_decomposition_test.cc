// The rack decomposition (rack_decomposition.h) against exhaustive search: its bound is never below the optimum,
// with everybody and without each bidder, and from patterns carried over as from none; a packing it calls proven is
// optimal, also where its column generation is cut short; its bound less a bidder's price bounds the optimum without
// that bidder; its table's bound at a node is never below the best
// completion of the bidders still to choose, nor is its bound of a child from the entries it holds; it sees a machine the LP splits; a problem without racks, or with a rack
// too large for its program, does not decompose.
// tests/arbiter/shape_brute_force_test.cc checks the shape solver with it on
// (ShapeSolverWithLpBoundsMatchesExhaustiveSearch) and off.
#include "policy/arbiter/rack_decomposition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

#include "brute_force.h"
#include "random_rack_problem.h"

namespace themis::arbiter {
namespace {

const Deadline kNoDeadline(0);

using testing::random_rack_problem;

// The best that bidders [from, end) of `order` can add within `residual`, each one row or none (exhaustive).
double best_completion(const PackingProblem& problem, int excluded, const std::vector<int>& order, std::size_t from,
                       std::vector<int>& residual) {
  if (from == order.size()) return 0;
  double best = best_completion(problem, excluded, order, from + 1, residual);
  const int b = order[from];
  if (b == excluded) return best;
  for (const PackingRow& row : problem.bidders[static_cast<std::size_t>(b)].rows) {
    bool fits = true;
    for (int item : row.items) fits = --residual[static_cast<std::size_t>(item)] >= 0 && fits;
    if (fits) best = std::max(best, row.gain + best_completion(problem, excluded, order, from + 1, residual));
    for (int item : row.items) ++residual[static_cast<std::size_t>(item)];
  }
  return best;
}

TEST(RackDecomposition, BoundsTheOptimumAndItsProvenPackingsAreOptimal) {
  Rng rng(20261206);
  int decomposed = 0, proven = 0, tight = 0;
  for (int instance = 0; instance < 1000; ++instance) {
    const PackingProblem problem = random_rack_problem(rng);
    if (!RackDecomposition::applies(problem)) continue;
    ++decomposed;
    RackDecomposition carried;  // patterns carried from each solve to the next, as in the N+1 solves
    for (int excluded = -1; excluded < static_cast<int>(problem.bidders.size()); ++excluded) {
      SCOPED_TRACE("instance " + std::to_string(instance) + " without " + std::to_string(excluded));
      const double optimum = testing::brute_force(problem, excluded).value;
      const RackBound got = carried.solve(problem, excluded, kNoDeadline);
      const RackBound fresh = RackDecomposition().solve(problem, excluded, kNoDeadline);
      ASSERT_TRUE(got.available);
      EXPECT_GE(got.bound, optimum - 1e-9);
      EXPECT_GE(fresh.bound, optimum - 1e-9);
      // Column generation ends at the master's optimum, which does not depend on the columns it started from.
      EXPECT_NEAR(got.bound, fresh.bound, 1e-7);
      if (got.bound < optimum + 1e-9) ++tight;
      if (!got.choice.empty()) {
        EXPECT_TRUE(packing_feasible(problem, got.choice, excluded));
        EXPECT_LE(packing_value(problem, got.choice), optimum + 1e-9);
      }
      if (got.proven) {
        ++proven;
        EXPECT_NEAR(packing_value(problem, got.choice), optimum, 1e-9);
      }
    }
  }
  EXPECT_GT(decomposed, 900);
  EXPECT_GT(proven, 1000);
  EXPECT_GT(tight, 1000);  // the bound is the optimum itself in most of these small problems
}

// Column generation cut short (one master solve; a time budget stops it the same way) still returns its best rounding,
// feasible, never above the optimum, and optimal where it is called proven; in the PF solve the dive on the master
// (where the rounding lies well below the bound) keeps it so.
TEST(RackDecomposition, ACutShortSolveStillReturnsItsBestRounding) {
  Rng rng(1206);
  int cut_short = 0;
  for (int instance = 0; instance < 400; ++instance) {
    const PackingProblem problem = random_rack_problem(rng);
    if (!RackDecomposition::applies(problem)) continue;
    for (int excluded = -1; excluded < static_cast<int>(problem.bidders.size()); ++excluded) {
      SCOPED_TRACE("instance " + std::to_string(instance) + " without " + std::to_string(excluded));
      const RackBound full = RackDecomposition().solve(problem, excluded, kNoDeadline);
      const RackBound got = RackDecomposition().solve(problem, excluded, kNoDeadline, nullptr, 1);
      ASSERT_TRUE(got.available);
      if (full.iterations > 1) ++cut_short;
      ASSERT_FALSE(got.choice.empty());
      const double optimum = testing::brute_force(problem, excluded).value;
      EXPECT_TRUE(packing_feasible(problem, got.choice, excluded));
      EXPECT_LE(packing_value(problem, got.choice), optimum + 1e-9);
      EXPECT_GE(got.bound, optimum - 1e-9);
      if (got.proven) {
        EXPECT_NEAR(packing_value(problem, got.choice), optimum, 1e-9);
      }
    }
  }
  EXPECT_GT(cut_short, 500);  // solves that needed more than one master solve, cut short here
}

// Its bound less a bidder's price bounds the optimum without that bidder, also where the column generation is cut
// short; for about half of the optimum's winners it is below the bound itself.
TEST(RackDecomposition, ItsBoundLessABiddersPriceBoundsTheOptimumWithoutIt) {
  Rng rng(61206);
  int winners = 0, lower = 0;  // the optimum's winners, and those whose bound without them is below the bound
  for (int instance = 0; instance < 400; ++instance) {
    const PackingProblem problem = random_rack_problem(rng);
    if (!RackDecomposition::applies(problem)) continue;
    const PackingChoice optimum = testing::brute_force(problem, -1).choice;
    for (const int iterations : {RackDecomposition::kDefaultMaxIterations, 1}) {
      const RackBound got = RackDecomposition().solve(problem, -1, kNoDeadline, nullptr, iterations);
      ASSERT_TRUE(got.available);
      ASSERT_FALSE(got.prices.empty());
      for (int b = 0; b < static_cast<int>(problem.bidders.size()); ++b) {
        SCOPED_TRACE("instance " + std::to_string(instance) + " without " + std::to_string(b) + ", " +
                     std::to_string(iterations) + " iterations");
        EXPECT_GE(got.bound_without(b), testing::brute_force(problem, b).value - 1e-9);
        EXPECT_LE(got.bound_without(b), got.bound);
        if (optimum[static_cast<std::size_t>(b)] < 0) continue;
        ++winners;
        if (got.bound_without(b) < got.bound - 1e-9) ++lower;
      }
    }
  }
  EXPECT_GT(winners, 1000);
  EXPECT_GT(lower, winners / 3);  // 1,554 of 3,168 when written: where the item prices carry a winner's gain, its own price is 0
}

// What the table tests start from: a random rack problem that decomposes, a random bidder excluded (or none), its
// decomposition's bound and prices, the bidders in the search's order (here by index, reversed where asked) and the
// items' capacities. Empty where the problem does not decompose.
struct TableCase {
  PackingProblem problem;
  int excluded = -1;
  RackBound root;
  std::vector<int> order;
  std::vector<int> capacity;
};

std::optional<TableCase> random_table_case(Rng& rng, bool reversed) {
  TableCase out;
  out.problem = random_rack_problem(rng);
  if (!RackDecomposition::applies(out.problem)) return std::nullopt;
  out.excluded = static_cast<int>(rng.below(out.problem.bidders.size() + 1)) - 1;
  out.root = RackDecomposition().solve(out.problem, out.excluded, kNoDeadline);
  EXPECT_FALSE(out.root.prices.empty());
  if (out.root.prices.empty()) return std::nullopt;
  out.order.resize(out.problem.bidders.size());
  for (std::size_t b = 0; b < out.order.size(); ++b) out.order[b] = static_cast<int>(b);
  if (reversed) std::reverse(out.order.begin(), out.order.end());
  for (int i = 0; i < out.problem.item_count; ++i) out.capacity.push_back(out.problem.capacity(i));
  return out;
}

TEST(RackDecomposition, ItsTableBoundsTheBestCompletionAtEveryNode) {
  Rng rng(7);
  int nodes = 0;
  for (int instance = 0; instance < 300; ++instance) {
    const std::optional<TableCase> at = random_table_case(rng, true);
    if (!at) continue;
    const auto& [problem, excluded, root, order, capacity] = *at;
    RackTable table(problem, excluded, order, root.prices);
    // At the root, at the prices of the decomposition's bound, the table gives that bound.
    EXPECT_NEAR(table.bound(0, capacity), root.bound, 1e-9);
    // At nodes: the first bidders of the order take a random row that fits, or nothing.
    for (int walk = 0; walk < 5; ++walk) {
      std::vector<int> residual = capacity;
      for (std::size_t position = 0; position <= order.size(); ++position) {
        std::vector<int> left = residual;
        const double best = best_completion(problem, excluded, order, position, left);
        EXPECT_GE(table.bound(position, residual), best - 1e-9) << "instance " << instance << " position " << position;
        ++nodes;
        if (position == order.size() || order[position] == excluded) continue;
        const auto& rows = problem.bidders[static_cast<std::size_t>(order[position])].rows;
        const auto pick = static_cast<std::size_t>(rng.below(rows.size() + 1));
        if (pick == rows.size()) continue;
        std::vector<int> after = residual;
        bool fits = true;
        for (int item : rows[pick].items) fits = --after[static_cast<std::size_t>(item)] >= 0 && fits;
        if (fits) residual = after;
      }
    }
  }
  EXPECT_GT(nodes, 5000);
}

// The search bounds each child from the table's entries before it enters it (RackTable::peek, after bound() for the
// child that takes nothing): never below the best completion, nor below the bound the child would get on entering it
// (a second table at the same prices), never above the bound for the child that takes nothing; and, once the table
// holds the child's entries, the child's bound itself.
TEST(RackDecomposition, ItsPeekAtAChildLiesBetweenTheChildsBoundAndTheParents) {
  Rng rng(11);
  int children = 0, exact = 0;
  for (int instance = 0; instance < 300; ++instance) {
    const std::optional<TableCase> at = random_table_case(rng, false);
    if (!at) continue;
    const auto& [problem, excluded, root, order, capacity] = *at;
    RackTable table(problem, excluded, order, root.prices);
    RackTable entered(problem, excluded, order, root.prices);
    std::vector<int> residual = capacity;
    for (std::size_t position = 0; position < order.size(); ++position) {
      const double none = table.bound(position + 1, residual);
      const int b = order[position];
      if (b == excluded) continue;
      const auto& rows = problem.bidders[static_cast<std::size_t>(b)].rows;
      std::vector<int> fitting;
      for (std::size_t r = 0; r < rows.size(); ++r) {
        std::vector<RackTable::Change> changes;
        std::vector<int> child = residual;
        bool fits = true;
        for (const ItemLoad& load : item_loads(rows[r])) {
          auto& left = child[static_cast<std::size_t>(load.item)];
          left -= load.units;
          fits = fits && left >= 0;
          changes.push_back({load.item, left + load.units, left});
        }
        if (!fits) continue;
        fitting.push_back(static_cast<int>(r));
        const double peeked = table.peek(position + 1, changes);
        std::vector<int> left = child;
        const double best = best_completion(problem, excluded, order, position + 1, left);
        const double on_entry = entered.bound(position + 1, child);
        EXPECT_GE(peeked, best - 1e-9) << "instance " << instance << " position " << position << " row " << r;
        EXPECT_GE(peeked, on_entry - 1e-9) << "instance " << instance << " position " << position << " row " << r;
        EXPECT_LE(peeked, none + 1e-9) << "instance " << instance << " position " << position << " row " << r;
        // Entered, the child's lookups are in this table too: peeking again (after the parent's call) reads them.
        table.bound(position + 1, child);
        table.bound(position + 1, residual);
        const double again = table.peek(position + 1, changes);
        EXPECT_GE(again, on_entry - 1e-9);
        EXPECT_LE(again, peeked + 1e-9);
        if (again < peeked - 1e-9) ++exact;
        ++children;
      }
      if (fitting.empty()) continue;
      const auto& row = rows[static_cast<std::size_t>(fitting[rng.below(fitting.size())])];
      for (const ItemLoad& load : item_loads(row)) residual[static_cast<std::size_t>(load.item)] -= load.units;
    }
  }
  EXPECT_GT(children, 1000);
  EXPECT_GT(exact, 20) << children;  // the entries it reads make it tighter than the parent's values
}

// One rack, one machine of 6 GPUs, two bidders that each want 4 of them: the LP takes three quarters of each
// (1.5), the decomposition knows only one fits (1.0) and settles the problem with that packing.
TEST(RackDecomposition, SeesThatOnlyOneGangOfFourFitsSixGpus) {
  PackingProblem problem;
  problem.item_count = 1;
  problem.item_capacity = {6};
  problem.item_rack = {0};
  problem.bidders = {{1, {{0, 1.0, {0, 0, 0, 0}}}}, {2, {{0, 1.0, {0, 0, 0, 0}}}}};
  EXPECT_NEAR(lagrangian_bound(problem, -1, {0.25}), 1.5, 1e-12);  // the LP's bound (its dual price is 1/4)
  const RackBound got = RackDecomposition().solve(problem, -1, kNoDeadline);
  ASSERT_TRUE(got.available);
  EXPECT_NEAR(got.bound, 1.0, 1e-9);
  EXPECT_TRUE(got.proven);
  EXPECT_NEAR(packing_value(problem, got.choice), 1.0, 1e-12);
}

// One rack of nine items of 100 units and 40 bidders, each with a row of 1, 2 or 3 units of every item: the racks'
// dynamic program would hold too many states, so the problem does not decompose (and the call ends at once).
TEST(RackDecomposition, ARackWhoseProgramOutgrowsItsStatesDoesNotDecompose) {
  PackingProblem problem;
  problem.item_count = 9;
  problem.item_capacity.assign(9, 100);
  problem.item_rack.assign(9, 0);
  for (int b = 0; b < 40; ++b) {
    PackingBidder bidder{b + 1, {}};
    for (int item = 0; item < 9; ++item)
      bidder.rows.push_back({item, 1.0 + 0.01 * (b + item), std::vector<int>(static_cast<std::size_t>(1 + (b + item) % 3), item)});
    problem.bidders.push_back(std::move(bidder));
  }
  ASSERT_TRUE(RackDecomposition::applies(problem));
  EXPECT_FALSE(RackDecomposition().solve(problem, -1, kNoDeadline).available);
}

TEST(RackDecomposition, AProblemWithoutRacksDoesNotDecompose) {
  PackingProblem problem;
  problem.item_count = 2;
  problem.bidders = {{1, {{0, 1.0, {0, 1}}}}};
  EXPECT_FALSE(RackDecomposition::applies(problem));
  EXPECT_FALSE(RackDecomposition().solve(problem, -1, kNoDeadline).available);
  RackTable table(problem, -1, {0}, {0.0, 0.0, 0.0});
  EXPECT_EQ(table.bound(0, {1, 1}), std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace themis::arbiter
