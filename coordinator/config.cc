#include "coordinator/config.h"

#include <cstdlib>
#include <stdexcept>
#include <toml++/toml.h>

#include "coordinator/app_spec.h"

namespace themis::coordinator {

namespace {
std::string at(const std::string& path, const toml::node& n) {
  return path + ":" + std::to_string(n.source().begin.line) + ":" + std::to_string(n.source().begin.column) + ": ";
}
}  // namespace

CoordinatorConfig load_coordinator_config(const std::string& path) {
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw std::invalid_argument(path + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  CoordinatorConfig c;
  const auto* table = root["coordinator"].as_table();
  if (!table) return c;
  for (const auto& [key, node] : *table) {
    const std::string k(key.str());
    const std::string field = "coordinator." + k;
    auto str = [&]() {
      if (!node.is_string()) throw std::invalid_argument(at(path, node) + field + ": must be a string");
      return *node.value<std::string>();
    };
    auto duration = [&]() {
      try {
        return parse_duration_ms(str());
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(at(path, node) + field + ": " + e.what());
      }
    };
    if (k == "listen") c.listen = str();
    else if (k == "database") c.database = str();
    else if (k == "authorized_keys") c.authorized_keys = str();
    else if (k == "secret_key") c.secret_key = str();
    else if (k == "policy") c.policy = str();
    else if (k == "heartbeat_interval") c.heartbeat_interval_ms = duration();
    else if (k == "lease_duration") c.lease_duration_ms = duration();
    else if (k == "round_batch_window") c.round_batch_window_ms = duration();
    else if (k == "insecure") {
      if (!node.is_boolean()) throw std::invalid_argument(at(path, node) + field + ": must be true or false");
      c.insecure = *node.value<bool>();
    } else if (k == "heartbeat_lives") {
      const auto v = node.value<std::int64_t>();
      if (!node.is_integer() || !v || *v < 1 || *v > 100) throw std::invalid_argument(at(path, node) + field + ": must be an integer in 1..100");
      c.heartbeat_lives = static_cast<int>(*v);
    } else if (k == "seed") {
      if (!node.is_integer()) throw std::invalid_argument(at(path, node) + field + ": must be an integer");
      c.seed = *node.value<std::int64_t>();
    } else if (k == "fairness_knob") {
      const auto v = node.value<double>();
      if (!v || *v < 0 || *v >= 1) throw std::invalid_argument(at(path, node) + field + ": must be a number in [0, 1)");
      c.fairness_knob = *v;
    } else if (k == "http_listen" || k == "admin_groups" || k == "private_data" || k == "reject_infeasible" ||
               k == "backup_dir" || k == "backup_keep" || k == "notify_smtp" || k == "webhook_allow") {
      // Documented in ux.md; not used by this version. Accepted so one themis.toml serves every version.
    } else {
      throw std::invalid_argument(at(path, node) + field + ": unknown key");
    }
  }
  if (c.heartbeat_interval_ms <= 0) throw std::invalid_argument(path + ": coordinator.heartbeat_interval: must be > 0");
  if (c.lease_duration_ms <= 0) throw std::invalid_argument(path + ": coordinator.lease_duration: must be > 0");
  if (const char* creds = std::getenv("CREDENTIALS_DIRECTORY"); creds && !table->contains("secret_key")) {
    c.secret_key = std::string(creds) + "/curve.key_secret";  // systemd LoadCredential=
  }
  return c;
}

}  // namespace themis::coordinator
