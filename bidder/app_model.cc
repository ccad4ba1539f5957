#include "bidder/app_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "bidder/contention.h"
#include "bidder/input_checks.h"
#include "bidder/job_packing.h"

namespace themis::bidder {
namespace {

constexpr const char* kWhere = "app model";
// ρ of a bid row the app cannot use (it adds no whole gang): the row is left out of the bid.
constexpr double kUnusable = 1e12;

bool non_negative(double v) { return std::isfinite(v) && v >= 0; }

// Field names are built only for a bad field: the simulator builds a model at every change of an app.
void validate(const AppState& state) {
  detail::require_non_negative(kWhere, "elapsed", state.elapsed);
  if (!state.remaining_job_gpus.empty() && state.remaining_job_gpus.size() != state.remaining.size())
    detail::reject(kWhere, "remaining_job_gpus", "empty or one entry per phase (" + std::to_string(state.remaining.size()) + ")",
                   static_cast<double>(state.remaining_job_gpus.size()));
  for (std::size_t p = 0; p < state.remaining.size(); ++p) {
    const PhaseWork& phase = state.remaining[p];
    for (std::size_t j = 0; j < phase.serial_work.size(); ++j)
      if (!non_negative(phase.serial_work[j]))
        detail::reject(kWhere, "remaining[" + std::to_string(p) + "].serial_work[" + std::to_string(j) + "]",
                       ">= 0 and finite", phase.serial_work[j]);
    if (phase.job_demand_max < 1)
      detail::reject(kWhere, "remaining[" + std::to_string(p) + "].job_demand_max", ">= 1", phase.job_demand_max);
    if (!state.remaining_job_gpus.empty() && state.remaining_job_gpus.at(p).size() != phase.serial_work.size())
      detail::reject(kWhere, "remaining_job_gpus[" + std::to_string(p) + "]",
                     "one entry per job (" + std::to_string(phase.serial_work.size()) + ")",
                     static_cast<double>(state.remaining_job_gpus.at(p).size()));
  }
  if (state.life.empty()) throw std::invalid_argument("app model: life must have at least one phase");
  for (std::size_t p = 0; p < state.life.size(); ++p) {
    const LifePhase& phase = state.life[p];
    if (!non_negative(phase.work) || !(std::isfinite(phase.demand) && phase.demand >= 1) || !non_negative(phase.longest)) {
      const std::string name = "life[" + std::to_string(p) + "]";
      detail::require_non_negative(kWhere, name + ".work", phase.work);
      detail::require_at_least(kWhere, name + ".demand", phase.demand, 1);
      detail::require_non_negative(kWhere, name + ".longest", phase.longest);
    }
  }
  detail::require_at_least(kWhere, "gang", state.gang, 1);
  detail::require_non_negative(kWhere, "max_gpus", state.max_gpus);
  detail::require_non_negative(kWhere, "smallest_bundle", state.smallest_bundle);
  if (state.max_gpus > 0 && state.max_gpus < state.gang)
    detail::reject(kWhere, "max_gpus", "0 or >= gang (" + std::to_string(state.gang) + ")", state.max_gpus);
  detail::require_non_negative(kWhere, "demand_now", state.demand_now);
  detail::require_at_least(kWhere, "cluster_gpus", state.cluster_gpus, 1);
  detail::require_positive(kWhere, "n_avg", state.n_avg);
  detail::require_non_negative(kWhere, "lease", state.lease);
  detail::require_non_negative(kWhere, "start_overhead", state.start_overhead);
  detail::require_non_negative(kWhere, "probe_time", state.probe_time);
}

}  // namespace

Seconds independent_time(std::span<const LifePhase> life, IndependentTime rule, int cluster_gpus, double n_avg,
                         Seconds start_overhead) {
  const Seconds starts = start_overhead * static_cast<double>(life.size());
  Seconds total = 0;
  if (rule == IndependentTime::kFairShare) {
    const double share = static_cast<double>(cluster_gpus) / std::max(1.0, n_avg);
    for (const LifePhase& p : life) total += std::max(p.work / std::min(share, p.demand), p.longest);
    return total + starts;
  }
  double demand = 1;
  for (const LifePhase& p : life) {
    total += p.work;
    demand = std::max(demand, p.demand);
  }
  return total / std::min(static_cast<double>(cluster_gpus), demand) * n_avg + starts;
}

AppModel::AppModel(AppState state) : state_(std::move(state)) {
  validate(state_);
  t_id_ = bidder::independent_time(state_.life, state_.independent_time, state_.cluster_gpus, state_.n_avg,
                                   state_.start_overhead) +
          state_.probe_time;
  detail::require_positive(kWhere, "T_id (from life)", t_id_);
}

int usable_gpus(int gpus, int gang, int max_gpus) {
  const int whole = std::max(0, gpus) / std::max(1, gang) * std::max(1, gang);
  return max_gpus > 0 ? std::min(whole, max_gpus) : whole;
}

int AppModel::usable_gpus(int gpus) const { return bidder::usable_gpus(gpus, state_.gang, state_.max_gpus); }

Seconds AppModel::remaining_time(int gpus, double slowdown) const {
  const int usable = usable_gpus(gpus);
  const auto key = std::make_pair(usable, slowdown);
  if (const auto it = remaining_cache_.find(key); it != remaining_cache_.end()) return it->second;
  Seconds total = 0;
  for (std::size_t p = 0; p < state_.remaining.size(); ++p) {
    const PhaseWork& phase = state_.remaining[p];
    if (state_.remaining_job_gpus.empty()) {
      total += phase_finish_time(phase.serial_work, usable, phase.job_demand_max, slowdown);
      continue;
    }
    // A later phase's gangs may be wider than what it holds now (successive halving doubles them): it
    // is priced on at least one gang of its width, which the app will have to win by then.
    const std::vector<int>& gangs = state_.remaining_job_gpus[p];
    const int widest = gangs.empty() ? 0 : *std::max_element(gangs.begin(), gangs.end());
    total += rigid_phase_finish_time(phase.serial_work, gangs, p == 0 ? usable : std::max(usable, widest), slowdown);
  }
  if (!state_.remaining.empty()) total += state_.start_overhead * static_cast<double>(state_.remaining.size() - 1);
  remaining_cache_.emplace(key, total);
  return total;
}

double AppModel::rho(int gpus, double slowdown, Seconds wait) const {
  detail::require_non_negative(kWhere, "wait", wait);
  return (state_.elapsed + wait + remaining_time(gpus, slowdown)) / t_id_;
}

int AppModel::fair_share_gpus() const {
  const int share = static_cast<int>(
      std::floor(static_cast<double>(state_.cluster_gpus) / std::max(1.0, state_.n_avg)));
  return std::max(smallest_bundle(), usable_gpus(std::min(state_.demand_now, share)));
}

Seconds AppModel::remaining_at_fair_share() const { return remaining_time(fair_share_gpus(), 1.0); }

AppState with_contention_ahead(AppState state, double ahead) {
  if (!(std::isfinite(ahead) && ahead >= 1)) return state;  // no forecast: lifetime_contention keeps the past
  const Seconds remaining = AppModel(state).remaining_at_fair_share();
  state.n_avg = lifetime_contention(state.n_avg, state.elapsed, ahead, remaining);
  return state;
}

int AppModel::smallest_bundle() const { return state_.smallest_bundle > 0 ? state_.smallest_bundle : state_.gang; }

int AppModel::idle_share(IdleRho rule) const {
  switch (rule) {
    case IdleRho::kWholeDemand: return std::max(smallest_bundle(), usable_gpus(state_.demand_now));
    case IdleRho::kFairShare: return fair_share_gpus();
    case IdleRho::kOneGpu: return smallest_bundle();
  }
  return smallest_bundle();
}

double AppModel::idle_rho(IdleRho rule, double ideal_slowdown) const {
  return rho(idle_share(rule), ideal_slowdown, state_.lease);
}

double AppModel::ranking_rho(int held, double held_slowdown, double ideal_slowdown, IdleRho rule) const {
  const int share = idle_share(rule);
  const double waiting = rho(std::max(held, share), ideal_slowdown, state_.lease);
  if (usable_gpus(held) == 0) return waiting;
  const double now = rho(held, held_slowdown);
  if (!std::isfinite(now)) return waiting;
  return held < share ? std::min(now, waiting) : now;
}

double AppModel::rho_without_new(int kept, double kept_slowdown, double ideal_slowdown) const {
  if (usable_gpus(kept) > 0) {
    const double r = rho(kept, kept_slowdown);
    if (std::isfinite(r)) return r;
  }
  // Nothing kept, or too few for its widest rigid gang to ever run: it waits a lease for more.
  return rho(std::max(kept, smallest_bundle()), ideal_slowdown, state_.lease);
}

Bid AppModel::bid(const Cluster& cluster, const Offer& offer, const BidQuery& query) const {
  const int placed = static_cast<int>(query.placement_held.size());
  if (query.held_gpus < placed)
    detail::reject(kWhere, "held_gpus", ">= placement_held's " + std::to_string(placed), query.held_gpus);
  detail::require_non_negative(kWhere, "remaining_demand", query.remaining_demand);
  detail::require_positive(kWhere, "rho_no_new", query.rho_no_new);
  for (int l = 0; l < kLocalityLevels; ++l) {
    const double s = query.slowdown[static_cast<std::size_t>(l)];
    if (!(std::isfinite(s) && s >= 1))
      detail::reject(kWhere, "slowdown[" + std::string(to_string(static_cast<Locality>(l))) + "]", ">= 1 and finite", s);
  }
  Bid out{query.app, query.rho_no_new, {}};
  if (query.remaining_demand == 0 || offer.gpus.empty()) return out;

  const int unseen = query.held_gpus - placed;  // kept GPUs that do not place the new bundle
  const int usable_held = usable_gpus(query.held_gpus);
  auto valuation = [&](int passed, Locality placement) {
    const int total = passed + unseen;
    if (usable_gpus(total) <= usable_held) return kUnusable;
    double value = rho(total, query.slowdown[static_cast<std::size_t>(placement)]);
    if (query.report) value = query.report(value, total, placement);
    return std::isfinite(value) && value > 0 ? std::min(value, kUnusable) : kUnusable;
  };
  const Bid generated = generate_bid(cluster, offer,
                                     {.app = query.app, .held = query.placement_held,
                                      .remaining_demand = query.remaining_demand, .rho_no_new = query.rho_no_new,
                                      .gang = query.gang, .renewing = query.renewing},
                                     valuation, query.settings);
  for (const auto& row : generated.rows) {
    const int total = query.held_gpus + static_cast<int>(row.gpus.size());
    if (total % state_.gang != 0 || row.rho >= kUnusable) continue;
    out.rows.push_back(row);
  }
  return out;
}

}  // namespace themis::bidder
