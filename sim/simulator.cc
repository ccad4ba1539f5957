#include "sim/simulator.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>

#include "bidder/contention.h"
#include "core/rng.h"
#include "policy/planner/round_planner.h"

namespace themis::sim {
namespace {

constexpr Seconds kInf = std::numeric_limits<Seconds>::infinity();

struct HeldLease {
  AppId app = -1;  // -1: free
  RoundId round = 0;
  Seconds start = 0;
  Seconds expiry = 0;
};

class Run {
 public:
  Run(const Cluster& cluster, const std::vector<AppSpec>& specs, arbiter::Policy& policy,
      const SimSettings& settings, const ProgressFn& progress, const RoundObserver& observe_round)
      : cluster_(cluster), specs_(specs), policy_(policy), settings_(settings), progress_(progress),
        observe_round_(observe_round),
        rng_(settings.seed), gpus_(static_cast<std::size_t>(cluster.size())),
        window_(settings.batch_window < 0 ? settings.lease / 10 : settings.batch_window) {
    app_settings_.lease = settings.lease;
    app_settings_.bid = settings.bid;
    app_settings_.estimate_error = settings.estimate_error;
    app_settings_.error_seed = settings.seed;
    app_settings_.liar = settings.liar;
    app_settings_.lie = settings.lie;
    app_settings_.restart_cost = settings.restart_cost;
    app_settings_.idle_rho = settings.idle_rho;
    app_settings_.contention_ahead = settings.contention_ahead;
    for (GpuIndex g = 0; g < cluster.size(); ++g) free_.push_back(g);
  }

  SimResult run() {
    SimResult result;
    result.policy = std::string(policy_.name());
    std::vector<AppResult> done(specs_.size());
    std::size_t finished = 0;
    Seconds now = specs_.empty() ? 0 : specs_.front().arrival;
    stats_.start_time = now;
    last_arrival_ = specs_.empty() ? 0 : specs_.back().arrival;
    stats_.arrival_span = last_arrival_ - now;
    int demand = 0;
    while (finished < specs_.size()) {
      const Seconds next = next_event_time();
      if (next == kInf) throw std::runtime_error(stall_message(now));
      if (settings_.time_limit > 0 && next > settings_.time_limit) break;
      if (now < last_arrival_) stats_.demand_gpu_seconds += static_cast<double>(demand) * (std::min(next, last_arrival_) - now);
      now = next;
      for (auto& [id, app] : active_) app->advance_to(now);
      bool changed = false;

      // Arrivals.
      while (next_arrival_ < specs_.size() && specs_[next_arrival_].arrival <= now) {
        const AppId id = static_cast<AppId>(next_arrival_);
        active_.emplace(id, std::make_unique<SimApp>(id, specs_[next_arrival_], cluster_, app_settings_,
                                                     static_cast<int>(active_.size() + 1)));
        ++next_arrival_;
        ++stats_.events;
        changed = true;
        observe_contention();
      }
      // Completions (jobs, phases, apps) before expiries: a job that completes at this instant has
      // finished, whether or not its lease ends now too, and is settled with the GPUs it ran on.
      for (auto it = active_.begin(); it != active_.end();) {
        SimApp& app = *it->second;
        if (app.next_completion() <= now + SimApp::kCompletionSlack) {
          ++stats_.events;
          changed = true;
          for (GpuIndex g : app.settle()) release(g);
        }
        if (app.finished()) {
          done[static_cast<std::size_t>(app.id())] = result_of(app);
          ++finished;
          it = active_.erase(it);
          observe_contention();
        } else {
          ++it;
        }
      }
      // Lease expiries, with those the batching window pulls forward: the GPU goes back to the pool
      // and is auctioned again this instant. A GPU whose job completes by its lease's own end keeps
      // running until that completion, which settles it first: the window batches expiries and must
      // not cut off work that would finish within its lease.
      for (auto it = expiries_.begin(); it != expiries_.end() && planner::lease_ends(it->first, now, window_);) {
        const GpuIndex g = it->second;
        const HeldLease& lease = gpus_[static_cast<std::size_t>(g)];
        // Out of date: released, or leased again since (its new lease has an entry of its own). Keeping such
        // an entry would hold the clock at its time for ever.
        if (lease.app < 0 || lease.expiry != it->first) {
          it = expiries_.erase(it);
          continue;
        }
        SimApp& app = *active_.at(lease.app);
        if (lease.expiry > now && app.completion_on(g) <= lease.expiry + SimApp::kCompletionSlack) {
          ++it;
          continue;
        }
        const GpuIndex one[] = {g};
        const std::vector<GpuIndex> unusable = app.lose(one);
        release(g);
        for (GpuIndex other : unusable) release(other);
        it = expiries_.erase(it);
        ++stats_.events;
        changed = true;
      }
      // Every event at or before now was handled above: one left there would hold the clock for ever.
      if (!changed && next_event_time() <= now)
        throw std::logic_error(std::string(policy_.name()) + ": simulation stuck at t=" + std::to_string(now) +
                               " s: an event at this instant was left unhandled");
      if (changed && !free_.empty() && any_demand()) {
        if (app_settings_.contention_ahead) forecast_contention();
        round(now);
      }
      demand = 0;
      for (const auto& [id, app] : active_) demand += app->current_demand();
      stats_.peak_demand = std::max(stats_.peak_demand, demand);
      if (progress_) progress_(now, finished, specs_.size());
    }
    for (auto& [id, app] : active_) done[static_cast<std::size_t>(id)] = result_of(*app);
    stats_.end_time = now;
    result.apps = std::move(done);
    result.stats = stats_;
    return result;
  }

