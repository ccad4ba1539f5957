#include "sim/simulator.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>

#include "core/rng.h"

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
      const SimSettings& settings, const ProgressFn& progress)
      : cluster_(cluster), specs_(specs), policy_(policy), settings_(settings), progress_(progress),
        rng_(settings.seed), gpus_(static_cast<std::size_t>(cluster.size())) {
    app_settings_.lease = settings.lease;
    app_settings_.bid = settings.bid;
    app_settings_.estimate_error = settings.estimate_error;
    app_settings_.error_seed = settings.seed;
    app_settings_.liar = settings.liar;
    app_settings_.lie = settings.lie;
    app_settings_.restart_cost = settings.restart_cost;
    app_settings_.idle_rho = settings.idle_rho;
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
    const Seconds window = settings_.batch_window < 0 ? settings_.lease / 10 : settings_.batch_window;
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
      for (auto it = expiries_.begin(); it != expiries_.end() && it->first <= now + window;) {
        const GpuIndex g = it->second;
        const HeldLease& lease = gpus_[static_cast<std::size_t>(g)];
        if (lease.app < 0 || lease.expiry > now + window) {  // released, or leased again since
          it = expiries_.erase(it);
          continue;
        }
        SimApp& app = *active_.at(lease.app);
        if (lease.expiry > now && app.completion_on(g) <= lease.expiry + SimApp::kCompletionSlack) {
          ++it;
          continue;
        }
        const GpuIndex one[] = {g};
        app.lose(one);
        release(g);
        it = expiries_.erase(it);
        ++stats_.events;
        changed = true;
      }
      if (changed && !free_.empty() && any_demand()) round(now);
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

  void release(GpuIndex g) {
    gpus_[static_cast<std::size_t>(g)] = HeldLease{};
    free_.insert(std::lower_bound(free_.begin(), free_.end(), g), g);
  }

  void round(Seconds now) {
    arbiter::RoundInput input;
    input.cluster = &cluster_;
    input.round = ++stats_.rounds;
    input.now = now;
    input.free_gpus = free_;
    for (GpuIndex g = 0; g < cluster_.size(); ++g) {
      const HeldLease& l = gpus_[static_cast<std::size_t>(g)];
      if (l.app >= 0) input.leases.push_back({g, l.app, l.round, l.start, l.expiry});
    }
    for (auto& [id, app] : active_) input.apps.push_back(app.get());
    const arbiter::RoundOutcome outcome = policy_.run_round(input, rng_);
    if (!outcome.auction.bidders.empty()) {
      ++stats_.auctions;
      stats_.auction_offered_gpus += static_cast<long long>(input.free_gpus.size());
      const AppId worst = outcome.auction.bidders.front();
      if (std::none_of(outcome.auction.winners.begin(), outcome.auction.winners.end(),
                       [worst](const arbiter::AuctionRecord::Winner& w) { return w.app == worst && !w.kept.empty(); }))
        ++stats_.auctions_worst_bidder_won_nothing;
    }
    for (const arbiter::Grant& grant : outcome.grants) {
      auto it = active_.find(grant.app);
      if (it == active_.end())
        throw std::logic_error(std::string(policy_.name()) + ": granted GPUs to inactive app " + std::to_string(grant.app));
      for (GpuIndex g : grant.gpus) {
        auto pos = std::lower_bound(free_.begin(), free_.end(), g);
        if (pos == free_.end() || *pos != g)
          throw std::logic_error(std::string(policy_.name()) + ": granted GPU " + std::to_string(g) + " which is not free");
        free_.erase(pos);
        const Seconds expiry = now + settings_.lease * grant.lease_fraction;
        gpus_[static_cast<std::size_t>(g)] = HeldLease{grant.app, input.round, now, expiry};
        expiries_.emplace(expiry, g);
        ++stats_.granted_gpus;
        if (grant.kind == arbiter::GrantKind::kLeftover) ++stats_.leftover_gpus;
      }
      // GPUs the app cannot use go straight back; they wait for the next event.
      for (GpuIndex g : it->second->gain(grant.gpus)) release(g);
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
  AppSettings app_settings_;
  Rng rng_;
  std::vector<HeldLease> gpus_;
  std::vector<GpuIndex> free_;
  std::multimap<Seconds, GpuIndex> expiries_;
  std::map<AppId, std::unique_ptr<SimApp>> active_;
  std::size_t next_arrival_ = 0;
  Seconds last_arrival_ = 0;
  SimStats stats_;
};

}  // namespace

SimResult simulate(const Cluster& cluster, const std::vector<AppSpec>& apps, arbiter::Policy& policy,
                   const SimSettings& settings, const ProgressFn& progress) {
  if (!std::is_sorted(apps.begin(), apps.end(), [](const AppSpec& a, const AppSpec& b) { return a.arrival < b.arrival; }))
    throw std::invalid_argument("simulate: apps must be sorted by arrival");
  Run run(cluster, apps, policy, settings, progress);
  return run.run();
}

}  // namespace themis::sim
