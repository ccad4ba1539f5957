// Rounds and launches: the part of the coordinator that drives the Policy.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "spec/app_spec.h"
#include "coordinator/coordinator.h"

namespace themis::coordinator {

using nlohmann::json;

namespace {

// What the coordinator knows about an app without a launcher: no bids, demand from its pending jobs.
class StoredAppModel final : public arbiter::AppModel {
 public:
  StoredAppModel(AppId id, double rho, int demand, Seconds attained, std::optional<Bid> bid = std::nullopt)
      : id_(id), rho_(rho), demand_(demand), attained_(attained), bid_(std::move(bid)) {}
  AppId id() const override { return id_; }
  double current_rho() const override { return rho_; }
  int extra_demand() const override { return demand_; }
  // The bid its launcher sent for this round; none (no launcher, or late): a missing bid.
  Bid bid(const Offer& /*offer*/) override { return bid_ ? *bid_ : Bid{id_, 0, {}}; }
  Seconds attained_service() const override { return attained_; }
  Seconds remaining_service() const override { return 0; }
  Seconds remaining_time(std::span<const GpuIndex> /*extra*/) const override { return 0; }
  double loss_decrease(std::span<const GpuIndex> /*extra*/) const override { return 0; }
  double placement_score(std::span<const GpuIndex> /*extra*/) const override { return 1; }

