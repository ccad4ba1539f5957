#include "coordinator/store/job_launch_store.h"

namespace themis::store {

std::optional<JobLaunchStore::JobAttempt> JobLaunchStore::job_attempt(std::int64_t app, std::int64_t job) {
  auto st = db_.prepare("SELECT state, attempt, placement FROM jobs WHERE app_id = ? AND job = ?");
  st.bind_all(app, job);
  if (!st.step()) return std::nullopt;
  return JobAttempt{st.text(0), st.int64(1), st.text(2)};
}

bool JobLaunchStore::gpu_leased_to(std::int64_t app, std::int64_t gpu, double now) {
  auto st = db_.prepare("SELECT count(*) FROM leases WHERE gpu = ? AND app_id = ? AND state = 'active' AND expiry > ?");
  st.bind_all(gpu, app, now);
  st.step();
  return st.int64(0) != 0;
}

std::optional<JobLaunchStore::LeaseRecord> JobLaunchStore::lease_of(std::int64_t id, std::int64_t app, std::int64_t gpu) {
  auto st = db_.prepare("SELECT state, expiry, released_at, coalesce(release_reason, '') FROM leases "
                        "WHERE id = ? AND app_id = ? AND gpu = ?");
  st.bind_all(id, app, gpu);
  if (!st.step()) return std::nullopt;
  LeaseRecord out{st.text(0), st.real(1), std::nullopt, st.text(3)};
  if (!st.is_null(2)) out.released_at = st.real(2);
  return out;
}

bool JobLaunchStore::other_job_on_gpu(std::int64_t app, std::int64_t job, std::int64_t gpu) {
  auto st = db_.prepare("SELECT count(*) FROM jobs o, json_each(o.placement) p WHERE p.value = ? "
                        "AND o.app_id = ? AND o.job <> ? AND o.state IN ('STARTING','RUNNING')");
  st.bind_all(gpu, app, job);
  st.step();
  return st.int64(0) > 0;
}

void JobLaunchStore::assign_lease_to_job(std::int64_t app, std::int64_t gpu, std::int64_t job) {
  db_.prepare("UPDATE leases SET job = ? WHERE app_id = ? AND gpu = ? AND state = 'active'").bind_all(job, app, gpu).run();
}

bool JobLaunchStore::stop_ordered(std::int64_t app, std::int64_t job, std::int64_t attempt) {
  auto st = db_.prepare("SELECT state = 'STOPPING' AND attempt = ? FROM jobs WHERE app_id = ? AND job = ?");
  st.bind_all(attempt, app, job);
  return st.step() && st.int64(0) != 0;
}

JobLaunchStore::RanksOnHost JobLaunchStore::ranks_on_host(std::int64_t app, std::int64_t job, const std::string& host) {
  RanksOnHost out;
  auto st = db_.prepare("SELECT j.attempt, p.key FROM jobs j, json_each(j.placement) p JOIN gpus g ON g.gpu = p.value "
                        "JOIN hosts h ON h.id = g.host_id WHERE j.app_id = ? AND j.job = ? AND h.name = ?");
  st.bind_all(app, job, host);
  while (st.step()) {
    out.attempt = st.int64(0);
    out.ranks.push_back(static_cast<std::uint32_t>(st.int64(1)));
  }
  return out;
}

}  // namespace themis::store
