#pragma once
// Everything themis-coordinator checks before it starts, and what --check-config reports: the key files
// readable by the user the process runs as and well formed, the listen endpoint bindable, the database's
// directory writable and its schema one this binary knows (docs/admin.md "Errors and exit codes").
#include "coordinator/config.h"
#include "net/preflight.h"

namespace themis::coordinator {

// Opens (and migrates) the database to check it; binds the listen endpoint and releases it.
net::Preflight check_coordinator_startup(const CoordinatorConfig& config);

}  // namespace themis::coordinator
