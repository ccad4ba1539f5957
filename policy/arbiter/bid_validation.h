#pragma once
// Checks bids against the offer before the auction. A malformed row is dropped, a malformed bid is
// dropped whole; each drop is recorded with a reason. Never throws: a bad bid must not kill a round.
#include <span>
#include <string>
#include <vector>

#include "core/bid.h"

namespace themis::arbiter {

struct BidRejection {
  AppId app = 0;
  int row = -1;  // index of the dropped row in the bid as received; -1: the whole bid was dropped
  std::string reason;
};

struct ValidatedBids {
  std::vector<Bid> accepted;  // only well-formed rows; a bid left with no rows is still accepted
  std::vector<BidRejection> rejections;
};

struct ExpectedBidder {
  AppId app = 0;
  int extra_demand = 0;  // rows asking for more GPUs than this are dropped
};

// Rules. Whole bid: its app is one of `bidders` and has not bid already; rho_no_new is finite and > 0.
// Row: non-empty, sorted, distinct, every GPU in the offer, at most the app's extra demand; ρ finite
// and > 0.
ValidatedBids validate_bids(const Offer& offer, std::span<const Bid> bids,
                            std::span<const ExpectedBidder> bidders);

}  // namespace themis::arbiter
