// The displacement check (displacement.h): it settles a solve without a winner only where exhaustive search finds
// nothing better than the PF packing less that winner, it does settle many of those, and auctions that use it on
// every solve keep every c_i of exhaustive search.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "brute_force.h"
#include "core/rng.h"
#include "policy/arbiter/displacement.h"
#include "policy/arbiter/partial_allocation.h"
#include "policy/arbiter/shape_problem.h"
#include "policy/arbiter/shape_solver.h"
#include "test_apps.h"

namespace themis::arbiter {
namespace {

// Up to 5 bidders with up to 6 rows on up to 10 of 16 GPUs (2 racks × 2 machines × 2 slots × 2), each row a shape
// over a random scope, so that rows of different bidders often want the same machines.
PackingProblem random_shape_problem(Rng& rng, int instance) {
  static const Cluster cluster = testing::make_cluster(4, 2, 2, 2);
  Offer offer{instance, {}};
  std::vector<GpuIndex> all(16);
  for (GpuIndex g = 0; g < 16; ++g) all[static_cast<std::size_t>(g)] = g;
  const int want = 1 + static_cast<int>(rng.below(10));
  for (int i = 0; i < want; ++i) {
    const auto pick = i + static_cast<int>(rng.below(static_cast<std::uint64_t>(16 - i)));
    std::swap(all[static_cast<std::size_t>(i)], all[static_cast<std::size_t>(pick)]);
    offer.gpus.push_back(all[static_cast<std::size_t>(i)]);
  }
  std::sort(offer.gpus.begin(), offer.gpus.end());
  std::vector<Bid> bids;
  const int bidders = 1 + static_cast<int>(rng.below(5));
  for (int b = 0; b < bidders; ++b) {
    Bid bid{b + 1, 1.0 + 4.0 * rng.uniform(), {}};
    const int rows = static_cast<int>(rng.below(7));
    for (int r = 0; r < rows; ++r) {
      const int count = 1 + static_cast<int>(rng.below(std::min<std::uint64_t>(4, offer.gpus.size())));
      bid.rows.push_back({testing::random_bundle(rng, offer.gpus, count), bid.rho_no_new * (0.1 + 1.1 * rng.uniform()),
                          static_cast<ShapeScope>(rng.below(5))});
    }
    bids.push_back(std::move(bid));
  }
  return make_shape_problem(cluster, offer, bids, 64).packing;
}

PackingSolution proven(const testing::BruteForceResult& best) {
  PackingSolution pf;
  pf.choice = best.choice;
  pf.value = best.value;
  pf.bound = best.value;
  pf.proven_optimal = true;
  return pf;
}

TEST(Displacement, SettlesOnlySolvesThatNothingImprovesAndMostOfThem) {
  Rng rng(20261205);
  int settled = 0, unimproved = 0, improved = 0;
  for (int instance = 0; instance < 1500; ++instance) {
    const PackingProblem problem = random_shape_problem(rng, instance);
    const testing::BruteForceResult best = testing::brute_force(problem);
    const PackingSolution pf = proven(best);
    const DisplacementChecker checker(problem, pf);
    for (std::size_t i = 0; i < problem.bidders.size(); ++i) {
      if (best.choice[i] < 0) continue;
      const double others = best.value - problem.bidders[i].rows[static_cast<std::size_t>(best.choice[i])].gain;
      const double optimum = testing::brute_force(problem, static_cast<int>(i)).value;
      const bool improves = optimum > others + 1e-9;
      improved += improves ? 1 : 0;
      unimproved += improves ? 0 : 1;
      const DisplacementCheck check = checker.check(static_cast<int>(i), others);
      if (check.settled) {
        ++settled;
        EXPECT_FALSE(improves) << "instance " << instance << ", without bidder " << i << ": settled at " << others
                               << " but the optimum is " << optimum;
      }
    }
  }
  std::printf("displacement: %d of %d solves that nothing improves settled (%d improve)\n", settled, unimproved, improved);
  EXPECT_GT(improved, 300);
  EXPECT_GT(unimproved, 300);
  EXPECT_GT(settled, unimproved / 2);
}

TEST(Displacement, AuctionsCheckingEverySolveKeepEveryPaymentOfExhaustiveSearch) {
  Rng rng(20261206);
  ShapeSolver solver;
  int settled = 0;
  for (int instance = 0; instance < 1000; ++instance) {
    const PackingProblem problem = random_shape_problem(rng, instance);
    const testing::BruteForceResult best = testing::brute_force(problem);
    const std::vector<double> expected_c = testing::brute_force_c(problem);
    AuctionLimits limits;
    limits.displacement_from_nodes = 0;
    const PartialAllocation got = partial_allocation(problem, solver, limits);
    SCOPED_TRACE("instance " + std::to_string(instance));
    EXPECT_TRUE(got.proven_optimal);
    EXPECT_NEAR(got.pf.value, best.value, 1e-7);
    ASSERT_EQ(got.c.size(), expected_c.size());
    for (std::size_t i = 0; i < expected_c.size(); ++i) EXPECT_NEAR(got.c[i], expected_c[i], 1e-7) << "bidder " << i;
    settled += got.settled_without_search;
  }
  std::printf("displacement in auctions: %d solves without a winner settled without a search\n", settled);
  EXPECT_GT(settled, 300);
}

// Two GPUs on one machine (slot items, unit capacities): a wins GPU 0, b GPU 1.
PackingProblem two_gpus(bool another_wants_gpu_0) {
  PackingProblem p;
  p.item_count = 2;
  p.bidders.push_back({1, {{0, 1.0, {0}}}});
  p.bidders.push_back({2, {{0, 0.5, {1}}}});
  if (another_wants_gpu_0) p.bidders.push_back({3, {{0, 0.2, {0}}}});
  return p;
}

TEST(Displacement, SettlesWhereNobodyElseCanUseTheWinnersGpus) {
  const PackingProblem p = two_gpus(false);
  const PackingSolution pf = proven({1.5, {0, 0}});
  const DisplacementChecker checker(p, pf);
  EXPECT_TRUE(checker.check(0, 0.5).settled);
  EXPECT_TRUE(checker.check(1, 1.0).settled);
}

TEST(Displacement, LeavesTheSolveToTheSearchWhereSomebodyElseWouldTakeTheGpus) {
  const PackingProblem p = two_gpus(true);
  const PackingSolution pf = proven({1.5, {0, 0, -1}});
  const DisplacementChecker checker(p, pf);
  EXPECT_FALSE(checker.check(0, 0.5).settled);  // without a, bidder 3 takes GPU 0: 0.7
  EXPECT_TRUE(checker.check(1, 1.0).settled);   // nobody else wants GPU 1
}

TEST(Displacement, SettlesNothingWithoutAProvenPfSolveOrBelowThePfPackingLessTheWinner) {
  const PackingProblem p = two_gpus(false);
  PackingSolution pf = proven({1.5, {0, 0}});
  EXPECT_FALSE(DisplacementChecker(p, pf).check(0, 0.4).settled);  // an incumbent below W* − gain proves nothing
  pf.proven_optimal = false;
  EXPECT_FALSE(DisplacementChecker(p, pf).check(0, 0.5).settled);
}

}  // namespace
}  // namespace themis::arbiter
