#include "coordinator/store/app_store.h"

namespace themis::store {

std::optional<AppStore::SubmittedApp> AppStore::app_of_token(const std::string& owner, const std::string& token) {
  auto st = db_.prepare("SELECT a.id, a.name, a.spec, (SELECT count(*) FROM jobs j WHERE j.app_id = a.id) "
                        "FROM apps a WHERE a.owner = ? AND a.submit_token = ?");
  st.bind_all(owner, token);
  if (!st.step()) return std::nullopt;
  return SubmittedApp{st.int64(0), st.text(1), st.text(2), static_cast<std::uint32_t>(st.int64(3))};
}

bool AppStore::submit_repeat_recorded(std::int64_t app) {
  auto seen = db_.prepare("SELECT 1 FROM events WHERE app_id = ? AND kind = 'SubmitRepeated' LIMIT 1");
  seen.bind(1, app);
  return seen.step();
}

std::int64_t AppStore::insert_app(const NewApp& app) {
  db_.prepare("INSERT INTO apps(name, owner, state, spec, gpus_per_job, max_concurrent_jobs, workdir, env, checkpoint_dir, "
              "grace_ms, submitted_at, submit_token) VALUES (?,?, 'PENDING', ?,?,?,?,?,?,?,?,?)")
      .bind_all(app.name, app.owner, app.spec, app.gpus_per_job, app.max_concurrent_jobs, app.workdir, app.env_json,
                app.checkpoint_dir, app.grace_ms, app.submitted_at, app.submit_token)
      .run();
  return db_.last_insert_id();
}

void AppStore::insert_job(std::int64_t app, std::int64_t job, const std::string& hparams_json, const std::string& command_json,
                          double now) {
  db_.prepare("INSERT INTO jobs(app_id, job, state, reason, hparams, command, state_since) VALUES (?,?, 'PENDING', 'New', ?,?,?)")
      .bind_all(app, job, hparams_json, command_json, now)
      .run();
}

void AppStore::mark_probe_waiting(std::int64_t app) {
  db_.prepare("UPDATE apps SET probe = 'waiting' WHERE id = ?").bind(1, app).run();
}

void AppStore::set_admission(std::int64_t app, const std::string& admission) {
  db_.prepare("UPDATE apps SET admission = ? WHERE id = ?").bind_all(admission, app).run();
}

std::optional<AppStore::Ownership> AppStore::ownership(std::int64_t app) {
  auto st = db_.prepare("SELECT owner, state FROM apps WHERE id = ?");
  st.bind(1, app);
  if (!st.step()) return std::nullopt;
  return Ownership{st.text(0), st.text(1)};
}

std::vector<std::int64_t> AppStore::cancellable_jobs(std::int64_t app) {
  auto jobs = db_.prepare("SELECT job FROM jobs WHERE app_id = ? AND state IN ('PENDING','STARTING','RUNNING')");
  jobs.bind(1, app);
  std::vector<std::int64_t> list;
  while (jobs.step()) list.push_back(jobs.int64(0));
  return list;
}


}  // namespace themis::store
