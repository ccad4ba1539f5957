#include "bidder/bid_validation.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <vector>

#include "bidder/input_checks.h"

namespace themis::bidder {

std::string bid_problem(const Bid& bid, const Offer& offer) {
  if (!(std::isfinite(bid.rho_no_new) && bid.rho_no_new > 0))
    return "rho_no_new must be > 0 and finite, got " + detail::format_number(bid.rho_no_new);
  std::vector<GpuIndex> offered = offer.gpus;
  std::sort(offered.begin(), offered.end());
  std::set<std::vector<GpuIndex>> seen;
  for (std::size_t r = 0; r < bid.rows.size(); ++r) {
    const BidRow& row = bid.rows[r];
    const std::string where = "row " + std::to_string(r) + ": ";
    if (row.gpus.empty()) return where + "no GPUs";
    if (!(std::isfinite(row.rho) && row.rho > 0)) return where + "rho must be > 0 and finite, got " + detail::format_number(row.rho);
    for (std::size_t i = 0; i < row.gpus.size(); ++i) {
      if (i > 0 && row.gpus[i] <= row.gpus[i - 1])
        return where + "GPUs not sorted and distinct at GPU " + std::to_string(row.gpus[i]);
      if (!std::binary_search(offered.begin(), offered.end(), row.gpus[i]))
        return where + "GPU " + std::to_string(row.gpus[i]) + " is not in the offer";
    }
    if (!seen.insert(row.gpus).second) return where + "the same GPUs as an earlier row";
  }
  return {};
}

void validate_bid(const Bid& bid, const Offer& offer) {
  if (std::string problem = bid_problem(bid, offer); !problem.empty())
    throw std::invalid_argument("bid of app " + std::to_string(bid.app) + ": " + problem);
}

}  // namespace themis::bidder
