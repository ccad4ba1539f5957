#pragma once
// The SQL of a Grant to a launcher (coordinator/launchers.cc send_grant, docs/protocols/control.md): the app's
// active leases and whether its probe runs.
#include <cstdint>
#include <vector>

#include "coordinator/store/database.h"

namespace themis::store {

class GrantStore {
 public:
  explicit GrantStore(Database& db) : db_(db) {}

  struct GrantedLease {
    std::int64_t gpu = 0;
    double start = 0, expiry = 0;
    std::int64_t job = 0, id = 0;
  };
  // The app's active leases, by GPU.
  std::vector<GrantedLease> active_leases(std::int64_t app);
  // True when the app's first-iteration probe is running: its one lease is the probe's (coordinator/probe.cc).
  bool probe_running(std::int64_t app);

 private:
  Database& db_;
};

}  // namespace themis::store