 private:
  Seconds next_event_time() const {
    Seconds t = kInf;
    if (next_arrival_ < specs_.size()) t = specs_[next_arrival_].arrival;
    if (!expiries_.empty()) t = std::min(t, expiries_.begin()->first);
    for (const auto& [id, app] : active_) t = std::min(t, app->next_completion());
    return t;
  }

  bool any_demand() const {
    return std::any_of(active_.begin(), active_.end(), [](const auto& kv) { return kv.second->extra_demand() > 0; });
  }

  void observe_contention() {
    for (auto& [id, app] : active_) app->observe_contention(static_cast<int>(active_.size()));
  }

  // Each app's contention over the rest of its life from the apps present now, each until its own expected
  // finish (bidder/contention.h), as the coordinator tells launchers: the ranking keys of this round use it.
  void forecast_contention() {
    std::vector<Seconds> remaining;
    remaining.reserve(active_.size());
    for (const auto& [id, app] : active_) remaining.push_back(app->remaining_at_fair_share());
    std::size_t k = 0;
    for (auto& [id, app] : active_) app->set_contention_ahead(bidder::contention_ahead(remaining, k++));
  }

  void release(GpuIndex g) {
    gpus_[static_cast<std::size_t>(g)] = HeldLease{};
    free_.insert(std::lower_bound(free_.begin(), free_.end(), g), g);
  }

