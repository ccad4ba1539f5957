#include "coordinator/store/query_store.h"

namespace themis::store {
namespace {

using nlohmann::json;

json typed_rows(Database& db, const std::string& sql, std::int64_t param = -1) {
  auto st = db.prepare(sql);
  if (param >= 0) st.bind(1, param);
  json items = json::array();
  while (st.step()) {
    json row = json::object();
    for (int c = 0; c < st.columns(); ++c) {
      const std::string name = st.column_name(c);
      if (st.is_null(c)) {
        row[name] = nullptr;
        continue;
      }
      if (st.type(c) == SQLITE_INTEGER) row[name] = st.int64(c);
      else if (st.type(c) == SQLITE_FLOAT) row[name] = st.real(c);
      else row[name] = st.text(c);
    }
    items.push_back(std::move(row));
  }
  return items;
}

}  // namespace

json QueryStore::apps_with_probe() {
  return typed_rows(db_, "SELECT r.*, a.probe FROM apps_rho r JOIN apps a ON a.id = r.app ORDER BY r.app");
}

json QueryStore::gpu_utilisation() { return typed_rows(db_, "SELECT * FROM gpu_utilisation"); }

json QueryStore::active_leases() { return typed_rows(db_, "SELECT * FROM leases_active ORDER BY gpu"); }

json QueryStore::recent_rounds() { return typed_rows(db_, "SELECT * FROM rounds_recent"); }

json QueryStore::app_row(std::int64_t app) { return typed_rows(db_, "SELECT * FROM apps_rho WHERE app = ?", app); }

json QueryStore::jobs_of_app(std::int64_t app) {
  return typed_rows(db_,
                    "SELECT job, state, reason, attempt, hparams, placement, exit_code, exit_signal, log_tail, failure, "
                    "strftime('%Y-%m-%dT%H:%M:%SZ', retry_at, 'unixepoch') AS retry_at "
                    "FROM jobs WHERE app_id = ? ORDER BY job",
                    app);
}

json QueryStore::failures_of_app(std::int64_t app) {
  return typed_rows(db_,
                    "SELECT job, attempt, strftime('%Y-%m-%dT%H:%M:%SZ', ts, 'unixepoch') AS time, class, "
                    "exit_code, exit_signal, decision, summary, reason, "
                    "strftime('%Y-%m-%dT%H:%M:%SZ', retry_at, 'unixepoch') AS retry_at "
                    "FROM job_failures WHERE app_id = ? ORDER BY id DESC LIMIT 100",
                    app);
}

json QueryStore::events_of_app(std::int64_t app) {
  return typed_rows(db_,
                    "SELECT strftime('%Y-%m-%dT%H:%M:%SZ', ts, 'unixepoch') AS time, kind, job, host, round_id AS round, message "
                    "FROM events WHERE app_id = ? ORDER BY id DESC LIMIT 50",
                    app);
}

std::vector<std::string> QueryStore::log_tails_of_app(std::int64_t app) {
  std::vector<std::string> tails;
  auto st = db_.prepare("SELECT log_tail FROM jobs WHERE app_id = ? AND log_tail IS NOT NULL");
  st.bind(1, app);
  while (st.step()) tails.push_back(st.text(0));
  return tails;
}

json QueryStore::bids_of_app(std::int64_t app) {
  return typed_rows(db_,
                    "SELECT b.round_id AS round, r.trigger, r.policy, r.free_gpus, r.apps, r.offered_to, b.rho_before, "
                    "b.rho_no_new, b.bid_rows, b.won, b.grant_kind, "
                    "(SELECT count(*) + 1 FROM bids o WHERE o.round_id = b.round_id AND o.rho_before > b.rho_before) AS rho_rank "
                    "FROM bids b JOIN rounds r ON r.id = b.round_id WHERE b.app_id = ? ORDER BY b.round_id DESC LIMIT 10",
                    app);
}

json QueryStore::active_apps_by_rho() {
  return typed_rows(db_, "SELECT app, name, rho FROM apps_rho WHERE state IN ('PENDING','RUNNING') ORDER BY rho DESC");
}

std::int64_t QueryStore::free_gpus() {
  auto st = db_.prepare(
      "SELECT count(*) AS n FROM gpus g JOIN hosts h ON h.id = g.host_id WHERE h.state = 'up' AND h.drain_reason IS NULL "
      "AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.gpu = g.gpu AND l.state = 'active')");
  st.step();
  return st.int64(0);
}

std::optional<std::string> QueryStore::next_lease_expiry() {
  auto st = db_.prepare("SELECT strftime('%Y-%m-%dT%H:%M:%SZ', min(expiry), 'unixepoch') AS t FROM leases WHERE state = 'active'");
  st.step();
  if (st.is_null(0)) return std::nullopt;
  return st.text(0);
}

}  // namespace themis::store
