#include "policy/planner/round_planner.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "policy/arbiter/leases.h"
#include "policy/arbiter/placement.h"
#include "policy/planner/probe_gpus.h"

namespace themis::planner {

namespace {

// An app's model as the policy sees it in a round: the GPUs whose lease ends now are offered again, so
// the holder's demand counts them (it may win them back).
class WithExpiringGpus final : public arbiter::AppModel {
 public:
  WithExpiringGpus(arbiter::AppModel& inner, int expiring) : inner_(inner), expiring_(expiring) {}
  AppId id() const override { return inner_.id(); }
  double current_rho() const override { return inner_.current_rho(); }
  int extra_demand() const override { return inner_.extra_demand() + expiring_; }
  int gpus_per_job() const override { return inner_.gpus_per_job(); }
  // With expiring GPUs counted in, which gangs they would restart is the app's to say: any count then.
  int usable_extra(int gpus) const override {
    return expiring_ == 0 ? inner_.usable_extra(gpus) : std::clamp(gpus, 0, extra_demand());
  }
  Bid bid(const Offer& offer) override { return inner_.bid(offer); }
  Seconds attained_service() const override { return inner_.attained_service(); }
  Seconds remaining_service() const override { return inner_.remaining_service(); }
  Seconds remaining_time(std::span<const GpuIndex> extra) const override { return inner_.remaining_time(extra); }
  double loss_decrease(std::span<const GpuIndex> extra) const override { return inner_.loss_decrease(extra); }
  double placement_score(std::span<const GpuIndex> extra) const override { return inner_.placement_score(extra); }
  std::optional<FinishTimeTerms> finish_time_terms() const override {
    auto terms = inner_.finish_time_terms();
    if (terms) terms->demand += expiring_;
    return terms;
  }

