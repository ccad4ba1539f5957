#pragma once
// Checks a Bid against the offer it answers: every row non-empty, sorted, distinct, inside the offer,
// with ρ > 0 and finite; no two rows alike; rho_no_new > 0 and finite.
#include <string>

#include "core/bid.h"

namespace themis::bidder {

// Empty when the bid is valid, otherwise the first problem, e.g. "row 3: GPU 17 is not in the offer".
std::string bid_problem(const Bid& bid, const Offer& offer);

// Throws std::invalid_argument with bid_problem's text when the bid is invalid.
void validate_bid(const Bid& bid, const Offer& offer);

}  // namespace themis::bidder
