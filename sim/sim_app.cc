#include "sim/sim_app.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "core/rng.h"
#include "bidder/job_packing.h"
#include "bidder/successive_halving.h"
#include "policy/arbiter/policies/bundle_choice.h"

namespace themis::sim {
namespace {

constexpr Seconds kInf = std::numeric_limits<Seconds>::infinity();

void insert_sorted(std::vector<GpuIndex>& into, std::span<const GpuIndex> gpus) {
  into.insert(into.end(), gpus.begin(), gpus.end());
  std::sort(into.begin(), into.end());
}

}  // namespace

std::string_view to_string(IdleRho rule) {
  switch (rule) {
    case IdleRho::kWholeDemand: return "whole-demand";
    case IdleRho::kFairShare: return "fair-share";
    case IdleRho::kOneGpu: return "one-gpu";
  }
  return "one-gpu";
}

std::optional<IdleRho> parse_idle_rho(std::string_view text) {
  if (text == "whole-demand") return IdleRho::kWholeDemand;
  if (text == "fair-share") return IdleRho::kFairShare;
  if (text == "one-gpu") return IdleRho::kOneGpu;
  return std::nullopt;
}

SimApp::SimApp(AppId id, const AppSpec& spec, const Cluster& cluster, const AppSettings& settings,
               int active_apps)
    : id_(id), spec_(spec), cluster_(cluster), settings_(settings), contention_(spec.arrival, active_apps),
      now_(spec.arrival) {
  if (spec_.jobs.empty()) throw std::invalid_argument("app " + spec_.name + ": no jobs");
  if (spec_.scheme == HyperScheme::kSuccessiveHalving) {
    const auto n = spec_.jobs.size();
    if ((n & (n - 1)) != 0)
      throw std::invalid_argument("app " + spec_.name + ": successive halving needs a power-of-two job count");
  }
  for (const JobSpec& js : spec_.jobs) {
    Job job;
    job.spec = &js;
    job.target = static_cast<double>(js.iterations);
    jobs_.push_back(job);
  }
  assignment_.resize(jobs_.size());
  if (settings_.estimate_error > 0) {
    Rng rng(settings_.error_seed * 1000003 + static_cast<std::uint64_t>(id_));
    iteration_error_ = settings_.estimate_error * (2 * rng.uniform() - 1);
    slowdown_error_ = settings_.estimate_error * (2 * rng.uniform() - 1);
  }

  Seconds budget = 0;
  int app_demand_max = 0;
  if (spec_.scheme == HyperScheme::kSingle) {
    for (const JobSpec& js : spec_.jobs) {
      budget += static_cast<double>(js.iterations) * js.serial_iter_time;
      app_demand_max += js.gpus;
    }
  } else {
    std::vector<Seconds> work;
    for (const JobSpec& js : spec_.jobs) work.push_back(static_cast<double>(js.iterations) * js.serial_iter_time);
    std::sort(work.begin(), work.end());
    const Seconds median = work[work.size() / 2];
    int first_job_gpus = spec_.jobs.front().gpus;
    for (int p = 0; p < phases(); ++p) {
      const int jobs = bidder::jobs_in_phase(static_cast<int>(spec_.jobs.size()), p);
      budget += jobs * median;
      int d = first_job_gpus << p;
      if (spec_.max_job_gpus > 0) d = std::min(d, spec_.max_job_gpus);
      app_demand_max = std::max(app_demand_max, jobs * d);
    }
  }
  t_cluster_ = budget / std::min(cluster_.size(), app_demand_max);

  if (spec_.scheme == HyperScheme::kSingle) {
    bidder::LifePhase p{.work = 0, .demand = 0, .longest = 0};
    for (const JobSpec& js : spec_.jobs) {
      const Seconds w = static_cast<double>(js.iterations) * js.serial_iter_time;
      p.work += w;
      p.longest = std::max(p.longest, w / js.gpus);
      p.demand += js.gpus;
    }
    independent_phases_.push_back(p);
  } else {
    std::vector<Seconds> work;
    for (const JobSpec& js : spec_.jobs) work.push_back(static_cast<double>(js.iterations) * js.serial_iter_time);
    std::sort(work.begin(), work.end());
    const Seconds median = work[work.size() / 2];
    for (int p = 0; p < phases(); ++p) {
      const int jobs = bidder::jobs_in_phase(static_cast<int>(spec_.jobs.size()), p);
      const double d = phase_job_demand(p);
      independent_phases_.push_back({.work = jobs * median, .demand = jobs * d, .longest = median / d});
    }
  }
  refresh_next_completion();
}

int SimApp::phases() const {
  if (spec_.scheme == HyperScheme::kSingle) return 1;
  int p = 1;
  for (std::size_t n = spec_.jobs.size(); n > 1; n /= 2) ++p;
  return p;
}

int SimApp::phase_job_demand(int phase) const {
  long long d = static_cast<long long>(spec_.jobs.front().gpus) << phase;
  if (spec_.max_job_gpus > 0) d = std::min<long long>(d, spec_.max_job_gpus);
  return static_cast<int>(std::min<long long>(d, cluster_.size()));
}

int SimApp::demand(const Job& job) const {
  if (spec_.scheme == HyperScheme::kSingle) return job.spec->gpus;
  return phase_job_demand(phase_);
}

Seconds SimApp::independent_time(double n_avg) const {
  return bidder::independent_time(independent_phases_, bidder::IndependentTime::kFairShare, cluster_.size(), n_avg);
}

int SimApp::current_demand() const {
  if (finished_) return 0;
  int d = 0;
  for (const Job& j : jobs_)
    if (runnable(j)) d += demand(j);
  return d;
}

double SimApp::slowdown(std::size_t job, const std::vector<GpuIndex>& gpus) const {
  return jobs_[job].spec->slowdown[static_cast<std::size_t>(cluster_.locality(gpus))];
}

double SimApp::rate(std::size_t job, const std::vector<GpuIndex>& gpus) const {
  if (gpus.empty()) return 0;
  const Job& j = jobs_[job];
  const int used = std::min(static_cast<int>(gpus.size()), demand(j));
  if (used < demand(j) && !j.spec->elastic) return 0;  // a gang runs on all its GPUs or not at all
  return used / (j.spec->serial_iter_time * slowdown(job, gpus));
}

void SimApp::fill(Assignment& a, std::vector<GpuIndex>& pool) const {
  if (pool.empty()) return;
  std::vector<std::size_t> order;
  for (std::size_t j = 0; j < jobs_.size(); ++j)
    if (runnable(jobs_[j]) && static_cast<int>(a[j].size()) < demand(jobs_[j])) order.push_back(j);
  // Which jobs run: those that were running at this instant first, then the most time left first (ties:
  // job order); or, where that ends the phase sooner (phase_finish, restarts counted), the most time left
  // first whether or not a job was running, so a longest job that lost its GPU takes it back from a
  // shorter one. Longest-first is the schedule the app's own estimate assumes (bidder::phase_finish_time
  // packs jobs longest first). An app scheduler that started waiting jobs in job order, or that, winning
  // back fewer GPUs than its expired lease took, restarted the jobs that had run in job order, left its
  // longest job queued while its ρ and bids priced it as running: it bid "no gain" for GPUs it needed
  // and finished later than it told the arbiter (traced on W1, docs/simulator.md "App scheduler").
  auto was_running = [&](std::size_t j) { return !a[j].empty() || !jobs_[j].running_on.empty(); };
  std::vector<std::size_t> longest_first = order;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const bool rx = was_running(x);
    const bool ry = was_running(y);
    if (rx != ry) return rx;
    return time_left(x) > time_left(y);
  });
  std::stable_sort(longest_first.begin(), longest_first.end(), [&](std::size_t x, std::size_t y) {
    const double tx = time_left(x);
    const double ty = time_left(y);
    if (tx != ty) return tx > ty;
    return was_running(x) && !was_running(y);
  });
  if (longest_first != order && phase_finish(a, pool.size(), longest_first) < phase_finish(a, pool.size(), order))
    order = std::move(longest_first);
  // A gang starts only on all its GPUs; one that cannot be completed from the pool waits and leaves the
  // pool to the jobs after it (backfill). The chosen jobs then take the GPUs they ran on where the pool
  // has them before any job takes new ones, so a lease lost and won back at one instant is not a move.
  std::vector<std::size_t> chosen;
  std::vector<int> deficit(jobs_.size(), 0);
  int free_count = static_cast<int>(pool.size());
  for (std::size_t j : order) {
    if (free_count == 0) break;
    const int need = demand(jobs_[j]) - static_cast<int>(a[j].size());
    if (!jobs_[j].spec->elastic && need > free_count) continue;
    deficit[j] = std::min(need, free_count);
    free_count -= deficit[j];
    chosen.push_back(j);
  }
  for (std::size_t j : chosen) {
    std::vector<GpuIndex> own;
    for (GpuIndex g : jobs_[j].running_on)
      if (static_cast<int>(own.size()) < deficit[j] && std::binary_search(pool.begin(), pool.end(), g) &&
          !std::binary_search(a[j].begin(), a[j].end(), g))
        own.push_back(g);
    arbiter::policies::remove_gpus(pool, own);
    insert_sorted(a[j], own);
    deficit[j] -= static_cast<int>(own.size());
  }
  // The widest gangs take new GPUs first: best_placed_bundle fits one job at a time, and one-GPU jobs
  // placed first can take the GPUs a gang needed to stay on one machine (tests/sim/rigid_gang_test.cc).
  std::stable_sort(chosen.begin(), chosen.end(), [&](std::size_t x, std::size_t y) { return deficit[x] > deficit[y]; });
  for (std::size_t j : chosen) {
    if (deficit[j] <= 0) continue;
    auto bundle = arbiter::policies::best_placed_bundle(cluster_, pool, a[j], deficit[j]);
    arbiter::policies::remove_gpus(pool, bundle);
    insert_sorted(a[j], bundle);
  }
}

