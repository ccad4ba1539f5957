#include "coordinator/store/admission_store.h"

#include <utility>

namespace themis::store {
namespace {

// Where the last admission plan left off, in a TEMP table of the coordinator's connection: it rolls back
// with the transaction that wrote it, and readers of the database never see it. It covers the apps up
// to last_app; apps submitted since are the arrivals the next plan decides, after the queue
// (plan_admission_after). TEMP triggers mark it stale whenever an input of the plan changes for an app
// it covers: a queued app leaves the queue or changes, an admitted app ends or its demand changes (a job
// ends), a host or GPU comes or goes. A stale memo means a full re-plan, as every plan was before.
constexpr const char* kWatchAdmissionInputs = R"sql(
CREATE TEMP TABLE admission_memo (
  one          INTEGER PRIMARY KEY CHECK (one = 1),
  valid        INTEGER NOT NULL,
  last_app     INTEGER NOT NULL,
  cluster_gpus INTEGER NOT NULL,
  demand_gpus  INTEGER NOT NULL,
  blocked      INTEGER NOT NULL
);
INSERT INTO admission_memo VALUES (1, 0, 0, 0, 0, 0);
CREATE TEMP TRIGGER admission_memo_app_inserted AFTER INSERT ON apps
WHEN new.id <= (SELECT last_app FROM admission_memo) BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_app_deleted AFTER DELETE ON apps
WHEN old.id <= (SELECT last_app FROM admission_memo) BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_app_updated AFTER UPDATE OF id, state, admission, gpus_per_job, max_concurrent_jobs ON apps
WHEN min(old.id, new.id) <= (SELECT last_app FROM admission_memo)
 AND (old.id IS NOT new.id OR old.admission IS NOT new.admission OR old.gpus_per_job IS NOT new.gpus_per_job
      OR old.max_concurrent_jobs IS NOT new.max_concurrent_jobs
      OR (old.state IN ('PENDING','RUNNING')) IS NOT (new.state IN ('PENDING','RUNNING'))
      OR (old.admission IS NOT NULL AND old.state IS NOT new.state))
BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_job_inserted AFTER INSERT ON jobs
WHEN new.app_id <= (SELECT last_app FROM admission_memo) BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_job_deleted AFTER DELETE ON jobs
WHEN old.app_id <= (SELECT last_app FROM admission_memo) BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_job_updated AFTER UPDATE OF app_id, state ON jobs
WHEN min(old.app_id, new.app_id) <= (SELECT last_app FROM admission_memo)
 AND (old.app_id IS NOT new.app_id
      OR (old.state IN ('COMPLETED','FAILED','CANCELLED')) IS NOT (new.state IN ('COMPLETED','FAILED','CANCELLED')))
BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_host_inserted AFTER INSERT ON hosts BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_host_deleted AFTER DELETE ON hosts BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_host_updated AFTER UPDATE OF id, state ON hosts
WHEN old.id IS NOT new.id OR old.state IS NOT new.state BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_gpu_inserted AFTER INSERT ON gpus BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_gpu_deleted AFTER DELETE ON gpus BEGIN UPDATE admission_memo SET valid = 0; END;
CREATE TEMP TRIGGER admission_memo_gpu_updated AFTER UPDATE OF gpu, host_id ON gpus
WHEN old.gpu IS NOT new.gpu OR old.host_id IS NOT new.host_id BEGIN UPDATE admission_memo SET valid = 0; END;
)sql";

// An app's demand: gpus_per_job x min(max_concurrent_jobs, jobs not ended).
constexpr const char* kAppDemand =
    "a.gpus_per_job * min(a.max_concurrent_jobs, "
    "(SELECT count(*) FROM jobs j WHERE j.app_id = a.id AND j.state NOT IN ('COMPLETED','FAILED','CANCELLED')))";
}  // namespace

void AdmissionStore::watch_inputs() {
  auto exists = db_.prepare("SELECT count(*) FROM sqlite_temp_master WHERE type = 'table' AND name = 'admission_memo'");
  exists.step();
  if (exists.int64(0) == 0) db_.exec(kWatchAdmissionInputs);
}

AdmissionMemo AdmissionStore::memo() {
  auto st = db_.prepare("SELECT valid, last_app, cluster_gpus, demand_gpus, blocked FROM admission_memo");
  st.step();
  return AdmissionMemo{st.int64(0) == 1, st.int64(1), st.int64(2), st.int64(3), st.int64(4) != 0};
}

void AdmissionStore::remember(const AdmissionMemo& memo) {
  db_.prepare("UPDATE admission_memo SET valid = 1, last_app = ?, cluster_gpus = ?, demand_gpus = ?, blocked = ?")
      .bind_all(memo.last_app, memo.cluster_gpus, memo.demand_gpus, static_cast<std::int64_t>(memo.blocked ? 1 : 0))
      .run();
}

std::vector<AppDemand> AdmissionStore::apps_after(std::int64_t app) {
  auto arrived = db_.prepare(std::string("SELECT a.id, a.state, a.admission, ") + kAppDemand +
                             " FROM apps a WHERE a.id > ? ORDER BY a.id");
  arrived.bind(1, app);
  std::vector<AppDemand> out;
  while (arrived.step()) {
    AppDemand d{arrived.int64(0), arrived.text(1), std::nullopt, arrived.int64(3)};
    if (!arrived.is_null(2)) d.admission = arrived.text(2);
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<AppDemand> AdmissionStore::queue(const std::string& infeasible_prefix) {
  auto queued = db_.prepare(std::string("SELECT a.id, a.admission, ") + kAppDemand +
                            " FROM apps a WHERE a.state = 'PENDING' AND a.admission IS NOT NULL "
                            "AND substr(a.admission, 1, length(?1)) IS NOT ?1 ORDER BY a.id");
  queued.bind(1, infeasible_prefix);
  std::vector<AppDemand> out;
  while (queued.step()) out.push_back({queued.int64(0), "", queued.text(1), queued.int64(2)});
  return out;
}

std::int64_t AdmissionStore::up_gpus() {
  auto gpus = db_.prepare("SELECT count(*) FROM gpus g JOIN hosts h ON h.id = g.host_id WHERE h.state = 'up'");
  gpus.step();
  return gpus.int64(0);
}

std::int64_t AdmissionStore::admitted_demand_gpus() {
  auto admitted = db_.prepare(std::string("SELECT coalesce(sum(") + kAppDemand +
                              "), 0) FROM apps a WHERE a.state IN ('PENDING','RUNNING') AND a.admission IS NULL");
  admitted.step();
  return admitted.int64(0);
}

std::int64_t AdmissionStore::newest_app() {
  auto newest = db_.prepare("SELECT coalesce(max(id), 0) FROM apps");
  newest.step();
  return newest.int64(0);
}

void AdmissionStore::admit(std::int64_t app) { db_.prepare("UPDATE apps SET admission = NULL WHERE id = ?").bind(1, app).run(); }

}  // namespace themis::store
