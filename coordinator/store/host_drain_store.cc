#include "coordinator/store/host_drain_store.h"

namespace themis::store {

bool drain_host(Database& db, const std::string& host, const std::string& reason, const std::string& by, double now) {
  return db.prepare("UPDATE hosts SET drain_reason = ?, drained_at = ?, drained_by = ? WHERE name = ?")
             .bind_all(reason, now, by, host)
             .run() > 0;
}

std::optional<std::string> resume_host(Database& db, const std::string& host, bool* known) {
  auto st = db.prepare("SELECT drain_reason FROM hosts WHERE name = ?");
  st.bind(1, host);
  *known = st.step();
  if (!*known || st.is_null(0)) return std::nullopt;
  std::string reason = st.text(0);
  db.prepare("UPDATE hosts SET drain_reason = NULL, drained_at = NULL, drained_by = NULL WHERE name = ?").bind(1, host).run();
  return reason;
}

}  // namespace themis::store
