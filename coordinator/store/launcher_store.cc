#include "coordinator/store/launcher_store.h"

namespace themis::store {

std::optional<std::string> LauncherStore::owner(std::int64_t app) {
  auto st = db_.prepare("SELECT owner FROM apps WHERE id = ?");
  st.bind(1, app);
  if (!st.step()) return std::nullopt;
  return st.text(0);
}

bool LauncherStore::has_ended(std::int64_t app) {
  auto st = db_.prepare("SELECT 1 FROM apps WHERE id = ? AND state IN ('COMPLETED', 'FAILED', 'CANCELLED')");
  st.bind(1, app);
  return st.step();
}

LauncherStore::AttachedApp LauncherStore::attached_app(std::int64_t app) {
  auto st = db_.prepare("SELECT name, spec, submitted_at, gpus_per_job, max_concurrent_jobs, state FROM apps WHERE id = ?");
  st.bind(1, app);
  if (!st.step()) return {};
  return AttachedApp{st.text(0), st.text(1), st.real(2), st.int64(3), st.int64(4), st.text(5)};
}

std::int64_t LauncherStore::active_app_count() {
  auto st = db_.prepare("SELECT count(*) FROM apps WHERE state IN ('PENDING','RUNNING')");
  st.step();
  return st.int64(0);
}

std::vector<LauncherStore::HostLayout> LauncherStore::host_layouts() {
  std::vector<HostLayout> out;
  auto h = db_.prepare("SELECT id, name, rack, first_gpu FROM hosts ORDER BY first_gpu");
  while (h.step()) {
    std::vector<std::uint32_t> slots;
    auto s = db_.prepare("SELECT count(*) FROM gpus WHERE host_id = ? GROUP BY slot ORDER BY slot");
    s.bind(1, h.int64(0));
    while (s.step()) slots.push_back(static_cast<std::uint32_t>(s.int64(0)));
    out.push_back(HostLayout{h.text(1), h.text(2), h.int64(3), std::move(slots)});
  }
  return out;
}

std::vector<LauncherStore::AttachedJob> LauncherStore::jobs_of(std::int64_t app) {
  std::vector<AttachedJob> out;
  auto st = db_.prepare("SELECT job, hparams, attempt, state FROM jobs WHERE app_id = ? ORDER BY job");
  st.bind(1, app);
  while (st.step()) out.push_back(AttachedJob{st.int64(0), st.text(1), st.int64(2), st.text(3)});
  return out;
}

std::optional<std::string> LauncherStore::saved_launcher_state(std::int64_t app) {
  auto st = db_.prepare("SELECT message FROM events WHERE app_id = ? AND kind = 'LauncherState' ORDER BY id DESC LIMIT 1");
  st.bind(1, app);
  if (!st.step()) return std::nullopt;
  return st.text(0);
}

void LauncherStore::set_rho(std::int64_t app, double rho) {
  db_.prepare("UPDATE apps SET rho = ? WHERE id = ?").bind_all(rho, app).run();
}

bool LauncherStore::probe_running(std::int64_t app) {
  auto st = db_.prepare("SELECT probe = 'running' FROM apps WHERE id = ?");
  st.bind(1, app);
  return st.step() && st.int64(0) != 0;
}

std::vector<std::int64_t> LauncherStore::running_jobs(std::int64_t app) {
  std::vector<std::int64_t> out;
  auto st = db_.prepare("SELECT job FROM jobs WHERE app_id = ? AND state IN ('STARTING','RUNNING')");
  st.bind(1, app);
  while (st.step()) out.push_back(st.int64(0));
  return out;
}


std::optional<std::string> LauncherStore::spec(std::int64_t app) {
  auto st = db_.prepare("SELECT spec FROM apps WHERE id = ?");
  st.bind(1, app);
  if (!st.step()) return std::nullopt;
  return st.text(0);
}

std::optional<LauncherStore::LauncherStarts> LauncherStore::launcher_starts(std::int64_t app) {
  auto st = db_.prepare("SELECT owner, (SELECT count(*) FROM events WHERE app_id = a.id AND kind = 'LauncherStarted') "
                        "FROM apps a WHERE id = ?");
  st.bind(1, app);
  if (!st.step()) return std::nullopt;
  return LauncherStarts{st.text(0), st.int64(1)};
}

std::vector<std::int64_t> LauncherStore::active_app_ids() {
  std::vector<std::int64_t> out;
  auto st = db_.prepare("SELECT id FROM apps WHERE state IN ('PENDING','RUNNING') ORDER BY id");
  while (st.step()) out.push_back(st.int64(0));
  return out;
}

std::optional<LauncherStore::StateAndOwner> LauncherStore::state_and_owner(std::int64_t app) {
  auto st = db_.prepare("SELECT state, owner FROM apps WHERE id = ?");
  st.bind(1, app);
  if (!st.step()) return std::nullopt;
  return StateAndOwner{st.text(0), st.text(1)};
}

std::vector<std::string> LauncherStore::launcher_started_messages(std::int64_t app) {
  std::vector<std::string> out;
  auto st = db_.prepare("SELECT message FROM events WHERE app_id = ? AND kind = 'LauncherStarted' ORDER BY id DESC");
  st.bind(1, app);
  while (st.step()) out.push_back(st.text(0));
  return out;
}

}  // namespace themis::store