  // One round through the round planner, as the coordinator runs it. Expiring leases were already
  // released by the event loop (the app has lost them and bids without them).
  void round(Seconds now) {
    planner::RoundSnapshot snapshot;
    snapshot.cluster = &cluster_;
    snapshot.round = ++stats_.rounds;
    snapshot.now = now;
    snapshot.settings.lease_duration = settings_.lease;
    // The event loop has already ended the leases the window pulls in (keeping those whose job completes
    // first), so every lease left holds past now: the planner must see none of them ending.
    snapshot.settings.batch_window = 0;
    for (GpuIndex g = 0; g < cluster_.size(); ++g) {
      const HeldLease& l = gpus_[static_cast<std::size_t>(g)];
      if (l.app >= 0) snapshot.leases.push_back({g, l.app, 0, l.round, l.start, l.expiry, planner::JobPlacement::kByApp});
    }
    for (auto& [id, app] : active_) {
      planner::AppState state;
      state.id = id;
      state.model = app.get();
      snapshot.apps.push_back(state);
    }
    std::vector<RoundLogApp> seen;
    if (observe_round_) {
      for (auto& [id, app] : active_)
        seen.push_back({id, app->spec().name, app->current_rho(), static_cast<int>(app->held().size()),
                        app->extra_demand()});
    }
    const planner::RoundPlan plan = planner::plan_round(snapshot, policy_, rng_);
    if (observe_round_) observe_round_(plan, seen);
    const arbiter::RoundOutcome& outcome = plan.outcome;
    if (!outcome.auction.bidders.empty()) {
      ++stats_.auctions;
      stats_.auction_offered_gpus += static_cast<long long>(plan.offered.size());
      const AppId worst = outcome.auction.bidders.front();
      if (std::none_of(outcome.auction.winners.begin(), outcome.auction.winners.end(),
                       [worst](const arbiter::AuctionRecord::Winner& w) { return w.app == worst && !w.kept.empty(); }))
        ++stats_.auctions_worst_bidder_won_nothing;
      if (outcome.auction.gap > 0) {
        ++stats_.auctions_unproven;
        stats_.max_auction_gap = std::max(stats_.max_auction_gap, outcome.auction.gap);
      }
    }
    std::map<GpuIndex, const planner::PlannedLease*> leased;
    for (const planner::PlannedLease& lease : plan.leases) leased[lease.gpu] = &lease;
    for (const arbiter::Grant& grant : outcome.grants) {
      std::vector<GpuIndex> gained;
      for (GpuIndex g : grant.gpus) {
        const auto it = leased.find(g);
        if (it == leased.end()) continue;
        const planner::PlannedLease& lease = *it->second;
        free_.erase(std::lower_bound(free_.begin(), free_.end(), g));
        gpus_[static_cast<std::size_t>(g)] = HeldLease{lease.app, plan.round, lease.start, lease.expiry};
        expiries_.emplace(lease.expiry, g);
        ++stats_.granted_gpus;
        if (lease.kind == planner::LeaseKind::kLeftover) ++stats_.leftover_gpus;
        gained.push_back(g);
      }
      // GPUs the app cannot use go straight back; they wait for the next event.
      const std::vector<GpuIndex> unused = active_.at(grant.app)->gain(gained);
      stats_.unused_grant_gpus += static_cast<long long>(unused.size());
      for (GpuIndex g : unused) release(g);
    }
  }

  AppResult result_of(const SimApp& app) const {
    AppResult r;
    r.name = app.spec().name;
    r.id = app.id();
    r.arrival = app.spec().arrival;
    r.finished = app.finished();
    r.finish = app.now();
    r.jct = app.now() - app.spec().arrival;
    r.gpu_time = app.gpu_time();
    r.t_cluster = app.cluster_time();
    r.n_avg = app.contention_average();
    r.t_id = app.independent_time(r.n_avg);
    r.rho = r.t_id > 0 ? r.jct / r.t_id : 0;
    r.placement_score = app.placement_score_so_far();
    return r;
  }

  std::string stall_message(Seconds now) const {
    return std::string(policy_.name()) + ": simulation stalled at t=" + std::to_string(now) + " s with " +
           std::to_string(active_.size()) + " apps waiting and " + std::to_string(free_.size()) +
           " free GPUs: the policy schedules nothing and no event is pending";
  }

  const Cluster& cluster_;
  const std::vector<AppSpec>& specs_;
  arbiter::Policy& policy_;
  SimSettings settings_;
  ProgressFn progress_;
  RoundObserver observe_round_;
  AppSettings app_settings_;
  Rng rng_;
  std::vector<HeldLease> gpus_;
  Seconds window_;  // leases ending this soon after an event end at it
  std::vector<GpuIndex> free_;
  std::multimap<Seconds, GpuIndex> expiries_;
  std::map<AppId, std::unique_ptr<SimApp>> active_;
  std::size_t next_arrival_ = 0;
  Seconds last_arrival_ = 0;
  SimStats stats_;
};

}  // namespace

SimResult simulate(const Cluster& cluster, const std::vector<AppSpec>& apps, arbiter::Policy& policy,
                   const SimSettings& settings, const ProgressFn& progress, const RoundObserver& observe_round) {
  if (!std::is_sorted(apps.begin(), apps.end(), [](const AppSpec& a, const AppSpec& b) { return a.arrival < b.arrival; }))
    throw std::invalid_argument("simulate: apps must be sorted by arrival");
  Run run(cluster, apps, policy, settings, progress, observe_round);
  return run.run();
}

}  // namespace themis::sim
