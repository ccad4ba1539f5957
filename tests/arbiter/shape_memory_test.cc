// What the shape solver keeps across the N+1 solves of one auction (SolveHints::memory: proven bounds on
// subproblems) changes how much it searches, never what it finds: on instances large enough for the kept
// bounds to prune, every W*_{-i} equals a solve from nothing and CBC's; a memory made for another problem
// is not used.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "brute_force.h"
#include "core/rng.h"
#include "policy/arbiter/cbc_solver.h"
#include "policy/arbiter/greedy_packing.h"
#include "policy/arbiter/partial_allocation.h"
#include "policy/arbiter/shape_problem.h"
#include "policy/arbiter/shape_solver.h"
#include "policy/arbiter/small_search.h"
#include "test_apps.h"

namespace themis::arbiter {
namespace {

// 32 GPUs: 2 racks × 2 machines × 4 slots × 2.
Cluster memory_cluster() { return testing::make_cluster(4, 4, 2, 2); }

// Bidders competing for one offer of 12–24 GPUs, with rows of 1–6 GPUs of random scope.
ShapeProblem random_auction(Rng& rng, const Cluster& cluster, int bidders) {
  std::vector<GpuIndex> all(32);
  for (GpuIndex g = 0; g < 32; ++g) all[static_cast<std::size_t>(g)] = g;
  for (std::size_t i = all.size(); i > 1; --i) std::swap(all[i - 1], all[rng.below(i)]);
  Offer offer{1, {}};
  offer.gpus.assign(all.begin(), all.begin() + 12 + static_cast<std::ptrdiff_t>(rng.below(13)));
  std::sort(offer.gpus.begin(), offer.gpus.end());
  std::vector<Bid> bids;
  for (int b = 0; b < bidders; ++b) {
    Bid bid{b + 1, 1.0 + 4.0 * rng.uniform(), {}};
    const int rows = 1 + static_cast<int>(rng.below(6));
    for (int r = 0; r < rows; ++r) {
      const int count = 1 + static_cast<int>(rng.below(6));
      const std::vector<GpuIndex> gpus = testing::random_bundle(rng, offer.gpus, count);
      bid.rows.push_back({gpus, bid.rho_no_new * (0.2 + 0.9 * rng.uniform()), static_cast<ShapeScope>(rng.below(5))});
    }
    bids.push_back(std::move(bid));
  }
  return make_shape_problem(cluster, offer, bids, 64);
}

TEST(ShapeMemory, EveryWithoutSolveEqualsASolveFromNothingAndCbc) {
  const Cluster cluster = memory_cluster();
  Rng rng(20261201);
  int winners = 0, searched = 0;
  for (int instance = 0; instance < 60; ++instance) {
    SCOPED_TRACE("instance " + std::to_string(instance));
    const ShapeProblem shaped = random_auction(rng, cluster, 12);
    const PackingProblem& problem = shaped.packing;
    ShapeSolver solver;
    const PartialAllocation got = partial_allocation(problem, solver, AuctionLimits{});
    ASSERT_TRUE(got.proven_optimal);
    CbcSolver cbc;
    const PartialAllocation reference = partial_allocation(problem, cbc, AuctionLimits{});
    ASSERT_TRUE(reference.proven_optimal);
    EXPECT_NEAR(got.pf.value, reference.pf.value, 1e-7);
    for (std::size_t i = 0; i < problem.bidders.size(); ++i) {
      if (got.pf.choice[i] < 0) continue;
      ++winners;
      ShapeSolver fresh;  // no warm start, no prices, no memory
      const PackingSolution alone = fresh.solve(problem, static_cast<int>(i), SolveLimits{}, SolveHints{});
      ASSERT_TRUE(alone.proven_optimal);
      searched += alone.nodes > 1 ? 1 : 0;
      EXPECT_NEAR(got.value_without[i], alone.value, 1e-7) << "bidder " << i;
      EXPECT_NEAR(got.value_without[i], reference.value_without[i], 1e-7) << "bidder " << i;
      EXPECT_NEAR(got.c[i], reference.c[i], 1e-7) << "bidder " << i;
    }
  }
  // The instances are large enough that the solves without a winner search, where kept bounds can prune.
  EXPECT_GT(winners, 200);
  EXPECT_GT(searched, 100);
}

// Each solve without a winner starts from a copy of what the PF solve left, so the auction's outcome is the same
// on one thread as on four, also where a node cap stops solves before their proof (what they find then depends on
// where they start; a solve that started from an earlier one's memory would differ with the thread count).
TEST(ShapeMemory, TheOutcomeIsTheSameOnAnyNumberOfThreadsAlsoAtANodeCap) {
  const Cluster cluster = memory_cluster();
  Rng rng(20261202);
  int capped = 0, winners = 0, threaded = 0;
  for (int instance = 0; instance < 40; ++instance) {
    SCOPED_TRACE("instance " + std::to_string(instance));
    const ShapeProblem shaped = random_auction(rng, cluster, 14);
    for (const std::int64_t cap : {std::int64_t{0}, std::int64_t{40}}) {
      ShapeSolver solver;
      const PartialAllocation one = partial_allocation(shaped.packing, solver, AuctionLimits{0, cap, 0, 1});
      const PartialAllocation four = partial_allocation(shaped.packing, solver, AuctionLimits{0, cap, 0, 4, 0});
      EXPECT_EQ(one.pf.choice, four.pf.choice);
      EXPECT_EQ(one.value_without, four.value_without);  // exactly: the same solves, whatever thread ran them
      EXPECT_EQ(one.c, four.c);
      EXPECT_EQ(one.gap, four.gap);
      EXPECT_EQ(one.proven_optimal, four.proven_optimal);
      EXPECT_EQ(one.solves, four.solves);
      EXPECT_EQ(one.threads, 1);
      threaded += four.threads > 1 ? 1 : 0;
      capped += cap > 0 && !one.proven_optimal ? 1 : 0;
      for (const int c : one.pf.choice) winners += c >= 0 ? 1 : 0;
    }
  }
  EXPECT_GT(capped, 10);    // the cap stopped solves on many instances
  EXPECT_GT(threaded, 60);  // and the solves ran side by side on most
  EXPECT_GT(winners, 300);
}

// Threads start once the solves so far have searched `threads_from_nodes` nodes: never in an auction that stays
// below it, after the first solve without a winner when the PF solve alone falls just short of it. Whichever,
// the outcome is the same.
TEST(ShapeMemory, ThreadsStartOnceTheSolvesHaveSearchedEnoughNodes) {
  const Cluster cluster = memory_cluster();
  Rng rng(20261203);
  int late_starts = 0;
  for (int instance = 0; instance < 40; ++instance) {
    SCOPED_TRACE("instance " + std::to_string(instance));
    const ShapeProblem shaped = random_auction(rng, cluster, 14);
    ShapeSolver solver;
    const PartialAllocation one = partial_allocation(shaped.packing, solver, AuctionLimits{0, 0, 0, 1});
    int winners = 0;
    for (const int c : one.pf.choice) winners += c >= 0 ? 1 : 0;
    const PartialAllocation never =
        partial_allocation(shaped.packing, solver, AuctionLimits{0, 0, 0, 4, std::int64_t{1} << 40});
    EXPECT_EQ(never.threads, 1);
    const PartialAllocation late = partial_allocation(shaped.packing, solver, AuctionLimits{0, 0, 0, 4, one.pf.nodes + 1});
    EXPECT_EQ(late.value_without, one.value_without);
    EXPECT_EQ(late.c, one.c);
    EXPECT_EQ(never.c, one.c);
    // The first solve without a winner searches at least its root, so the helpers start for the second.
    if (winners >= 2) {
      EXPECT_EQ(late.threads, std::min(4, winners));
      ++late_starts;
    } else {
      EXPECT_EQ(late.threads, 1);
    }
  }
  EXPECT_GT(late_starts, 20);
}

// Where the small searches give up on the PF solve, the solves without its winners go to the solver at once
// (they would give up as well, after as many nodes each); the outcome is that of running them first.
TEST(ShapeMemory, AfterTheSmallSearchesGaveUpOnThePfSolveTheSolverTakesTheRest) {
  const Cluster cluster = memory_cluster();
  Rng rng(20261204);
  constexpr std::int64_t kCap = 300;
  int gave_up = 0, settled = 0;
  for (int instance = 0; instance < 40; ++instance) {
    SCOPED_TRACE("instance " + std::to_string(instance));
    const ShapeProblem shaped = random_auction(rng, cluster, 14);
    const PackingProblem& problem = shaped.packing;
    ShapeSolver solver;
    const PartialAllocation plain = partial_allocation(problem, solver, AuctionLimits{0, 0, 0, 1});
    const PartialAllocation first = partial_allocation(problem, solver, AuctionLimits{0, 0, kCap, 1});
    EXPECT_EQ(first.pf.value, plain.pf.value);
    for (std::size_t i = 0; i < problem.bidders.size(); ++i) {
      EXPECT_NEAR(first.value_without[i], plain.value_without[i], 1e-9) << "bidder " << i;
      EXPECT_NEAR(first.c[i], plain.c[i], 1e-9) << "bidder " << i;
    }
    if (small_search(problem, -1, greedy_packing(problem, -1), kCap)) {
      ++settled;
      EXPECT_GE(first.small_searches, 1);
    } else {
      ++gave_up;
      EXPECT_EQ(first.small_searches, 0);
    }
  }
  EXPECT_GT(gave_up, 5);
  EXPECT_GT(settled, 5);
}

// Auctions over six machines of 2 or 4 free GPUs in two racks (items 0-5 the machines, 6 and 7 the racks), where
// most bidders ask "k GPUs of any one machine" or "k of each of two machines of one rack" (a row per machine or
// pair, all of one gain), as apps whose ρ does not depend on which machine say: many machines are then
// interchangeable for the bidders still to choose, and states that differ only by which of them was taken share
// one kept bound. Some bidders ask one machine or one rack only, which keeps other swaps from being symmetries.
PackingProblem interchangeable_machines_auction(Rng& rng) {
  PackingProblem problem;
  problem.item_count = 8;
  problem.item_capacity.assign(8, 0);
  for (int m = 0; m < 6; ++m) {
    problem.item_capacity[static_cast<std::size_t>(m)] = rng.below(2) == 0 ? 2 : 4;
    problem.item_capacity[static_cast<std::size_t>(6 + m / 3)] += problem.item_capacity[static_cast<std::size_t>(m)];
  }
  const auto units = [](std::vector<int>& items, int item, int count) { items.insert(items.end(), static_cast<std::size_t>(count), item); };
  const int bidders = 5 + static_cast<int>(rng.below(2));
  for (int b = 0; b < bidders; ++b) {
    PackingBidder bidder{b + 1, {}};
    const double gain = 0.1 + rng.uniform();
    const std::uint64_t kind = rng.below(4);
    const int k = 1 + static_cast<int>(rng.below(kind == 1 ? 2 : 4));
    for (int m = 0; m < 6; ++m) {
      for (int other = m + 1; other < 6; ++other) {
        if (kind != 1 || other / 3 != m / 3) continue;  // a pair of machines of one rack
        PackingRow row{0, gain, {}};
        units(row.items, m, k);
        units(row.items, other, k);
        units(row.items, 6 + m / 3, 2 * k);
        std::sort(row.items.begin(), row.items.end());
        bidder.rows.push_back(row);
      }
      if (kind == 0 || (kind == 2 && m == static_cast<int>(rng.below(6)))) {  // any one machine, or one only
        PackingRow row{0, gain, {}};
        units(row.items, m, k);
        units(row.items, 6 + m / 3, k);
        bidder.rows.push_back(row);
      }
    }
    if (kind == 3) {  // k GPUs anywhere in one rack
      PackingRow row{0, gain, {}};
      units(row.items, 6 + static_cast<int>(rng.below(2)), 2 * k);
      bidder.rows.push_back(row);
    }
    std::erase_if(bidder.rows, [&](const PackingRow& row) {
      for (int item : row.items)
        if (std::count(row.items.begin(), row.items.end(), item) > problem.capacity(item)) return true;
      return false;
    });
    for (std::size_t r = 0; r < bidder.rows.size(); ++r) bidder.rows[r].source_row = static_cast<int>(r);
    problem.bidders.push_back(std::move(bidder));
  }
  return problem;
}

TEST(ShapeMemory, StatesThatDifferByWhichOfInterchangeableMachinesWasTakenShareABoundAndTheOutcomeIsExhaustiveSearchs) {
  Rng rng(20261205);
  int winners = 0, contested = 0;
  for (int instance = 0; instance < 1000; ++instance) {
    SCOPED_TRACE("instance " + std::to_string(instance));
    const PackingProblem problem = interchangeable_machines_auction(rng);
    const testing::BruteForceResult expected = testing::brute_force(problem);
    const std::vector<double> expected_c = testing::brute_force_c(problem);
    ShapeSolver solver;
    const PartialAllocation got = partial_allocation(problem, solver, AuctionLimits{});
    ASSERT_TRUE(got.proven_optimal);
    ASSERT_TRUE(packing_feasible(problem, got.pf.choice));
    EXPECT_NEAR(got.pf.value, expected.value, 1e-9);
    int won = 0;
    for (std::size_t i = 0; i < problem.bidders.size(); ++i) {
      EXPECT_NEAR(got.c[i], expected_c[i], 1e-9) << "bidder " << i;
      won += got.pf.choice[i] >= 0 ? 1 : 0;
      contested += expected_c[i] < 1 - 1e-9 ? 1 : 0;
    }
    winners += won;
  }
  EXPECT_GT(winners, 2000);
  EXPECT_GT(contested, 800);  // a winner whose GPUs another bidder wanted: the solves without it have work to do
}

TEST(ShapeMemory, AMemoryMadeForAnotherProblemIsNotUsed) {
  const Cluster cluster = memory_cluster();
  Rng rng(7);
  for (int instance = 0; instance < 20; ++instance) {
    SCOPED_TRACE("instance " + std::to_string(instance));
    const ShapeProblem first = random_auction(rng, cluster, 12);
    const ShapeProblem second = random_auction(rng, cluster, 12);
    ShapeSolver solver;
    std::unique_ptr<SolverMemory> memory;
    std::vector<double> prices;
    solver.solve(first.packing, -1, SolveLimits{}, SolveHints{nullptr, nullptr, &memory});
    ASSERT_NE(memory, nullptr);
    const PackingSolution reused = solver.solve(second.packing, -1, SolveLimits{}, SolveHints{nullptr, nullptr, &memory});
    const PackingSolution fresh = solver.solve(second.packing, -1, SolveLimits{}, SolveHints{});
    ASSERT_TRUE(reused.proven_optimal);
    EXPECT_NEAR(reused.value, fresh.value, 1e-9);
    EXPECT_TRUE(packing_feasible(second.packing, reused.choice));
  }
}

// Copies of one memory share what it held when copied (subproblem_bounds.h, SubproblemBounds::share) and keep what each
// solve then records to themselves: a solve from a copy searches the same nodes whatever the other copies recorded
// before it, so the solves without a winner need not run in any order.
TEST(ShapeMemory, CopiesKeepWhatTheirSolvesRecordToThemselves) {
  const Cluster cluster = memory_cluster();
  Rng rng(20261205);
  int compared = 0, recorded = 0;
  for (int instance = 0; instance < 30; ++instance) {
    SCOPED_TRACE("instance " + std::to_string(instance));
    const ShapeProblem shaped = random_auction(rng, cluster, 12);
    const PackingProblem& problem = shaped.packing;
    ShapeSolver solver;
    std::unique_ptr<SolverMemory> pf_memory;
    const PackingSolution pf = solver.solve(problem, -1, SolveLimits{}, SolveHints{nullptr, nullptr, &pf_memory});
    ASSERT_NE(pf_memory, nullptr);
    std::vector<int> winners;
    for (std::size_t i = 0; i < problem.bidders.size(); ++i)
      if (pf.choice[i] >= 0) winners.push_back(static_cast<int>(i));
    const auto solve_from = [&](const SolverMemory& memory, int excluded) {
      std::unique_ptr<SolverMemory> copy = memory.clone();
      return solver.solve(problem, excluded, SolveLimits{}, SolveHints{nullptr, nullptr, &copy});
    };
    // Each winner's solve from a copy, in order; then again in reverse order, each after a solve from a copy of the
    // copy that the first round's solve left (which holds more bounds, and shares them with copies of it).
    std::vector<PackingSolution> first;
    std::vector<std::unique_ptr<SolverMemory>> used;
    for (const int i : winners) {
      used.push_back(pf_memory->clone());
      first.push_back(solver.solve(problem, i, SolveLimits{}, SolveHints{nullptr, nullptr, &used.back()}));
    }
    for (std::size_t k = winners.size(); k-- > 0;) {
      const PackingSolution richer = solve_from(*used[k], winners[k]);
      recorded += richer.nodes < first[k].nodes ? 1 : 0;
      const PackingSolution again = solve_from(*pf_memory, winners[k]);
      EXPECT_EQ(again.nodes, first[k].nodes) << "without bidder " << winners[k];
      EXPECT_EQ(again.choice, first[k].choice);
      ++compared;
    }
  }
  EXPECT_GT(compared, 60);
  EXPECT_GT(recorded, 20);  // the copies did record bounds of their own, which the memory's later copies do not see
}

}  // namespace
}  // namespace themis::arbiter
