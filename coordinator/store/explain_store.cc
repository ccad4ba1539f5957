#include "coordinator/store/explain_store.h"

#include <map>
#include <utility>

namespace themis::store {
namespace {

std::optional<std::string> optional_text(const Statement& st, int column) {
  if (st.is_null(column)) return std::nullopt;
  return st.text(column);
}

std::optional<double> optional_real(const Statement& st, int column) {
  if (st.is_null(column)) return std::nullopt;
  return st.real(column);
}

std::optional<std::int64_t> optional_int64(const Statement& st, int column) {
  if (st.is_null(column)) return std::nullopt;
  return st.int64(column);
}

// The columns of a `SELECT *` by name, so that a migration that adds a column moves nothing.
class Columns {
 public:
  explicit Columns(const Statement& st) {
    for (int c = 0; c < st.columns(); ++c) index_[st.column_name(c)] = c;
  }
  int operator[](const std::string& name) const {
    const auto it = index_.find(name);
    if (it == index_.end()) throw DatabaseError("explain: no column " + name);
    return it->second;
  }

 private:
  std::map<std::string, int> index_;
};

}  // namespace

std::optional<ExplainApp> ExplainStore::app(std::int64_t app) {
  auto st = db_.prepare("SELECT * FROM apps WHERE id = ?");
  st.bind(1, app);
  if (!st.step()) return std::nullopt;
  const Columns c(st);
  ExplainApp a;
  a.id = st.int64(c["id"]);
  a.name = st.text(c["name"]);
  a.state = st.text(c["state"]);
  a.gpus_per_job = st.int64(c["gpus_per_job"]);
  a.max_concurrent_jobs = st.int64(c["max_concurrent_jobs"]);
  a.admission = optional_text(st, c["admission"]);
  a.probe = optional_text(st, c["probe"]);
  a.rho = optional_real(st, c["rho"]);
  a.submitted_at = st.real(c["submitted_at"]);
  a.finished_at = optional_real(st, c["finished_at"]);
  return a;
}

std::vector<ExplainJob> ExplainStore::jobs(std::int64_t app) {
  auto st = db_.prepare("SELECT * FROM jobs WHERE app_id = ? ORDER BY job");
  st.bind(1, app);
  const Columns c(st);
  std::vector<ExplainJob> out;
  while (st.step()) {
    ExplainJob j;
    j.job = st.int64(c["job"]);
    j.state = st.text(c["state"]);
    j.reason = st.text(c["reason"]);
    j.attempt = st.int64(c["attempt"]);
    j.placement = st.text(c["placement"]);
    j.exit_code = optional_int64(st, c["exit_code"]);
    j.exit_signal = optional_int64(st, c["exit_signal"]);
    j.log_tail = optional_text(st, c["log_tail"]);
    j.retry_at = optional_real(st, c["retry_at"]);
    j.failure = optional_text(st, c["failure"]);
    out.push_back(std::move(j));
  }
  return out;
}

std::optional<ExplainRound> ExplainStore::round(std::int64_t round) {
  auto st = db_.prepare("SELECT * FROM rounds WHERE id = ?");
  st.bind(1, round);
  if (!st.step()) return std::nullopt;
  const Columns c(st);
  ExplainRound r;
  r.started_at = st.real(c["started_at"]);
  r.trigger = st.text(c["trigger"]);
  r.free_gpus = st.int64(c["free_gpus"]);
  r.apps = st.int64(c["apps"]);
  r.granted = st.int64(c["granted"]);
  r.idle = st.int64(c["idle"]);
  r.offered_to = st.text(c["offered_to"]);
  r.outcome = st.text(c["outcome"]);
  return r;
}

ClusterCounts ExplainStore::cluster_counts() {
  auto st = db_.prepare(
      "SELECT (SELECT count(*) FROM hosts WHERE state = 'up'), "
      "(SELECT count(*) FROM gpus g JOIN hosts h ON h.id = g.host_id WHERE h.state = 'up'), "
      "(SELECT count(*) FROM gpus g JOIN hosts h ON h.id = g.host_id WHERE h.state = 'up' AND h.drain_reason IS NULL "
      " AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.gpu = g.gpu AND l.state = 'active'))");
  st.step();
  return {st.int64(0), st.int64(1), st.int64(2)};
}

std::optional<LeaseExpiry> ExplainStore::next_expiry() {
  auto next = db_.prepare(
      "SELECT l.expiry, l.app_id AS app, a.name, l.gpu FROM leases l JOIN apps a ON a.id = l.app_id "
      "WHERE l.state = 'active' ORDER BY l.expiry, l.gpu LIMIT 1");
  if (!next.step()) return std::nullopt;
  return LeaseExpiry{next.real(0), next.int64(1), next.text(2), next.int64(3)};
}

std::vector<std::int64_t> ExplainStore::unused_gpus(std::int64_t app) {
  auto st = db_.prepare(
      "SELECT l.gpu FROM leases l WHERE l.app_id = ? AND l.state = 'active' AND NOT EXISTS "
      "(SELECT 1 FROM jobs j, json_each(j.placement) p WHERE j.app_id = l.app_id AND p.value = l.gpu "
      "AND j.state IN ('STARTING','RUNNING','STOPPING')) ORDER BY l.gpu");
  st.bind(1, app);
  std::vector<std::int64_t> out;
  while (st.step()) out.push_back(st.int64(0));
  return out;
}

std::optional<LastBid> ExplainStore::last_bid(std::int64_t app) {
  auto st = db_.prepare(
      "SELECT b.round_id, b.rho_before, b.rho_no_new, b.bid_rows, b.won, b.grant_kind, r.started_at, "
      "r.trigger, r.policy, r.free_gpus, r.apps, r.offered_to, r.outcome "
      "FROM bids b JOIN rounds r ON r.id = b.round_id WHERE b.app_id = ? ORDER BY b.round_id DESC LIMIT 1");
  st.bind(1, app);
  if (!st.step()) return std::nullopt;
  LastBid b;
  b.round = st.int64(0);
  b.rho_before = optional_real(st, 1);
  b.rho_no_new = optional_real(st, 2);
  b.bid_rows = st.text(3);
  b.won = st.text(4);
  b.grant_kind = optional_text(st, 5);
  b.started_at = st.real(6);
  b.trigger = st.text(7);
  b.free_gpus = st.int64(9);
  b.apps = st.int64(10);
  b.offered_to = st.text(11);
  b.outcome = st.text(12);
  return b;
}

std::vector<Bidder> ExplainStore::bidders(std::int64_t round) {
  auto st = db_.prepare(
      "SELECT b.app_id AS app, a.name, b.rho_before AS rho FROM bids b JOIN apps a ON a.id = b.app_id "
      "WHERE b.round_id = ? ORDER BY b.rho_before DESC, b.app_id");
  st.bind(1, round);
  std::vector<Bidder> out;
  while (st.step()) out.push_back({st.int64(0), st.text(1), optional_real(st, 2)});
  return out;
}

std::vector<HeldLease> ExplainStore::held_leases(std::int64_t app) {
  auto st = db_.prepare(
      "SELECT l.gpu, h.name AS host, l.job, l.round_id AS round, l.start, l.expiry FROM leases l "
      "JOIN gpus g ON g.gpu = l.gpu JOIN hosts h ON h.id = g.host_id "
      "WHERE l.app_id = ? AND l.state = 'active' ORDER BY l.gpu");
  st.bind(1, app);
  std::vector<HeldLease> out;
  while (st.step()) out.push_back({st.int64(0), st.text(1), st.int64(2), st.int64(3), st.real(4), st.real(5)});
  return out;
}

std::optional<LastWin> ExplainStore::last_win(std::int64_t app) {
  auto st = db_.prepare(
      "SELECT b.round_id, b.won, b.grant_kind, r.started_at, r.trigger FROM bids b JOIN rounds r ON r.id = b.round_id "
      "WHERE b.app_id = ? AND b.won <> '[]' ORDER BY b.round_id DESC LIMIT 1");
  st.bind(1, app);
  if (!st.step()) return std::nullopt;
  return LastWin{st.int64(0), st.text(1), optional_text(st, 2), st.real(3), st.text(4)};
}

LeaseUse ExplainStore::lease_use(std::int64_t app) {
  auto use = db_.prepare(
      "SELECT coalesce(sum(min(coalesce(released_at, expiry), expiry) - start), 0), count(DISTINCT round_id) "
      "FROM leases WHERE app_id = ?");
  use.bind(1, app);
  use.step();
  return {use.real(0), use.int64(1)};
}

std::optional<std::int64_t> ExplainStore::last_bid_round(std::int64_t app) {
  auto st = db_.prepare("SELECT max(round_id) AS round FROM bids WHERE app_id = ?");
  st.bind(1, app);
  if (!st.step()) return std::nullopt;
  return optional_int64(st, 0);
}

}  // namespace themis::store
