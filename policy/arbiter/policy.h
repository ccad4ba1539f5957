#pragma once
// The arbiter's one policy interface. Themis and every baseline implement it, each in its own file;
// the simulator and the coordinator both drive it, so a policy is written once.
//
// A round: some GPUs are free (leases expired, an app finished, a host joined); the policy decides who
// gets which of them. Policies are pure: no clock, sockets or files. Time comes in RoundInput::now and
// randomness from the caller's seeded Rng.
//
// The coordinator runs a round in two steps because bids arrive over the network: it first asks
// offer_recipients() who must see the offer, collects their bids, then calls run_round() with AppModels
// whose bid() returns what was collected (a missing or late bid is an empty Bid).
#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/bid.h"
#include "core/ids.h"
#include "core/rng.h"
#include "core/topology.h"

namespace themis::arbiter {

// What an app can tell the arbiter about itself: the questions the papers' policies ask apps
// (Themis §6.1, "apps report ..."). In the simulator the app answers from its own model; in the
// coordinator the launcher's latest report stands in.
class AppModel {
 public:
  virtual ~AppModel() = default;
  virtual AppId id() const = 0;
  // Finish-time fairness with what it holds now (ranks apps for the Themis filter).
  virtual double current_rho() const = 0;
  // GPUs it could use right now on top of what it holds (0 = satisfied).
  virtual int extra_demand() const = 0;
  // GPUs one of its jobs needs at once (a gang): fewer are of no use to it. Policies give it GPUs in
  // whole jobs only (docs/arbiter.md, "Leftover").
  virtual int gpus_per_job() const { return 1; }
  // How many of `gpus` more GPUs it could put to work at once (<= extra_demand()): a rigid gang starts
  // only on all of its GPUs, so a count that completes no waiting gang is rounded down. Default: all of
  // them up to extra_demand() (jobs run on any number of GPUs).
  virtual int usable_extra(int gpus) const { return std::clamp(gpus, 0, extra_demand()); }
  // Themis: the bid table over an offer.
  virtual Bid bid(const Offer& offer) = 0;
  // Tiresias (LAS): GPU-seconds attained so far.
  virtual Seconds attained_service() const = 0;
  // SRSF: GPU-seconds of work left (at ideal placement).
  virtual Seconds remaining_service() const = 0;
  // SRTF / Optimus: time to finish if it also held `extra` GPUs from now on.
  virtual Seconds remaining_time(std::span<const GpuIndex> extra) const = 0;
  // SLAQ: loss decrease over the next lease if it also held `extra` GPUs.
  virtual double loss_decrease(std::span<const GpuIndex> extra) const = 0;
  // Gandiva: placement preference score (1/S, <= 1) of holding `extra` on top of what it holds.
  virtual double placement_score(std::span<const GpuIndex> extra) const = 0;
  // Gavel's finish-time fairness (gavel-ftf): its ρ as a function of the time fraction it runs on its
  // full demand. Empty: it does not say (the policy then treats it as ρ = current_rho at any fraction).
  struct FinishTimeTerms {
    Seconds elapsed = 0;    // since it arrived
    Seconds remaining = 0;  // time left running on all `demand` GPUs from now, ideal placement
    Seconds isolated = 0;   // T_id (> 0): its finish time on an exclusive 1/N share
    int demand = 0;         // GPUs it can use at once now (held + extra)
  };
  virtual std::optional<FinishTimeTerms> finish_time_terms() const { return std::nullopt; }
};

struct RoundInput {
  const Cluster* cluster = nullptr;
  RoundId round = 0;
  Seconds now = 0;
  std::vector<GpuIndex> free_gpus;  // sorted; what this round hands out
  std::vector<Lease> leases;        // GPUs held now (not free)
  std::vector<AppModel*> apps;      // active apps, ordered by id
  // Sorted; leased GPUs on drained machines: not offered again when their lease ends.
  std::vector<GpuIndex> draining = {};
};

enum class GrantKind { kAuction, kLeftover, kDirect };  // kDirect: a baseline's allocation

// "auction", "leftover" or "direct": as round records and logs name a grant's kind.
inline const char* grant_kind_name(GrantKind kind) {
  switch (kind) {
    case GrantKind::kAuction: return "auction";
    case GrantKind::kLeftover: return "leftover";
    case GrantKind::kDirect: return "direct";
  }
  return "direct";
}

struct Grant {
  AppId app = 0;
  std::vector<GpuIndex> gpus;  // sorted
  GrantKind kind = GrantKind::kDirect;
  double lease_fraction = 1.0;  // of the lease duration, in (0, 1]: below 1 only under Themis' time-share rounding
};

struct IdleGpu {
  GpuIndex gpu = 0;
  std::string reason;  // e.g. "no active app can use it"
};

// What the Themis auction decided, for the round record and `themisctl explain`.
struct AuctionRecord {
  std::vector<AppId> bidders;   // the filtered apps the offer went to
  std::vector<GpuIndex> offered;  // the GPUs auctioned (the round's free GPUs less any held for a gang)
  std::vector<Bid> bids;        // as received
  struct Winner {
    AppId app = 0;
    std::vector<GpuIndex> pf_bundle;  // proportional-fair bundle
    double rho = 0;                   // its bid ρ for that bundle
    double c = 1;                     // payment factor c_i
    std::vector<GpuIndex> kept;       // whole GPUs kept after the hidden payment
  };
  std::vector<Winner> winners;
  double objective = 0;  // Σ log(1/ρ_i) over bidders at the PF optimum
  double gap = 0;        // relative optimality gap; 0 when proven optimal
};

struct RoundOutcome {
  std::vector<Grant> grants;
  std::vector<IdleGpu> idle;  // every free GPU is either granted or listed here
  AuctionRecord auction;      // empty for policies without an auction
  // Themis' gang reservation: the app the round held every free GPU for, and why (also each GPU's idle reason).
  struct Reservation {
    AppId app = 0;
    std::string reason;
  };
  std::optional<Reservation> reservation = std::nullopt;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;
  // Apps that must see this round's offer before run_round. Default: none (no bids needed).
  virtual std::vector<AppId> offer_recipients(const RoundInput& input) const;
  virtual RoundOutcome run_round(const RoundInput& input, Rng& rng) = 0;
};

}  // namespace themis::arbiter
