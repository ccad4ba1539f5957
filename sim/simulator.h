#pragma once
// The event-driven simulator: a virtual clock, an event queue (app arrivals, lease expiries, job and
// phase completions), leases, and a round through Policy::run_round (the coordinator's policy code) at
// every instant where something happened, GPUs are free and an app can use them.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "policy/arbiter/policy.h"
#include "core/topology.h"
#include "sim/round_log.h"
#include "sim/sim_app.h"
#include "sim/trace.h"

namespace themis::sim {

struct SimSettings {
  Seconds lease = 600;       // 10 minutes (Themis §6.1)
  std::uint64_t seed = 1;    // the policy's Rng (leftover draws, lotteries)
  Seconds time_limit = 0;    // stop when the clock passes it; <= 0: none
  // Leases expiring within this many seconds after an event expire at that event, so GPUs freed
  // close together are offered in one round (architecture.md §2 step 1); < 0: a tenth of the lease.
  Seconds batch_window = -1;
  bidder::BidSettings bid;
  double estimate_error = 0;  // AppSettings::estimate_error (Themis Fig 17)
  AppId liar = -1;            // AppSettings::liar / lie (Themis Fig 18)
  double lie = 0;
  Seconds restart_cost = 0;   // AppSettings::restart_cost
  IdleRho idle_rho = IdleRho::kWholeDemand;  // AppSettings::idle_rho
  bool contention_ahead = true;               // AppSettings::contention_ahead
};

struct AppResult {
  std::string name;
  AppId id = 0;
  Seconds arrival = 0;
  Seconds finish = 0;
  Seconds jct = 0;
  Seconds gpu_time = 0;          // GPU-seconds held
  double rho = 0;                // JCT / T_id
  Seconds t_cluster = 0;
  double n_avg = 0;
  Seconds t_id = 0;
  double placement_score = 1;    // GPU-time-weighted 1/S of its running jobs
  bool finished = false;
};

struct SimStats {
  long long events = 0;   // arrivals + lease expiries + job/phase completions
  long long rounds = 0;
  long long granted_gpus = 0;
  long long leftover_gpus = 0;  // of granted_gpus, those a Themis round gave out as leftover
  // Of granted_gpus, those the app gave straight back because no job of its could start on them (SimApp::gain):
  // a policy that grants only what an app can use (AppModel::usable_extra) leaves this at 0.
  long long unused_grant_gpus = 0;
  // Rounds with an auction (at least one bidder), the free GPUs they offered, and those in which the
  // first bidder (the worst current ρ) won no GPU in the auction itself.
  long long auctions = 0;
  long long auction_offered_gpus = 0;
  long long auctions_worst_bidder_won_nothing = 0;
  // Auctions whose winner determination stopped at its node cap (--solver-max-nodes) before proving the
  // optimum, and the largest relative gap any of them reported.
  long long auctions_unproven = 0;
  double max_auction_gap = 0;
  Seconds start_time = 0;
  Seconds end_time = 0;
  // ∫ (GPUs the active apps' unfinished jobs could use) dt while apps arrive (first to last
  // arrival), and its peak over the whole run: the contention the workload offers.
  Seconds arrival_span = 0;
  double demand_gpu_seconds = 0;
  int peak_demand = 0;
};

struct SimResult {
  std::string policy;
  std::vector<AppResult> apps;  // in arrival order
  SimStats stats;
};

// Called after every round with the clock and the number of apps finished (for progress display).
using ProgressFn = std::function<void(Seconds now, std::size_t finished, std::size_t total)>;
// Called after every round with its plan and the active apps as the round found them (sim/round_log.h).
using RoundObserver = std::function<void(const planner::RoundPlan& plan, std::span<const RoundLogApp> apps)>;

// Runs `apps` (sorted by arrival) on `cluster` under `policy`. Throws std::runtime_error if the run
// stalls (apps wait, GPUs are free, nothing is scheduled and no event is pending) and
// std::logic_error if the policy grants a GPU that is not free.
SimResult simulate(const Cluster& cluster, const std::vector<AppSpec>& apps, arbiter::Policy& policy,
                   const SimSettings& settings, const ProgressFn& progress = {},
                   const RoundObserver& observe_round = {});

}  // namespace themis::sim
