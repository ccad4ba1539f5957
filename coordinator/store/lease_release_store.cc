#include "coordinator/store/lease_release_store.h"

namespace themis::store {

void LeaseReleaseStore::release_job(std::int64_t app, std::int64_t job, double now, const std::string& reason) {
  db_.prepare("UPDATE leases SET state = 'released', released_at = ?, release_reason = ? "
              "WHERE app_id = ? AND job = ? AND state = 'active'")
      .bind_all(now, reason, app, job)
      .run();
}

bool LeaseReleaseStore::release_unused_gpu(std::int64_t app, std::int64_t gpu, double now, const std::string& reason) {
  auto lease = db_.prepare(
      "SELECT id FROM leases WHERE app_id = ? AND gpu = ? AND state = 'active' AND NOT EXISTS ("
      "SELECT 1 FROM jobs j, json_each(j.placement) p WHERE j.app_id = ? AND p.value = ? "
      "AND j.state IN ('STARTING', 'RUNNING', 'STOPPING'))");
  lease.bind_all(app, gpu, app, gpu);
  if (!lease.step()) return false;
  const std::int64_t id = lease.int64(0);
  db_.prepare("UPDATE leases SET state = 'released', released_at = ?, release_reason = ? WHERE id = ?")
      .bind_all(now, reason, id)
      .run();
  return true;
}

void LeaseReleaseStore::release_host(const std::string& host, double now, const std::string& reason) {
  db_.prepare("UPDATE leases SET state = 'released', released_at = ?, release_reason = ? "
              "WHERE state = 'active' AND gpu IN (SELECT g.gpu FROM gpus g JOIN hosts h ON h.id = g.host_id WHERE h.name = ?)")
      .bind_all(now, reason, host)
      .run();
}

std::int64_t LeaseReleaseStore::expiring(double now) {
  auto st = db_.prepare("SELECT count(*) FROM leases WHERE state = 'active' AND expiry <= ?");
  st.bind(1, now);
  st.step();
  return st.int64(0);
}

void LeaseReleaseStore::release_app(std::int64_t app, double now, const std::string& reason) {
  db_.prepare("UPDATE leases SET state = 'released', released_at = ?, release_reason = ? WHERE app_id = ? AND state = 'active'")
      .bind_all(now, reason, app)
      .run();
}

}  // namespace themis::store
