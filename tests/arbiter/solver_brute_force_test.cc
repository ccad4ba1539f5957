// Both winner-determination solvers (bnb also with its LP search alone) against exhaustive search on random small instances: the optimum
// value, the PF packing, every c_i, and the resulting kept and leftover GPU sets.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "brute_force.h"
#include "policy/arbiter/branch_and_bound_solver.h"
#include "policy/arbiter/cbc_solver.h"
#include "policy/arbiter/partial_allocation.h"
#include "policy/arbiter/shape_solver.h"
#include "policy/arbiter/greedy_packing.h"
#include "policy/arbiter/small_search.h"
#include "policy/arbiter/whole_gpus.h"
#include "core/rng.h"
#include "test_apps.h"

namespace themis::arbiter {
namespace {

// ≤ 5 bidders, ≤ 8 GPUs, ≤ 6 rows each; ρ drawn so some rows are worse than "nothing".
std::vector<Bid> random_bids(Rng& rng, const Offer& offer) {
  const int bidders = 1 + static_cast<int>(rng.below(5));
  std::vector<Bid> bids;
  for (int b = 0; b < bidders; ++b) {
    Bid bid{b + 1, 1.0 + 4.0 * rng.uniform(), {}};
    const int rows = static_cast<int>(rng.below(7));
    for (int r = 0; r < rows; ++r) {
      std::vector<GpuIndex> gpus;
      for (GpuIndex g : offer.gpus)
        if (rng.uniform() < 0.35) gpus.push_back(g);
      if (gpus.empty()) gpus.push_back(offer.gpus[rng.below(offer.gpus.size())]);
      bid.rows.push_back({gpus, bid.rho_no_new * (0.1 + 1.1 * rng.uniform())});
    }
    bids.push_back(std::move(bid));
  }
  return bids;
}

// 1 to 8 of the GPUs 0..7.
Offer random_offer(Rng& rng, int instance) {
  Offer offer{instance, {}};
  const int gpus = 1 + static_cast<int>(rng.below(8));
  for (GpuIndex g = 0; g < 8; ++g)
    if (static_cast<int>(offer.gpus.size()) < gpus && (rng.uniform() < 0.7 || 8 - g <= gpus - static_cast<int>(offer.gpus.size())))
      offer.gpus.push_back(g);
  return offer;
}

void check_against_brute_force(WinnerSolver& solver, std::int64_t small_search_nodes = 0) {
  const Cluster cluster = testing::make_cluster(2, 2, 2, 1);  // 8 GPUs: 2 racks × 1 machine × 2 slots × 2
  Rng rng(20240601);
  int with_winners = 0;
  int with_payment = 0;
  for (int instance = 0; instance < 1000; ++instance) {
    const Offer offer = random_offer(rng, instance);
    const std::vector<Bid> bids = random_bids(rng, offer);
    const PackingProblem problem = make_packing_problem(offer, bids, 64);
    const testing::BruteForceResult expected = testing::brute_force(problem);
    const std::vector<double> expected_c = testing::brute_force_c(problem);

    const PartialAllocation got = partial_allocation(problem, solver, AuctionLimits{0, 0, small_search_nodes});
    if (small_search_nodes > 0) {
      EXPECT_EQ(got.small_searches, got.solves);  // small enough for it every time
    }
    SCOPED_TRACE("instance " + std::to_string(instance));
    ASSERT_TRUE(packing_feasible(problem, got.pf.choice));
    EXPECT_TRUE(got.pf.proven_optimal);
    EXPECT_TRUE(got.proven_optimal);
    EXPECT_EQ(got.gap, 0.0);
    EXPECT_NEAR(got.pf.value, expected.value, 1e-7);
    ASSERT_EQ(got.pf.choice, expected.choice);  // continuous random ρ: the optimum is unique
    ASSERT_EQ(got.c.size(), expected_c.size());
    for (std::size_t i = 0; i < expected_c.size(); ++i) {
      EXPECT_NEAR(got.c[i], expected_c[i], 1e-7) << "bidder " << i;
      EXPECT_GT(got.c[i], 0.0);
      EXPECT_LE(got.c[i], 1.0);
    }

    // Kept and leftover sets (nearest rule), from the expected c_i and PF bundles.
    Rng unused(1);
    std::set<GpuIndex> leftover(offer.gpus.begin(), offer.gpus.end());
    std::set<GpuIndex> expected_leftover = leftover;
    for (std::size_t i = 0; i < problem.bidders.size(); ++i) {
      if (got.pf.choice[i] < 0) continue;
      ++with_winners;
      const auto& row = bids[i].rows[static_cast<std::size_t>(problem.bidders[i].rows[static_cast<std::size_t>(got.pf.choice[i])].source_row)];
      const auto kept = kept_gpus(cluster, row.gpus, got.c[i], RoundingRule::kNearest, unused);
      const int expected_count = nearest_kept_count(expected_c[i], static_cast<int>(row.gpus.size()));
      EXPECT_EQ(static_cast<int>(kept.size()), expected_count);
      if (expected_count < static_cast<int>(row.gpus.size())) ++with_payment;
      EXPECT_TRUE(std::includes(row.gpus.begin(), row.gpus.end(), kept.begin(), kept.end()));
      for (GpuIndex g : kept) leftover.erase(g);
      for (GpuIndex g : kept_gpus(cluster, row.gpus, expected_c[i], RoundingRule::kNearest, unused))
        expected_leftover.erase(g);
    }
    EXPECT_EQ(leftover, expected_leftover);
  }
  // The instances exercise the interesting cases, not only empty auctions.
  EXPECT_GT(with_winners, 1000);
  EXPECT_GT(with_payment, 100);
}

TEST(SolverBruteForce, BranchAndBoundMatchesExhaustiveSearch) {
  BranchAndBoundSolver solver;
  check_against_brute_force(solver);
}
// The instances are small enough for the Lagrangian search alone; this runs the LP search on them.
TEST(SolverBruteForce, BranchAndBoundLpSearchMatchesExhaustiveSearch) {
  BranchAndBoundSolver solver(0);
  check_against_brute_force(solver);
}
TEST(SolverBruteForce, CbcMatchesExhaustiveSearch) {
  CbcSolver solver;
  check_against_brute_force(solver);
}

// Every solve by depth-first search alone (its node cap never reached on these instances): the solver
// passed is never called.
TEST(SolverBruteForce, SmallSearchMatchesExhaustiveSearch) {
  CbcSolver solver;
  check_against_brute_force(solver, 1'000'000);
}

// 6 bidders with 6 one-GPU rows each over 6 GPUs, gains all different.
PackingProblem six_bidders_six_gpus() {
  PackingProblem problem;
  problem.item_count = 6;
  for (int b = 0; b < 6; ++b) {
    PackingBidder bidder{b + 1, {}};
    for (int g = 0; g < 6; ++g) bidder.rows.push_back({g, 1.0 + 0.01 * ((b * 7 + g * 3) % 11), {g}});
    problem.bidders.push_back(bidder);
  }
  return problem;
}

// The layered search alone, from an empty start, for the packing with everybody and without each bidder.
TEST(SolverBruteForce, LayeredSearchMatchesExhaustiveSearch) {
  Rng rng(20261126);
  int improved = 0, refused = 0;
  for (int instance = 0; instance < 1000; ++instance) {
    const Offer offer = random_offer(rng, instance);
    const PackingProblem problem = make_packing_problem(offer, random_bids(rng, offer), 64);
    SCOPED_TRACE("instance " + std::to_string(instance));
    testing::expect_layered_search_exact(problem, improved, refused);
  }
  EXPECT_GT(improved, 1000);  // most solves find something better than nothing
  EXPECT_EQ(refused, 0);      // 8 one-unit GPUs: 8 bits
}

TEST(SolverBruteForce, LayeredSearchGivesUpAtItsStateCap) {
  const PackingProblem problem = six_bidders_six_gpus();
  EXPECT_FALSE(layered_search(problem, -1, PackingChoice(6, -1), 10).has_value());
  const auto full = layered_search(problem, -1, PackingChoice(6, -1), 1'000'000);
  ASSERT_TRUE(full.has_value());
  EXPECT_NEAR(full->value, testing::brute_force(problem).value, 1e-9);
  EXPECT_LE(full->nodes, 6 * 64 + 1);  // at most one state per set of taken GPUs in each layer
}

TEST(SolverBruteForce, SmallSearchGivesUpAtItsNodeCapAndTheSolverFinishes) {
  const PackingProblem problem = six_bidders_six_gpus();  // more than 4 nodes to prove anything
  EXPECT_FALSE(small_search(problem, -1, PackingChoice(6, -1), 4).has_value());
  const auto full = small_search(problem, -1, PackingChoice(6, -1), 1'000'000);
  ASSERT_TRUE(full.has_value());
  EXPECT_TRUE(full->proven_optimal);
  CbcSolver solver;
  const PartialAllocation capped = partial_allocation(problem, solver, AuctionLimits{0, 0, 4});
  EXPECT_LT(capped.small_searches, capped.solves);  // the PF solve went to CBC (some solves without one
                                                   // bidder start from an optimal packing and finish at once)
  EXPECT_NEAR(capped.pf.value, full->value, 1e-9);
  EXPECT_TRUE(packing_feasible(problem, full->choice));
}

// More bidders than GPUs: sixteen bidders want any two of eight GPUs, so at most four can win. Bounding
// the later bidders by their best rows alone leaves every choice of winners and pairs to enumerate;
// bounding them by what fits in the GPUs left (four rows of two) proves the greedy packing optimal at
// once, with everybody and without each winner. (The optimum: the four best bidders, any four disjoint pairs.)
TEST(SolverBruteForce, SearchesBoundLaterBiddersByTheGpusLeft) {
  PackingProblem problem;
  problem.item_count = 8;
  for (int b = 0; b < 16; ++b) {
    PackingBidder bidder{b + 1, {}};
    for (int x = 0; x < 8; ++x)
      for (int y = x + 1; y < 8; ++y)
        bidder.rows.push_back({static_cast<int>(bidder.rows.size()), 1.0 - 0.01 * b, {x, y}});
    problem.bidders.push_back(bidder);
  }
  for (int excluded = -1; excluded < 4; ++excluded) {
    SCOPED_TRACE("excluded " + std::to_string(excluded));
    const double four_best = 1.0 + 0.99 + 0.98 + 0.97;  // without a winner the fifth best moves up
    const double optimum = excluded < 0 ? four_best : four_best + 0.96 - (1.0 - 0.01 * excluded);
    const PackingChoice start = greedy_packing(problem, excluded);
    const auto searched = small_search(problem, excluded, start, 100);
    ASSERT_TRUE(searched.has_value());
    EXPECT_NEAR(searched->value, optimum, 1e-12);
    const auto layered = layered_search(problem, excluded, start, 100);
    ASSERT_TRUE(layered.has_value());
    EXPECT_NEAR(layered->value, optimum, 1e-12);
  }
}

TEST(SolverBruteForce, ShapeMatchesExhaustiveSearch) {
  ShapeSolver solver;
  check_against_brute_force(solver);
}

TEST(SolverBruteForce, LoneBidderPaysNothing) {
  PackingProblem p{4, {{7, {{0, 0.5, {0, 1}}, {1, 0.9, {0, 1, 2, 3}}}}}, {}, {}};
  for (SolverKind kind : {SolverKind::kBranchAndBound, SolverKind::kCbc, SolverKind::kShape}) {
    auto solver = make_winner_solver(kind);
    const auto pa = partial_allocation(p, *solver, AuctionLimits{});
    EXPECT_EQ(pa.pf.choice, (PackingChoice{1}));
    EXPECT_EQ(pa.c[0], 1.0);
  }
}

}  // namespace
}  // namespace themis::arbiter
