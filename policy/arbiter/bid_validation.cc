#include "policy/arbiter/bid_validation.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <sstream>
#include <string>

namespace themis::arbiter {

namespace {

bool positive_finite(double x) { return std::isfinite(x) && x > 0; }

std::string describe(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

// Empty when the row is well formed, else why not.
std::optional<std::string> row_problem(const Offer& offer, const BidRow& row, int demand) {
  if (row.gpus.empty()) return "row has no GPUs";
  for (std::size_t k = 1; k < row.gpus.size(); ++k) {
    if (row.gpus[k] == row.gpus[k - 1]) return "GPU " + std::to_string(row.gpus[k]) + " listed twice";
    if (row.gpus[k] < row.gpus[k - 1]) return "GPUs not sorted";
  }
  for (GpuIndex g : row.gpus)
    if (!std::binary_search(offer.gpus.begin(), offer.gpus.end(), g))
      return "GPU " + std::to_string(g) + " is not in the offer";
  if (static_cast<int>(row.gpus.size()) > demand)
    return "row asks for " + std::to_string(row.gpus.size()) + " GPUs, more than the app's demand of " +
           std::to_string(demand);
  if (!positive_finite(row.rho)) return "rho must be finite and > 0, got " + describe(row.rho);
  if (static_cast<int>(row.scope) < static_cast<int>(ShapeScope::kExact) ||
      static_cast<int>(row.scope) > static_cast<int>(ShapeScope::kAnywhere))
    return "scope must be 0 (exact) to 4 (anywhere), got " + std::to_string(static_cast<int>(row.scope));
  return std::nullopt;
}

}  // namespace

ValidatedBids validate_bids(const Offer& offer, std::span<const Bid> bids,
                            std::span<const ExpectedBidder> bidders) {
  ValidatedBids out;
  std::set<AppId> seen;
  for (const Bid& bid : bids) {
    const auto expected = std::find_if(bidders.begin(), bidders.end(),
                                       [&](const ExpectedBidder& b) { return b.app == bid.app; });
    if (expected == bidders.end()) {
      out.rejections.push_back({bid.app, -1, "app " + std::to_string(bid.app) + " was not offered these GPUs"});
      continue;
    }
    if (!seen.insert(bid.app).second) {
      out.rejections.push_back({bid.app, -1, "second bid from the same app"});
      continue;
    }
    if (!positive_finite(bid.rho_no_new)) {
      out.rejections.push_back(
          {bid.app, -1, "rho_no_new must be finite and > 0, got " + describe(bid.rho_no_new)});
      continue;
    }
    Bid kept{bid.app, bid.rho_no_new, {}};
    for (std::size_t r = 0; r < bid.rows.size(); ++r) {
      if (auto problem = row_problem(offer, bid.rows[r], expected->extra_demand))
        out.rejections.push_back({bid.app, static_cast<int>(r), *problem});
      else
        kept.rows.push_back(bid.rows[r]);
    }
    out.accepted.push_back(std::move(kept));
  }
  return out;
}

}  // namespace themis::arbiter