Seconds SimApp::phase_finish(const Assignment& a, std::size_t free_gpus, std::span<const std::size_t> queue) const {
  std::vector<bidder::RunningGang> running;
  for (std::size_t j = 0; j < jobs_.size(); ++j)
    if (runnable(jobs_[j]) && !a[j].empty() && std::find(queue.begin(), queue.end(), j) == queue.end())
      running.push_back({.time_left = time_left(j), .gpus = static_cast<int>(a[j].size())});
  std::vector<bidder::QueuedGang> queued;
  for (std::size_t j : queue)
    queued.push_back({.time = time_left(j), .gpus = demand(jobs_[j]) - static_cast<int>(a[j].size()),
                      .restart = settings_.restart_cost, .resumes = !a[j].empty() || !jobs_[j].running_on.empty()});
  return bidder::list_schedule_finish(running, static_cast<int>(free_gpus), queued);
}

Seconds SimApp::time_left(std::size_t j) const {
  const Job& job = jobs_[j];
  return (job.target - job.done) * job.spec->serial_iter_time / demand(job);
}

int SimApp::usable_extra(int gpus) const {
  if (finished_ || gpus <= 0) return 0;
  const int cap = std::min(gpus, extra_demand());
  if (cap <= 0) return 0;
  // Elastic jobs use any count up to their deficits; a gang only its whole deficit. The counts the
  // gangs can use together are the subset sums of their deficits.
  int elastic = 0;
  std::vector<bool> reachable(static_cast<std::size_t>(cap) + 1, false);
  reachable.front() = true;
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    if (!runnable(jobs_[j])) continue;
    const int deficit = demand(jobs_[j]) - static_cast<int>(assignment_[j].size());
    if (deficit <= 0) continue;
    if (jobs_[j].spec->elastic) {
      elastic += deficit;
      continue;
    }
    for (int s = cap - deficit; s >= 0; --s)
      if (reachable[static_cast<std::size_t>(s)]) reachable[static_cast<std::size_t>(s + deficit)] = true;
  }
  int best = 0;
  for (int s = 0; s <= cap; ++s)
    if (reachable[static_cast<std::size_t>(s)]) best = std::max(best, std::min(cap, s + elastic));
  return best;
}

