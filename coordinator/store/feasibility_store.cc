#include "coordinator/store/feasibility_store.h"

namespace themis::store {

std::vector<int> FeasibilityStore::registered_gpus_per_host() {
  std::vector<int> out;
  auto st = db_.prepare("SELECT gpu_count FROM hosts ORDER BY first_gpu");
  while (st.step()) out.push_back(static_cast<int>(st.int64(0)));
  return out;
}

std::vector<JudgedApp> FeasibilityStore::apps_to_judge(int largest, const std::string& infeasible_prefix) {
  std::vector<JudgedApp> out;
  auto st = db_.prepare(
      "SELECT id, gpus_per_job, admission FROM apps WHERE state = 'PENDING' "
      "AND (gpus_per_job > ? OR substr(admission, 1, ?) = ?) ORDER BY id");
  st.bind_all(static_cast<std::int64_t>(largest), static_cast<std::int64_t>(infeasible_prefix.size()), infeasible_prefix);
  while (st.step()) {
    JudgedApp app;
    app.id = st.int64(0);
    app.gpus_per_job = static_cast<int>(st.int64(1));
    app.admission_null = st.is_null(2);
    if (!app.admission_null) app.admission = st.text(2);
    out.push_back(std::move(app));
  }
  return out;
}

void FeasibilityStore::set_admission(std::int64_t app, const std::string& admission) {
  db_.prepare("UPDATE apps SET admission = ? WHERE id = ?").bind_all(admission, app).run();
}

}  // namespace themis::store
