#pragma once
// One app as the simulator sees it: its jobs' progress on the GPUs it holds, its own app scheduler
// (which job runs on which of its GPUs; successive halving), and its answers to the arbiter's
// questions (arbiter::AppModel). Its ρ, idle ρ, T_id, remaining time and bids come from the bidder's
// app model (bidder/app_model.h), the one a launcher's agent uses.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <span>
#include <string_view>
#include <vector>

#include "bidder/app_model.h"
#include "bidder/bid_generator.h"
#include "bidder/contention.h"
#include "policy/arbiter/policy.h"
#include "core/topology.h"
#include "sim/trace.h"

namespace themis::sim {

// What an app holding no GPUs reports as its current ρ, the Themis filter's ranking key: the bidder's
// app model's rule (bidder::IdleRho): kWholeDemand (the default), ρ after one more lease on all its jobs can use
// now; kFairShare, ρ after one more lease on its fair share ⌊R_C / N_avg⌋
// GPUs (at least 1, at most what its jobs can use now); kOneGpu, ρ after one more lease on one GPU, which
// for an app of many jobs is many times its real prospect (an 18-job app holding nothing ranked at
// ρ ≈ 7 beside a starved one-job app at 2.5), so wide apps outrank narrow ones.
using IdleRho = bidder::IdleRho;
std::string_view to_string(IdleRho rule);
std::optional<IdleRho> parse_idle_rho(std::string_view text);  // "whole-demand" | "fair-share" | "one-gpu"

struct AppSettings {
  Seconds lease = 600;  // the lease length: horizon of SLAQ's loss decrease, wait of "no new GPUs"
  bidder::BidSettings bid;
  // Themis Fig 17: every estimate the app gives (ρ, bids, remaining time and service) uses its
  // iterations left × (1 + e_iter) and slowdowns S × (1 + e_s), floored at 1, with e_iter and e_s
  // drawn per app uniformly from [−estimate_error, estimate_error] (seeded by error_seed and the id).
  double estimate_error = 0;
  std::uint64_t error_seed = 1;
  // Themis Fig 18: the app `liar` (−1: none) over-reports the slowdown of bundles spanning machines by
  // `lie` (their ρ × (1 + lie) in its bids), to win the dense placements; other rows are truthful.
  AppId liar = -1;
  double lie = 0;
  // A job whose GPU set changes (started, moved, grown or shrunk) makes no progress for this long:
  // checkpoint, container start, restore (Themis §6.3: ~35 s container start, 5–10 s checkpoint).
  Seconds restart_cost = 0;
  IdleRho idle_rho = IdleRho::kWholeDemand;  // current ρ while holding no GPUs
  // The ranking key's N_avg over the app's whole life, its future from the apps present now (set_contention_ahead,
  // bidder/contention.h); off: the average so far stands for the future too.
  bool contention_ahead = true;
};

class SimApp final : public arbiter::AppModel {
 public:
  SimApp(AppId id, const AppSpec& spec, const Cluster& cluster, const AppSettings& settings, int active_apps);

  // --- simulation ---
  // Moves the app's clock to `t`, advancing every running job. t >= now().
  void advance_to(Seconds t);
  // A job within this many seconds of its target at an event has completed (settle() counts it): the
  // event time was computed from the same rate, so only rounding separates it from its target.
  static constexpr Seconds kCompletionSlack = 1e-6;
  // The next instant a job (or phase) completes at the current rates; +inf if nothing runs.
  Seconds next_completion() const { return next_completion_; }
  // The instant the job running on `gpu` completes (its phase, under successive halving) at the
  // current rates; +inf if no job runs on it.
  Seconds completion_on(GpuIndex gpu) const;
  // Settles jobs that completed at now(): phase changes, GPU reassignment. Returns the GPUs the app can
  // no longer use (to be released by the caller).
  std::vector<GpuIndex> settle();
  // The app gains `gpus` (distinct, not held) / loses `gpus` (held). Both return the GPUs it can no
  // longer use (to be released by the caller): gain what no job can take, lose the rest of a gang that
  // lost a GPU and that no other job takes.
  std::vector<GpuIndex> gain(std::span<const GpuIndex> gpus);
  std::vector<GpuIndex> lose(std::span<const GpuIndex> gpus);
  void observe_contention(int active_apps) {
    contention_.observe(now_, active_apps);
    state_changed();
  }

  bool finished() const { return finished_; }
  Seconds now() const { return now_; }
  const AppSpec& spec() const { return spec_; }
  const std::vector<GpuIndex>& held() const { return held_; }
  Seconds gpu_time() const { return gpu_time_; }
  // GPU-time-weighted mean of 1/S over the app's running jobs (1 if it never ran).
  double placement_score_so_far() const;
  Seconds cluster_time() const { return t_cluster_; }                 // T_cluster
  double contention_average() const { return contention_.average(now_); }  // N_avg so far
  // T_id (Themis §3.2): the finish time on an exclusive 1/N_avg share of the cluster, R_C / N_avg GPUs
  // (fractional), with linear speedup and no placement slowdown, bounded below by the app's longest
  // job (a 2-GPU job cannot use more than 2 GPUs however large the share). Eq. 1 / 2's
  // T_cluster · N_avg equals it only when the app could use the whole cluster.
  Seconds independent_time(double n_avg) const;
  // A demand-weighted count of the GPUs the app's unfinished jobs could use now (for load figures).
  int current_demand() const;
  // How long it stays, for the others' forecasts: bidder::AppModel::remaining_at_fair_share.
  Seconds remaining_at_fair_share() const { return model().remaining_at_fair_share(); }
  // The contention it will see over the rest of its life (bidder::contention_ahead over the others' remaining
  // times), set by the simulator before each round; the ranking key uses it when AppSettings::contention_ahead.
  void set_contention_ahead(double ahead);

