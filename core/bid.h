#pragma once
// The messages of one auction round as plain values: what the arbiter offers, what an app bids back,
// and the leases it grants. The bidder produces Bids, the arbiter consumes them, the wire carries them.
#include <utility>
#include <vector>

#include "core/ids.h"

namespace themis {

// GPUs put up for auction in one round.
struct Offer {
  RoundId round = 0;
  std::vector<GpuIndex> gpus;  // sorted, distinct
};

// How far a bid row's GPUs are interchangeable for the app's ρ. kExact: only the named GPUs. kSlot,
// kMachine, kRack: any offered GPUs with the same count in each slot / machine / rack as the named
// ones give the same ρ. kAnywhere: any offered GPUs of the same count do (a placement-insensitive
// app). A wider scope lets the arbiter treat the row as a shape (shape_problem.h) and choose the
// concrete GPUs after the auction; the named GPUs are the app's first choice.
enum class ShapeScope : int { kExact = 0, kSlot = 1, kMachine = 2, kRack = 3, kAnywhere = 4 };

// One row of a bid table: "if granted these offered GPUs (on top of what I hold), my ρ becomes rho".
struct BidRow {
  BidRow() = default;
  // Not an aggregate, so rows written as {gpus, rho} (exact scope) stay valid.
  BidRow(std::vector<GpuIndex> gpus_, double rho_, ShapeScope scope_ = ShapeScope::kExact)
      : gpus(std::move(gpus_)), rho(rho_), scope(scope_) {}
  std::vector<GpuIndex> gpus;  // sorted, distinct, a subset of the offer, never empty
  double rho = 0;              // > 0
  ShapeScope scope = ShapeScope::kExact;
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
