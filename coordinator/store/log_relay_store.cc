#include "coordinator/store/log_relay_store.h"

namespace themis::store {

std::optional<std::string> LogRelayStore::app_owner(std::int64_t app) {
  auto owner = db_.prepare("SELECT owner FROM apps WHERE id = ?");
  owner.bind(1, app);
  if (!owner.step()) return std::nullopt;
  return owner.text(0);
}

std::optional<LogRelayStore::LatestAttempt> LogRelayStore::latest_attempt(std::int64_t app, std::int64_t job) {
  auto st = db_.prepare("SELECT attempt, placement FROM jobs WHERE app_id = ? AND job = ?");
  st.bind_all(app, job);
  if (!st.step()) return std::nullopt;
  return LatestAttempt{static_cast<std::uint32_t>(st.int64(0)), st.text(1)};
}

std::vector<GpuIndex> LogRelayStore::last_lease_gpus(std::int64_t app, std::int64_t job) {
  auto st = db_.prepare("SELECT gpu FROM leases WHERE app_id = ?1 AND job = ?2 AND round_id = "
                        "(SELECT max(round_id) FROM leases WHERE app_id = ?1 AND job = ?2) ORDER BY gpu");
  st.bind_all(app, job);
  std::vector<GpuIndex> gpus;
  while (st.step()) gpus.push_back(static_cast<GpuIndex>(st.int64(0)));
  return gpus;
}

std::string LogRelayStore::host_of_gpu(GpuIndex gpu) {
  auto st = db_.prepare("SELECT h.name FROM gpus g JOIN hosts h ON h.id = g.host_id WHERE g.gpu = ?");
  st.bind(1, static_cast<std::int64_t>(gpu));
  return st.step() ? st.text(0) : std::string();
}

bool LogRelayStore::attempt_ended(std::int64_t app, std::int64_t job, std::uint32_t attempt) {
  auto st = db_.prepare("SELECT attempt = ? AND state IN ('STARTING','RUNNING','STOPPING') FROM jobs WHERE app_id = ? AND job = ?");
  st.bind_all(static_cast<std::int64_t>(attempt), app, job);
  return st.step() ? st.int64(0) == 0 : true;
}

}  // namespace themis::store