SimApp::Assignment SimApp::assignment_with(std::span<const GpuIndex> extra) const {
  Assignment a = assignment_;
  std::vector<GpuIndex> pool(extra.begin(), extra.end());
  std::sort(pool.begin(), pool.end());
  fill(a, pool);
  return a;
}

double SimApp::app_slowdown(const Assignment& a) const {
  double s = 1.0;
  for (std::size_t j = 0; j < a.size(); ++j)
    if (a[j].size() > 1) s = std::max(s, slowdown(j, a[j]));
  return s;
}

Seconds SimApp::median_serial_iter_time() const {
  std::vector<Seconds> t;
  for (const Job& j : jobs_)
    if (j.active) t.push_back(j.spec->serial_iter_time);
  if (t.empty()) return jobs_.front().spec->serial_iter_time;
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

bidder::AppState SimApp::model_state() const {
  bidder::AppState state;
  state.elapsed = now_ - spec_.arrival;
  state.life = independent_phases_;
  state.independent_time = bidder::IndependentTime::kFairShare;
  // Rigid gangs: the app's GPUs count in whole multiples of its gangs' common width, and holding nothing
  // it is priced on its widest gang (all its jobs can run, one after another). Elastic jobs run on any
  // number of GPUs up to their demand.
  bool any_elastic = false;
  int common = 0;
  int widest = 0;
  for (const Job& j : jobs_) {
    if (!runnable(j)) continue;
    any_elastic = any_elastic || j.spec->elastic;
    common = std::gcd(common, demand(j));
    widest = std::max(widest, demand(j));
  }
  state.gang = any_elastic || common == 0 ? 1 : common;
  state.smallest_bundle = any_elastic ? 0 : widest;
  state.demand_now = current_demand();
  state.cluster_gpus = cluster_.size();
  state.n_avg = contention_.average(now_);
  state.lease = settings_.lease;
  if (finished_) return state;
  const double iter_factor = 1 + iteration_error_;
  bidder::PhaseWork current;
  std::vector<int> gangs;  // each job's demand: its gang when rigid
  std::vector<Seconds> times;
  for (const Job& j : jobs_) {
    if (!j.active) continue;
    current.serial_work.push_back((j.target - j.done) * iter_factor * j.spec->serial_iter_time);
    current.job_demand_max = std::max(current.job_demand_max, demand(j));
    gangs.push_back(demand(j));
    times.push_back(j.spec->serial_iter_time);
  }
  // An app with an elastic job is packed elastically; otherwise every job runs on exactly its demand.
  const bool rigid = std::none_of(jobs_.begin(), jobs_.end(), [](const Job& j) { return j.spec->elastic; });
  if (rigid) state.remaining_job_gpus.push_back(std::move(gangs));
  if (spec_.scheme == HyperScheme::kSingle) {
    state.remaining.push_back(std::move(current));
    return state;
  }
  // Eq. 2: the phases left, each packed at its own job demand: a job's demand doubles each phase
  // (Hyperband: "the best n/2 jobs continue with a max demand of 2 GPUs ..."). Capping later phases at
  // the current phase's demand (bidder::SuccessiveHalvingApp's one job_demand_max: a 1-GPU phase 0 then
  // priced its 8-GPU last phase on one GPU) overstated an early-phase app's ρ up to about twice.
  current.job_demand_max = phase_job_demand(phase_);
  state.remaining.push_back(std::move(current));
  std::sort(times.begin(), times.end());
  const Seconds median = times[times.size() / 2];  // future phases' survivors are unknown (§4.3.2)
  double longest_iterations = 0;
  for (const JobSpec& js : spec_.jobs) longest_iterations = std::max(longest_iterations, static_cast<double>(js.iterations));
  for (int p = phase_ + 1; p < phases(); ++p) {
    const auto jobs = static_cast<std::size_t>(bidder::jobs_in_phase(static_cast<int>(spec_.jobs.size()), p));
    state.remaining.push_back({std::vector<Seconds>(jobs, longest_iterations * iter_factor * median), phase_job_demand(p)});
    if (rigid) state.remaining_job_gpus.emplace_back(jobs, phase_job_demand(p));
  }
  return state;
}

const bidder::AppModel& SimApp::model() const {
  if (!model_) model_.emplace(model_state());
  return *model_;
}

void SimApp::set_contention_ahead(double ahead) {
  if (ahead == contention_ahead_) return;
  contention_ahead_ = ahead;
  ranking_model_.reset();
}

double SimApp::current_rho() const {
  const double held_slowdown = held_.empty() ? 1.0 : estimated_slowdown(app_slowdown(assignment_));
  const bidder::AppModel* ranking = &model();
  if (settings_.contention_ahead) {
    if (!ranking_model_) ranking_model_.emplace(bidder::with_contention_ahead(model_state(), contention_ahead_));
    ranking = &*ranking_model_;
  }
  return ranking->ranking_rho(static_cast<int>(held_.size()), held_slowdown, attainable_slowdown(), settings_.idle_rho);
}

int SimApp::extra_demand() const {
  if (finished_) return 0;
  int extra = 0;
  for (std::size_t j = 0; j < jobs_.size(); ++j)
    if (runnable(jobs_[j])) extra += std::max(0, demand(jobs_[j]) - static_cast<int>(assignment_[j].size()));
  return extra;
}

double SimApp::attainable_slowdown() const {
  const Locality level = cluster_.tightest_locality(model().smallest_bundle());
  double worst = 1;
  for (const Job& j : jobs_)
    if (runnable(j) && demand(j) > 1) worst = std::max(worst, j.spec->slowdown[static_cast<std::size_t>(level)]);
  return estimated_slowdown(worst);
}

Bid SimApp::bid(const Offer& offer) {
  // The generator places a bundle by the widest level of held ∪ bundle. That is the placement the
  // new GPUs get only when they complete a running job's gang; when every job short of GPUs is still
  // waiting, the new GPUs start new jobs and the held ones (other jobs' GPUs) do not widen them.
  bool completes_running_job = false;
  for (std::size_t j = 0; j < jobs_.size(); ++j)
    if (runnable(jobs_[j]) && !assignment_[j].empty() && static_cast<int>(assignment_[j].size()) < demand(jobs_[j]))
      completes_running_job = true;
  // "No new GPUs": what it holds now till completion or, holding nothing, one GPU after one more lease
  // (architecture.md §3), so that every bundle it can use is a gain over losing this auction.
  bidder::BidQuery query;
  query.app = id_;
  if (completes_running_job) query.placement_held = held_;
  query.held_gpus = static_cast<int>(held_.size());
  query.remaining_demand = extra_demand();
  query.rho_no_new = model().rho_without_new(static_cast<int>(held_.size()),
                                             estimated_slowdown(app_slowdown(assignment_)), attainable_slowdown());
  query.settings = settings_.bid;
  if (!completes_running_job) {
    // The new GPUs start waiting gangs, each on the best-placed GPUs of the bundle (fill): a bundle
    // spread over machines whose gangs each fit on one machine runs at one machine's slowdown.
    int widest = 0;
    for (std::size_t j = 0; j < jobs_.size(); ++j)
      if (runnable(jobs_[j]) && assignment_[j].empty()) widest = std::max(widest, demand(jobs_[j]));
    query.gang = widest;
  }
  // A bundle's widest level slows only the jobs that span several GPUs: one-GPU jobs (most of W1's
  // apps) never communicate, so their app's bid does not pay a placement penalty for a spread bundle.
  for (int l = 0; l < kLocalityLevels; ++l) {
    double worst = 1;
    for (const Job& j : jobs_)
      if (runnable(j) && demand(j) > 1) worst = std::max(worst, j.spec->slowdown[static_cast<std::size_t>(l)]);
    query.slowdown[static_cast<std::size_t>(l)] = estimated_slowdown(worst);
  }
  const double lie = id_ == settings_.liar ? settings_.lie : 0.0;
  if (lie != 0) {
    // ρ scales with S when the app is bound by its slowest job: over-reporting the slowdown of placements
    // spread over machines by `lie` reports their ρ × (1 + lie); every other row is reported truthfully.
    query.report = [lie](double rho, int gpus, Locality placement) {
      if (gpus <= 1 || placement <= Locality::kSameMachine) return rho;
      return rho * (1 + lie);
    };
  }
  return model().bid(cluster_, offer, query);
}

Seconds SimApp::remaining_service() const {
  if (finished_) return 0;
  Seconds left = 0;
  for (const Job& j : jobs_)
    if (j.active) left += (j.target - j.done) * j.spec->serial_iter_time;
  if (spec_.scheme == HyperScheme::kSuccessiveHalving) {
    std::vector<Seconds> work;
    for (const JobSpec& js : spec_.jobs) work.push_back(static_cast<double>(js.iterations) * js.serial_iter_time);
    std::sort(work.begin(), work.end());
    for (int p = phase_ + 1; p < phases(); ++p)
      left += bidder::jobs_in_phase(static_cast<int>(spec_.jobs.size()), p) * work[work.size() / 2];
  }
  return left * (1 + iteration_error_);
}

Seconds SimApp::remaining_time(std::span<const GpuIndex> extra) const {
  const Assignment a = assignment_with(extra);
  if (finished_) return 0;
  return model().remaining_time(static_cast<int>(held_.size() + extra.size()), estimated_slowdown(app_slowdown(a)));
}

double SimApp::loss_decrease(std::span<const GpuIndex> extra) const {
  const Assignment a = assignment_with(extra);
  double decrease = 0;
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    if (!runnable(jobs_[j]) || a[j].empty()) continue;
    const Job& job = jobs_[j];
    const double after = std::min(job.target, job.done + settings_.lease * rate(j, a[j]));
    decrease += job.spec->loss.at(job.done) - job.spec->loss.at(after);
  }
  return decrease;
}