 private:
  AppId id_;
  double rho_;
  int demand_;
  Seconds attained_;
  std::optional<Bid> bid_;
};

}  // namespace

// ρ estimate for apps without a launcher report (docs/protocols/control.md, "ρ without a launcher"):
// (time since submit + 60 s) / (time run at full width + 60 s).
double Coordinator::current_rho(std::int64_t app, double now) {
  auto st = db_.prepare(
      "SELECT a.submitted_at, a.gpus_per_job * min(a.max_concurrent_jobs, (SELECT count(*) FROM jobs j WHERE j.app_id = a.id)), "
      "coalesce((SELECT sum(min(coalesce(l.released_at, ?), l.expiry, ?) - l.start) FROM leases l WHERE l.app_id = a.id), 0) "
      "FROM apps a WHERE a.id = ?");
  st.bind_all(now, now, app);
  if (!st.step()) return 1;
  const double elapsed = now - st.real(0);
  const double width = std::max<double>(1, static_cast<double>(st.int64(1)));
  const double attained = st.real(2) / width;
  return (elapsed + 60.0) / (std::max(0.0, attained) + 60.0);
}

void Coordinator::run_round(double now) {
  // Offers went to launchers: wait for their bids (or the deadline) before the auction.
  if (pending_offer_ && now < pending_offer_->deadline && !pending_offer_->all_bids_in()) return;
  {
    store::Database::Transaction admission(db_);
    admit_apps(now);
    settle_probes(now);
    admission.commit();
  }
  const std::string trigger = round_trigger_;
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

  // The cluster as registered, machines in GPU order.
  ClusterSpec spec;
  spec.name = "themis";
  std::vector<std::string> host_state;
  std::vector<std::int64_t> machine_first_gpu;
  {
    auto hosts = db_.prepare("SELECT id, name, rack, state, first_gpu FROM hosts ORDER BY first_gpu");
    while (hosts.step()) {
      ClusterSpec::MachineSpec m;
      m.name = hosts.text(1);
      m.rack = hosts.text(2);
      auto slots = db_.prepare("SELECT slot, count(*) FROM gpus WHERE host_id = ? GROUP BY slot ORDER BY slot");
      slots.bind(1, hosts.int64(0));
      while (slots.step()) m.gpus_per_slot.push_back(static_cast<int>(slots.int64(1)));
      spec.machines.push_back(std::move(m));
      host_state.push_back(hosts.text(3));
      machine_first_gpu.push_back(hosts.int64(4));
    }
  }
  if (spec.machines.empty()) return;
  const Cluster cluster(spec);
  for (std::size_t i = 0; i < machine_first_gpu.size(); ++i) {
    if (cluster.machines()[i].first_gpu != machine_first_gpu[i]) {
      spdlog::error("GPU numbering of host {} disagrees with the database; round skipped", spec.machines[i].name);
      return;
    }
  }

  // Expiring leases: their GPUs are up for auction again; the holder may win them back (renewal).
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<GpuIndex>> expiring;  // (app, job) -> gpus
  arbiter::RoundInput input;
  input.cluster = &cluster;
  input.now = now;
  std::set<GpuIndex> held;
  double event_at = requested_at.value_or(now);  // round timing: the earliest resource event behind this round
  {
    auto leases = db_.prepare("SELECT gpu, app_id, job, round_id, start, expiry FROM leases WHERE state = 'active'");
    while (leases.step()) {
      const auto gpu = static_cast<GpuIndex>(leases.int64(0));
      if (leases.real(5) <= now) {
        event_at = std::min(event_at, leases.real(5));
        expiring[{leases.int64(1), leases.int64(2)}].push_back(gpu);
      } else {
        held.insert(gpu);
        input.leases.push_back({gpu, leases.int64(1), leases.int64(3), leases.real(4), leases.real(5)});
      }
    }
  }
  for (const auto& gpu : cluster.gpus()) {
    if (host_state[static_cast<std::size_t>(gpu.machine)] == "up" && !held.count(gpu.index)) input.free_gpus.push_back(gpu.index);
  }

  // Active apps and their demand.
  std::vector<std::unique_ptr<StoredAppModel>> models;
  std::map<AppId, double> rho_of;
  int total_demand = 0;
  std::vector<AppId> probe_waiting;
  {
    auto apps = db_.prepare(
        "SELECT a.id, a.gpus_per_job, a.max_concurrent_jobs, "
        "(SELECT count(*) FROM jobs j WHERE j.app_id = a.id AND j.state = 'PENDING' AND j.retry_at IS NULL), "
        "(SELECT count(*) FROM jobs j WHERE j.app_id = a.id AND j.state IN ('STARTING','RUNNING','STOPPING')), "
        "coalesce(a.probe, '') "
        "FROM apps a WHERE a.state IN ('PENDING','RUNNING') AND a.admission IS NULL ORDER BY a.id");
    while (apps.step()) {
      const AppId id = apps.int64(0);
      // A probing app waits for its probe's verdict before it competes (probe.cc).
      if (const std::string probe = apps.text(5); probe == "waiting" || probe == "running") {
        // A launcher app's probe job is started by its launcher (probe.cc): it waits for it to attach.
        const bool can_start = launcher_mode(id) == LauncherMode::kNone || has_launcher(id);
        if (probe == "waiting" && can_start) probe_waiting.push_back(id);
        continue;
      }
      const auto per_job = apps.int64(1);
      const auto slots_left = std::max<std::int64_t>(0, apps.int64(2) - apps.int64(4));
      std::int64_t demand = std::min(apps.int64(3), slots_left) * per_job;
      const auto launcher = launchers_.find(id);
      // An app run by a launcher waits for it to attach; the coordinator never runs its jobs itself.
      if (launcher == launchers_.end() && launcher_mode(id) != LauncherMode::kNone) continue;
      if (launcher != launchers_.end() && launcher->second.demand) demand = *launcher->second.demand;
      for (const auto& [key, gpus] : expiring) {
        if (key.first == id) demand += static_cast<std::int64_t>(gpus.size());
      }
      const double rho = launcher != launchers_.end() && launcher->second.rho ? *launcher->second.rho : current_rho(id, now);
      rho_of[id] = rho;
      total_demand += static_cast<int>(demand);
      std::optional<Bid> bid;
      if (pending_offer_) {
        if (const auto b = pending_offer_->bids.find(id); b != pending_offer_->bids.end()) bid = b->second;
      }
      models.push_back(std::make_unique<StoredAppModel>(id, rho, static_cast<int>(demand), 0, std::move(bid)));
    }
  }
  if (input.free_gpus.empty() || (total_demand == 0 && probe_waiting.empty() && expiring.empty())) return;
  for (auto& m : models) input.apps.push_back(m.get());

  auto last_round = db_.prepare("SELECT coalesce(max(id), 0) + 1 FROM rounds");
  last_round.step();
  input.round = std::max<RoundId>(last_round.int64(0), next_round_floor_);
  // Probes take their GPU before the auction; when bids were awaited, the GPUs set aside then.
  std::map<AppId, GpuIndex> probes;
  if (pending_offer_ && pending_offer_->round == input.round) {
    for (const auto& [app, gpu] : pending_offer_->probes) {
      const bool waiting = std::find(probe_waiting.begin(), probe_waiting.end(), app) != probe_waiting.end();
      if (waiting && std::find(input.free_gpus.begin(), input.free_gpus.end(), gpu) != input.free_gpus.end()) probes[app] = gpu;
    }
  } else {
    probes = pick_probe_gpus(probe_waiting, input.free_gpus, cluster);
  }
  for (const auto& [app, gpu] : probes) input.free_gpus.erase(std::find(input.free_gpus.begin(), input.free_gpus.end(), gpu));
  const bool auction = !input.free_gpus.empty() && total_demand > 0;
  const auto offered = auction ? policy_->offer_recipients(input) : std::vector<AppId>{};
  if (auction && (!pending_offer_ || pending_offer_->round != input.round)) {
    PendingOffer offer{input.round, now + kOfferDeadlineMs / 1000.0, {}, {}, probes};
    for (const AppId app : offered) {
      if (has_launcher(app)) offer.recipients.insert(app);
    }
    if (!offer.recipients.empty()) {
      for (const AppId app : offer.recipients) {
        net::OutMessage out(next_request_id_++);
        auto msg = out.body().initOffer();
        msg.setRound(input.round);
        auto gpus = msg.initGpus(static_cast<unsigned>(input.free_gpus.size()));
        for (std::size_t i = 0; i < input.free_gpus.size(); ++i) gpus.set(static_cast<unsigned>(i), input.free_gpus[i]);
        msg.setDeadlineMs(kOfferDeadlineMs);
        msg.setActiveApps(static_cast<std::uint32_t>(models.size()));
        reply(launchers_[app].routing_id, out);
      }
      offer.sent_at = unix_now();
      pending_offer_ = std::move(offer);
      waiting_for_bids = true;
      round_requested_at_ = requested_at;  // run again when the bids are in
      round_trigger_ = trigger;
      return;
    }
  }
  const double auction_started = unix_now();
  arbiter::RoundOutcome outcome;
  if (auction) outcome = policy_->run_round(input, rng_);
  const double finished = unix_now();

  store::Database::Transaction tx(db_);
  json outcome_json = {{"grants", json::array()}, {"idle", json::array()}};
  for (const auto& idle : outcome.idle) outcome_json["idle"].push_back({{"gpu", idle.gpu}, {"reason", idle.reason}});
  for (const auto& w : outcome.auction.winners) {
    outcome_json["auction_winners"].push_back({{"app", w.app}, {"pf_bundle", w.pf_bundle}, {"rho", w.rho}, {"c", w.c}, {"kept", w.kept}});
  }
  const double lease_seconds = static_cast<double>(config_.lease_duration_ms) / 1000.0;
  int leased = 0;
  std::map<AppId, std::pair<std::vector<GpuIndex>, std::string>> won;
  std::set<std::pair<std::int64_t, std::int64_t>> renewed;
  std::set<GpuIndex> renewed_gpus;  // launcher apps' GPUs won back
  const RoundId round = input.round;
  db_.prepare("INSERT INTO rounds(id, started_at, finished_at, trigger, policy, free_gpus, apps, offered_to, granted, idle, outcome) "
              "VALUES (?,?,?,?,?,?,?,?,0,0,'{}')")
      .bind_all(round, now, finished, trigger, std::string(policy_->name()),
                static_cast<std::int64_t>(input.free_gpus.size()), static_cast<std::int64_t>(models.size()),
                json(offered).dump())
      .run();
  // Expiring leases end now; a renewal below is a new lease on the same GPUs.
  db_.prepare("UPDATE leases SET state = 'expired', released_at = ?, release_reason = 'expired' "
              "WHERE state = 'active' AND expiry <= ?")
      .bind_all(now, now)
      .run();
  auto insert_lease = [&](GpuIndex gpu, AppId app, std::int64_t job) {
    db_.prepare("INSERT INTO leases(gpu, app_id, job, round_id, start, expiry, state) VALUES (?,?,?,?,?,?, 'active')")
        .bind_all(static_cast<std::int64_t>(gpu), app, job, round, now, now + lease_seconds)
        .run();
    ++leased;
  };
  for (const auto& [app, gpu] : probes) {
    start_probe(app, gpu, round, now);
    outcome_json["grants"].push_back({{"app", app}, {"gpus", {gpu}}, {"kind", "probe"}});
  }
  for (const auto& grant : outcome.grants) {
    const char* kind = grant.kind == arbiter::GrantKind::kAuction ? "auction" : grant.kind == arbiter::GrantKind::kLeftover ? "leftover" : "direct";
    outcome_json["grants"].push_back({{"app", grant.app}, {"gpus", grant.gpus}, {"kind", kind}});
    std::set<GpuIndex> pool(grant.gpus.begin(), grant.gpus.end());
    std::vector<GpuIndex> used;
    if (has_launcher(grant.app)) {
      // A launcher's leases belong to the app: it picks its jobs' GPUs itself (LaunchJob), which then
      // records the job in the lease; they end by expiry or when the app ends, not with a job.
      for (const auto& [key, gpus] : expiring) {
        if (key.first != grant.app) continue;
        for (GpuIndex g : gpus) {
          if (!pool.count(g)) continue;
          db_.prepare("UPDATE leases SET state = 'expired', released_at = ?, release_reason = 'renewed' "
                      "WHERE gpu = ? AND state = 'active'")
              .bind_all(now, static_cast<std::int64_t>(g))
              .run();
          renewed_gpus.insert(g);
        }
      }
      auto first_job = db_.prepare("SELECT min(job) FROM jobs WHERE app_id = ?");
      first_job.bind(1, grant.app);
      first_job.step();
      const std::int64_t holder = first_job.int64(0);  // until LaunchJob names the job that runs on it
      for (GpuIndex g : pool) {
        insert_lease(g, grant.app, holder);
        used.push_back(g);
      }
      won[grant.app] = {used, kind};
      event(now, "LeaseGranted", grant.app, std::nullopt, "", round, json(used).dump());
      continue;
    }
    // Renewals first: a job whose expiring GPUs all came back keeps running on them.
    for (const auto& [key, gpus] : expiring) {
      if (key.first != grant.app) continue;
      if (!std::all_of(gpus.begin(), gpus.end(), [&](GpuIndex g) { return pool.count(g) > 0; })) continue;
      db_.prepare("UPDATE leases SET release_reason = 'renewed' WHERE app_id = ? AND job = ? AND state = 'expired' "
                  "AND released_at = ?")
          .bind_all(key.first, key.second, now)
          .run();
      for (GpuIndex g : gpus) {
        insert_lease(g, key.first, key.second);
        pool.erase(g);
        used.push_back(g);
      }
      renewed.insert(key);
      event(now, "LeaseRenewed", key.first, key.second, "", round, json(gpus).dump());
    }
    // New placements for pending jobs, most local GPUs first.
    auto app_row = db_.prepare("SELECT gpus_per_job, max_concurrent_jobs, "
                               "(SELECT count(*) FROM jobs j WHERE j.app_id = a.id AND j.state IN ('STARTING','RUNNING','STOPPING')) "
                               "FROM apps a WHERE id = ?");
    app_row.bind(1, grant.app);
    if (!app_row.step()) continue;
    const auto per_job = static_cast<std::size_t>(app_row.int64(0));
    auto slots_left = app_row.int64(1) - app_row.int64(2);
    auto pending = db_.prepare("SELECT job FROM jobs WHERE app_id = ? AND state = 'PENDING' AND retry_at IS NULL ORDER BY job");
    pending.bind(1, grant.app);
    std::vector<std::int64_t> pending_jobs;
    while (pending.step()) pending_jobs.push_back(pending.int64(0));
    for (const auto job : pending_jobs) {
      if (slots_left <= 0 || pool.size() < per_job) break;
      std::map<int, std::vector<GpuIndex>> by_machine;
      for (GpuIndex g : pool) by_machine[cluster.gpu(g).machine].push_back(g);
      std::vector<GpuIndex> pick;
      // The smallest machine group that fits the whole job, else fill from the largest groups.
      const std::vector<GpuIndex>* best = nullptr;
      for (const auto& [machine, gpus] : by_machine) {
        if (gpus.size() >= per_job && (!best || gpus.size() < best->size())) best = &gpus;
      }
      if (best) {
        pick.assign(best->begin(), best->begin() + static_cast<std::ptrdiff_t>(per_job));
      } else {
        std::vector<std::vector<GpuIndex>> groups;
        for (auto& [machine, gpus] : by_machine) groups.push_back(gpus);
        std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
        for (const auto& group : groups) {
          for (GpuIndex g : group) {
            if (pick.size() < per_job) pick.push_back(g);
          }
        }
      }
      std::sort(pick.begin(), pick.end());
      for (GpuIndex g : pick) {
        insert_lease(g, grant.app, job);
        pool.erase(g);
        used.push_back(g);
      }
      db_.prepare("UPDATE jobs SET state = 'STARTING', reason = '', attempt = attempt + 1, placement = ?, exited_ranks = 0, "
                  "exit_code = NULL, exit_signal = NULL, state_since = ? WHERE app_id = ? AND job = ?")
          .bind_all(json(pick).dump(), now, grant.app, job)
          .run();
      event(now, "LeaseGranted", grant.app, job, "", round, json(pick).dump());
      --slots_left;
    }
    std::sort(used.begin(), used.end());
    won[grant.app] = {used, kind};
    for (GpuIndex g : pool) outcome_json["idle"].push_back({{"gpu", g}, {"reason", "granted but no job of the app fits it"}});
  }
  // Expiring leases not renewed: the job is preempted (checkpoint, then back to PENDING). For an app
  // with a launcher, any job on a GPU it no longer holds is stopped.
  for (const auto& [key, gpus] : expiring) {
    if (!has_launcher(key.first)) continue;
    std::set<std::int64_t> hit;
    for (GpuIndex g : gpus) {
      if (renewed_gpus.count(g)) continue;
      // Not this round's lease: the GPU may just have gone to another app.
      db_.prepare("UPDATE leases SET state = 'expired', released_at = ?, release_reason = 'expired' WHERE gpu = ? AND state = 'active' "
                  "AND round_id <> ?")
          .bind_all(now, static_cast<std::int64_t>(g), round)
          .run();
      auto jobs = db_.prepare("SELECT j.job FROM jobs j, json_each(j.placement) p WHERE j.app_id = ? AND p.value = ? "
                              "AND j.state IN ('STARTING','RUNNING')");
      jobs.bind_all(key.first, static_cast<std::int64_t>(g));
      while (jobs.step()) hit.insert(jobs.int64(0));
    }
    for (const auto job : hit) {
      event(now, "LeaseExpired", key.first, job, "", round, "not renewed: preempting");
      stop_job(key.first, job, now, "Preempted");
    }
  }
  for (const auto& [key, gpus] : expiring) {
    if (renewed.count(key) || has_launcher(key.first)) continue;
    event(now, "LeaseExpired", key.first, key.second, "", round, "not renewed: preempting");
    stop_job(key.first, key.second, now, "Preempted");
  }
  // One bid record per active app, for explain.
  std::map<AppId, const Bid*> bids;
  for (const auto& bid : outcome.auction.bids) bids[bid.app] = &bid;
  for (const auto& model : models) {
    const AppId id = model->id();
    json rows = json::array();
    std::optional<double> rho_no_new;
    if (const auto it = bids.find(id); it != bids.end() && !it->second->rows.empty()) {
      rho_no_new = it->second->rho_no_new;
      for (const auto& row : it->second->rows) rows.push_back({{"gpus", row.gpus}, {"rho", row.rho}});
    }
    const auto w = won.find(id);
    auto st = db_.prepare("INSERT INTO bids(round_id, app_id, rho_before, rho_no_new, bid_rows, won, grant_kind) VALUES (?,?,?,?,?,?,?)");
    st.bind_all(round, id, rho_of[id]).bind(4, rho_no_new).bind(5, rows.dump());
    st.bind(6, json(w == won.end() ? std::vector<GpuIndex>{} : w->second.first).dump());
    if (w == won.end()) st.bind_null(7);
    else st.bind(7, w->second.second);
    st.run();
    db_.prepare("UPDATE apps SET rho = ? WHERE id = ?").bind_all(rho_of[id], id).run();
  }
  const auto idle_count = static_cast<std::int64_t>(input.free_gpus.size()) - leased;
  db_.prepare("UPDATE rounds SET granted = ?, idle = ?, outcome = ?, finished_at = ? WHERE id = ?")
      .bind_all(static_cast<std::int64_t>(leased + static_cast<int>(probes.size())), idle_count, outcome_json.dump(), unix_now(), round)
      .run();
  db_.prepare("UPDATE rounds SET event_at = ?, offers_sent_at = ?, auction_started_at = ?, auction_finished_at = ? WHERE id = ?")
      .bind_all(event_at, pending_offer_ && pending_offer_->round == round ? std::optional(pending_offer_->sent_at) : std::nullopt,
                auction_started, finished, round)
      .run();
  tx.commit();
  const double committed = unix_now();
  for (const auto& [app, launcher] : launchers_) send_grant(app, round);
  db_.prepare("UPDATE rounds SET committed_at = ?, grants_sent_at = ? WHERE id = ?").bind_all(committed, unix_now(), round).run();
  spdlog::info("round {} ({}): {} free GPUs, {} apps, {} leased", round, trigger, input.free_gpus.size(), models.size(), leased);
}

// A STARTING job is launched once every GPU of its placement is on a host with a session and no other
// job's workers still occupy them (a preempted job may still be checkpointing), nor ranks the host runs
// without a lease (a host back from a partition before it fenced: their job's placement is gone).
void Coordinator::launch_ready_jobs() {
  auto jobs = db_.prepare(
      "SELECT j.app_id, j.job, j.attempt, j.placement, j.command, j.hparams, a.workdir, a.env, a.checkpoint_dir, a.grace_ms "
      "FROM jobs j JOIN apps a ON a.id = j.app_id WHERE j.state = 'STARTING' ORDER BY j.app_id, j.job");
  struct Rank {
    std::string host;
    std::uint32_t local_index;
  };
  while (jobs.step()) {
    const std::int64_t app = jobs.int64(0), job = jobs.int64(1), attempt = jobs.int64(2);
    const JobKey key{app, job, attempt};
    if (launched_.count(key)) continue;
    const auto placement = json::parse(jobs.text(3)).get<std::vector<GpuIndex>>();
    std::vector<Rank> ranks;
    bool ready = true;
    for (GpuIndex g : placement) {
      auto where = db_.prepare(
          "SELECT h.name, g.local_index, (SELECT count(*) FROM jobs o, json_each(o.placement) p WHERE p.value = g.gpu "
          "AND o.state IN ('RUNNING','STOPPING','STARTING') AND NOT (o.app_id = ? AND o.job = ?)) "
          "FROM gpus g JOIN hosts h ON h.id = g.host_id WHERE g.gpu = ?");
      where.bind_all(app, job, static_cast<std::int64_t>(g));
      if (!where.step() || where.int64(2) > 0 || !sessions_.count(where.text(0)) ||
          sessions_[where.text(0)].routing_id.empty() || !sessions_[where.text(0)].unleased_ranks.empty()) {
        ready = false;
        break;
      }
      ranks.push_back({where.text(0), static_cast<std::uint32_t>(where.int64(1))});
    }
    if (!ready || ranks.empty()) continue;
    const auto command = json::parse(jobs.text(4)).get<std::vector<std::string>>();
    // Stored typed (numbers stay numbers for THEMIS_HPARAMS); placeholders take the values as text.
    const std::string hparams_json = jobs.text(5);
    const auto typed = json::parse(hparams_json);
    std::map<std::string, std::string> hparams;
    for (const auto& [name, value] : typed.items()) {
      hparams[name] = value.is_string() ? value.get<std::string>() : value.dump();
    }
    const auto env = json::parse(jobs.text(7)).get<std::map<std::string, std::string>>();
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
      launch.setWorkdir(jobs.text(6));
      launch.setCheckpointDir(spec::expand_placeholders(jobs.text(8), app, static_cast<int>(job), hparams));
      launch.setGraceMs(static_cast<std::uint32_t>(jobs.int64(9)));
      send_to_host(ranks[r].host, out);
    }
    launched_.insert(key);
    spdlog::info("launched {}_{} attempt {} on {} GPUs", app, job, attempt, ranks.size());
  }
}

}  // namespace themis::coordinator