  // --- arbiter::AppModel ---
  AppId id() const override { return id_; }
  double current_rho() const override;
  int extra_demand() const override;
  int usable_extra(int gpus) const override;
  Bid bid(const Offer& offer) override;
  Seconds attained_service() const override { return gpu_time_; }
  Seconds remaining_service() const override;
  Seconds remaining_time(std::span<const GpuIndex> extra) const override;
  double loss_decrease(std::span<const GpuIndex> extra) const override;
  double placement_score(std::span<const GpuIndex> extra) const override;
  std::optional<FinishTimeTerms> finish_time_terms() const override;

  // The slowdown of its best placement this cluster has for its smallest bundle (Cluster::tightest_locality):
  // what "no new GPUs" prices the wait on. Not 1: a 4-GPU gang on one-GPU machines never runs that fast,
  // and pricing the wait at that speed made every real bundle look worse than waiting.
  double attainable_slowdown() const;

 private:
  struct Job {
    const JobSpec* spec = nullptr;
    double done = 0;          // iterations run in all
    double target = 0;        // iterations at which the current phase (or the job) ends
    bool active = true;       // still in the app (not finished, not halved away)
    bool phase_done = false;  // successive halving: reached this phase's target
    std::vector<GpuIndex> running_on;  // the GPUs it last ran on (empty: stopped)
    Seconds resumes_at = 0;            // end of its current restart (AppSettings::restart_cost)
  };
  using Assignment = std::vector<std::vector<GpuIndex>>;  // GPUs per job

  int demand(const Job& job) const;
  bool runnable(const Job& job) const { return job.active && !job.phase_done; }
  double slowdown(std::size_t job, const std::vector<GpuIndex>& gpus) const;
  double rate(std::size_t job, const std::vector<GpuIndex>& gpus) const;  // iterations / s
  // `base` plus GPUs from `pool` filling each runnable job's deficit; the pool keeps what is left.
  void fill(Assignment& base, std::vector<GpuIndex>& pool) const;
  Assignment assignment_with(std::span<const GpuIndex> extra) const;
  // App-level S of an assignment: the largest slowdown of a job on more than one GPU (1 if none).
  double app_slowdown(const Assignment& a) const;
  // The app model of its state now, built on first use after every change (its T_sh cache lives with it).
  const bidder::AppModel& model() const;
  bidder::AppState model_state() const;
  void state_changed() {
    model_.reset();
    ranking_model_.reset();
  }
  double estimated_slowdown(double s) const { return std::max(1.0, s * (1 + slowdown_error_)); }
  // When job j (holding GPUs) makes progress again: after a restart if its GPU set changed.
  Seconds progress_start(std::size_t j) const;
  Seconds completion_of(std::size_t j) const;  // job j holds GPUs and is runnable
  // Job j's time left on its full demand, without placement slowdown: the order the app starts its jobs in.
  Seconds time_left(std::size_t j) const;
  // When the app's current jobs would all end if those holding GPUs in `a` run on and the `queue`d ones
  // start in that order on `free_gpus` more (bidder::list_schedule_finish; fill() compares two orders).
  Seconds phase_finish(const Assignment& a, std::size_t free_gpus, std::span<const std::size_t> queue) const;
  void refresh_next_completion();
  Seconds median_serial_iter_time() const;
  int phases() const;
  int phase_job_demand(int phase) const;

  // T_id's terms: per phase (one for a single-scheme app) the serial work, the GPUs it can use at
  // once, and its longest job's time at full demand.
  std::vector<bidder::LifePhase> independent_phases_;
  double iteration_error_ = 0;  // e_iter (AppSettings::estimate_error)
  double slowdown_error_ = 0;   // e_s
  AppId id_;
  AppSpec spec_;
  const Cluster& cluster_;
  AppSettings settings_;
  bidder::ContentionAverage contention_;
  std::vector<Job> jobs_;
  Assignment assignment_;
  std::vector<GpuIndex> held_;  // sorted
  int phase_ = 0;
  bool finished_ = false;
  Seconds now_ = 0;
  Seconds next_completion_ = 0;
  Seconds t_cluster_ = 0;
  Seconds gpu_time_ = 0;
  // The model of the current state: policies ask the same question many times per round (Optimus and
  // SRTF per GPU step, Themis per bid row), and it caches T_sh per (GPUs, S). Reset whenever the state
  // (progress, GPUs, time, contention) changes.
  mutable std::optional<bidder::AppModel> model_;
  double contention_ahead_ = std::numeric_limits<double>::quiet_NaN();  // set_contention_ahead; NaN: none yet
  mutable std::optional<bidder::AppModel> ranking_model_;  // with N_avg over its whole life; reset with model_
  double placed_gpu_seconds_ = 0;  // Σ gpus · dt / S over running jobs
  double running_gpu_seconds_ = 0;  // Σ gpus · dt over running jobs
};

}  // namespace themis::sim
