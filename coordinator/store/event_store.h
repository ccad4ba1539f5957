#pragma once
// The events table: the coordinator's log of what happened (themisctl events, the dashboard).
#include <cstdint>
#include <optional>
#include <string>

#include "coordinator/store/database.h"

namespace themis::store {

class EventStore {
 public:
  explicit EventStore(Database& db) : db_(db) {}

  struct Event {
    double ts = 0;
    std::string kind;  // one of store/event_kinds.cc
    std::optional<std::int64_t> app, job;
    std::string host;  // empty: none (stored as NULL)
    std::optional<std::int64_t> round;
    std::string message;
  };
  void insert(const Event& event);

 private:
  Database& db_;
};

}  // namespace themis::store
