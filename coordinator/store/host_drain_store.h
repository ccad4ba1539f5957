#pragma once
// Drained hosts (themisctl drain/resume): stored in hosts.drain_reason so that a restarted coordinator
// keeps them drained. The round planner reads them through RoundStore::registered_cluster.
#include <optional>
#include <string>

#include "coordinator/store/database.h"

namespace themis::store {

// False when no host has that name.
bool drain_host(Database& db, const std::string& host, const std::string& reason, const std::string& by, double now);
// Clears the drain; returns the reason it was drained for (nullopt: it was not drained). `known` is set to
// whether a host has that name.
std::optional<std::string> resume_host(Database& db, const std::string& host, bool* known);

}  // namespace themis::store
