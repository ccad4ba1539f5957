// The nodes' dense dual simplex (dense_dual_lp.h) against CLP on random packing LPs: cold, then re-solved warm
// through the changes a search makes between nodes (columns closed and reopened, capacities lowered and restored),
// and from copies. Every solve is checked for a feasible x, duals at least 0, and strong duality: Σ y·b plus each
// column's upper bound times its reduced gain where positive equals the objective, which CLP's objective matches. Then
// PackingLp's hand-over to CLP (a larger LP, a bound the dense solver does not take), and the item minimums and new
// gains of the displacement checks against CLP.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "policy/arbiter/deadline.h"
#include "policy/arbiter/dense_dual_lp.h"
#include "policy/arbiter/packing_lp.h"
#include "random_packing.h"

namespace themis::arbiter {
namespace {

constexpr double kClose = 1e-7;

struct Setting {
  std::vector<double> upper;  // per column, 0 or 1
  std::vector<int> capacity;  // per item
};

double clp_objective(const RandomPacking& p, const Setting& setting) {
  std::vector<LpColumn> columns;
  for (std::size_t c = 0; c < p.gain.size(); ++c) columns.push_back({p.bidder[c], p.gain[c], &p.units[c]});
  PackingLp lp(p.items, p.bidders, columns, setting.capacity, PackingLp::Engine::clp);
  for (std::size_t c = 0; c < columns.size(); ++c) lp.set_bounds(static_cast<int>(c), 0, setting.upper[c]);
  EXPECT_TRUE(lp.solve(0));
  double total = 0;
  for (std::size_t c = 0; c < columns.size(); ++c) total += lp.x()[c] * p.gain[c];
  return total;
}

std::vector<double> rhs_of(const RandomPacking& p, const Setting& setting) {
  std::vector<double> rhs(static_cast<std::size_t>(p.bidders), 1.0);
  rhs.insert(rhs.end(), setting.capacity.begin(), setting.capacity.end());
  return rhs;
}

// The bound the duals of `lp`'s last basis prove (clamped at 0): Σ y·b plus each open column's reduced gain where
// positive.
double dual_bound(const DenseDualLp& lp, const RandomPacking& p, const Setting& setting) {
  const std::vector<double> rhs = rhs_of(p, setting);
  double bound = 0;
  for (std::size_t r = 0; r < rhs.size(); ++r) bound += std::max(0.0, lp.duals()[r]) * rhs[r];
  for (std::size_t c = 0; c < p.gain.size(); ++c) {
    double reduced = p.gain[c];
    for (const auto& [row, value] : p.entries(c)) reduced -= std::max(0.0, lp.duals()[static_cast<std::size_t>(row)]) * value;
    bound += setting.upper[c] * std::max(0.0, reduced);
  }
  return bound;
}

// Solves `lp` and checks it against CLP on the same setting.
void expect_optimal(DenseDualLp& lp, const RandomPacking& p, const Setting& setting) {
  ASSERT_EQ(lp.solve(Deadline(0)), DenseDualLp::Status::optimal);
  const std::vector<double> rhs = rhs_of(p, setting);
  double objective = 0;
  std::vector<double> used(rhs.size(), 0.0);
  for (std::size_t r = 0; r < rhs.size(); ++r) EXPECT_GE(lp.duals()[r], -1e-9) << "row " << r;
  for (std::size_t c = 0; c < p.gain.size(); ++c) {
    const double x = lp.x()[c];
    EXPECT_GE(x, -1e-9);
    EXPECT_LE(x, setting.upper[c] + 1e-9);
    objective += p.gain[c] * x;
    for (const auto& [row, value] : p.entries(c)) used[static_cast<std::size_t>(row)] += value * x;
  }
  for (std::size_t r = 0; r < rhs.size(); ++r) EXPECT_LE(used[r], rhs[r] + 1e-9) << "row " << r;
  EXPECT_NEAR(dual_bound(lp, p, setting), objective, kClose);
  EXPECT_NEAR(objective, clp_objective(p, setting), kClose);
}

void apply(DenseDualLp& lp, const Setting& setting) {
  for (std::size_t c = 0; c < setting.upper.size(); ++c) lp.set_upper(static_cast<int>(c), setting.upper[c]);
  for (std::size_t i = 0; i < setting.capacity.size(); ++i) lp.set_capacity(static_cast<int>(i), setting.capacity[i]);
}

// What a search's next node looks like: some bidders' columns closed (placed higher up, or left out), some columns
// that no longer fit closed, capacities down by what the path took; now and then back to the root's.
Setting next_node(std::mt19937& rng, const RandomPacking& p) {
  Setting s{std::vector<double>(p.gain.size(), 1.0), p.capacity};
  if (std::bernoulli_distribution(0.15)(rng)) return s;
  const int depth = std::uniform_int_distribution<int>(0, p.bidders)(rng);
  for (std::size_t c = 0; c < p.gain.size(); ++c)
    if (p.bidder[c] < depth || std::bernoulli_distribution(0.2)(rng)) s.upper[c] = 0;
  for (int& capacity : s.capacity) capacity = std::uniform_int_distribution<int>(0, capacity)(rng);
  return s;
}

std::vector<LpColumn> columns_of(const RandomPacking& p) {
  std::vector<LpColumn> columns;
  for (std::size_t c = 0; c < p.gain.size(); ++c) columns.push_back({p.bidder[c], p.gain[c], &p.units[c]});
  return columns;
}

// `instances` random LPs of 40 bidders and 60 items (with distinct gains on every other one where asked), each solved
// at its root and checked, then taken through 20 nodes of a search: at each, `at_node(lp, p, setting)` applies the
// node's setting and solves.
template <class AtNode>
void walk_nodes(std::mt19937& rng, int instances, bool distinct_gains, AtNode at_node) {
  for (int instance = 0; instance < instances; ++instance) {
    SCOPED_TRACE(instance);
    RandomPacking p = random_packing(rng, 40, 60);
    if (distinct_gains && instance % 2 == 1)  // distinct gains as well as the few tied values random_packing draws
      for (double& gain : p.gain) gain = std::uniform_real_distribution<double>(0.01, 3.0)(rng);
    const std::vector<LpColumn> columns = columns_of(p);
    DenseDualLp lp(p.items, p.bidders, columns, p.capacity);
    expect_optimal(lp, p, {std::vector<double>(p.gain.size(), 1.0), p.capacity});
    for (int node = 0; node < 20; ++node) {
      SCOPED_TRACE(node);
      at_node(lp, p, next_node(rng, p));
    }
  }
}

TEST(DenseDualLp, MatchesClpColdAndThroughASearchsChanges) {
  std::mt19937 rng(20261207);
  walk_nodes(rng, 200, true, [](DenseDualLp& lp, const RandomPacking& p, const Setting& setting) {
    apply(lp, setting);
    expect_optimal(lp, p, setting);
  });
}

TEST(DenseDualLp, ACopyResolvesFromTheSameBasisOnItsOwn) {
  std::mt19937 rng(5);
  for (int instance = 0; instance < 50; ++instance) {
    SCOPED_TRACE(instance);
    const RandomPacking p = random_packing(rng, 30, 40);
    const std::vector<LpColumn> columns = columns_of(p);
    DenseDualLp lp(p.items, p.bidders, columns, p.capacity);
    const Setting root{std::vector<double>(p.gain.size(), 1.0), p.capacity};
    expect_optimal(lp, p, root);
    DenseDualLp copy = lp;
    const Setting setting = next_node(rng, p);
    apply(copy, setting);
    expect_optimal(copy, p, setting);
    expect_optimal(lp, p, root);  // untouched by the copy's changes
    apply(lp, setting);
    expect_optimal(lp, p, setting);
    EXPECT_EQ(lp.x(), copy.x());  // the same basis and the same changes: the same steps
  }
}

// A column closed while basic at a fractional value, and every column closed: the basis stays dual feasible.
TEST(DenseDualLp, ClosingEveryColumnLeavesZero) {
  std::mt19937 rng(9);
  const RandomPacking p = random_packing(rng, 10, 10);
  const std::vector<LpColumn> columns = columns_of(p);
  DenseDualLp lp(p.items, p.bidders, columns, p.capacity);
  expect_optimal(lp, p, {std::vector<double>(p.gain.size(), 1.0), p.capacity});
  const Setting closed{std::vector<double>(p.gain.size(), 0.0), p.capacity};
  apply(lp, closed);
  expect_optimal(lp, p, closed);
  for (const double x : lp.x()) EXPECT_EQ(x, 0.0);
}

// More than kMaxRows rows: PackingLp takes CLP, with the same answer as CLP by itself.
TEST(DenseDualLp, PackingLpHandsALargeLpToClp) {
  std::mt19937 rng(13);
  RandomPacking p;
  do p = random_packing(rng, 200, 200);
  while (p.bidders + p.items <= DenseDualLp::kMaxRows);
  const std::vector<LpColumn> columns = columns_of(p);
  PackingLp lp(p.items, p.bidders, columns, p.capacity);
  ASSERT_TRUE(lp.solve(0));
  double total = 0;
  for (std::size_t c = 0; c < columns.size(); ++c) total += lp.x()[c] * p.gain[c];
  EXPECT_NEAR(total, clp_objective(p, {std::vector<double>(p.gain.size(), 1.0), p.capacity}), kClose);
}

// A bound PackingLp's dense engine does not take (a lower bound above 0) hands the LP to CLP with the bounds and
// capacities set so far, as a failed dense solve does: the answer is CLP's on the LP with all of them.
TEST(DenseDualLp, PackingLpHandsItsLpToClpWithTheBoundsSetSoFar) {
  std::mt19937 rng(17);
  int compared = 0;
  for (int instance = 0; instance < 30; ++instance) {
    SCOPED_TRACE(instance);
    const RandomPacking p = random_packing(rng, 20, 30);
    const std::vector<LpColumn> columns = columns_of(p);
    PackingLp dense(p.items, p.bidders, columns, p.capacity);
    PackingLp clp(p.items, p.bidders, columns, p.capacity, PackingLp::Engine::clp);
    const Setting setting = next_node(rng, p);
    for (PackingLp* lp : {&dense, &clp}) {
      ASSERT_TRUE(lp->solve(0));
      for (std::size_t c = 0; c < columns.size(); ++c) lp->set_bounds(static_cast<int>(c), 0, setting.upper[c]);
      for (std::size_t i = 0; i < setting.capacity.size(); ++i) lp->set_capacity(static_cast<int>(i), setting.capacity[i]);
      ASSERT_TRUE(lp->solve(0));
    }
    // Column 0 forced to at least a half where it is open and its units fit.
    std::size_t c = 0;
    while (c < columns.size() && setting.upper[c] == 0) ++c;
    if (c == columns.size()) continue;
    std::vector<int> left = setting.capacity;
    bool fits = true;
    for (int item : p.units[c]) fits = fits && --left[static_cast<std::size_t>(item)] >= 0;
    if (!fits) continue;
    double values[2];
    int k = 0;
    for (PackingLp* lp : {&dense, &clp}) {
      lp->set_bounds(static_cast<int>(c), 0.5, 1);
      ASSERT_TRUE(lp->solve(0));
      EXPECT_GE(lp->x()[c], 0.5 - 1e-9);
      double total = 0;
      for (std::size_t d = 0; d < columns.size(); ++d) total += lp->x()[d] * p.gain[d];
      values[k++] = total;
    }
    EXPECT_NEAR(values[0], values[1], kClose);
    ++compared;
  }
  EXPECT_GE(compared, 10);
}

// A solve with a cutoff stops, if at all, at a basis whose bound (Σ y·b plus each open column's reduced gain where
// positive, from its duals) lies between the LP's optimum and the cutoff; the next solve goes on from that basis to the
// optimum. Cutoffs below the optimum (a node the search prunes) and above it (one it does not, unless the bound falls
// below the cutoff first).
TEST(DenseDualLp, ACutoffStopsAtABoundBetweenTheOptimumAndIt) {
  std::mt19937 rng(31);
  int cut = 0, solved = 0;
  walk_nodes(rng, 100, false, [&](DenseDualLp& lp, const RandomPacking& p, const Setting& setting) {
    const double optimum = clp_objective(p, setting);
    const double cutoff = optimum * std::uniform_real_distribution<double>(0.8, 1.1)(rng);
    apply(lp, setting);
    const DenseDualLp::Status status = lp.solve(Deadline(0), cutoff);
    ASSERT_TRUE(status == DenseDualLp::Status::optimal || status == DenseDualLp::Status::cut_off);
    const double bound = dual_bound(lp, p, setting);
    EXPECT_GE(bound, optimum - kClose);
    if (status == DenseDualLp::Status::cut_off) {
      ++cut;
      EXPECT_LE(bound, cutoff + kClose);
      expect_optimal(lp, p, setting);
    } else {
      ++solved;
    }
  });
  EXPECT_GE(cut, 200);
  EXPECT_GE(solved, 200);
}

// The displacement checks' steps (displacement.h) on copies of one solved LP: a least use of an item, then the gains
// turned into that item's units (the LP that maximises its use), then the gains back and the minimum gone. The dense
// engine must agree with CLP at every step: the same objective where both solve it, infeasible where CLP proves it so;
// the last step must give the plain LP's objective again. Where it is infeasible, the dense engine's dual ray proves it.
TEST(DenseDualLp, ItemMinimumsAndNewGainsAsClpSolvesThem) {
  std::mt19937 rng(29);
  int infeasible = 0, feasible = 0;
  const auto objective = [](const PackingLp& lp, const std::vector<double>& gains) {
    double total = 0;
    for (std::size_t c = 0; c < gains.size(); ++c) total += lp.x()[c] * gains[c];
    return total;
  };
  for (int instance = 0; instance < 150; ++instance) {
    SCOPED_TRACE(instance);
    const RandomPacking p = random_packing(rng, 20, 30);
    const std::vector<LpColumn> columns = columns_of(p);
    PackingLp dense_root(p.items, p.bidders, columns, p.capacity);
    PackingLp clp_root(p.items, p.bidders, columns, p.capacity, PackingLp::Engine::clp);
    ASSERT_TRUE(dense_root.solve(0));
    ASSERT_TRUE(clp_root.solve(0));
    const double plain = objective(clp_root, p.gain);
    for (int check = 0; check < 4; ++check) {
      SCOPED_TRACE(check);
      const std::unique_ptr<PackingLp> dense = dense_root.clone();
      const std::unique_ptr<PackingLp> clp = clp_root.clone();
      const int item = std::uniform_int_distribution<int>(0, p.items - 1)(rng);
      const int least = std::uniform_int_distribution<int>(1, p.capacity[static_cast<std::size_t>(item)])(rng);
      const int closed = std::uniform_int_distribution<int>(0, p.bidders - 1)(rng);  // a bidder left out, as a winner is
      for (std::size_t c = 0; c < columns.size(); ++c)
        if (p.bidder[c] == closed) {
          dense->set_bounds(static_cast<int>(c), 0, 0);
          clp->set_bounds(static_cast<int>(c), 0, 0);
        }
      dense->set_item_minimum(item, least);
      clp->set_item_minimum(item, least);
      const bool clp_solved = clp->solve(0);
      const bool dense_solved = dense->solve(0);
      ASSERT_EQ(dense_solved, clp_solved);
      if (clp_solved) {
        ++feasible;
        EXPECT_NEAR(objective(*dense, p.gain), objective(*clp, p.gain), kClose);
        double use = 0;
        for (std::size_t c = 0; c < columns.size(); ++c)
          use += dense->x()[c] * static_cast<double>(std::count(p.units[c].begin(), p.units[c].end(), item));
        EXPECT_GE(use, least - 1e-9);
      } else {
        ++infeasible;
        ASSERT_TRUE(clp->proven_infeasible());
        EXPECT_TRUE(dense->proven_infeasible());
        // Its dual ray proves it: along it the Lagrangian bound on Σ gain·x over the x with the least use falls below
        // 0, which any such x would reach (every gain is positive).
        std::vector<double> duals, ray;
        dense->item_duals(duals);
        ASSERT_TRUE(dense->item_ray(ray));
        ASSERT_EQ(ray.size(), duals.size());
        double lowest = std::numeric_limits<double>::infinity();
        for (double t = 1; t <= 1e12; t *= 8) {
          std::vector<double> lambda(duals.size());
          for (std::size_t i = 0; i < duals.size(); ++i) lambda[i] = std::max(0.0, duals[i] + t * ray[i]);
          const auto g = static_cast<std::size_t>(item);
          const double mu = std::max(0.0, -(duals[g] + t * ray[g]));
          double bound = -mu * least;
          for (std::size_t i = 0; i < lambda.size(); ++i) bound += lambda[i] * p.capacity[i];
          std::vector<double> best(static_cast<std::size_t>(p.bidders), 0.0);
          for (std::size_t c = 0; c < columns.size(); ++c) {
            if (p.bidder[c] == closed) continue;
            double reduced = p.gain[c];
            for (int unit : p.units[c]) reduced -= lambda[static_cast<std::size_t>(unit)] - (unit == item ? mu : 0.0);
            best[static_cast<std::size_t>(p.bidder[c])] = std::max(best[static_cast<std::size_t>(p.bidder[c])], reduced);
          }
          for (const double b : best) bound += b;
          lowest = std::min(lowest, bound);
        }
        EXPECT_LT(lowest, 0.0);
      }
      // The most of the item the others can use, without the minimum.
      std::vector<double> units(columns.size());
      for (std::size_t c = 0; c < columns.size(); ++c)
        units[c] = static_cast<double>(std::count(p.units[c].begin(), p.units[c].end(), item));
      for (PackingLp* lp : {dense.get(), clp.get()}) {
        lp->set_item_minimum(item, -std::numeric_limits<double>::infinity());
        for (std::size_t c = 0; c < columns.size(); ++c) lp->set_gain(static_cast<int>(c), units[c]);
        ASSERT_TRUE(lp->solve(0));
      }
      const double most = objective(*clp, units);
      EXPECT_NEAR(objective(*dense, units), most, kClose);
      EXPECT_EQ(clp_solved, most >= least - 1e-9);
      for (PackingLp* lp : {dense.get(), clp.get()}) {
        for (std::size_t c = 0; c < columns.size(); ++c) lp->set_gain(static_cast<int>(c), p.gain[c]);
        for (std::size_t c = 0; c < columns.size(); ++c)
          if (p.bidder[c] == closed) lp->set_bounds(static_cast<int>(c), 0, 1);
        ASSERT_TRUE(lp->solve(0));
      }
      EXPECT_NEAR(objective(*dense, p.gain), plain, kClose);
      EXPECT_NEAR(objective(*clp, p.gain), plain, kClose);
    }
  }
  EXPECT_GE(infeasible, 50);
  EXPECT_GE(feasible, 200);
}

}  // namespace
}  // namespace themis::arbiter
