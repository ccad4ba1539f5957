#pragma once
// The SQL of feasibility (coordinator/admission_feasibility.h): the registered hosts' GPUs and the
// pending apps whose verdict may change. Infeasible apps wait in apps.admission like queued ones, with
// a reason that starts "Infeasible: ", so that rounds leave them out (they take no GPU, no probe).
#include <cstdint>
#include <string>
#include <vector>

#include "coordinator/store/database.h"

namespace themis::store {

struct JudgedApp {
  std::int64_t id = 0;
  int gpus_per_job = 1;
  bool admission_null = true;  // admitted
  std::string admission;       // else why it waits
};

class FeasibilityStore {
 public:
  explicit FeasibilityStore(Database& db) : db_(db) {}
  // GPUs of each registered host, up or down, in GPU order.
  std::vector<int> registered_gpus_per_host();
  // PENDING apps wider than `largest` GPUs per job, and those already waiting as infeasible.
  std::vector<JudgedApp> apps_to_judge(int largest, const std::string& infeasible_prefix);
  void set_admission(std::int64_t app, const std::string& admission);

 private:
  Database& db_;
};

}  // namespace themis::store