double SimApp::placement_score(std::span<const GpuIndex> extra) const {
  const Assignment a = assignment_with(extra);
  double weighted = 0;
  double gpus = 0;
  for (std::size_t j = 0; j < a.size(); ++j) {
    if (a[j].empty()) continue;
    weighted += static_cast<double>(a[j].size()) / slowdown(j, a[j]);
    gpus += static_cast<double>(a[j].size());
  }
  return gpus > 0 ? weighted / gpus : 1.0;
}

std::optional<arbiter::AppModel::FinishTimeTerms> SimApp::finish_time_terms() const {
  FinishTimeTerms terms;
  terms.elapsed = now_ - spec_.arrival;
  terms.isolated = model().independent_time();
  terms.demand = static_cast<int>(held_.size()) + extra_demand();
  terms.remaining = finished_ ? 0 : model().remaining_time(std::max(1, terms.demand), estimated_slowdown(1.0));
  return terms;
}

double SimApp::placement_score_so_far() const {
  return running_gpu_seconds_ > 0 ? placed_gpu_seconds_ / running_gpu_seconds_ : 1.0;
}

Seconds SimApp::progress_start(std::size_t j) const {
  const Job& job = jobs_[j];
  if (assignment_[j] != job.running_on) return now_ + settings_.restart_cost;
  return std::max(now_, job.resumes_at);
}

