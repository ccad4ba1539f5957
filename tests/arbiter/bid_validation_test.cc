#include "policy/arbiter/bid_validation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace themis::arbiter {
namespace {

const Offer kOffer{7, {2, 3, 5, 8}};

TEST(BidValidation, DropsRowsWithAScopeOutsideTheFiveAndKeepsTheScopeOfGoodOnes) {
  Bid bid{1, 2.0, {}};
  bid.rows = {
      {{2, 3}, 1.0, ShapeScope::kMachine},
      {{5}, 1.0, static_cast<ShapeScope>(5)},
      {{8}, 1.0, static_cast<ShapeScope>(-1)},
  };
  const std::vector<ExpectedBidder> expected{{1, 2}};
  const ValidatedBids out = validate_bids(kOffer, std::span(&bid, 1), expected);
  ASSERT_EQ(out.accepted.size(), 1u);
  ASSERT_EQ(out.accepted[0].rows.size(), 1u);
  EXPECT_EQ(out.accepted[0].rows[0].scope, ShapeScope::kMachine);
  ASSERT_EQ(out.rejections.size(), 2u);
  EXPECT_EQ(out.rejections[0].row, 1);
  EXPECT_NE(out.rejections[0].reason.find("scope"), std::string::npos) << out.rejections[0].reason;
  EXPECT_EQ(out.rejections[1].row, 2);
}

TEST(BidValidation, KeepsGoodRowsDropsBadOnesWithReasons) {
  const double inf = std::numeric_limits<double>::infinity();
  Bid bid{1, 2.0, {}};
  bid.rows = {
      {{2, 3}, 1.0},                 // 0 ok
      {{}, 1.0},                     // 1 empty
      {{3, 2}, 1.0},                 // 2 unsorted
      {{3, 3}, 1.0},                 // 3 duplicate
      {{2, 4}, 1.0},                 // 4 outside the offer
      {{5}, 0.0},                    // 5 rho 0
      {{5}, std::nan("")},           // 6 rho NaN
      {{8}, inf},                    // 7 rho inf
      {{2, 3, 5}, 1.0},              // 8 more than demand 2
      {{8}, 1.5},                    // 9 ok
  };
  const std::vector<ExpectedBidder> expected{{1, 2}};
  const ValidatedBids out = validate_bids(kOffer, std::span(&bid, 1), expected);
  ASSERT_EQ(out.accepted.size(), 1u);
  ASSERT_EQ(out.accepted[0].rows.size(), 2u);
  EXPECT_EQ(out.accepted[0].rows[0].gpus, (std::vector<GpuIndex>{2, 3}));
  EXPECT_EQ(out.accepted[0].rows[1].gpus, (std::vector<GpuIndex>{8}));
  ASSERT_EQ(out.rejections.size(), 8u);
  const std::vector<std::string> fragments{"no GPUs", "not sorted", "listed twice", "not in the offer",
                                           "rho", "rho", "rho", "demand"};
  for (std::size_t k = 0; k < fragments.size(); ++k) {
    EXPECT_EQ(out.rejections[k].app, 1);
    EXPECT_EQ(out.rejections[k].row, static_cast<int>(k + 1));
    EXPECT_NE(out.rejections[k].reason.find(fragments[k]), std::string::npos) << out.rejections[k].reason;
  }
}

TEST(BidValidation, DropsWholeBids) {
  std::vector<Bid> bids{
      {1, 0.0, {{{2}, 1.0}}},                                       // rho_no_new 0
      {2, std::numeric_limits<double>::infinity(), {{{2}, 1.0}}},   // rho_no_new inf
      {3, 2.0, {{{2}, 1.0}}},                                       // not offered
      {4, 2.0, {{{2}, 1.0}}},                                       // ok
      {4, 3.0, {{{3}, 1.0}}},                                       // second bid
  };
  const std::vector<ExpectedBidder> expected{{1, 4}, {2, 4}, {4, 4}};
  const ValidatedBids out = validate_bids(kOffer, bids, expected);
  ASSERT_EQ(out.accepted.size(), 1u);
  EXPECT_EQ(out.accepted[0].app, 4);
  EXPECT_EQ(out.accepted[0].rho_no_new, 2.0);
  ASSERT_EQ(out.rejections.size(), 4u);
  for (const auto& r : out.rejections) EXPECT_EQ(r.row, -1);
  EXPECT_NE(out.rejections[0].reason.find("rho_no_new"), std::string::npos);
  EXPECT_NE(out.rejections[2].reason.find("not offered"), std::string::npos);
  EXPECT_NE(out.rejections[3].reason.find("second bid"), std::string::npos);
}

}  // namespace
}  // namespace themis::arbiter
