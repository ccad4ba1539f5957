#include "nodelet/config_check.h"

#include "net/curve_keys.h"
#include "net/socket_security.h"

namespace themis::nodelet {
namespace {

// The certificate at `path` is readable and, when `secret` is set, holds a secret key.
void check_certificate(net::Preflight& check, const std::string& path, const std::string& what, bool secret) {
  const std::size_t before = check.problems().size();
  check.file_readable(path, what);
  if (check.problems().size() != before) return;
  try {
    const auto keys = net::read_certificate(path);
    if (secret && keys.secret_key.empty()) check.permanent(what + ": " + path + ": no secret-key in certificate (a .key_secret file)");
  } catch (const std::exception& e) {
    check.permanent(what + ": " + e.what());
  }
}

bool is_tcp_endpoint(const std::string& endpoint) {
  if (endpoint.rfind("tcp://", 0) != 0) return false;
  const auto colon = endpoint.rfind(':');
  if (colon <= 6 || colon + 1 >= endpoint.size()) return false;
  for (std::size_t i = colon + 1; i < endpoint.size(); ++i) {
    if (endpoint[i] < '0' || endpoint[i] > '9') return false;
  }
  return true;
}

}  // namespace

net::Preflight check_nodelet_startup(const NodeletConfig& config) {
  net::Preflight check;
  if (!is_tcp_endpoint(config.coordinator) && config.coordinator.rfind("ipc://", 0) != 0) {
    check.permanent("cluster.coordinator: '" + config.coordinator + "' is not an endpoint such as tcp://sched01:7310");
  }
  if (config.insecure) {
    if (!net::is_loopback_endpoint(config.coordinator)) {
      check.permanent("nodelet.insecure: refusing to connect to " + config.coordinator + " without CURVE; insecure mode connects to loopback only");
    }
  } else {
    check_certificate(check, config.secret_key, "nodelet.secret_key", true);
    check_certificate(check, config.coordinator_key, "cluster.coordinator_key", false);
  }
  check.directory_writable(config.work_dir, "nodelet.work_dir", true);
  return check;
}

}  // namespace themis::nodelet
