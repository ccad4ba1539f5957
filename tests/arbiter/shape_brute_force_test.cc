// Shape bids (rows whose GPUs are interchangeable within slots, machines, racks or the whole offer)
// against exhaustive search: the shape solver and CBC on the shape problem match it on the optimum,
// the PF packing, every c_i and the kept/leftover sets; the shape problem's optimum equals the best
// packing over every concrete realization of the shapes; the concrete GPUs chosen after the auction
// realize each winner's shape, are disjoint, and are the named GPUs when nothing stands in the way.
#include <gtest/gtest.h>

#include <cstdio>

#include <algorithm>
#include <limits>
#include <set>

#include "brute_force.h"
#include "core/rng.h"
#include "policy/arbiter/cbc_solver.h"
#include "policy/arbiter/partial_allocation.h"
#include "policy/arbiter/shape_assignment.h"
#include "policy/arbiter/shape_problem.h"
#include "policy/arbiter/shape_solver.h"
#include "policy/arbiter/whole_gpus.h"
#include "test_apps.h"

namespace themis::arbiter {
namespace {

// 16 GPUs: 2 racks × 2 machines × 2 slots × 2.
Cluster shape_cluster() { return testing::make_cluster(4, 2, 2, 2); }

Offer random_offer(Rng& rng, RoundId round, int max_gpus) {
  Offer offer{round, {}};
  const int want = 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(max_gpus)));
  std::vector<GpuIndex> all(16);
  for (GpuIndex g = 0; g < 16; ++g) all[static_cast<std::size_t>(g)] = g;
  for (int i = 0; i < want; ++i) {
    const auto pick = i + static_cast<int>(rng.below(static_cast<std::uint64_t>(16 - i)));
    std::swap(all[static_cast<std::size_t>(i)], all[static_cast<std::size_t>(pick)]);
    offer.gpus.push_back(all[static_cast<std::size_t>(i)]);
  }
  std::sort(offer.gpus.begin(), offer.gpus.end());
  return offer;
}

std::vector<Bid> random_shape_bids(Rng& rng, const Offer& offer, int max_bidders, int max_rows) {
  const int bidders = 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(max_bidders)));
  std::vector<Bid> bids;
  for (int b = 0; b < bidders; ++b) {
    Bid bid{b + 1, 1.0 + 4.0 * rng.uniform(), {}};
    const int rows = static_cast<int>(rng.below(static_cast<std::uint64_t>(max_rows + 1)));
    for (int r = 0; r < rows; ++r) {
      const int count = 1 + static_cast<int>(rng.below(std::min<std::uint64_t>(4, offer.gpus.size())));
      const std::vector<GpuIndex> gpus = testing::random_bundle(rng, offer.gpus, count);
      bid.rows.push_back({gpus, bid.rho_no_new * (0.1 + 1.1 * rng.uniform()), static_cast<ShapeScope>(rng.below(5))});
    }
    bids.push_back(std::move(bid));
  }
  return bids;
}

// Whether `gpus` realizes bidder b's row r of the shape problem.
bool realizes(const ShapeProblem& problem, std::size_t b, std::size_t r, const std::vector<GpuIndex>& gpus) {
  int total = 0;
  for (const ShapeDemand& d : problem.demands[b][r]) {
    const auto& group = problem.groups[static_cast<std::size_t>(d.group)].gpus;
    const auto inside = std::count_if(gpus.begin(), gpus.end(),
                                      [&](GpuIndex g) { return std::binary_search(group.begin(), group.end(), g); });
    if (inside != d.count) return false;
    total += d.count;
  }
  return total == static_cast<int>(gpus.size());
}

// The layered search alone on shape problems (capacitated items), with everybody and without each bidder.
TEST(ShapeBruteForce, LayeredSearchMatchesExhaustiveSearch) {
  const Cluster cluster = shape_cluster();
  Rng rng(20261126);
  int improved = 0, refused = 0, capacitated = 0;
  for (int instance = 0; instance < 1000; ++instance) {
    const Offer offer = random_offer(rng, instance, 10);
    const ShapeProblem shaped = make_shape_problem(cluster, offer, random_shape_bids(rng, offer, 5, 6), 64);
    capacitated += shaped.packing.capacitated() ? 1 : 0;
    SCOPED_TRACE("instance " + std::to_string(instance));
    testing::expect_layered_search_exact(shaped.packing, improved, refused);
  }
  std::printf("layered search on shapes: %d solves beat nothing, %d refused (counts over 64 bits)\n", improved, refused);
  EXPECT_GT(improved, 1000);
  EXPECT_GT(capacitated, 500);
}

