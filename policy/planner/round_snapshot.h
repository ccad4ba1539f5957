#pragma once
// What the round planner reads (RoundSnapshot) and what it decides (RoundPlan). The coordinator fills a
// snapshot from its store and applies the plan to it; themis-sim fills one from its virtual cluster and
// applies the plan to its simulated apps. Nothing about a round is decided outside the planner.
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/ids.h"
#include "core/topology.h"
#include "policy/arbiter/policy.h"

namespace themis::planner {

using JobId = std::int64_t;

// Who turns an app's GPUs into running jobs.
enum class JobPlacement {
  kByApp,          // the app's own agent (a launcher; a simulated app): its grants are app leases
  kByCoordinator,  // the coordinator starts the app's pending jobs on the GPUs it grants
};

// An active lease. `job`: the job it is bound to (an app lease names the app's first job until the app
// launches onto it).
struct HeldLease {
  GpuIndex gpu = 0;
  AppId app = 0;
  JobId job = 0;
  RoundId round = 0;
  Seconds start = 0;
  Seconds expiry = 0;
  JobPlacement placement = JobPlacement::kByApp;  // of the holding app
};

struct AppState {
  AppId id = 0;
  // The policy's questions (ρ, extra demand not counting GPUs whose lease expires in this round, bids).
  // Not owned. Null for an app that only waits for its probe GPU.
  arbiter::AppModel* model = nullptr;
  JobPlacement placement = JobPlacement::kByApp;
  // kByCoordinator: its jobs that may start now, in order, the width of each, and how many more may run.
  int gpus_per_job = 1;
  int free_job_slots = 0;
  std::vector<JobId> pending_jobs;
  JobId first_job = 0;         // the job a new app lease names (kByApp)
  bool probe_waiting = false;  // gets one GPU for its first-iteration probe before it competes
};

struct RoundSettings {
  Seconds lease_duration = 600;
  Seconds probe_duration = 20;
  // Leases expiring up to this long after `now` expire in this round, so GPUs freed close together are
  // handed out together.
  Seconds batch_window = 0;
};

struct RoundSnapshot {
  const Cluster* cluster = nullptr;
  RoundId round = 0;
  Seconds now = 0;
  RoundSettings settings;
  std::vector<bool> machine_up;  // by machine index; empty: every machine is up
  // By machine index; empty: none. A drained machine's GPUs get no new lease and no renewal: its leases
  // end at their expiry (its jobs finish or are preempted then), and then its GPUs stay idle.
  std::vector<bool> machine_drained;
  std::vector<HeldLease> leases;  // every active lease
  std::vector<AppState> apps;     // active apps, ordered by id
  // Once the round's offer went out: the GPUs it set aside for probes, kept while they are still free
  // (no new probe is picked until the round ends). None: the round opens now and picks them.
  std::optional<std::map<AppId, GpuIndex>> reserved_probes;
  // Once the round's offer went out: when. A lease ends in this round only if it had ended (within the
  // batch window) by then; one that ends while the bids are awaited belongs to the next round. Otherwise
  // its GPUs would be dealt out in an auction whose bidders never saw them, and its holder, which bid
  // without them, could lose them to leftover (its running job stopped) instead of renewing them.
  std::optional<Seconds> offers_sent_at;
};

enum class LeaseKind { kAuction, kLeftover, kDirect, kProbe, kRenewal };

struct PlannedLease {
  GpuIndex gpu = 0;
  AppId app = 0;
  JobId job = 0;
  Seconds start = 0;
  Seconds expiry = 0;
  LeaseKind kind = LeaseKind::kDirect;
};

struct JobRef {
  AppId app = 0;
  JobId job = 0;
  auto operator<=>(const JobRef&) const = default;
};

struct JobStart {
  JobRef job;
  std::vector<GpuIndex> gpus;  // sorted
};

struct AppGrant {
  std::vector<GpuIndex> gpus;  // sorted: everything the app leases from this round
  arbiter::GrantKind kind = arbiter::GrantKind::kDirect;
};

struct RoundPlan {
  RoundId round = 0;
  Seconds now = 0;
  std::vector<GpuIndex> offered;           // what the policy handed out (probe GPUs excluded)
  std::vector<HeldLease> expired;          // leases that end in this round (renewals start new ones)
  std::vector<GpuIndex> renewed_gpus;      // of those, the GPUs their app won back
  std::vector<PlannedLease> leases;        // new leases, probes and renewals included
  std::map<AppId, GpuIndex> probes;
  std::map<AppId, AppGrant> grants;        // by app, for the round record (probes excluded)
  std::vector<JobRef> renewed_jobs;        // kByCoordinator: keep running on the same GPUs
  std::vector<JobStart> starts;            // kByCoordinator: start on these GPUs
  std::vector<JobRef> preempted;           // kByCoordinator: a lease ended and was not renewed
  std::vector<std::pair<AppId, GpuIndex>> lost;  // kByApp: GPUs not won back (jobs on them stop)
  std::vector<arbiter::IdleGpu> idle;      // offered GPUs nobody leases, with the reason
  arbiter::RoundOutcome outcome;           // as the policy returned it
};

}  // namespace themis::planner
