#pragma once
// Everything themis-nodelet checks before it starts, and what --check-config reports: its secret key and the
// coordinator's public key readable by the user the process runs as and well formed, the coordinator endpoint
// well formed, and the work directory writable (docs/admin.md "Errors and exit codes").
#include "net/preflight.h"
#include "nodelet/nodelet.h"

namespace themis::nodelet {

net::Preflight check_nodelet_startup(const NodeletConfig& config);

}  // namespace themis::nodelet
