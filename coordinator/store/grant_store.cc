#include "coordinator/store/grant_store.h"

namespace themis::store {

std::vector<GrantStore::GrantedLease> GrantStore::active_leases(std::int64_t app) {
  std::vector<GrantedLease> out;
  auto st = db_.prepare("SELECT gpu, start, expiry, job, id FROM leases WHERE app_id = ? AND state = 'active' ORDER BY gpu");
  st.bind(1, app);
  while (st.step()) out.push_back(GrantedLease{st.int64(0), st.real(1), st.real(2), st.int64(3), st.int64(4)});
  return out;
}

bool GrantStore::probe_running(std::int64_t app) {
  auto st = db_.prepare("SELECT 1 FROM apps WHERE id = ? AND probe = 'running'");
  st.bind(1, app);
  return st.step();
}

}  // namespace themis::store
