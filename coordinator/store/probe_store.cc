#include "coordinator/store/probe_store.h"

namespace themis::store {
namespace {

const char* probe_name(ProbeStore::Probe probe) {
  switch (probe) {
    case ProbeStore::Probe::kRunning: return "running";
    case ProbeStore::Probe::kPassed: return "passed";
    case ProbeStore::Probe::kFailed: return "failed";
  }
  return "running";
}

}  // namespace

void ProbeStore::set_probe(std::int64_t app, Probe probe) {
  db_.prepare("UPDATE apps SET probe = ? WHERE id = ?").bind_all(probe_name(probe), app).run();
}

std::vector<std::pair<std::int64_t, bool>> ProbeStore::probing_apps() {
  std::vector<std::pair<std::int64_t, bool>> out;
  auto st = db_.prepare("SELECT id, state IN ('PENDING','RUNNING') FROM apps WHERE probe = 'running'");
  while (st.step()) out.emplace_back(st.int64(0), st.int64(1) != 0);
  return out;
}

std::optional<ProbeStore::LastAttempt> ProbeStore::last_attempt(std::int64_t app) {
  auto st = db_.prepare("SELECT job, state, coalesce(failure, reason) FROM jobs WHERE app_id = ? AND attempt > 0 "
                        "ORDER BY state_since DESC LIMIT 1");
  st.bind(1, app);
  if (!st.step()) return std::nullopt;
  return LastAttempt{st.int64(0), st.text(1), st.text(2)};
}

std::int64_t ProbeStore::completed_jobs(std::int64_t app) {
  auto st = db_.prepare("SELECT count(*) FROM jobs WHERE app_id = ? AND state = 'COMPLETED' AND attempt > 0");
  st.bind(1, app);
  st.step();
  return st.int64(0);
}

std::int64_t ProbeStore::live_leases(std::int64_t app, double now) {
  auto st = db_.prepare("SELECT count(*) FROM leases WHERE app_id = ? AND state = 'active' AND expiry > ?");
  st.bind_all(app, now);
  st.step();
  return st.int64(0);
}

std::optional<ProbeStore::FirstFailure> ProbeStore::first_failure_since_first_lease(std::int64_t app) {
  auto f = db_.prepare("SELECT f.job, f.attempt, f.class, coalesce(f.reason, '') FROM job_failures f WHERE f.app_id = ? "
                       "AND f.class <> 'preemption' AND f.ts >= (SELECT min(start) FROM leases WHERE app_id = f.app_id) "
                       "ORDER BY f.ts LIMIT 1");
  f.bind(1, app);
  if (!f.step()) return std::nullopt;
  FirstFailure out{f.int64(0), f.int64(1), f.text(2), f.text(3), 0};
  auto earlier = db_.prepare("SELECT count(*) FROM job_failures WHERE app_id = ? AND job = ? AND class = ? AND attempt < ?");
  earlier.bind_all(app, out.job, out.failure_class, out.attempt);
  earlier.step();
  out.earlier_same_class = earlier.int64(0);
  return out;
}

}  // namespace themis::store