// `bounds_without`, where given, counts the PF solves that gave bounds without each bidder (PackingSolution::
// bound_without), each checked against the exhaustive search.
void check_shapes(WinnerSolver& solver, std::int64_t small_search_nodes = 0, int* bounds_without = nullptr) {
  const Cluster cluster = shape_cluster();
  Rng rng(20261125);
  int with_winners = 0, with_payment = 0, capacitated = 0;
  for (int instance = 0; instance < 1000; ++instance) {
    const Offer offer = random_offer(rng, instance, 10);
    const std::vector<Bid> bids = random_shape_bids(rng, offer, 5, 6);
    const ShapeProblem shaped = make_shape_problem(cluster, offer, bids, 64);
    const PackingProblem& problem = shaped.packing;
    capacitated += problem.capacitated() ? 1 : 0;
    const testing::BruteForceResult expected = testing::brute_force(problem);
    const std::vector<double> expected_c = testing::brute_force_c(problem);

    const PartialAllocation got = partial_allocation(problem, solver, AuctionLimits{0, 0, small_search_nodes});
    SCOPED_TRACE("instance " + std::to_string(instance));
    if (small_search_nodes > 0) {
      EXPECT_EQ(got.small_searches, got.solves);
    }
    ASSERT_TRUE(packing_feasible(problem, got.pf.choice));
    EXPECT_TRUE(got.proven_optimal);
    EXPECT_EQ(got.gap, 0.0);
    EXPECT_NEAR(got.pf.value, expected.value, 1e-7);
    ASSERT_EQ(got.pf.choice, expected.choice);
    for (std::size_t i = 0; i < expected_c.size(); ++i) EXPECT_NEAR(got.c[i], expected_c[i], 1e-7) << "bidder " << i;
    if (!got.pf.bound_without.empty()) {
      if (bounds_without != nullptr) ++*bounds_without;
      ASSERT_EQ(got.pf.bound_without.size(), problem.bidders.size());
      for (std::size_t b = 0; b < problem.bidders.size(); ++b) {
        EXPECT_GE(got.pf.bound_without[b], testing::brute_force(problem, static_cast<int>(b)).value - 1e-7) << "bidder " << b;
        EXPECT_LE(got.pf.bound_without[b], got.pf.bound + 1e-12) << "bidder " << b;
      }
    }

    std::vector<std::vector<GpuIndex>> named(bids.size());
    for (std::size_t b = 0; b < bids.size(); ++b)
      if (got.pf.choice[b] >= 0)
        named[b] = bids[b].rows[static_cast<std::size_t>(problem.bidders[b].rows[static_cast<std::size_t>(got.pf.choice[b])].source_row)].gpus;
    const auto bundles = assign_shapes(cluster, shaped, got.pf.choice, named);
    std::set<GpuIndex> used;
    Rng unused(1);
    std::set<GpuIndex> leftover(offer.gpus.begin(), offer.gpus.end()), expected_leftover = leftover;
    int winners = 0;
    for (std::size_t b = 0; b < bids.size(); ++b) {
      if (got.pf.choice[b] < 0) {
        EXPECT_TRUE(bundles[b].empty());
        continue;
      }
      ++winners;
      ++with_winners;
      EXPECT_TRUE(realizes(shaped, b, static_cast<std::size_t>(got.pf.choice[b]), bundles[b])) << "bidder " << b;
      for (GpuIndex g : bundles[b]) {
        EXPECT_TRUE(used.insert(g).second) << "GPU " << g << " twice";
        EXPECT_TRUE(std::binary_search(offer.gpus.begin(), offer.gpus.end(), g));
      }
      const auto kept = kept_gpus(cluster, bundles[b], got.c[b], RoundingRule::kNearest, unused);
      const int expected_count = nearest_kept_count(expected_c[b], static_cast<int>(bundles[b].size()));
      EXPECT_EQ(static_cast<int>(kept.size()), expected_count);
      if (expected_count < static_cast<int>(bundles[b].size())) ++with_payment;
      for (GpuIndex g : kept) leftover.erase(g);
      for (GpuIndex g : kept_gpus(cluster, bundles[b], expected_c[b], RoundingRule::kNearest, unused))
        expected_leftover.erase(g);
    }
    EXPECT_EQ(leftover, expected_leftover);
    if (winners == 1) {  // alone, a winner gets exactly the GPUs it named
      for (std::size_t b = 0; b < bids.size(); ++b) {
        if (got.pf.choice[b] >= 0) {
          EXPECT_EQ(bundles[b], named[b]);
        }
      }
    }
  }
  EXPECT_GT(with_winners, 1000);
  EXPECT_GT(with_payment, 100);
  EXPECT_GT(capacitated, 500);
}

