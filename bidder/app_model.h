#pragma once
// One app's finish-time fairness, the one model behind both the launcher's agent (launcher/agent.h) and
// the simulator's apps (sim/sim_app.h): current ρ, the ρ of an app that holds nothing ("idle ρ", the
// filter's ranking key), T_id and the bid table over an offer. The caller describes the app's state;
// everything computed from it is here, so what themis-sim measures is what a launcher bids.
//
//   T_sh(G)  = elapsed + Σ over the phases left of phase_finish_time(phase's work, usable(|G|), d_p, S)
//              (rigid gangs: rigid_phase_finish_time, a later phase on at least one of its gangs)
//   ρ(G)     = T_sh(G) / T_id
//   usable(g) = g rounded down to whole gangs, at most max_gpus
//
// T_id (IndependentTime), over the phases of the app's whole life (work W_p, demand d_p, longest job ℓ_p),
// plus L = start_overhead per phase (and, in AppModel, the probe's time once):
//   kFairShare:             Σ_p max(W_p / min(R_C / N_avg, d_p), ℓ_p) + L·|life|   (the paper's §3.2 definition)
//   kClusterTimesContention: Σ_p W_p / min(R_C, max_p d_p) · N_avg + L·|life|       (Eq. 1 / Eq. 2's T_cluster · N_avg)
//
// Holding nothing (IdleRho), the app ranks by ρ after one more lease on all it can use, max(gang, usable(demand_now))
// (kWholeDemand), on its fair share max(gang, usable(min(demand_now, ⌊R_C / N_avg⌋))) (kFairShare) or on one gang
// (kOneGpu); its bids' "no new GPUs" value is ρ after one more lease on one gang, so every bundle it can use is a gain.
// Pure: no clock, files or sockets. See docs/bidder.md "App model".
#include <array>
#include <functional>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "bidder/bid_generator.h"
#include "core/bid.h"
#include "core/ids.h"
#include "core/topology.h"

namespace themis::bidder {

// Which T_id the model divides by (see above; docs/bidder.md "App model" says why both exist).
enum class IndependentTime { kFairShare, kClusterTimesContention };

// What an app holding no GPUs reports as its current ρ (Eq. 1 gives ∞; papers.md §1.13.4).
enum class IdleRho {
  // After one more lease on all it can use (at least one gang): the best ρ it can still reach after a wait. An
  // app wider than its fair share makes up a wait by running on more than that share later, a narrower one
  // cannot, so the wait weighs on the narrow one's key in full and on the wide one's less (docs/bidder.md, "App
  // model").
  kWholeDemand,
  kFairShare,  // after one more lease on its fair share ⌊R_C / N_avg⌋, at least one gang, at most its demand
  kOneGpu,     // after one more lease on its smallest bundle: one GPU, or one gang if its jobs need gangs
};

// Work left in one phase: one entry per job, the seconds it still needs on one GPU with no slowdown.
struct PhaseWork {
  std::vector<Seconds> serial_work;  // each >= 0
  int job_demand_max = 1;            // most GPUs one job of the phase can use; >= 1
};

// One phase of the app's whole life, for T_id.
struct LifePhase {
  Seconds work = 0;     // the phase's serial GPU-seconds, all its jobs; >= 0
  double demand = 1;    // GPUs the phase's jobs can use at once; >= 1
  Seconds longest = 0;  // its longest job at that job's full demand, no slowdown; >= 0
};

struct AppState {
  Seconds elapsed = 0;               // now − arrival, queueing included; >= 0
  std::vector<PhaseWork> remaining;  // the current phase first, then the later ones; empty: finished
  // Rigid gangs: per phase of `remaining`, the GPUs each of its jobs runs on, exactly
  // (rigid_phase_finish_time). Empty: each job runs on 1 to job_demand_max GPUs (phase_finish_time).
  std::vector<std::vector<int>> remaining_job_gpus;
  std::vector<LifePhase> life;       // every phase of its life; at least one, T_id > 0
  IndependentTime independent_time = IndependentTime::kFairShare;
  int gang = 1;          // a job runs on a whole number of gangs of this size only (the launcher's gpus_per_job)
  // The bundle an app holding nothing is priced on (idle ρ, "no new GPUs") and the floor of its fair
  // share: the fewest GPUs on which all its jobs can run; 0: one gang. Rigid jobs of mixed widths set
  // their widest job (on one gang, the gcd of their widths, the widest job never runs: ρ is infinite).
  int smallest_bundle = 0;
  int max_gpus = 0;      // most GPUs it can use at once; 0: only the jobs' demands bound it
  int demand_now = 0;    // GPUs its runnable jobs could use now (the fair share's cap); >= 0
  int cluster_gpus = 1;  // R_C; >= 1
  double n_avg = 1;      // N_avg; > 0
  Seconds lease = 0;     // one lease: how long an app holding nothing waits at least; >= 0
  // Seconds from a job's launch to its first iteration (process start, model build, checkpoint restore), as
  // the launcher measures it; >= 0. An app alone pays it once per phase too, so each phase of `life` adds it
  // to T_id, and each phase of `remaining` after the current one to T_sh. themis-sim's apps start at once: 0.
  Seconds start_overhead = 0;
  // Seconds the app's first-iteration probe held its other jobs back (docs/reliability.md, "Probe": the launch of
  // the probe's attempt to its first reported iteration), as the launcher measures it; >= 0. An app alone on the
  // cluster is probed too, so T_id counts it once; elapsed already holds it. themis-sim's apps are not probed: 0.
  Seconds probe_time = 0;
};

// T_id of `life` under `rule`, plus `start_overhead` per phase (exposed for a finished app's achieved ρ with its
// final N_avg).
Seconds independent_time(std::span<const LifePhase> life, IndependentTime rule, int cluster_gpus, double n_avg,
                         Seconds start_overhead = 0);

// GPUs an app can use out of `gpus`: whole gangs of `gang`, at most `max_gpus` (0: no cap).
int usable_gpus(int gpus, int gang, int max_gpus);

// What a bid is made of besides the offer.
struct BidQuery {
  AppId app = 0;
  // The held GPUs a new bundle's placement is taken with (BidRequest::held): those whose jobs the new
  // GPUs would join. Not offered.
  std::span<const GpuIndex> placement_held;
  int held_gpus = 0;         // every GPU the app keeps, placement_held included; >= placement_held.size()
  int remaining_demand = 0;  // GPUs it could use beyond them; >= 0
  double rho_no_new = 0;     // the bid's "no new GPUs" value (AppModel::rho_without_new); > 0
  // S of a bundle whose widest level (with placement_held) is L; each >= 1.
  std::array<double, kLocalityLevels> slowdown{1, 1, 1, 1};
  // What the app reports for a row of `gpus` GPUs in all at `placement` whose ρ is `rho`; empty: ρ itself.
  // (themis-sim's lying app, Themis Fig 18.)
  std::function<double(double rho, int gpus, Locality placement)> report;
  BidSettings settings;
  // > 1: the new GPUs start gangs of this many GPUs of their own (placement_held empty); a bundle is
  // priced at the widest level one of its gangs spans (BidRequest::gang).
  int gang = 0;
  // Offered GPUs its jobs run on now (BidRequest::renewing): equally good rows naming them come first.
  std::span<const GpuIndex> renewing;
};

// `state` with N_avg over the app's whole life (contention.h lifetime_contention): `state.n_avg` over what it has
// lived, `ahead` (contention_ahead) over what it still needs on its fair share. The filter's ranking key is
// ranking_rho on a model of the result; bids need no forecast (T_id cancels within one app's rows).
AppState with_contention_ahead(AppState state, double ahead);

class AppModel {
 public:
  // Throws std::invalid_argument naming the first bad field.
  explicit AppModel(AppState state);

