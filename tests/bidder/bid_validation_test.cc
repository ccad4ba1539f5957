#include <gtest/gtest.h>

#include <stdexcept>

#include "bidder/bid_validation.h"

namespace themis::bidder {
namespace {

TEST(BidValidation, FindsEachProblem) {
  const Offer offer{1, {2, 3, 5}};
  Bid bid{1, 1.0, {{{2, 3}, 0.5}, {{5}, 0.7}}};
  EXPECT_EQ(bid_problem(bid, offer), "");
  Bid b = bid;
  b.rows[1].gpus = {4};
  EXPECT_EQ(bid_problem(b, offer), "row 1: GPU 4 is not in the offer");
  b = bid;
  b.rows[0].gpus = {};
  EXPECT_EQ(bid_problem(b, offer), "row 0: no GPUs");
  b = bid;
  b.rows[0].gpus = {3, 3};
  EXPECT_NE(bid_problem(b, offer).find("sorted and distinct"), std::string::npos);
  b = bid;
  b.rows[1].gpus = {2, 3};
  EXPECT_NE(bid_problem(b, offer).find("earlier row"), std::string::npos);
  b = bid;
  b.rows[1].rho = 0;
  EXPECT_NE(bid_problem(b, offer).find("rho"), std::string::npos);
  b = bid;
  b.rho_no_new = -1;
  EXPECT_NE(bid_problem(b, offer).find("rho_no_new"), std::string::npos);
  EXPECT_THROW(validate_bid(b, offer), std::invalid_argument);
  EXPECT_NO_THROW(validate_bid(bid, offer));
}

}  // namespace
}  // namespace themis::bidder
