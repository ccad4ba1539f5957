#pragma once
// The messages of one auction round as plain values: what the arbiter offers, what an app bids back,
// and the leases it grants. The bidder produces Bids, the arbiter consumes them, the wire carries them.
#include <vector>

#include "core/ids.h"

namespace themis {

// GPUs put up for auction in one round.
struct Offer {
  RoundId round = 0;
  std::vector<GpuIndex> gpus;  // sorted, distinct
};

// One row of a bid table: "if granted these offered GPUs (on top of what I hold), my ρ becomes rho".
struct BidRow {
  std::vector<GpuIndex> gpus;  // sorted, distinct, a subset of the offer, never empty
  double rho = 0;              // > 0
};

// An app's answer to an offer. rho_no_new is ρ if it wins nothing this round (finite, see
// architecture.md §3: "An app with no GPUs").
struct Bid {
  AppId app = 0;
  double rho_no_new = 0;  // > 0
  std::vector<BidRow> rows;
};

// A GPU held by an app until `expiry`.
struct Lease {
  GpuIndex gpu = 0;
  AppId app = 0;
  RoundId round = 0;
  Seconds start = 0;
  Seconds expiry = 0;
};

}  // namespace themis
