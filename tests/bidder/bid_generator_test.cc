#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "bidder/bid_generator.h"
#include "bidder/bid_validation.h"
#include "core/cluster_presets.h"
#include "core/rng.h"

namespace themis::bidder {
namespace {

Cluster preset(const char* name) { return Cluster(*cluster_preset(name)); }

// A valuation whose value encodes its arguments, so a row's ρ tells which (count, placement) it used.
double encoded(int gpus, Locality where) { return 1.0 / gpus + 10.0 * (static_cast<int>(where) + 1); }

std::vector<GpuIndex> joined(std::vector<GpuIndex> a, const std::vector<GpuIndex>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  return a;
}

// Random offer and held GPUs (disjoint) over `cluster`.
void random_case(const Cluster& cluster, Rng& rng, int offer_size, int held_size, Offer& offer,
                 std::vector<GpuIndex>& held) {
  std::vector<GpuIndex> all(static_cast<std::size_t>(cluster.size()));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<GpuIndex>(i);
  for (std::size_t i = all.size() - 1; i > 0; --i) std::swap(all[i], all[rng.below(i + 1)]);
  offer.gpus.assign(all.begin(), all.begin() + offer_size);
  std::sort(offer.gpus.begin(), offer.gpus.end());
  held.assign(all.begin() + offer_size, all.begin() + offer_size + held_size);
}

// The best placement any k-subset of the offer can reach with `held`, by brute force.
Locality best_possible(const Cluster& c, const std::vector<GpuIndex>& offer, const std::vector<GpuIndex>& held,
                       int k) {
  Locality best = Locality::kCrossRack;
  const int n = static_cast<int>(offer.size());
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    if (__builtin_popcount(mask) != k) continue;
    std::vector<GpuIndex> bundle = held;
    for (int i = 0; i < n; ++i)
      if (mask & (1u << i)) bundle.push_back(offer[static_cast<std::size_t>(i)]);
    best = std::min(best, c.locality(bundle));
  }
  return best;
}

TEST(BidCounts, DenseThenPowersOfTwoThenDemand) {
  const BidSettings s;
  EXPECT_EQ(bid_counts(0, s), std::vector<int>{});
  EXPECT_EQ(bid_counts(5, s), (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_EQ(bid_counts(12, s), (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 12}));
  EXPECT_EQ(bid_counts(1024, s),
            (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64, 128, 256, 512, 1024}));
  const std::vector<int> thin = bid_counts(1024, {.max_rows = 4});
  EXPECT_EQ(thin.size(), 4u);
  EXPECT_EQ(thin.front(), 1);
  EXPECT_EQ(thin.back(), 1024);
  EXPECT_EQ(bid_counts(1024, {.max_rows = 1}), std::vector<int>{1024});
}

TEST(BidGenerator, RowsAreValidBoundedAndPricedAtTheirTruePlacementOnPresets) {
  Rng rng(42);
  for (const std::string& name : cluster_preset_names()) {
    const Cluster cluster = preset(name.c_str());
    for (int trial = 0; trial < 60; ++trial) {
      Offer offer{trial, {}};
      std::vector<GpuIndex> held;
      const int offer_size = 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(cluster.size() - 8)));
      random_case(cluster, rng, offer_size, static_cast<int>(rng.below(5)), offer, held);
      const int demand = 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(cluster.size())));
      const BidSettings settings{.max_rows = 1 + static_cast<int>(rng.below(40))};
      const Bid bid = generate_bid(cluster, offer, {.app = 3, .held = held, .remaining_demand = demand, .rho_no_new = 2},
                                   encoded, settings);
      SCOPED_TRACE(name + " trial " + std::to_string(trial));
      EXPECT_EQ(bid_problem(bid, offer), "");
      EXPECT_LE(static_cast<int>(bid.rows.size()), settings.max_rows);
      EXPECT_FALSE(bid.rows.empty());
      const int max_count = std::min(demand, offer_size);
      std::map<int, Locality> first_of_count;
      for (const BidRow& row : bid.rows) {
        const int k = static_cast<int>(row.gpus.size());
        EXPECT_LE(k, max_count);
        const Locality where = cluster.locality(joined(row.gpus, held));
        EXPECT_DOUBLE_EQ(row.rho, encoded(static_cast<int>(held.size()) + k, where));
        auto [it, first] = first_of_count.try_emplace(k, where);
        if (!first) {
          EXPECT_LE(it->second, where) << "a later row of count " << k << " is better placed";
        }
      }
      EXPECT_TRUE(first_of_count.count(max_count) || static_cast<int>(first_of_count.size()) == settings.max_rows);
    }
  }
}