void SimApp::advance_to(Seconds t) {
  if (t < now_) throw std::logic_error("app " + spec_.name + ": time went backwards");
  const Seconds dt = t - now_;
  if (dt > 0 && !finished_) {
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      Job& job = jobs_[j];
      if (!runnable(job) || assignment_[j].empty()) {
        job.running_on.clear();  // stopped: whatever it gets next is a restart
        continue;
      }
      // The GPU set is committed once time moves on, so GPUs lost and won back at one instant (a
      // renewed lease) cost nothing.
      job.resumes_at = progress_start(j);
      job.running_on = assignment_[j];
      job.done = std::min(job.target, job.done + std::max(0.0, t - job.resumes_at) * rate(j, assignment_[j]));
      const double g = static_cast<double>(assignment_[j].size());
      running_gpu_seconds_ += g * dt;
      placed_gpu_seconds_ += g * dt / slowdown(j, assignment_[j]);
    }
    gpu_time_ += static_cast<double>(held_.size()) * dt;
  }
  if (t != now_) state_changed();
  now_ = t;
}

std::vector<GpuIndex> SimApp::settle() {
  if (finished_) return {};
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    Job& job = jobs_[j];
    if (!runnable(job)) continue;
    const double r = rate(j, assignment_[j]);
    const bool complete = job.done >= job.target || (r > 0 && (job.target - job.done) / r <= kCompletionSlack);
    if (!complete) continue;
    job.done = job.target;
    if (spec_.scheme == HyperScheme::kSingle) job.active = false;
    else job.phase_done = true;
  }
  if (spec_.scheme == HyperScheme::kSingle) {
    finished_ = std::none_of(jobs_.begin(), jobs_.end(), [](const Job& j) { return j.active; });
  } else if (std::all_of(jobs_.begin(), jobs_.end(), [](const Job& j) { return !j.active || j.phase_done; })) {
    if (phase_ + 1 >= phases()) {
      finished_ = true;
    } else {
      // The better half (lowest loss; ties: lower job index) goes on to the next phase.
      std::vector<std::size_t> alive;
      for (std::size_t j = 0; j < jobs_.size(); ++j)
        if (jobs_[j].active) alive.push_back(j);
      std::stable_sort(alive.begin(), alive.end(), [this](std::size_t x, std::size_t y) {
        return jobs_[x].spec->loss.at(jobs_[x].done) < jobs_[y].spec->loss.at(jobs_[y].done);
      });
      const std::size_t keep = (alive.size() + 1) / 2;
      for (std::size_t k = 0; k < alive.size(); ++k) {
        Job& job = jobs_[alive[k]];
        if (k < keep) {
          job.phase_done = false;
          job.target += static_cast<double>(job.spec->iterations);
        } else {
          job.active = false;
        }
      }
      ++phase_;
    }
  }
  if (finished_) {
    std::vector<GpuIndex> all = held_;
    held_.clear();
    for (auto& a : assignment_) a.clear();
    refresh_next_completion();
    return all;
  }
  return gain({});
}

