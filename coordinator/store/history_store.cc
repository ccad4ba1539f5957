#include "coordinator/store/history_store.h"

namespace themis::store {

namespace {

using nlohmann::json;

// The finished apps of the period with their leased GPU-seconds; ?1 since, ?2 until, ?3 owner.
constexpr const char* kFinishedInPeriod = R"sql(
WITH used AS (
  SELECT app_id, sum(max(0, min(coalesce(released_at, expiry), expiry) - start)) AS gpu_seconds
  FROM leases GROUP BY app_id
), ended AS (
  SELECT a.*, coalesce(u.gpu_seconds, 0) AS gpu_seconds FROM apps a LEFT JOIN used u ON u.app_id = a.id
  WHERE a.state IN ('COMPLETED', 'FAILED', 'CANCELLED') AND a.finished_at IS NOT NULL
    AND (?1 IS NULL OR a.finished_at >= ?1) AND (?2 IS NULL OR a.finished_at < ?2) AND (?3 = '' OR a.owner = ?3)
)
)sql";

json rows(Statement& st) {
  json items = json::array();
  while (st.step()) {
    json row = json::object();
    for (int c = 0; c < st.columns(); ++c) {
      const std::string name = st.column_name(c);
      if (st.is_null(c)) row[name] = nullptr;
      else if (st.type(c) == SQLITE_INTEGER) row[name] = st.int64(c);
      else if (st.type(c) == SQLITE_FLOAT) row[name] = st.real(c);
      else row[name] = st.text(c);
    }
    items.push_back(std::move(row));
  }
  return items;
}

void bind_period(Statement& st, const HistoryPeriod& period) {
  st.bind(1, period.since);
  st.bind(2, period.until);
  st.bind(3, period.user);
}

}  // namespace

json finished_apps(Database& db, const HistoryPeriod& period, int limit) {
  auto st = db.prepare(std::string(kFinishedInPeriod) + R"sql(
SELECT e.id AS app, e.name, e.owner, e.state,
       strftime('%Y-%m-%dT%H:%M:%SZ', e.submitted_at, 'unixepoch') AS submitted,
       strftime('%Y-%m-%dT%H:%M:%SZ', e.finished_at, 'unixepoch') AS finished,
       round(e.finished_at - e.submitted_at, 3) AS jct_s, e.rho,
       round(e.gpu_seconds / 3600.0, 4) AS gpu_hours,
       (SELECT count(*) FROM jobs j WHERE j.app_id = e.id) AS jobs,
       CASE e.state WHEN 'COMPLETED' THEN '0:0' WHEN 'CANCELLED' THEN '-' ELSE coalesce(
         (SELECT coalesce(j.exit_code, '-') || ':' || coalesce(j.exit_signal, 0) FROM jobs j
          WHERE j.app_id = e.id AND j.state = 'FAILED' ORDER BY j.job LIMIT 1), '-') END AS exit
FROM ended e ORDER BY e.finished_at DESC, e.id DESC LIMIT ?4
)sql");
  bind_period(st, period);
  st.bind(4, static_cast<std::int64_t>(limit));
  return rows(st);
}

json user_totals(Database& db, const HistoryPeriod& period) {
  auto st = db.prepare(std::string(kFinishedInPeriod) + R"sql(
SELECT e.owner AS user, count(*) AS apps, sum(e.state = 'COMPLETED') AS completed, sum(e.state = 'FAILED') AS failed,
       sum(e.state = 'CANCELLED') AS cancelled, round(sum(e.gpu_seconds) / 3600.0, 4) AS gpu_hours,
       round(avg(e.finished_at - e.submitted_at), 3) AS mean_jct_s, round(avg(e.rho), 3) AS mean_rho
FROM ended e GROUP BY e.owner ORDER BY sum(e.gpu_seconds) DESC, e.owner
)sql");
  bind_period(st, period);
  return rows(st);
}

}  // namespace themis::store
