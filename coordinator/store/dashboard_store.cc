#include "coordinator/store/dashboard_store.h"

namespace themis::store {

namespace {
std::optional<double> optional_real(const Statement& st, int column) {
  return st.is_null(column) ? std::nullopt : std::optional<double>(st.real(column));
}
std::optional<std::int64_t> optional_int(const Statement& st, int column) {
  return st.is_null(column) ? std::nullopt : std::optional<std::int64_t>(st.int64(column));
}
}  // namespace

std::vector<GpuView> DashboardStore::gpus() {
  std::vector<GpuView> out;
  auto st = db_.prepare(
      "SELECT g.gpu, h.name, h.rack, h.state, g.local_index, l.app_id, l.job, coalesce(a.name, ''), l.expiry, "
      "EXISTS (SELECT 1 FROM jobs j, json_each(j.placement) p WHERE p.value = g.gpu "
      "        AND j.state IN ('STARTING','RUNNING','STOPPING')) "
      "FROM gpus g JOIN hosts h ON h.id = g.host_id "
      "LEFT JOIN leases l ON l.gpu = g.gpu AND l.state = 'active' LEFT JOIN apps a ON a.id = l.app_id "
      "ORDER BY g.gpu");
  while (st.step()) {
    out.push_back({st.int64(0), st.text(1), st.text(2), st.text(3), st.int64(4), optional_int(st, 5), optional_int(st, 6),
                   st.text(7), optional_real(st, 8), st.int64(9) != 0});
  }
  return out;
}

std::vector<AppView> DashboardStore::apps(int finished) {
  std::vector<AppView> out;
  auto st = db_.prepare(
      "SELECT v.app, v.name, v.owner, v.state, v.rho, v.gpus_held, v.jobs, v.jobs_running, v.jobs_pending, a.submitted_at "
      "FROM apps_rho v JOIN apps a ON a.id = v.app WHERE a.state IN ('PENDING','RUNNING') "
      "UNION ALL SELECT * FROM ("
      " SELECT v.app, v.name, v.owner, v.state, v.rho, v.gpus_held, v.jobs, v.jobs_running, v.jobs_pending, a.submitted_at "
      " FROM apps_rho v JOIN apps a ON a.id = v.app WHERE a.state NOT IN ('PENDING','RUNNING') "
      " ORDER BY a.finished_at DESC, a.id DESC LIMIT ?)");
  st.bind(1, finished);
  while (st.step()) {
    out.push_back({st.int64(0), st.text(1), st.text(2), st.text(3), optional_real(st, 4), st.int64(5), st.int64(6),
                   st.int64(7), st.int64(8), st.real(9)});
  }
  return out;
}

std::map<std::int64_t, std::vector<RhoPoint>> DashboardStore::rho_history(int rounds) {
  std::map<std::int64_t, std::vector<RhoPoint>> out;
  auto st = db_.prepare(
      "SELECT b.app_id, b.round_id, r.started_at, b.rho_before FROM bids b JOIN rounds r ON r.id = b.round_id "
      "WHERE b.rho_before IS NOT NULL AND b.round_id > (SELECT coalesce(max(id), 0) FROM rounds) - ? "
      "ORDER BY b.app_id, b.round_id");
  st.bind(1, rounds);
  while (st.step()) out[st.int64(0)].push_back({st.int64(1), st.real(2), st.real(3)});
  return out;
}

std::vector<RoundView> DashboardStore::recent_rounds(int limit) {
  std::vector<RoundView> out;
  auto st = db_.prepare(
      "SELECT id, started_at, finished_at, trigger, policy, free_gpus, apps, granted, idle, "
      "auction_finished_at - auction_started_at, json_extract(outcome, '$.auction_gap'), worst_loop_lag_ms "
      "FROM rounds ORDER BY id DESC LIMIT ?");
  st.bind(1, limit);
  while (st.step()) {
    out.push_back({st.int64(0), st.real(1), st.real(2), st.text(3), st.text(4), st.int64(5), st.int64(6), st.int64(7),
                   st.int64(8), optional_real(st, 9), optional_real(st, 10), optional_real(st, 11)});
  }
  return out;
}

ClusterCounts DashboardStore::counts() {
  ClusterCounts c;
  for (const char* s : {"leased", "idle", "free", "down"}) c.gpus[s] = 0;
  for (const char* s : {"up", "down"}) c.hosts[s] = 0;
  for (const char* s : {"QUEUED", "PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED"}) c.apps[s] = 0;
  for (const char* s : {"PENDING", "STARTING", "RUNNING", "STOPPING", "COMPLETED", "FAILED", "CANCELLED"}) c.jobs[s] = 0;
  for (const GpuView& g : gpus()) {
    const char* state = g.host_state != "up" ? "down" : !g.app ? "free" : g.in_use ? "leased" : "idle";
    ++c.gpus[state];
  }
  auto hosts = db_.prepare("SELECT state, count(*) FROM hosts GROUP BY state");
  while (hosts.step()) c.hosts[hosts.text(0)] = hosts.int64(1);
  auto apps = db_.prepare("SELECT state, count(*) FROM apps_rho GROUP BY state");
  while (apps.step()) c.apps[apps.text(0)] = apps.int64(1);
  auto jobs = db_.prepare("SELECT state, count(*) FROM jobs GROUP BY state");
  while (jobs.step()) c.jobs[jobs.text(0)] = jobs.int64(1);
  auto leases = db_.prepare("SELECT count(*) FILTER (WHERE state = 'active'), count(*) FROM leases");
  leases.step();
  c.leases_active = leases.int64(0);
  c.leases_granted = leases.int64(1);
  return c;
}

}  // namespace themis::store