std::vector<GpuIndex> SimApp::gain(std::span<const GpuIndex> gpus) {
  insert_sorted(held_, gpus);
  // Jobs that stopped give their GPUs back to the app's pool; waiting jobs take from it.
  std::vector<GpuIndex> assigned;
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    if (!runnable(jobs_[j])) assignment_[j].clear();
    assigned.insert(assigned.end(), assignment_[j].begin(), assignment_[j].end());
  }
  std::sort(assigned.begin(), assigned.end());
  std::vector<GpuIndex> pool;
  std::set_difference(held_.begin(), held_.end(), assigned.begin(), assigned.end(), std::back_inserter(pool));
  fill(assignment_, pool);
  arbiter::policies::remove_gpus(held_, pool);
  refresh_next_completion();
  return pool;
}

std::vector<GpuIndex> SimApp::lose(std::span<const GpuIndex> gpus) {
  std::vector<GpuIndex> sorted(gpus.begin(), gpus.end());
  std::sort(sorted.begin(), sorted.end());
  arbiter::policies::remove_gpus(held_, sorted);
  for (auto& a : assignment_) arbiter::policies::remove_gpus(a, sorted);
  // A gang that lost a GPU stops; the rest of its GPUs go to the app's other jobs or back.
  bool stopped = false;
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    if (jobs_[j].spec->elastic || assignment_[j].empty() || static_cast<int>(assignment_[j].size()) >= demand(jobs_[j]))
      continue;
    assignment_[j].clear();
    stopped = true;
  }
  if (stopped) return gain({});
  refresh_next_completion();
  return {};
}

Seconds SimApp::completion_of(std::size_t j) const {
  return progress_start(j) + (jobs_[j].target - jobs_[j].done) / rate(j, assignment_[j]);
}

Seconds SimApp::completion_on(GpuIndex gpu) const {
  if (finished_) return kInf;
  for (std::size_t j = 0; j < jobs_.size(); ++j)
    if (runnable(jobs_[j]) && std::find(assignment_[j].begin(), assignment_[j].end(), gpu) != assignment_[j].end())
      return completion_of(j);
  return kInf;
}

void SimApp::refresh_next_completion() {
  state_changed();
  next_completion_ = kInf;
  if (finished_) return;
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    if (!runnable(jobs_[j]) || assignment_[j].empty()) continue;
    next_completion_ = std::min(next_completion_, completion_of(j));
  }
}

}  // namespace themis::sim