 private:
  arbiter::AppModel& inner_;
  int expiring_;
};

bool machine_up(const RoundSnapshot& s, int machine) {
  return s.machine_up.empty() || s.machine_up.at(static_cast<std::size_t>(machine));
}

bool machine_drained(const RoundSnapshot& s, int machine) {
  return !s.machine_drained.empty() && s.machine_drained.at(static_cast<std::size_t>(machine));
}

bool same_lease(const HeldLease& a, const HeldLease& b) {
  return a.gpu == b.gpu && a.app == b.app && a.round == b.round && a.start == b.start;
}

// GPUs that may be leased in `s`: on an up machine that is not drained, and held by no lease but those in `ending`.
std::set<GpuIndex> available_gpus(const RoundSnapshot& s, const std::vector<HeldLease>& ending) {
  std::set<GpuIndex> held;
  for (const HeldLease& l : s.leases) {
    const bool ends = std::any_of(ending.begin(), ending.end(), [&](const HeldLease& e) { return same_lease(e, l); });
    if (!ends) held.insert(l.gpu);
  }
  std::set<GpuIndex> out;
  for (const Gpu& gpu : s.cluster->gpus()) {
    if (machine_up(s, gpu.machine) && !machine_drained(s, gpu.machine) && !held.count(gpu.index)) out.insert(gpu.index);
  }
  return out;
}

int up_gpu_count(const RoundSnapshot& s) {
  int n = 0;
  for (const Gpu& gpu : s.cluster->gpus()) n += machine_up(s, gpu.machine) ? 1 : 0;
  return n;
}

LeaseKind lease_kind(arbiter::GrantKind kind) {
  switch (kind) {
    case arbiter::GrantKind::kAuction: return LeaseKind::kAuction;
    case arbiter::GrantKind::kLeftover: return LeaseKind::kLeftover;
    case arbiter::GrantKind::kDirect: return LeaseKind::kDirect;
  }
  return LeaseKind::kDirect;
}

}  // namespace

bool lease_ends(Seconds expiry, Seconds now, Seconds batch_window) { return expiry <= now + std::max<Seconds>(0, batch_window); }

RoundFrame open_round(const RoundSnapshot& s) {
  if (!s.cluster) throw std::invalid_argument("round snapshot without a cluster");
  RoundFrame frame;
  frame.round = s.round;
  const Seconds leases_end_by = std::min(s.now, s.offers_sent_at.value_or(s.now));
  std::map<AppId, int> expiring_per_app;
  for (const HeldLease& l : s.leases) {
    if (lease_ends(l.expiry, leases_end_by, s.settings.batch_window)) {
      frame.expiring.push_back(l);
      ++expiring_per_app[l.app];
    }
  }
  const std::set<GpuIndex> free = available_gpus(s, frame.expiring);
  const std::vector<GpuIndex> free_list(free.begin(), free.end());

  // An app one of whose jobs is wider than every up GPU together cannot start a job: it takes no GPU, not
  // even a probe's (docs/arbiter.md, "Leftover").
  const int up_gpus = up_gpu_count(s);
  std::vector<ProbeRequest> probe_waiting;
  int demand = 0;
  for (const AppState& app : s.apps) {
    if (app.gpus_per_job > up_gpus) continue;
    if (app.probe_waiting) {
      probe_waiting.push_back({app.id, app.gpus_per_job});
      continue;
    }
    if (!app.model) continue;
    const auto expiring = expiring_per_app.find(app.id);
    frame.models.push_back(std::make_unique<WithExpiringGpus>(*app.model, expiring == expiring_per_app.end() ? 0 : expiring->second));
    demand += frame.models.back()->extra_demand();
  }
  if (s.reserved_probes) {
    for (const auto& [app, gpu] : *s.reserved_probes) {
      const AppId id = app;  // a lambda cannot capture a structured binding (clang 14, the fuzz build)
      if (std::any_of(probe_waiting.begin(), probe_waiting.end(), [id](const ProbeRequest& r) { return r.app == id; }) &&
          free.count(gpu))
        frame.probes[app] = gpu;
    }
  } else {
    frame.probes = pick_probe_gpus(probe_waiting, free_list, *s.cluster);
  }
  for (GpuIndex g : free_list) {
    const bool probe = std::any_of(frame.probes.begin(), frame.probes.end(), [g](const auto& p) { return p.second == g; });
    if (!probe) frame.offered.push_back(g);
  }
  // A lease ending on a drained host ends in this round even when nothing is free: nobody may renew it.
  const bool unavailable_lease_ends = std::any_of(frame.expiring.begin(), frame.expiring.end(), [&](const HeldLease& l) {
    return machine_drained(s, s.cluster->gpu(l.gpu).machine);
  });
  frame.empty = !unavailable_lease_ends && (free.empty() || (demand == 0 && probe_waiting.empty() && frame.expiring.empty()));
  frame.needs_policy = !frame.empty && !frame.offered.empty() && demand > 0;

  frame.input.cluster = s.cluster;
  frame.input.round = s.round;
  frame.input.now = s.now;
  frame.input.free_gpus = frame.offered;
  for (const HeldLease& l : s.leases) {
    if (lease_ends(l.expiry, leases_end_by, s.settings.batch_window)) continue;
    frame.input.leases.push_back({l.gpu, l.app, l.round, l.start, l.expiry});
    if (machine_drained(s, s.cluster->gpu(l.gpu).machine)) frame.input.draining.push_back(l.gpu);
  }
  std::sort(frame.input.draining.begin(), frame.input.draining.end());
  for (auto& m : frame.models) frame.input.apps.push_back(m.get());
  return frame;
}

RoundPlan settle_round(const RoundSnapshot& current, const RoundFrame& frame, arbiter::RoundOutcome outcome) {
  RoundPlan plan;
  plan.round = frame.round;
  plan.now = current.now;
  plan.offered = frame.offered;
  const Seconds now = current.now;
  const RoundSettings& settings = current.settings;

  // Leases the frame saw ending that are still held now (an app that ended released its own).
  for (const HeldLease& e : frame.expiring) {
    if (std::any_of(current.leases.begin(), current.leases.end(), [&](const HeldLease& l) { return same_lease(e, l); }))
      plan.expired.push_back(e);
  }
  const std::set<GpuIndex> available = available_gpus(current, plan.expired);
  std::map<AppId, const AppState*> apps;
  for (const AppState& app : current.apps) apps[app.id] = &app;

  // Probes: one GPU, one job, for probe_duration.
  for (const auto& [app_id, gpu] : frame.probes) {
    const auto it = apps.find(app_id);
    if (it == apps.end() || !it->second->probe_waiting || !available.count(gpu) || it->second->pending_jobs.empty()) continue;
    const AppState& app = *it->second;
    const JobId job = app.pending_jobs.front();
    plan.probes[app_id] = gpu;
    plan.leases.push_back({gpu, app_id, job, now, now + settings.probe_duration, LeaseKind::kProbe});
    if (app.placement == JobPlacement::kByCoordinator) plan.starts.push_back({{app_id, job}, {gpu}});
  }

  const std::set<GpuIndex> offered(frame.offered.begin(), frame.offered.end());
  std::set<AppId> competing;
  for (const arbiter::AppModel* m : frame.input.apps) competing.insert(m->id());
  std::set<GpuIndex> renewed;
  std::set<JobRef> renewed_jobs;
  for (const arbiter::Grant& grant : outcome.grants) {
    if (!competing.count(grant.app))
      throw std::logic_error("round " + std::to_string(frame.round) + ": the policy granted GPUs to app " +
                             std::to_string(grant.app) + ", which did not compete");
    std::vector<GpuIndex> pool;
    for (GpuIndex g : grant.gpus) {
      if (!offered.count(g))
        throw std::logic_error("round " + std::to_string(frame.round) + ": the policy granted GPU " + std::to_string(g) +
                               ", which was not offered");
      if (!available.count(g)) {
        plan.idle.push_back({g, "its host was lost while the round was decided"});
      } else {
        pool.push_back(g);
      }
    }
    const auto app_it = apps.find(grant.app);
    if (app_it == apps.end()) {
      for (GpuIndex g : pool) plan.idle.push_back({g, "its app ended while the round was decided"});
      continue;
    }
    const AppState& app = *app_it->second;
    const Seconds expiry = arbiter::lease_expiry(now, settings.lease_duration, grant.lease_fraction);
    const LeaseKind kind = lease_kind(grant.kind);
    std::vector<GpuIndex> used;
    if (app.placement == JobPlacement::kByApp) {
      // App leases: the app places its jobs itself, on all it holds. Less than one job's worth is of no use
      // to it: such a grant is idle rather than leased (a policy bug or a hidden payment cut it short).
      const auto keeps = std::count_if(current.leases.begin(), current.leases.end(), [&](const HeldLease& l) {
        return l.app == app.id && !std::any_of(plan.expired.begin(), plan.expired.end(),
                                               [&](const HeldLease& e) { return same_lease(e, l); });
      });
      if (static_cast<int>(pool.size() + static_cast<std::size_t>(keeps)) < app.gpus_per_job) {
        for (GpuIndex g : pool) {
          plan.idle.push_back({g, "granted " + std::to_string(pool.size()) + " GPUs to app " + std::to_string(app.id) +
                                      ", fewer than one of its jobs needs (" + std::to_string(app.gpus_per_job) + ")"});
        }
        continue;
      }
      // A GPU it won back keeps naming the job that ran on it.
      for (GpuIndex g : pool) {
        const auto old = std::find_if(plan.expired.begin(), plan.expired.end(),
                                      [&](const HeldLease& e) { return e.gpu == g && e.app == app.id; });
        if (old != plan.expired.end()) {
          renewed.insert(g);
          plan.leases.push_back({g, app.id, old->job, now, expiry, LeaseKind::kRenewal});
        } else {
          plan.leases.push_back({g, app.id, app.first_job, now, expiry, kind});
        }
        used.push_back(g);
      }
    } else {
      std::set<GpuIndex> left(pool.begin(), pool.end());
      // Renewals first: a job whose expiring GPUs all came back keeps running on them.
      std::map<JobId, std::vector<GpuIndex>> expiring_jobs;
      for (const HeldLease& e : plan.expired) {
        if (e.app == app.id) expiring_jobs[e.job].push_back(e.gpu);
      }
      for (const auto& [job, gpus] : expiring_jobs) {
        if (!std::all_of(gpus.begin(), gpus.end(), [&](GpuIndex g) { return left.count(g) > 0; })) continue;
        for (GpuIndex g : gpus) {
          plan.leases.push_back({g, app.id, job, now, expiry, LeaseKind::kRenewal});
          renewed.insert(g);
          left.erase(g);
          used.push_back(g);
        }
        renewed_jobs.insert({app.id, job});
        plan.renewed_jobs.push_back({app.id, job});
      }
      // New placements for pending jobs, each on the most local GPUs of the grant, leaving large blocks whole.
      const auto per_job = static_cast<std::size_t>(std::max(1, app.gpus_per_job));
      int slots = app.free_job_slots;
      for (const JobId job : app.pending_jobs) {
        if (slots <= 0 || left.size() < per_job) break;
        const std::vector<GpuIndex> candidates(left.begin(), left.end());
        std::vector<GpuIndex> pick = arbiter::most_local_subset(*current.cluster, candidates, static_cast<int>(per_job),
                                                                arbiter::GroupPreference::kBestFit);
        for (GpuIndex g : pick) {
          plan.leases.push_back({g, app.id, job, now, expiry, kind});
          left.erase(g);
          used.push_back(g);
        }
        plan.starts.push_back({{app.id, job}, std::move(pick)});
        --slots;
      }
      for (GpuIndex g : left) plan.idle.push_back({g, "granted but no job of the app fits it"});
    }
    std::sort(used.begin(), used.end());
    plan.grants[app.id] = {std::move(used), grant.kind};
  }

  // Leases that ended and were not won back.
  std::set<JobRef> preempted;
  for (const HeldLease& e : plan.expired) {
    if (renewed.count(e.gpu)) continue;
    if (e.placement == JobPlacement::kByApp) {
      plan.lost.emplace_back(e.app, e.gpu);
    } else if (!renewed_jobs.count({e.app, e.job}) && preempted.insert({e.app, e.job}).second) {
      plan.preempted.push_back({e.app, e.job});
    }
  }
  plan.renewed_gpus.assign(renewed.begin(), renewed.end());
  for (const arbiter::IdleGpu& idle : outcome.idle) plan.idle.push_back(idle);
  plan.outcome = std::move(outcome);
  return plan;
}

RoundPlan plan_round(const RoundSnapshot& snapshot, arbiter::Policy& policy, Rng& rng) {
  const RoundFrame frame = open_round(snapshot);
  arbiter::RoundOutcome outcome;
  if (frame.needs_policy) outcome = policy.run_round(frame.input, rng);
  return settle_round(snapshot, frame, std::move(outcome));
}

}  // namespace themis::planner
