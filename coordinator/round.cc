// Rounds and launches: the part of the coordinator that drives the Policy.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "coordinator/coordinator.h"
#include "coordinator/loop_metrics.h"
#include "coordinator/store/round_store.h"
#include "policy/planner/recorded_app_model.h"
#include "policy/planner/round_planner.h"
#include "policy/planner/round_record.h"
#include "spec/app_spec.h"

namespace themis::coordinator {

using nlohmann::json;

std::unique_ptr<Coordinator::LoadedRound> Coordinator::load_round(double now, RoundId round) {
  store::RoundStore store(db_);
  const store::RegisteredCluster registered = store.registered_cluster();
  if (registered.spec.machines.empty()) return nullptr;
  auto loaded = std::make_unique<LoadedRound>();
  loaded->cluster = std::make_unique<Cluster>(registered.spec);
  for (std::size_t i = 0; i < registered.first_gpu.size(); ++i) {
    if (loaded->cluster->machines()[i].first_gpu != registered.first_gpu[i]) {
      spdlog::error("GPU numbering of host {} disagrees with the database; round skipped", registered.spec.machines[i].name);
      return nullptr;
    }
  }
  planner::RoundSnapshot& s = loaded->snapshot;
  s.cluster = loaded->cluster.get();
  s.round = round;
  s.now = now;
  s.settings.lease_duration = static_cast<double>(config_.lease_duration_ms) / 1000.0;
  s.settings.probe_duration = static_cast<double>(config_.probe_duration_ms) / 1000.0;
  s.machine_up = registered.up;
  s.machine_drained = registered.drained;
  const auto placement_of = [this](AppId app) {
    return has_launcher(app) ? planner::JobPlacement::kByApp : planner::JobPlacement::kByCoordinator;
  };
  for (const store::StoredLease& l : store.active_leases()) {
    s.leases.push_back({l.gpu, l.app, l.job, l.round, l.start, l.expiry, placement_of(l.app)});
  }
  const std::map<std::int64_t, double> attained = store.attained_gpu_seconds(now);
  for (store::StoredApp& app : store.round_apps()) {
    planner::AppState state;
    state.id = app.id;
    state.placement = placement_of(app.id);
    state.gpus_per_job = app.gpus_per_job;
    state.free_job_slots = std::max(0, app.max_concurrent_jobs - app.active_jobs);
    state.first_job = app.first_job;
    state.pending_jobs = std::move(app.pending_jobs);
    // A probing app waits for its probe's verdict before it competes (probe.cc); a launcher app's probe
    // job is started by its launcher, so it waits for it to attach.
    if (app.probe == "waiting" || app.probe == "running") {
      if (app.probe == "waiting" && (launcher_mode(app.id) == LauncherMode::kNone || has_launcher(app.id))) {
        state.probe_waiting = true;
        s.apps.push_back(std::move(state));
      }
      continue;
    }
    const auto launcher = launchers_.find(app.id);
    // An app run by a launcher waits for it to attach; the coordinator never runs its jobs itself.
    if (launcher == launchers_.end() && launcher_mode(app.id) != LauncherMode::kNone) continue;
    int demand = std::min(static_cast<int>(state.pending_jobs.size()), state.free_job_slots) * app.gpus_per_job;
    if (launcher != launchers_.end() && launcher->second.demand) demand = *launcher->second.demand;
    const double rho =
        launcher != launchers_.end() && launcher->second.rho ? *launcher->second.rho : store.attained_rho(app.id, now);
    loaded->rho_of[app.id] = rho;
    std::optional<Bid> bid;
    if (pending_offer_) {
      if (const auto b = pending_offer_->bids.find(app.id); b != pending_offer_->bids.end()) bid = b->second;
    }
    auto model = std::make_unique<planner::RecordedAppModel>(app.id, rho, demand, std::move(bid), app.gpus_per_job);
    if (launcher != launchers_.end() && launcher->second.slowdowns) model->set_slowdowns(*loaded->cluster, *launcher->second.slowdowns);
    if (const auto a = attained.find(app.id); a != attained.end()) model->set_attained_service(a->second);
    loaded->models.push_back(std::move(model));
    state.model = loaded->models.back().get();
    s.apps.push_back(std::move(state));
  }
  if (pending_offer_ && pending_offer_->round == round) {
    s.reserved_probes = pending_offer_->probes;
    s.offers_sent_at = pending_offer_->sent_at;
  }
  return loaded;
}

bool Coordinator::send_offers(const planner::RoundFrame& frame, const std::vector<AppId>& recipients, double now) {
  PendingOffer offer{frame.round, now + kOfferDeadlineMs / 1000.0, {}, {}, frame.probes};
  for (const AppId app : recipients) {
    if (has_launcher(app)) offer.recipients.insert(app);
  }
  if (offer.recipients.empty()) return false;
  for (const AppId app : offer.recipients) {
    net::OutMessage out(next_request_id_++);
    auto msg = out.body().initOffer();
    msg.setRound(frame.round);
    auto gpus = msg.initGpus(static_cast<unsigned>(frame.offered.size()));
    for (std::size_t i = 0; i < frame.offered.size(); ++i) gpus.set(static_cast<unsigned>(i), frame.offered[i]);
    msg.setDeadlineMs(kOfferDeadlineMs);
    msg.setActiveApps(static_cast<std::uint32_t>(frame.input.apps.size()));
    reply(launchers_[app].routing_id, out);
  }
  offer.sent_at = env_->now();
  pending_offer_ = std::move(offer);
  return true;
}

void Coordinator::run_round(double now) {
  if (auction_) return;  // one round at a time: the next is planned once this one is applied
  // Offers went to launchers: wait for their bids (or the deadline) before the auction.
  if (pending_offer_ && now < pending_offer_->deadline && !pending_offer_->all_bids_in()) return;
  {
    store::Database::Transaction admission(db_);
    admit_apps(now);
    settle_probes(now);
    admission.commit();
  }
  RoundTiming timing;
  timing.started_at = now;
  timing.trigger = round_trigger_;
  const auto requested_at = round_requested_at_;
  round_requested_at_.reset();
  round_trigger_.clear();
  bool waiting_for_bids = false;
  struct OfferReset {
    std::optional<PendingOffer>& offer;
    RoundId& next_round_floor;
    const bool& keep;
    ~OfferReset() {
      if (keep || !offer) return;
      next_round_floor = std::max(next_round_floor, offer->round + 1);
      offer.reset();
    }
  } offer_reset{pending_offer_, next_round_floor_, waiting_for_bids};

  const RoundId round = std::max<RoundId>(store::RoundStore(db_).next_round_id(), next_round_floor_);
  std::unique_ptr<LoadedRound> loaded = load_round(now, round);
  if (!loaded) return;
  planner::RoundFrame frame = planner::open_round(loaded->snapshot);
  if (frame.empty) return;
  timing.offered_to = frame.needs_policy ? policy_->offer_recipients(frame.input) : std::vector<AppId>{};
  if (frame.needs_policy && (!pending_offer_ || pending_offer_->round != round) && send_offers(frame, timing.offered_to, now)) {
    waiting_for_bids = true;
    round_requested_at_ = requested_at;  // run again when the bids are in
    round_trigger_ = timing.trigger;
    return;
  }
  timing.event_at = requested_at.value_or(now);  // the earliest resource event behind this round
  for (const planner::HeldLease& l : frame.expiring) timing.event_at = std::min(timing.event_at, l.expiry);
  if (pending_offer_ && pending_offer_->round == round) timing.offers_sent_at = pending_offer_->sent_at;
  timing.auction_started = env_->now();
  timing.opened = planner::snapshot_to_json(loaded->snapshot).dump();
  timing.rng_state = json(rng_.state()).dump();
  if (!frame.needs_policy) {
    timing.auction_finished = timing.auction_started;
    apply_round(planner::settle_round(loaded->snapshot, frame, {}), *loaded, loaded->snapshot, timing);
    return;
  }
  auction_.emplace(AuctionInFlight{std::move(loaded), std::move(frame), std::move(timing), {}});
  const arbiter::RoundInput* input = &auction_->frame.input;
  arbiter::Policy* policy = policy_.get();
  Rng* rng = &rng_;
  auction_->outcome = std::async(std::launch::async, [policy, input, rng] { return policy->run_round(*input, *rng); });
}

void Coordinator::finish_auction() {
  if (!auction_ || auction_->outcome.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  AuctionInFlight flight = std::move(*auction_);
  auction_.reset();
  flight.timing.auction_finished = env_->now();
  const RoundId round = flight.frame.round;
  arbiter::RoundOutcome outcome;
  try {
    outcome = flight.outcome.get();
  } catch (const std::exception& e) {
    spdlog::error("round {}: the policy failed ({}); the round is dropped and planned again", round, e.what());
    trigger("policy failed");
    return;
  }
  // Apps may have ended and hosts gone while the policy ran: the outcome is settled against the state now.
  const std::unique_ptr<LoadedRound> current = load_round(flight.timing.auction_finished, round);
  if (!current) {
    trigger("cluster changed during the auction");
    return;
  }
  apply_round(planner::settle_round(current->snapshot, flight.frame, std::move(outcome)), *flight.loaded, current->snapshot,
              flight.timing);
}

// One transaction writes the round, its leases, job starts, preemptions and records; only then are
// launchers told (architecture: a crash before the commit means the round never happened).
void Coordinator::apply_round(const planner::RoundPlan& plan, const LoadedRound& loaded, const planner::RoundSnapshot& settled,
                              const RoundTiming& timing) {
  store::RoundStore store(db_);
  const double now = plan.now;
  const RoundId round = plan.round;
  store::Database::Transaction tx(db_);
  json outcome_json = {{"grants", json::array()}, {"idle", json::array()}};
  for (const auto& idle : plan.idle) outcome_json["idle"].push_back({{"gpu", idle.gpu}, {"reason", idle.reason}});
  const arbiter::AuctionRecord& auction = plan.outcome.auction;
  for (const auto& w : auction.winners) {
    outcome_json["auction_winners"].push_back({{"app", w.app}, {"pf_bundle", w.pf_bundle}, {"rho", w.rho}, {"c", w.c}, {"kept", w.kept}});
  }
  if (!auction.bidders.empty()) outcome_json["auction_gap"] = auction.gap;
  if (const auto& r = plan.outcome.reservation) outcome_json["reservation"] = {{"app", r->app}, {"reason", r->reason}};
  store.insert_round(round, timing.started_at, timing.auction_finished, timing.trigger, std::string(policy_->name()),
                     static_cast<std::int64_t>(plan.offered.size()), static_cast<std::int64_t>(loaded.models.size()),
                     json(timing.offered_to).dump());
  store.end_leases(plan.expired, plan.renewed_gpus, now);
  for (const planner::PlannedLease& lease : plan.leases) store.insert_lease(lease, round);
  for (const planner::JobStart& start : plan.starts) store.start_job(start.job.app, start.job.job, start.gpus, now);
  for (const auto& [app, gpu] : plan.probes) {
    const AppId prober = app;  // a structured binding cannot be captured (clang 14)
    const auto lease = std::find_if(plan.leases.begin(), plan.leases.end(), [prober](const planner::PlannedLease& l) {
      return l.app == prober && l.kind == planner::LeaseKind::kProbe;
    });
    note_probe_started(app, gpu, lease->job, round, now);
    outcome_json["grants"].push_back({{"app", app}, {"gpus", {gpu}}, {"kind", "probe"}});
  }
  for (const auto& [app, grant] : plan.grants) {
    outcome_json["grants"].push_back({{"app", app}, {"gpus", grant.gpus}, {"kind", arbiter::grant_kind_name(grant.kind)}});
    if (has_launcher(app)) event(now, "LeaseGranted", app, std::nullopt, "", round, json(grant.gpus).dump());
  }
  for (const planner::JobRef& job : plan.renewed_jobs) {
    std::vector<GpuIndex> gpus;
    for (const auto& l : plan.leases) {
      if (l.app == job.app && l.job == job.job && l.kind == planner::LeaseKind::kRenewal) gpus.push_back(l.gpu);
    }
    event(now, "LeaseRenewed", job.app, job.job, "", round, json(gpus).dump());
  }
  for (const planner::JobStart& start : plan.starts) {
    if (!plan.probes.count(start.job.app)) event(now, "LeaseGranted", start.job.app, start.job.job, "", round, json(start.gpus).dump());
  }
  // Leases not renewed: the job is preempted (checkpoint, then back to PENDING). For an app with a
  // launcher, any job on a GPU it no longer holds is stopped.
  std::set<planner::JobRef> stops(plan.preempted.begin(), plan.preempted.end());
  for (const auto& [app, gpu] : plan.lost) {
    for (const std::int64_t job : store.jobs_on_gpu(app, gpu)) stops.insert({app, job});
  }
  for (const planner::JobRef& job : stops) {
    event(now, "LeaseExpired", job.app, job.job, "", round, "not renewed: preempting");
    stop_job(job.app, job.job, now, "Preempted");
  }
  // One bid record per competing app, for explain.
  std::map<AppId, const Bid*> bids;
  for (const auto& bid : auction.bids) bids[bid.app] = &bid;
  for (const auto& model : loaded.models) {
    const AppId id = model->id();
    json rows = json::array();
    std::optional<double> rho_no_new;
    if (const auto it = bids.find(id); it != bids.end() && !it->second->rows.empty()) {
      rho_no_new = it->second->rho_no_new;
      for (const auto& row : it->second->rows) {
        json r = {{"gpus", row.gpus}, {"rho", row.rho}};
        if (row.scope != ShapeScope::kExact) r["scope"] = static_cast<int>(row.scope);  // as in the round record
        rows.push_back(std::move(r));
      }
    }
    const auto won = plan.grants.find(id);
    const double rho = loaded.rho_of.at(id);
    store.insert_bid(round, id, rho, rho_no_new, rows.dump(),
                     json(won == plan.grants.end() ? std::vector<GpuIndex>{} : won->second.gpus).dump(),
                     won == plan.grants.end() ? std::nullopt : std::optional<std::string>(arbiter::grant_kind_name(won->second.kind)));
    store.set_app_rho(id, rho);
  }
  const auto leased = static_cast<std::int64_t>(plan.leases.size() - plan.probes.size());
  store.finish_round(round, static_cast<std::int64_t>(plan.leases.size()), static_cast<std::int64_t>(plan.offered.size()) - leased,
                     outcome_json.dump(), env_->now(), timing.event_at, timing.offers_sent_at, timing.auction_started,
                     timing.auction_finished);
  store.record_round(round, timing.opened, timing.rng_state, planner::snapshot_to_json(settled).dump(),
                     planner::plan_to_json(plan).dump(), config_.round_records_kept);
  tx.commit();
  const double committed = env_->now();
  for (const auto& [app, launcher] : launchers_) send_grant(app, round);
  const double worst_loop_lag_ms = take_worst_loop_lag_ms();
  store.mark_round_sent(round, committed, env_->now(), worst_loop_lag_ms);
  metrics_.add(loop_metrics::kRounds);
  metrics_.observe(loop_metrics::kRoundDuration, committed - timing.started_at);
  // A round that needed no policy (only renewals and direct grants) ran no auction: its times are equal.
  if (timing.auction_finished != timing.auction_started) {
    metrics_.observe(loop_metrics::kAuctionDuration, timing.auction_finished - timing.auction_started);
  }
  if (!auction.bidders.empty()) metrics_.set(loop_metrics::kAuctionGap, auction.gap);
  metrics_.set(loop_metrics::kLoopWorst, worst_loop_lag_ms / 1e3);
  spdlog::info("round {} ({}): {} free GPUs, {} apps, {} leased", round, timing.trigger, plan.offered.size(), loaded.models.size(),
               leased);
}

// A STARTING job is launched once every GPU of its placement is on a host with a session and no other
// job's workers still occupy them (a preempted job may still be checkpointing), nor ranks the host runs
// without a lease (a host back from a partition before it fenced: their job's placement is gone).
void Coordinator::launch_ready_jobs() {
  store::RoundStore store(db_);
  struct Rank {
    std::string host;
    std::uint32_t local_index;
  };
  for (const auto& starting : store.starting_jobs()) {
    const std::int64_t app = starting.app, job = starting.job, attempt = starting.attempt;
    const JobKey key{app, job, attempt};
    if (launched_.count(key)) continue;
    // Its launcher's environment (report endpoint and keys, typed hyper-parameters) is kept in memory only:
    // after a restart the launch waits until the launcher, attaching again, sends it once more.
    if (starting.launcher_env && !launch_env_.count({app, job})) {
      if (awaiting_launch_env_.insert(key).second) {
        spdlog::info("job {}_{} attempt {}: waiting for its launcher to send the launch again (this coordinator "
                     "restarted after it was asked for)", app, job, attempt);
      }
      continue;
    }
    const auto placement = json::parse(starting.placement_json).get<std::vector<GpuIndex>>();
    std::vector<Rank> ranks;
    bool ready = true;
    for (GpuIndex g : placement) {
      const auto seat = store.gpu_seat(app, job, g);
      if (!seat || seat->other_jobs > 0 || !sessions_.count(seat->host) || sessions_[seat->host].routing_id.empty() ||
          !sessions_[seat->host].unleased_ranks.empty()) {
        ready = false;
        break;
      }
      ranks.push_back({seat->host, seat->local_index});
    }
    if (!ready || ranks.empty()) continue;
    const auto command = json::parse(starting.command_json).get<std::vector<std::string>>();
    // Stored typed (numbers stay numbers for THEMIS_HPARAMS); placeholders take the values as text.
    const std::string& hparams_json = starting.hparams_json;
    const auto typed = json::parse(hparams_json);
    std::map<std::string, std::string> hparams;
    for (const auto& [name, value] : typed.items()) {
      hparams[name] = value.is_string() ? value.get<std::string>() : value.dump();
    }
    const auto env = json::parse(starting.env_json).get<std::map<std::string, std::string>>();
    const int ports = config_.rendezvous_port_last - config_.rendezvous_port_first + 1;
    const int port = config_.rendezvous_port_first + static_cast<int>(rendezvous_turn_++ % static_cast<std::uint64_t>(ports));
    const std::string rendezvous = sessions_[ranks[0].host].address + ":" + std::to_string(port);
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      net::OutMessage out(next_request_id_++);
      auto launch = out.body().initLaunch();
      launch.setApp(app);
      launch.setJob(job);
      launch.setAttempt(static_cast<std::uint32_t>(attempt));
      launch.setRank(static_cast<std::uint32_t>(r));
      launch.setWorldSize(static_cast<std::uint32_t>(ranks.size()));
      launch.setRendezvous(rendezvous);
      launch.initDevices(1).set(0, ranks[r].local_index);
      auto cmd = launch.initCommand(static_cast<unsigned>(command.size()));
      for (std::size_t i = 0; i < command.size(); ++i) cmd.set(static_cast<unsigned>(i), command[i]);
      const auto& extra = launch_env_[{app, job}];
      auto vars = launch.initEnv(static_cast<unsigned>(env.size() + 1 + extra.size()));
      unsigned v = 0;
      for (const auto& [name, value] : env) {
        vars[v].setName(name);
        vars[v++].setValue(value);
      }
      vars[v].setName("THEMIS_HPARAMS");
      vars[v++].setValue(hparams_json);
      for (const auto& [name, value] : extra) {  // the launcher's (typed THEMIS_HPARAMS, job id, reports) win
        vars[v].setName(name);
        vars[v++].setValue(value);
      }
      launch.setWorkdir(starting.workdir);
      launch.setCheckpointDir(spec::expand_placeholders(starting.checkpoint_dir, app, static_cast<int>(job), hparams));
      launch.setGraceMs(static_cast<std::uint32_t>(starting.grace_ms));
      launch.setAccount(unix_account(config_, starting.owner));
      send_to_host(ranks[r].host, out);
    }
    launched_.insert(key);
    spdlog::info("launched {}_{} attempt {} on {} GPUs", app, job, attempt, ranks.size());
  }
}

}  // namespace themis::coordinator
