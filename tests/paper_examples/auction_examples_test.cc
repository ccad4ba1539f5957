// Themis' partial-allocation auction on examples small enough to check by hand (papers.md §5 items
// 11–12), through the public arbiter API.
#include <gtest/gtest.h>

#include <cmath>

#include "policy/arbiter/filter.h"
#include "policy/arbiter/themis_policy.h"

namespace themis::arbiter {
namespace {

class HandApp final : public AppModel {
 public:
  HandApp(AppId id, double rho, int demand, Bid bid) : id_(id), rho_(rho), demand_(demand), bid_(std::move(bid)) {}
  AppId id() const override { return id_; }
  double current_rho() const override { return rho_; }
  int extra_demand() const override { return demand_; }
  Bid bid(const Offer&) override { return bid_; }
  Seconds attained_service() const override { return 0; }
  Seconds remaining_service() const override { return 0; }
  Seconds remaining_time(std::span<const GpuIndex>) const override { return 0; }
  double loss_decrease(std::span<const GpuIndex>) const override { return 0; }
  double placement_score(std::span<const GpuIndex>) const override { return 1; }

 private:
  AppId id_;
  double rho_;
  int demand_;
  Bid bid_;
};

// One machine, two slots of two GPUs: {0,1} and {2,3}.
Cluster one_machine() { return Cluster(ClusterSpec{"hand", {{"m0", "r0", {2, 2}}}}); }

TEST(AuctionExamples, FilterSizes) {
  EXPECT_EQ(filter_count(10, FilterFraction::parse("0.8")), 2);  // §5 item 11: f = 0.8, 10 apps -> 2
  EXPECT_EQ(filter_count(10, FilterFraction::parse("0.7")), 3);  // exactly 3, no floating-point 4
  EXPECT_EQ(filter_count(10, FilterFraction::parse("1")), 1);    // f = 1: the single worst app
}

TEST(AuctionExamples, LoneBidderPaysNothing) {
  // §5 item 12: with one bidder both products in c_i are empty, so c = 1.
  const Cluster cluster = one_machine();
  HandApp only(1, 3.0, 4, Bid{1, 3.0, {{{0, 1}, 1.5}, {{0, 1, 2, 3}, 0.75}}});
  ThemisPolicy policy;
  RoundInput input{&cluster, 1, 0, {0, 1, 2, 3}, {}, {&only}};
  Rng rng(1);
  const RoundOutcome out = policy.run_round(input, rng);
  ASSERT_EQ(out.auction.winners.size(), 1u);
  EXPECT_EQ(out.auction.winners[0].c, 1.0);
  EXPECT_EQ(out.auction.winners[0].kept, (std::vector<GpuIndex>{0, 1, 2, 3}));
  EXPECT_NEAR(out.auction.objective, std::log(1 / 0.75), 1e-12);
}

TEST(AuctionExamples, TwoBiddersHandComputedPayment) {
  // Offer {0,1,2,3}. A: ρ_no_new = 2, rows {0,1} -> 1, {0,1,2,3} -> 0.5.
  //                  B: ρ_no_new = 1, row  {2,3} -> 0.4.
  // PF (max ∏ 1/ρ):  A{0,1} + B{2,3}: (1/1)·(1/0.4) = 2.5;  A{0..3} alone: (1/0.5)·(1/1) = 2;  so
  //                  A gets {0,1}, B gets {2,3}; objective = log 2.5.
  // c_A = [1/ρ_B at PF] / [1/ρ_B without A] = (1/0.4) / (1/0.4) = 1.
  // c_B = [1/ρ_A at PF] / [1/ρ_A without B] = (1/1) / (1/0.5) = 0.5.
  // `nearest` rounding: B keeps ⌊0.5·2 + ½⌋ = 1 of its 2 GPUs; the other is leftover and goes to C, which
  // did not bid. (The default, `time-share`, is the next test.)
  const Cluster cluster = one_machine();
  HandApp a(1, 2.0, 4, Bid{1, 2.0, {{{0, 1}, 1.0}, {{0, 1, 2, 3}, 0.5}}});
  HandApp b(2, 1.0, 2, Bid{2, 1.0, {{{2, 3}, 0.4}}});
  HandApp c(3, 0.5, 1, Bid{3, 0.5, {}});
  ThemisSettings settings;
  settings.f = FilterFraction(1, 3);  // ⌈(2/3)·3⌉ = 2 bidders: A and B (worst ρ)
  settings.rounding = RoundingRule::kNearest;
  ThemisPolicy policy(settings);
  RoundInput input{&cluster, 1, 0, {0, 1, 2, 3}, {}, {&a, &b, &c}};
  Rng rng(1);
  const RoundOutcome out = policy.run_round(input, rng);
  EXPECT_EQ(out.auction.bidders, (std::vector<AppId>{1, 2}));
  ASSERT_EQ(out.auction.winners.size(), 2u);
  EXPECT_NEAR(out.auction.objective, std::log(2.5), 1e-12);
  EXPECT_EQ(out.auction.gap, 0.0);
  const auto& wa = out.auction.winners[0];
  const auto& wb = out.auction.winners[1];
  EXPECT_EQ(wa.app, 1);
  EXPECT_EQ(wa.pf_bundle, (std::vector<GpuIndex>{0, 1}));
  EXPECT_NEAR(wa.c, 1.0, 1e-12);
  EXPECT_EQ(wa.kept, (std::vector<GpuIndex>{0, 1}));
  EXPECT_EQ(wb.app, 2);
  EXPECT_EQ(wb.pf_bundle, (std::vector<GpuIndex>{2, 3}));
  EXPECT_NEAR(wb.c, 0.5, 1e-12);
  EXPECT_EQ(wb.kept.size(), 1u);
  ASSERT_EQ(out.grants.size(), 3u);
  EXPECT_EQ(out.grants[2].app, 3);
  EXPECT_EQ(out.grants[2].kind, GrantKind::kLeftover);
  EXPECT_EQ(out.grants[2].gpus.size(), 1u);
  EXPECT_TRUE(out.idle.empty());
}

TEST(AuctionExamples, TwoBiddersPaymentInTimeUnderTheDefaultRounding) {
  // The same auction with the default `time-share` rounding: B pays c_B = 0.5 in time, not in GPUs. It
  // keeps both of its GPUs for half the lease; A keeps {0,1} for the whole lease; nothing is left over.
  const Cluster cluster = one_machine();
  HandApp a(1, 2.0, 4, Bid{1, 2.0, {{{0, 1}, 1.0}, {{0, 1, 2, 3}, 0.5}}});
  HandApp b(2, 1.0, 2, Bid{2, 1.0, {{{2, 3}, 0.4}}});
  HandApp c(3, 0.5, 1, Bid{3, 0.5, {}});
  ThemisSettings settings;
  settings.f = FilterFraction(1, 3);
  ASSERT_EQ(settings.rounding, RoundingRule::kTimeShare);
  ThemisPolicy policy(settings);
  RoundInput input{&cluster, 1, 0, {0, 1, 2, 3}, {}, {&a, &b, &c}};
  Rng rng(1);
  const RoundOutcome out = policy.run_round(input, rng);
  ASSERT_EQ(out.grants.size(), 2u);
  EXPECT_EQ(out.grants[0].app, 1);
  EXPECT_EQ(out.grants[0].gpus, (std::vector<GpuIndex>{0, 1}));
  EXPECT_DOUBLE_EQ(out.grants[0].lease_fraction, 1.0);
  EXPECT_EQ(out.grants[1].app, 2);
  EXPECT_EQ(out.grants[1].gpus, (std::vector<GpuIndex>{2, 3}));
  EXPECT_NEAR(out.grants[1].lease_fraction, 0.5, 1e-12);
  EXPECT_TRUE(out.idle.empty());
}

}  // namespace
}  // namespace themis::arbiter
