#pragma once
// The round planner: a RoundSnapshot in, a RoundPlan out, pure (docs/planner.md). A round has three
// steps because bids and a long winner determination must not hold up whoever drives it:
//   open_round    what is up for grabs: expiring leases, the GPUs offered, probe GPUs, the policy input;
//   (the policy)  offer_recipients, then run_round on the frame's input, on any thread;
//   settle_round  the outcome becomes leases with their expiries, renewals, preemptions, job starts and
//                 idle GPUs, checked against a snapshot taken when the outcome is applied (apps may have
//                 ended and hosts gone while the policy ran).
// plan_round does all three at once, as themis-sim does.
#include <memory>
#include <vector>

#include "core/rng.h"
#include "policy/arbiter/policy.h"
#include "policy/planner/round_snapshot.h"

namespace themis::planner {

// Whether a lease ends in a round at `now` (it expires by now + window).
bool lease_ends(Seconds expiry, Seconds now, Seconds batch_window);

struct RoundFrame {
  RoundId round = 0;
  std::vector<HeldLease> expiring;   // their GPUs are offered again; the holder may win them back
  std::vector<GpuIndex> offered;     // sorted
  std::map<AppId, GpuIndex> probes;
  // Nothing to do: no GPU is free, or nobody wants one and no lease ends and no probe waits.
  bool empty = true;
  // The policy has GPUs to hand out and an app that wants more.
  bool needs_policy = false;
  // The policy's input. Its app models count each app's expiring GPUs in its demand. It points into the
  // snapshot (cluster, models) and into this frame: valid while both live.
  arbiter::RoundInput input;
  std::vector<std::unique_ptr<arbiter::AppModel>> models;
};

RoundFrame open_round(const RoundSnapshot& snapshot);

// `current` is the state when the outcome is applied (the snapshot the frame was opened on, when nothing
// ran in between). A grant of a GPU the frame did not offer, or to an app the frame did not hold, is the
// policy's bug: std::logic_error. A GPU that went away meanwhile (its host lost, its app ended) is idle.
RoundPlan settle_round(const RoundSnapshot& current, const RoundFrame& frame, arbiter::RoundOutcome outcome);

// open, run the policy, settle: one synchronous round on one snapshot.
RoundPlan plan_round(const RoundSnapshot& snapshot, arbiter::Policy& policy, Rng& rng);

}  // namespace themis::planner
