#include <unistd.h>

#include <array>
#include <filesystem>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <toml++/toml.h>

#include "net/themis_toml.h"
#include "web/listen_address.h"
#include "nodelet/nodelet.h"
#include "spec/app_spec.h"
#include "core/toml_integer.h"

namespace themis::nodelet {

namespace {
std::string at(const std::string& path, const toml::node& n) { return net::toml_position(path, n.source()); }

// The [nodelet] keys, for the suggestion and the list in an unknown-key error. The second group is
// documented in the design (http_listen, allow_root_jobs, ...) and accepted before this version uses it.
const std::vector<std::string>& nodelet_keys() {
  static const std::vector<std::string> keys{
      "host", "rack", "address", "work_dir", "launcher_command", "secret_key", "insecure", "grace_period", "gpus", "slots",
      "http_listen", "master_port_range", "job_log_dir", "log_retention", "preempt_notice", "allow_root_jobs",
      "gpu_job_map_dir"};
  return keys;
}
}  // namespace

NodeletConfig load_nodelet_config(const std::string& path) {
  const toml::table root = net::parse_toml_file(path);
  net::check_themis_toml_layout(path, root);
  NodeletConfig c;
  char hostname[256] = {};
  ::gethostname(hostname, sizeof(hostname) - 1);
  c.host = hostname;
  if (const auto* cluster = root["cluster"].as_table()) {
    if (auto v = (*cluster)["coordinator"].value<std::string>()) c.coordinator = *v;
    if (auto v = (*cluster)["coordinator_key"].value<std::string>()) c.coordinator_key = *v;
  }
  bool secret_given = false;
  if (const auto* table = root["nodelet"].as_table()) {
    for (const auto& [key, value] : *table) {
      const auto& node = value;  // a structured binding cannot be captured by the lambdas below in clang < 16
      const std::string k(key.str());
      const std::string field = "nodelet." + k;
      auto str = [&]() {
        if (!node.is_string()) throw std::invalid_argument(at(path, node) + field + ": must be a string");
        return *node.value<std::string>();
      };
      if (k == "host") c.host = str();
      else if (k == "rack") c.rack = str();
      else if (k == "address") c.address = str();
      else if (k == "work_dir") c.work_dir = str();
      else if (k == "launcher_command") c.launcher_command = str();
      else if (k == "secret_key") {
        c.secret_key = str();
        secret_given = true;
      } else if (k == "insecure" || k == "allow_root_jobs") {
        if (!node.is_boolean()) throw std::invalid_argument(at(path, node) + field + ": must be true or false");
        (k == "insecure" ? c.insecure : c.allow_root_jobs) = *node.value<bool>();
      } else if (k == "grace_period") {
        try {
          c.grace_period_ms = spec::parse_duration_ms(str());
        } catch (const std::invalid_argument& e) {
          throw std::invalid_argument(at(path, node) + field + ": " + e.what());
        }
      } else if (k == "gpus") {
        if (node.is_string() && *node.value<std::string>() == "auto") continue;
        throw std::invalid_argument(at(path, node) + field + ": only \"auto\" is accepted; declare GPUs with nodelet.slots");
      } else if (k == "slots") {
        if (!node.is_array()) throw std::invalid_argument(at(path, node) + field + ": must be an array of arrays of GPU indices");
        for (const auto& slot : *node.as_array()) {
          if (!slot.is_array() || slot.as_array()->empty()) {
            throw std::invalid_argument(at(path, slot) + field + ": each slot must be a non-empty array of GPU indices");
          }
          std::vector<int> gpus;
          for (const auto& g : *slot.as_array()) {
            const auto v = toml_integer(g);
            if (!v || *v < 0) throw std::invalid_argument(at(path, g) + field + ": GPU index must be a non-negative integer");
            gpus.push_back(static_cast<int>(*v));
          }
          c.slots.push_back(gpus);
        }
      } else if (k == "http_listen") {
        c.http_listen = str();
        try {
          web::parse_listen_address(c.http_listen, field);
        } catch (const std::invalid_argument& e) {
          throw std::invalid_argument(at(path, node) + e.what());
        }
      } else if (k == "master_port_range" || k == "job_log_dir" || k == "log_retention" ||
                 k == "preempt_notice" || k == "gpu_job_map_dir") {
        // Reserved for later versions; accepted, unused.
      } else {
        net::throw_unknown_key(path, key, "nodelet", nodelet_keys());
      }
    }
  }
  if (c.address.empty()) c.address = c.host;
  if (c.launcher_command.empty()) {
    std::error_code ec;
    const auto beside = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "themis-launch";
    c.launcher_command = !ec && ::access(beside.c_str(), X_OK) == 0 ? beside.string() : "themis-launch";
  }
  if (!secret_given) {
    if (const char* creds = std::getenv("CREDENTIALS_DIRECTORY")) c.secret_key = std::string(creds) + "/curve.key_secret";
    else c.secret_key = "/etc/themis/keys/" + c.host + ".key_secret";
  }
  if (c.slots.empty()) c.slots = discover_gpus();
  if (c.slots.empty()) throw std::invalid_argument(path + ": nodelet.slots: no GPUs declared and nvidia-smi found none");
  return c;
}

std::vector<std::vector<int>> discover_gpus() {
  std::vector<std::vector<int>> slots;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen("nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null", "r"), ::pclose);
  if (!pipe) return slots;
  std::array<char, 64> line{};
  while (std::fgets(line.data(), line.size(), pipe.get())) {
    try {
      slots.push_back({std::stoi(line.data())});
    } catch (const std::exception&) {
    }
  }
  return slots;
}

}  // namespace themis::nodelet
