#pragma once
// The SQL of admission control (Coordinator::admit_apps, docs/reliability.md): the queue in apps.admission,
// each app's GPU demand, and the memo of where the last admission plan left off.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/store/database.h"

namespace themis::store {

// Where the last admission plan left off: it covers the apps up to last_app, and is valid until an input
// of the plan changes for one of them (an app, a job, a host or a GPU).
struct AdmissionMemo {
  bool valid = false;
  std::int64_t last_app = 0, cluster_gpus = 0, demand_gpus = 0;
  bool blocked = false;
};

// An app with its demand: gpus_per_job x min(max_concurrent_jobs, jobs not ended).
struct AppDemand {
  std::int64_t id = 0;
  std::string state;                     // empty where the query does not read it
  std::optional<std::string> admission;  // nullopt: admitted
  std::int64_t demand_gpus = 0;
};

class AdmissionStore {
 public:
  explicit AdmissionStore(Database& db) : db_(db) {}

  // Creates the memo and the TEMP triggers that invalidate it, unless this connection has them already.
  // Inside the caller's transaction: they roll back with it, and are created again next time.
  void watch_inputs();
  AdmissionMemo memo();
  void remember(const AdmissionMemo& memo);

  // Every app after `app`, in id order, with its state, admission and demand.
  std::vector<AppDemand> apps_after(std::int64_t app);
  // The queue: PENDING apps that wait for admission, not as infeasible (their reason does not start
  // with `infeasible_prefix`), in id order.
  std::vector<AppDemand> queue(const std::string& infeasible_prefix);
  // GPUs of the hosts that are up.
  std::int64_t up_gpus();
  // The demand of the admitted apps still active.
  std::int64_t admitted_demand_gpus();
  // The highest app id (0 for none).
  std::int64_t newest_app();
  void admit(std::int64_t app);  // apps.admission = NULL; a waiting reason goes through FeasibilityStore::set_admission

 private:
  Database& db_;
};

}  // namespace themis::store
