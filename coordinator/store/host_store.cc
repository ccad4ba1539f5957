#include "coordinator/store/host_store.h"

namespace themis::store {

std::optional<HostStore::Registered> HostStore::find(const std::string& name) {
  auto st = db_.prepare("SELECT id, first_gpu, gpu_count FROM hosts WHERE name = ?");
  st.bind(1, name);
  if (!st.step()) return std::nullopt;
  return Registered{st.int64(0), st.int64(1), st.int64(2)};
}

void HostStore::mark_up(std::int64_t host_id, const std::string& rack, double now) {
  db_.prepare("UPDATE hosts SET state = 'up', rack = ?, last_heartbeat = ? WHERE id = ?").bind_all(rack, now, host_id).run();
}

std::int64_t HostStore::add(const std::string& name, const std::string& rack, const std::vector<DeclaredSlot>& slots,
                            std::int64_t gpu_count, double now) {
  auto next = db_.prepare("SELECT coalesce(max(gpu) + 1, 0), coalesce(max(slot) + 1, 0) FROM gpus");
  next.step();
  const std::int64_t first_gpu = next.int64(0);
  std::int64_t slot_number = next.int64(1);
  db_.prepare(
         "INSERT INTO hosts(name, rack, state, first_gpu, gpu_count, registered_at, last_heartbeat) "
         "VALUES (?,?, 'up', ?,?,?,?)")
      .bind_all(name, rack, first_gpu, gpu_count, now, now)
      .run();
  const auto host_id = db_.last_insert_id();
  std::int64_t gpu = first_gpu;
  for (const auto& slot : slots) {
    for (const auto& g : slot) {
      db_.prepare("INSERT INTO gpus(gpu, host_id, local_index, slot, model) VALUES (?,?,?,?,?)")
          .bind_all(gpu++, host_id, g.local_index, slot_number, g.model)
          .run();
    }
    ++slot_number;
  }
  return first_gpu;
}

void HostStore::write_heartbeat(const std::string& name, double now) {
  db_.prepare("UPDATE hosts SET last_heartbeat = ? WHERE name = ?").bind_all(now, name).run();
}

std::vector<std::string> HostStore::up_hosts() {
  std::vector<std::string> out;
  auto st = db_.prepare("SELECT name FROM hosts WHERE state = 'up'");
  while (st.step()) out.push_back(st.text(0));
  return out;
}

void HostStore::mark_down(const std::string& name) {
  db_.prepare("UPDATE hosts SET state = 'down' WHERE name = ?").bind(1, name).run();
}

std::vector<std::pair<std::string, bool>> HostStore::hosts_of_job(std::int64_t app, std::int64_t job) {
  std::vector<std::pair<std::string, bool>> out;
  auto st = db_.prepare("SELECT DISTINCT h.name, h.state FROM jobs j, json_each(j.placement) p "
                        "JOIN gpus g ON g.gpu = p.value JOIN hosts h ON h.id = g.host_id "
                        "WHERE j.app_id = ? AND j.job = ?");
  st.bind_all(app, job);
  while (st.step()) out.emplace_back(st.text(0), st.text(1) == "up");
  return out;
}

std::vector<std::string> HostStore::up_hosts_of_job(std::int64_t app, std::int64_t job) {
  std::vector<std::string> out;
  auto st = db_.prepare("SELECT DISTINCT h.name FROM jobs j, json_each(j.placement) p JOIN gpus g ON g.gpu = p.value "
                        "JOIN hosts h ON h.id = g.host_id WHERE j.app_id = ? AND j.job = ? AND h.state = 'up'");
  st.bind_all(app, job);
  while (st.step()) out.push_back(st.text(0));
  return out;
}

std::vector<std::int64_t> HostStore::lease_holders_on(const std::string& host) {
  std::vector<std::int64_t> out;
  auto st = db_.prepare("SELECT DISTINCT l.app_id FROM leases l JOIN gpus g ON g.gpu = l.gpu JOIN hosts h ON h.id = g.host_id "
                        "WHERE l.state = 'active' AND h.name = ?");
  st.bind(1, host);
  while (st.step()) out.push_back(st.int64(0));
  return out;
}

std::vector<std::pair<std::int64_t, std::int64_t>> HostStore::live_jobs_on(const std::string& host) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  auto st = db_.prepare("SELECT DISTINCT j.app_id, j.job FROM jobs j, json_each(j.placement) p "
                        "JOIN gpus g ON g.gpu = p.value JOIN hosts h ON h.id = g.host_id "
                        "WHERE h.name = ? AND j.state IN ('STARTING','RUNNING','STOPPING')");
  st.bind(1, host);
  while (st.step()) out.emplace_back(st.int64(0), st.int64(1));
  return out;
}

std::vector<std::pair<std::int64_t, std::int64_t>> HostStore::running_jobs_without_exits_on(const std::string& host) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  auto st = db_.prepare(
      "SELECT DISTINCT j.app_id, j.job FROM jobs j, json_each(j.placement) p JOIN gpus g ON g.gpu = p.value "
      "JOIN hosts h ON h.id = g.host_id WHERE h.name = ? AND j.state = 'RUNNING' AND j.exited_ranks = 0");
  st.bind(1, host);
  while (st.step()) out.emplace_back(st.int64(0), st.int64(1));
  return out;
}

std::vector<HostStore::StoppingJob> HostStore::stopping_jobs_on(const std::string& host, double since) {
  std::vector<StoppingJob> out;
  auto st = db_.prepare(
      "SELECT DISTINCT j.app_id, j.job, j.attempt, j.reason FROM jobs j, json_each(j.placement) p JOIN gpus g ON g.gpu = p.value "
      "JOIN hosts h ON h.id = g.host_id WHERE h.name = ? AND j.state = 'STOPPING' AND j.state_since <= ?");
  st.bind_all(host, since);
  while (st.step()) out.push_back({st.int64(0), st.int64(1), st.int64(2), st.text(3)});
  return out;
}

}  // namespace themis::store