  const AppState& state() const { return state_; }
  // GPUs it can use out of `gpus`: whole gangs, at most max_gpus.
  int usable_gpus(int gpus) const;
  Seconds independent_time() const { return t_id_; }
  // T_sh − elapsed holding `gpus` GPUs in all at slowdown `slowdown` (>= 1) until it completes: 0 when it
  // has no work left, +infinity when it has some and no usable GPU.
  Seconds remaining_time(int gpus, double slowdown) const;
  // ρ if it waits `wait` seconds and then runs on `gpus` GPUs at `slowdown`.
  double rho(int gpus, double slowdown, Seconds wait = 0) const;
  // Its fair share when it holds nothing: max(gang, usable(min(demand_now, ⌊R_C / N_avg⌋))).
  int fair_share_gpus() const;
  // remaining_time on its fair share with no slowdown: how long it stays, as every app counts it for the others'
  // N_avg ahead (contention.h contention_ahead).
  Seconds remaining_at_fair_share() const;
  // The GPUs `rule` prices an app holding nothing on: all it can use, its fair share, or its smallest bundle.
  int idle_share(IdleRho rule) const;
  // AppState::smallest_bundle, or one gang when it is 0.
  int smallest_bundle() const;
  // Current ρ while holding nothing (see IdleRho), at `ideal_slowdown` (S of its best placement).
  double idle_rho(IdleRho rule, double ideal_slowdown) const;
  // The filter's ranking key holding `held` GPUs at `held_slowdown`: its current ρ, but for an app short of
  // its share (the rule's: idle_share(rule)) never more than idle_rho would be with
  // max(held, share) GPUs, since such an app is as far behind an exclusive share as one holding nothing.
  // Without the cap an app that wins one GPU of a ten-job demand ranks several times worse than before it
  // won, and takes every small offer one GPU at a time (docs/bidder.md, "App model").
  double ranking_rho(int held, double held_slowdown, double ideal_slowdown, IdleRho rule) const;
  // "No new GPUs": ρ running on the `kept` GPUs it keeps (at `kept_slowdown`) when it can finish on them,
  // else ρ after one more lease on max(kept, smallest_bundle()) at `ideal_slowdown`.
  double rho_without_new(int kept, double kept_slowdown, double ideal_slowdown) const;
  // The bid table over `offer` (sorted): bidder::generate_bid valued by ρ(held + k, S(placement)); rows
  // that add no whole gang are left out. No rows when it wants nothing or nothing is offered.
  Bid bid(const Cluster& cluster, const Offer& offer, const BidQuery& query) const;

 private:
  AppState state_;
  Seconds t_id_ = 0;
  // remaining_time by (usable GPUs, S): a policy asks the same question many times per round.
  mutable std::map<std::pair<int, double>, Seconds> remaining_cache_;
};

}  // namespace themis::bidder
