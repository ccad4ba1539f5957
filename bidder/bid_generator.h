#pragma once
// Turns an offer into a bounded bid table (Themis §3.2 Table 2, architecture.md §3 "Bid space").
//
// The paper asks for ρ over "all possible subsets" of the offer; that is 2^n rows. Instead, for each
// useful GPU count k (every k up to dense_counts, then powers of two, then the remaining demand), the
// generator proposes the best-placed concrete bundles of k offered GPUs:
//   - placement = the widest level spanned by held ∪ bundle (same slot < same machine < same rack <
//     cross rack), so bundles next to what the app already holds come first; with BidRequest::gang,
//     ρ is priced at the widest level one of the bundle's gangs spans;
//   - a bundle is taken from the narrowest group (slot, machine, rack, whole offer) with k offered
//     GPUs, best fit first (the group with the fewest spare GPUs, which keeps large groups whole for
//     other apps); disjoint alternatives in the same group follow the first bundle of every group;
//   - inside a group, GPUs come from the sub-group the app holds first, then the fullest sub-groups,
//     so a bundle spans as few machines and slots as it can.
// Every count gets its best bundle first, then further alternatives round-robin over the counts, up to
// max_rows rows. ρ of a row = valuation(held + k, placement); rows are sorted GPU lists, ordered by
// count, best first. rho_no_new is the app's current ρ, passed in.
#include <functional>
#include <span>
#include <vector>

#include "core/bid.h"
#include "core/ids.h"
#include "core/topology.h"

namespace themis::bidder {

// ρ if the app held `total_gpus` GPUs (held + new) whose widest level is `placement`; > 0, finite.
using Valuation = std::function<double(int total_gpus, Locality placement)>;

struct BidSettings {
  int max_rows = 32;                // >= 1
  int dense_counts = 8;             // every count up to this one; beyond it powers of two + the demand
  bool drop_non_improving = false;  // leave out rows whose ρ is not below rho_no_new
};

struct BidRequest {
  AppId app = 0;
  std::span<const GpuIndex> held;  // GPUs the app holds now; none of them in the offer
  int remaining_demand = 0;        // extra GPUs it could use; >= 0
  double rho_no_new = 0;           // ρ if it wins nothing this round; > 0, finite
  // > 1: the new GPUs start gangs of this many GPUs of their own (no `held`), each placed inside the
  // narrowest group that holds it, so a bundle is priced at the widest level one of its gangs spans
  // rather than at the bundle's own span (its scope is the widest over which that price holds: widest_scope at
  // the gangs' placement). 0 or 1: the span.
  int gang = 0;
  // Offered GPUs the app's jobs run on now (their leases end this round): among rows of one count and one ρ,
  // the rows naming more of them come first, so that a renewal to an equally good placement keeps the jobs
  // where they run instead of moving them (the arbiter's shape assignment keeps a row's named GPUs first).
  std::span<const GpuIndex> renewing = {};
};

// The widest scope (core/bid.h) over which a row of placement `placement` and ρ `rho` keeps its ρ,
// given ρ at each placement for the row's GPU count (`rho_at`): every row may say kSlot; kMachine,
// kRack or kAnywhere where moving its GPUs within machines / racks / the offer can only land on
// placements of the same ρ (a placement-insensitive app says kAnywhere). generate_bid sets it.
ShapeScope widest_scope(Locality placement, double rho, const std::function<double(Locality)>& rho_at);

// The counts k a bid covers for `max_count` = min(remaining demand, offer size).
std::vector<int> bid_counts(int max_count, const BidSettings& settings);

// Throws std::invalid_argument on an unsorted/duplicated/out-of-range offer, held GPUs that are out of
// range, repeated or offered, bad settings or request fields, or a valuation that is not > 0 and finite.
Bid generate_bid(const Cluster& cluster, const Offer& offer, const BidRequest& request,
                 const Valuation& valuation, const BidSettings& settings = {});

}  // namespace themis::bidder