TEST(BidGenerator, BestRowOfEachCountMatchesBruteForceOnSmallOffers) {
  Rng rng(7);
  const Cluster cluster = preset("paper-testbed-64");
  for (int trial = 0; trial < 200; ++trial) {
    Offer offer{trial, {}};
    std::vector<GpuIndex> held;
    random_case(cluster, rng, 1 + static_cast<int>(rng.below(12)), static_cast<int>(rng.below(3)), offer, held);
    const int offered = static_cast<int>(offer.gpus.size());
    const Bid bid = generate_bid(cluster, offer, {.app = 1, .held = held, .remaining_demand = offered, .rho_no_new = 5},
                                 encoded, {.max_rows = 64, .dense_counts = 64});
    std::map<int, Locality> best_row;
    for (const BidRow& row : bid.rows)
      best_row.try_emplace(static_cast<int>(row.gpus.size()), cluster.locality(joined(row.gpus, held)));
    for (int k = 1; k <= offered; ++k) {
      ASSERT_TRUE(best_row.count(k)) << "trial " << trial << " count " << k;
      EXPECT_EQ(best_row[k], best_possible(cluster, offer.gpus, held, k)) << "trial " << trial << " count " << k;
    }
  }
}

TEST(BidGenerator, PrefersGpusNextToWhatItHolds) {
  const Cluster cluster = preset("paper-testbed-64");
  // Held: GPU 0 (nc12-01, its only slot holds GPUs 0-1). Offered: its slot mate and a far away pair.
  const std::vector<GpuIndex> held = {0};
  const Offer offer{1, {1, 40, 41}};
  const Bid bid = generate_bid(cluster, offer, {.app = 1, .held = held, .remaining_demand = 2, .rho_no_new = 5}, encoded);
  ASSERT_FALSE(bid.rows.empty());
  EXPECT_EQ(bid.rows[0].gpus, std::vector<GpuIndex>{1});
  EXPECT_DOUBLE_EQ(bid.rows[0].rho, encoded(2, Locality::kSameSlot));
  // Held nothing: the tightest pair comes first for two GPUs.
  const Bid fresh = generate_bid(cluster, offer, {.app = 1, .held = {}, .remaining_demand = 2, .rho_no_new = 5}, encoded);
  auto pair = std::find_if(fresh.rows.begin(), fresh.rows.end(), [](const BidRow& r) { return r.gpus.size() == 2; });
  ASSERT_NE(pair, fresh.rows.end());
  EXPECT_EQ(pair->gpus, (std::vector<GpuIndex>{40, 41}));
}

