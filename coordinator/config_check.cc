#include "coordinator/config_check.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "coordinator/store/database.h"
#include "net/authorized_keys.h"
#include "net/curve_keys.h"
#include "net/socket_security.h"

namespace themis::coordinator {

net::Preflight check_coordinator_startup(const CoordinatorConfig& config) {
  net::Preflight check;
  if (config.insecure) {
    if (!net::is_loopback_endpoint(config.listen)) {
      check.permanent("coordinator.listen: insecure mode (no CURVE) listens on loopback only (tcp://127.0.0.1:PORT), not " +
                      config.listen);
    }
  } else {
    const std::size_t before = check.problems().size();
    check.file_readable(config.secret_key, "coordinator.secret_key");
    if (check.problems().size() == before) {
      try {
        if (net::read_certificate(config.secret_key).secret_key.empty()) {
          check.permanent("coordinator.secret_key: " + config.secret_key + ": no secret-key in certificate (a .key_secret file)");
        }
      } catch (const std::exception& e) {
        check.permanent(std::string("coordinator.secret_key: ") + e.what());
      }
    }
    const std::size_t keys_before = check.problems().size();
    check.file_readable(config.authorized_keys, "coordinator.authorized_keys");
    if (check.problems().size() == keys_before) {
      try {
        net::read_authorized_keys(config.authorized_keys);
      } catch (const std::exception& e) {
        check.permanent(std::string("coordinator.authorized_keys: ") + e.what());
      }
    }
  }
  check.endpoint_bindable(config.listen, "coordinator.listen");

  const auto parent = std::filesystem::path(config.database).parent_path();
  const std::size_t db_before = check.problems().size();
  check.directory_writable(parent.empty() ? "." : parent.string(), "coordinator.database");
  std::error_code ec;
  if (check.problems().size() == db_before && std::filesystem::exists(config.database, ec) &&
      ::access(config.database.c_str(), R_OK | W_OK) != 0) {
    check.permanent("coordinator.database: cannot write " + config.database + ": " + std::strerror(errno) +
                    " (running as uid " + std::to_string(::geteuid()) + ")");
  }
  if (check.problems().size() == db_before) {
    try {
      store::Database db(config.database);
    } catch (const store::DatabaseError& e) {
      const std::string what = e.what();
      // Another process holding a write lock goes away; anything else (a newer schema, a file that is not a
      // database) needs an administrator.
      if (what.find("locked") != std::string::npos || what.find("busy") != std::string::npos) {
        check.transient("coordinator.database: " + what);
      } else {
        check.permanent("coordinator.database: " + what);
      }
    }
  }
  return check;
}

}  // namespace themis::coordinator
