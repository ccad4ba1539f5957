#include "coordinator/store/round_store.h"

#include "coordinator/store/state_store.h"

#include <nlohmann/json.hpp>

namespace themis::store {

using nlohmann::json;

RegisteredCluster RoundStore::registered_cluster() {
  RegisteredCluster c;
  c.spec.name = "themis";
  auto hosts = db_.prepare("SELECT id, name, rack, state, first_gpu, drain_reason IS NOT NULL FROM hosts ORDER BY first_gpu");
  while (hosts.step()) {
    ClusterSpec::MachineSpec m;
    m.name = hosts.text(1);
    m.rack = hosts.text(2);
    auto slots = db_.prepare("SELECT slot, count(*) FROM gpus WHERE host_id = ? GROUP BY slot ORDER BY slot");
    slots.bind(1, hosts.int64(0));
    while (slots.step()) m.gpus_per_slot.push_back(static_cast<int>(slots.int64(1)));
    c.spec.machines.push_back(std::move(m));
    c.up.push_back(hosts.text(3) == "up");
    c.first_gpu.push_back(hosts.int64(4));
    c.drained.push_back(hosts.int64(5) != 0);
  }
  return c;
}

std::vector<StoredLease> RoundStore::active_leases() {
  std::vector<StoredLease> out;
  auto st = db_.prepare("SELECT gpu, app_id, job, round_id, start, expiry FROM leases WHERE state = 'active' ORDER BY gpu");
  while (st.step()) {
    out.push_back({static_cast<GpuIndex>(st.int64(0)), st.int64(1), st.int64(2), st.int64(3), st.real(4), st.real(5)});
  }
  return out;
}

std::vector<StoredApp> RoundStore::round_apps() {
  std::vector<StoredApp> out;
  auto apps = db_.prepare(
      "SELECT a.id, a.gpus_per_job, a.max_concurrent_jobs, "
      "(SELECT count(*) FROM jobs j WHERE j.app_id = a.id AND j.state IN ('STARTING','RUNNING','STOPPING')), "
      "coalesce((SELECT min(job) FROM jobs j WHERE j.app_id = a.id), 0), coalesce(a.probe, '') "
      "FROM apps a WHERE a.state IN ('PENDING','RUNNING') AND a.admission IS NULL ORDER BY a.id");
  auto pending = db_.prepare("SELECT job FROM jobs WHERE app_id = ? AND state = 'PENDING' AND retry_at IS NULL ORDER BY job");
  while (apps.step()) {
    StoredApp app;
    app.id = apps.int64(0);
    app.gpus_per_job = static_cast<int>(apps.int64(1));
    app.max_concurrent_jobs = static_cast<int>(apps.int64(2));
    app.active_jobs = static_cast<int>(apps.int64(3));
    app.first_job = apps.int64(4);
    app.probe = apps.text(5);
    pending.reset();
    pending.bind(1, app.id);
    while (pending.step()) app.pending_jobs.push_back(pending.int64(0));
    out.push_back(std::move(app));
  }
  return out;
}

namespace {
// GPU-seconds the leases of table alias `l` held up to the bound `now` (bound twice): each to its release, its
// expiry or now, whichever comes first. The attained service of attained_rho and attained_gpu_seconds.
constexpr const char* kLeasedSeconds = "sum(min(coalesce(l.released_at, ?), l.expiry, ?) - l.start)";
}  // namespace

// (time since submit + 60 s) / (time run at full width + 60 s).
double RoundStore::attained_rho(std::int64_t app, double now) {
  auto st = db_.prepare(
      std::string("SELECT a.submitted_at, a.gpus_per_job * min(a.max_concurrent_jobs, (SELECT count(*) FROM jobs j WHERE j.app_id = a.id)), "
                  "coalesce((SELECT ") + kLeasedSeconds + " FROM leases l WHERE l.app_id = a.id), 0) FROM apps a WHERE a.id = ?");
  st.bind_all(now, now, app);
  if (!st.step()) return 1;
  const double elapsed = now - st.real(0);
  const double width = std::max<double>(1, static_cast<double>(st.int64(1)));
  const double attained = st.real(2) / width;
  return (elapsed + 60.0) / (std::max(0.0, attained) + 60.0);
}

std::map<std::int64_t, double> RoundStore::attained_gpu_seconds(double now) {
  auto st = db_.prepare(std::string("SELECT l.app_id, ") + kLeasedSeconds + " FROM leases l GROUP BY l.app_id");
  st.bind_all(now, now);
  std::map<std::int64_t, double> out;
  while (st.step()) out[st.int64(0)] = st.real(1);
  return out;
}

std::int64_t RoundStore::next_round_id() {
  auto st = db_.prepare("SELECT coalesce(max(id), 0) + 1 FROM rounds");
  st.step();
  return st.int64(0);
}

void RoundStore::insert_round(std::int64_t round, double now, double finished, const std::string& trigger,
                              const std::string& policy, std::int64_t offered_gpus, std::int64_t apps,
                              const std::string& offered_to_json) {
  db_.prepare("INSERT INTO rounds(id, started_at, finished_at, trigger, policy, free_gpus, apps, offered_to, granted, idle, outcome) "
              "VALUES (?,?,?,?,?,?,?,?,0,0,'{}')")
      .bind_all(round, now, finished, trigger, policy, offered_gpus, apps, offered_to_json)
      .run();
}

void RoundStore::end_leases(const std::vector<planner::HeldLease>& ended, const std::vector<GpuIndex>& renewed, double now) {
  auto st = db_.prepare("UPDATE leases SET state = 'expired', released_at = ?, release_reason = ? "
                        "WHERE gpu = ? AND app_id = ? AND round_id = ? AND state = 'active'");
  for (const planner::HeldLease& l : ended) {
    const bool renewal = std::find(renewed.begin(), renewed.end(), l.gpu) != renewed.end();
    st.reset();
    st.bind_all(now, renewal ? "renewed" : "expired", static_cast<std::int64_t>(l.gpu), l.app, l.round).run();
  }
}

void RoundStore::insert_lease(const planner::PlannedLease& lease, std::int64_t round) {
  db_.prepare("INSERT INTO leases(gpu, app_id, job, round_id, start, expiry, state) VALUES (?,?,?,?,?,?, 'active')")
      .bind_all(static_cast<std::int64_t>(lease.gpu), lease.app, lease.job, round, lease.start, lease.expiry)
      .run();
}

void RoundStore::start_job(std::int64_t app, std::int64_t job, const std::vector<GpuIndex>& gpus, double now) {
  StateStore(db_).start_job(app, job, std::nullopt, json(gpus).dump(), now);
}

std::vector<std::int64_t> RoundStore::jobs_on_gpu(std::int64_t app, GpuIndex gpu) {
  auto st = db_.prepare("SELECT j.job FROM jobs j, json_each(j.placement) p WHERE j.app_id = ? AND p.value = ? "
                        "AND j.state IN ('STARTING','RUNNING')");
  st.bind_all(app, static_cast<std::int64_t>(gpu));
  std::vector<std::int64_t> out;
  while (st.step()) out.push_back(st.int64(0));
  return out;
}

void RoundStore::insert_bid(std::int64_t round, std::int64_t app, double rho_before, std::optional<double> rho_no_new,
                            const std::string& rows_json, const std::string& won_json, std::optional<std::string> grant_kind) {
  auto st = db_.prepare("INSERT INTO bids(round_id, app_id, rho_before, rho_no_new, bid_rows, won, grant_kind) VALUES (?,?,?,?,?,?,?)");
  st.bind_all(round, app, rho_before).bind(4, rho_no_new).bind(5, rows_json).bind(6, won_json).bind(7, grant_kind);
  st.run();
}

void RoundStore::set_app_rho(std::int64_t app, double rho) {
  db_.prepare("UPDATE apps SET rho = ? WHERE id = ?").bind_all(rho, app).run();
}

void RoundStore::finish_round(std::int64_t round, std::int64_t granted, std::int64_t idle, const std::string& outcome_json,
                              double finished, double event_at, std::optional<double> offers_sent_at, double auction_started,
                              double auction_finished) {
  db_.prepare("UPDATE rounds SET granted = ?, idle = ?, outcome = ?, finished_at = ?, event_at = ?, offers_sent_at = ?, "
              "auction_started_at = ?, auction_finished_at = ? WHERE id = ?")
      .bind_all(granted, idle, outcome_json, finished, event_at, offers_sent_at, auction_started, auction_finished, round)
      .run();
}

void RoundStore::record_round(std::int64_t round, const std::string& opened, const std::string& rng_state,
                              const std::string& settled, const std::string& plan, std::int64_t kept) {
  db_.prepare("INSERT INTO round_records(round_id, opened, rng_state, settled, plan) VALUES (?,?,?,?,?)")
      .bind_all(round, opened, rng_state, settled, plan)
      .run();
  if (kept > 0) db_.prepare("DELETE FROM round_records WHERE round_id <= ?").bind(1, round - kept).run();
}

void RoundStore::mark_round_sent(std::int64_t round, double committed, double grants_sent, double worst_loop_lag_ms) {
  db_.prepare("UPDATE rounds SET committed_at = ?, grants_sent_at = ?, worst_loop_lag_ms = ? WHERE id = ?")
      .bind_all(committed, grants_sent, worst_loop_lag_ms, round)
      .run();
}

std::vector<RoundStore::StartingJob> RoundStore::starting_jobs() {
  auto jobs = db_.prepare(
      "SELECT j.app_id, j.job, j.attempt, j.placement, j.command, j.hparams, a.workdir, a.env, a.checkpoint_dir, a.grace_ms, a.owner, j.launcher_env "
      "FROM jobs j JOIN apps a ON a.id = j.app_id WHERE j.state = 'STARTING' ORDER BY j.app_id, j.job");
  std::vector<StartingJob> out;
  while (jobs.step()) {
    out.push_back({jobs.int64(0), jobs.int64(1), jobs.int64(2), jobs.text(3), jobs.text(4), jobs.text(5), jobs.text(6),
                   jobs.text(7), jobs.text(8), jobs.int64(9), jobs.text(10), jobs.int64(11) != 0});
  }
  return out;
}

std::optional<RoundStore::GpuSeat> RoundStore::gpu_seat(std::int64_t app, std::int64_t job, GpuIndex gpu) {
  auto where = db_.prepare(
      "SELECT h.name, g.local_index, (SELECT count(*) FROM jobs o, json_each(o.placement) p WHERE p.value = g.gpu "
      "AND o.state IN ('RUNNING','STOPPING','STARTING') AND NOT (o.app_id = ? AND o.job = ?)) "
      "FROM gpus g JOIN hosts h ON h.id = g.host_id WHERE g.gpu = ?");
  where.bind_all(app, job, static_cast<std::int64_t>(gpu));
  if (!where.step()) return std::nullopt;
  return GpuSeat{where.text(0), static_cast<std::uint32_t>(where.int64(1)), where.int64(2)};
}

}  // namespace themis::store