TEST(BidGenerator, DisjointAlternativesInsideOneSlot) {
  const Cluster cluster(ClusterSpec{"one", {{"m", "r", {4}}}});
  const Offer offer{1, {0, 1, 2, 3}};
  const Bid bid = generate_bid(cluster, offer, {.app = 1, .held = {}, .remaining_demand = 1, .rho_no_new = 5}, encoded);
  ASSERT_EQ(bid.rows.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(bid.rows[i].gpus, std::vector<GpuIndex>{static_cast<GpuIndex>(i)});
}

TEST(BidGenerator, NothingToBidFor) {
  const Cluster cluster = preset("paper-testbed-64");
  const Offer offer{1, {1, 2}};
  const Offer empty{1, {}};
  EXPECT_TRUE(generate_bid(cluster, offer, {.app = 1, .held = {}, .remaining_demand = 0, .rho_no_new = 1}, encoded).rows.empty());
  const Bid bid = generate_bid(cluster, empty, {.app = 1, .held = {}, .remaining_demand = 4, .rho_no_new = 1}, encoded);
  EXPECT_TRUE(bid.rows.empty());
  EXPECT_DOUBLE_EQ(bid.rho_no_new, 1);
}

TEST(BidGenerator, DropNonImprovingRows) {
  const Cluster cluster = preset("paper-testbed-64");
  const Offer offer{1, {0, 1, 2, 3}};
  auto value = [](int gpus, Locality) { return 4.0 / gpus; };  // 1 GPU: 4, 2: 2, 3: 1.33, 4: 1
  const Bid bid = generate_bid(cluster, offer, {.app = 1, .held = {}, .remaining_demand = 4, .rho_no_new = 2}, value,
                               {.drop_non_improving = true});
  ASSERT_FALSE(bid.rows.empty());
  for (const BidRow& row : bid.rows) EXPECT_LT(row.rho, 2);
}

// An app whose new GPUs start 2-GPU gangs of their own, offered one 2-GPU slot on each of two machines
// of one rack: the 4-GPU bundle spans the rack, but each of its two gangs runs inside one slot, so it is
// priced at a slot. Its scope says how far that holds: the same count in each slot keeps every gang in a
// slot (kSlot); where a slot and a machine cost the same, the same count in each machine does (kMachine),
// since a gang then runs inside its machine whichever of its GPUs it gets. Without the gang it is priced at
// its span, the rack.
TEST(BidGenerator, AGangAppPricesABundleAtTheWidestLevelOneOfItsGangsSpans) {
  const Cluster cluster = preset("paper-testbed-64");
  std::vector<GpuIndex> offer;
  for (GpuIndex a = 0; a < cluster.size() && offer.empty(); ++a)
    for (GpuIndex b = a + 2; b + 1 < cluster.size() && offer.empty(); ++b) {
      const Gpu& x = cluster.gpu(a);
      const Gpu& y = cluster.gpu(b);
      if (x.machine != y.machine && x.rack == y.rack && cluster.locality(std::vector<GpuIndex>{a, a + 1}) == Locality::kSameSlot &&
          cluster.locality(std::vector<GpuIndex>{b, b + 1}) == Locality::kSameSlot && cluster.gpu(a + 1).machine != y.machine)
        offer = {a, a + 1, b, b + 1};
    }
  ASSERT_EQ(offer.size(), 4U);
  ASSERT_EQ(cluster.locality(offer), Locality::kSameRack);
  auto four = [&](int gang, const Valuation& value = encoded) {
    const Bid bid = generate_bid(cluster, Offer{1, offer},
                                 {.app = 1, .held = {}, .remaining_demand = 4, .rho_no_new = 100, .gang = gang}, value);
    for (const BidRow& row : bid.rows)
      if (row.gpus.size() == 4) return row;
    ADD_FAILURE() << "no 4-GPU row";
    return BidRow{};
  };
  const BidRow gangs = four(2);
  EXPECT_EQ(gangs.gpus, offer);
  EXPECT_DOUBLE_EQ(gangs.rho, encoded(4, Locality::kSameSlot));
  EXPECT_EQ(gangs.scope, ShapeScope::kSlot);
  const auto slot_as_machine = [](int gpus, Locality where) { return encoded(gpus, std::max(where, Locality::kSameMachine)); };
  const BidRow within_machines = four(2, slot_as_machine);
  EXPECT_EQ(within_machines.gpus, offer);
  EXPECT_DOUBLE_EQ(within_machines.rho, encoded(4, Locality::kSameMachine));
  EXPECT_EQ(within_machines.scope, ShapeScope::kMachine);
  EXPECT_DOUBLE_EQ(four(0).rho, encoded(4, Locality::kSameRack));
  EXPECT_DOUBLE_EQ(four(4).rho, encoded(4, Locality::kSameRack)) << "one 4-GPU gang spans the rack";
}

TEST(BidGenerator, RejectsBadInputsNamingThem) {
  const Cluster cluster = preset("paper-testbed-64");
  auto error = [&](const Offer& offer, std::vector<GpuIndex> held, int demand, double rho, const Valuation& v,
                   BidSettings s = {}) -> std::string {
    try {
      generate_bid(cluster, offer, {.app = 1, .held = held, .remaining_demand = demand, .rho_no_new = rho}, v, s);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  const Offer ok{1, {1, 2, 3}};
  EXPECT_NE(error({1, {3, 2}}, {}, 2, 1, encoded).find("offer.gpus[1]"), std::string::npos);
  EXPECT_NE(error({1, {2, 2}}, {}, 2, 1, encoded).find("offer.gpus[1]"), std::string::npos);
  EXPECT_NE(error({1, {64}}, {}, 2, 1, encoded).find("offer.gpus[0]"), std::string::npos);
  EXPECT_NE(error(ok, {2}, 2, 1, encoded).find("held"), std::string::npos);
  EXPECT_NE(error(ok, {5, 5}, 2, 1, encoded).find("held"), std::string::npos);
  EXPECT_NE(error(ok, {-1}, 2, 1, encoded).find("held"), std::string::npos);
  EXPECT_NE(error(ok, {}, -1, 1, encoded).find("remaining_demand"), std::string::npos);
  EXPECT_NE(error(ok, {}, 2, 0, encoded).find("rho_no_new"), std::string::npos);
  EXPECT_NE(error(ok, {}, 2, 1, encoded, {.max_rows = 0}).find("max_rows"), std::string::npos);
  EXPECT_NE(error(ok, {}, 2, 1, [](int, Locality) { return 0.0; }).find("valuation"), std::string::npos);
  EXPECT_NE(error(ok, {}, 2, 1, Valuation{}).find("valuation"), std::string::npos);
  EXPECT_EQ(error(ok, {}, 2, 1, encoded), "");
  const std::vector<GpuIndex> not_offered = {7};
  try {
    generate_bid(cluster, ok, {.app = 1, .held = {}, .remaining_demand = 2, .rho_no_new = 1, .gang = 0, .renewing = not_offered}, encoded);
    FAIL() << "a renewing GPU outside the offer was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "bid generation: renewing must be GPUs of the offer (those whose lease ends this round), got 7");
  }
}

}  // namespace
}  // namespace themis::bidder