TEST(ShapeBruteForce, ShapeSolverMatchesExhaustiveSearch) {
  ShapeSolver solver;
  check_shapes(solver);
}

// LP bounds from the first node on, at every node the Lagrangian bound does not cut (the default turns to them
// only in solves of 5,000 nodes and more, which instances this small never reach), and with them the rack
// decomposition: its packing where it settles a solve, its bound at the nodes otherwise.
TEST(ShapeBruteForce, ShapeSolverWithLpBoundsMatchesExhaustiveSearch) {
  ShapeSolver solver(ShapeSolver::kDefaultNodeSteps, 1, -std::numeric_limits<double>::infinity());
  int bounds_without = 0;
  check_shapes(solver, 0, &bounds_without);
  EXPECT_GT(bounds_without, 100);  // the rack decomposition's bounds without each bidder, checked
}

// The same without the rack decomposition.
TEST(ShapeBruteForce, ShapeSolverWithLpBoundsAndNoRacksMatchesExhaustiveSearch) {
  ShapeSolver solver(ShapeSolver::kDefaultNodeSteps, 1, -std::numeric_limits<double>::infinity(), false);
  check_shapes(solver);
}

TEST(ShapeBruteForce, SmallSearchMatchesExhaustiveSearchOnShapes) {
  CbcSolver solver;  // never called: every solve is small enough for the depth-first search
  check_shapes(solver, 1'000'000);
}

TEST(ShapeBruteForce, CbcMatchesExhaustiveSearchOnShapes) {
  CbcSolver solver;
  check_shapes(solver);
}

// The capacities model the shapes exactly: the shape optimum is the best packing of concrete bundles
// when every realization of every shape is a row of its own (small instances: that blows up).
TEST(ShapeBruteForce, ShapeOptimumEqualsBestPackingOfRealizations) {
  const Cluster cluster = shape_cluster();
  Rng rng(7);
  for (int instance = 0; instance < 300; ++instance) {
    const Offer offer = random_offer(rng, instance, 6);
    const std::vector<Bid> bids = random_shape_bids(rng, offer, 3, 3);
    const ShapeProblem shaped = make_shape_problem(cluster, offer, bids, 64);
    PackingProblem expanded{static_cast<int>(offer.gpus.size()), {}, {}, {}};
    for (std::size_t b = 0; b < bids.size(); ++b) {
      PackingBidder bidder{bids[b].app, {}};
      for (std::size_t r = 0; r < shaped.packing.bidders[b].rows.size(); ++r) {
        for (unsigned mask = 1; mask < (1u << offer.gpus.size()); ++mask) {
          std::vector<GpuIndex> gpus;
          std::vector<int> items;
          for (std::size_t i = 0; i < offer.gpus.size(); ++i)
            if ((mask >> i) & 1u) {
              gpus.push_back(offer.gpus[i]);
              items.push_back(static_cast<int>(i));
            }
          if (realizes(shaped, b, r, gpus))
            bidder.rows.push_back({static_cast<int>(r), shaped.packing.bidders[b].rows[r].gain, items});
        }
      }
      expanded.bidders.push_back(std::move(bidder));
    }
    SCOPED_TRACE("instance " + std::to_string(instance));
    EXPECT_NEAR(testing::brute_force(shaped.packing).value, testing::brute_force(expanded).value, 1e-9);
    for (std::size_t i = 0; i < bids.size(); ++i)
      EXPECT_NEAR(testing::brute_force(shaped.packing, static_cast<int>(i)).value,
                  testing::brute_force(expanded, static_cast<int>(i)).value, 1e-9);
  }
}

}  // namespace
}  // namespace themis::arbiter
