// The packing LP with capacities (packing_lp.h): units per row, a capacity per item, warm re-solves after
// bound and capacity changes, and copies that re-solve from the same basis; every figure is worked by hand. Each test
// runs on both engines: the dense dual simplex (dense_dual_lp.h) and CLP.
#include <gtest/gtest.h>

#include <vector>

#include "policy/arbiter/packing_lp.h"

namespace themis::arbiter {
namespace {

// One item of 8 units. Bidder 0: 6 units for gain 1; bidder 1: 4 units for gain 1, or 2 units for 0.4.
// LP: x1 = 1 (4 units), x0 = 4/6 (the rest): 1 + 2/3; the item's dual is 1/6 (a unit is worth that to
// bidder 0, the marginal one), and at it the Lagrangian bound 8/6 + max(0, 1 − 6/6) + max(0, 1 − 4/6,
// 0.4 − 2/6) equals the LP bound.
struct Fixture {
  std::vector<int> six{0, 0, 0, 0, 0, 0}, four{0, 0, 0, 0}, two{0, 0};
  std::vector<LpColumn> columns{{0, 1.0, &six}, {1, 1.0, &four}, {1, 0.4, &two}};
  std::vector<int> capacity{8};
};

class PackingLpOnBothEngines : public testing::TestWithParam<PackingLp::Engine> {};

double value(const PackingLp& lp, const std::vector<LpColumn>& columns) {
  double total = 0;
  for (std::size_t c = 0; c < columns.size(); ++c) total += lp.x()[c] * columns[c].gain;
  return total;
}

TEST_P(PackingLpOnBothEngines, RowsTakeUnitsOfCapacitatedItems) {
  Fixture f;
  PackingLp lp(1, 2, f.columns, f.capacity, GetParam());
  ASSERT_TRUE(lp.solve(0));
  EXPECT_NEAR(value(lp, f.columns), 1.0 + 2.0 / 3.0, 1e-9);
  EXPECT_NEAR(lp.x()[0], 2.0 / 3.0, 1e-9);
  EXPECT_NEAR(lp.x()[1], 1.0, 1e-9);
  EXPECT_NEAR(lp.x()[2], 0.0, 1e-9);
  std::vector<double> prices;
  lp.item_prices(prices);
  ASSERT_EQ(prices.size(), 1u);
  EXPECT_NEAR(prices[0], 1.0 / 6.0, 1e-9);
}

TEST_P(PackingLpOnBothEngines, ResolvesAfterCapacityAndBoundChanges) {
  Fixture f;
  PackingLp lp(1, 2, f.columns, f.capacity, GetParam());
  ASSERT_TRUE(lp.solve(0));
  // 6 units: bidder 0 alone fills it (1), or bidder 1's 4 and a third of bidder 0 (1 + 1/3): the latter.
  lp.set_capacity(0, 6);
  ASSERT_TRUE(lp.solve(0));
  EXPECT_NEAR(value(lp, f.columns), 1.0 + 1.0 / 3.0, 1e-9);
  // Bidder 1 may not take 4: its 2-unit row (0.4) and 4 units of bidder 0 (2/3).
  lp.set_bounds(1, 0, 0);
  ASSERT_TRUE(lp.solve(0));
  EXPECT_NEAR(value(lp, f.columns), 0.4 + 2.0 / 3.0, 1e-9);
  // Back to the start: the first answer again.
  lp.set_bounds(1, 0, 1);
  lp.set_capacity(0, 8);
  ASSERT_TRUE(lp.solve(0));
  EXPECT_NEAR(value(lp, f.columns), 1.0 + 2.0 / 3.0, 1e-9);
}

TEST_P(PackingLpOnBothEngines, CopyKeepsBoundsAndSolvesOnItsOwn) {
  Fixture f;
  PackingLp lp(1, 2, f.columns, f.capacity, GetParam());
  ASSERT_TRUE(lp.solve(0));
  lp.set_bounds(0, 0, 0);
  const auto copy = lp.clone();
  ASSERT_TRUE(copy->solve(0));
  EXPECT_NEAR(value(*copy, f.columns), 1.0, 1e-9);  // bidder 0 left out: bidder 1's 4 units
  copy->set_bounds(0, 0, 1);
  ASSERT_TRUE(copy->solve(0));
  EXPECT_NEAR(value(*copy, f.columns), 1.0 + 2.0 / 3.0, 1e-9);
  ASSERT_TRUE(lp.solve(0));  // the original keeps its own bound
  EXPECT_NEAR(value(lp, f.columns), 1.0, 1e-9);
}

TEST_P(PackingLpOnBothEngines, UnitItemsWithoutCapacities) {
  // Items 0 and 1 of one unit each: {0} for 1, {0, 1} for 1.5, {1} for 1 (another bidder): 2.
  std::vector<int> a{0}, ab{0, 1}, b{1};
  std::vector<LpColumn> columns{{0, 1.0, &a}, {0, 1.5, &ab}, {1, 1.0, &b}};
  PackingLp lp(2, 2, columns, {}, GetParam());
  ASSERT_TRUE(lp.solve(0));
  EXPECT_NEAR(value(lp, columns), 2.0, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Engines, PackingLpOnBothEngines,
                         testing::Values(PackingLp::Engine::automatic, PackingLp::Engine::clp),
                         [](const testing::TestParamInfo<PackingLp::Engine>& engine) {
                           return engine.param == PackingLp::Engine::clp ? "Clp" : "Dense";
                         });

}  // namespace
}  // namespace themis::arbiter
