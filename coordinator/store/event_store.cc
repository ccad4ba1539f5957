#include "coordinator/store/event_store.h"

namespace themis::store {

void EventStore::insert(const Event& event) {
  auto st = db_.prepare("INSERT INTO events(ts, kind, app_id, job, host, round_id, message) VALUES (?,?,?,?,?,?,?)");
  st.bind(1, event.ts).bind(2, event.kind).bind(3, event.app).bind(4, event.job);
  if (event.host.empty()) st.bind_null(5);
  else st.bind(5, event.host);
  st.bind(6, event.round).bind(7, event.message).run();
}

}  // namespace themis::store
