#include "worker/env.h"

#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace themis::worker {
namespace {

long long parse_integer(const std::string& name, const std::string& value, long long min, long long max) {
  long long out = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
    throw ConfigError(name + "=\"" + value + "\": not an integer");
  }
  if (out < min || out > max) {
    throw ConfigError(name + "=" + value + ": must be in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return out;
}

// The first of `names` that is set, with the name it came from.
std::optional<std::pair<std::string, std::string>> first_set(const EnvLookup& lookup,
                                                             std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (auto v = lookup(name); v && !v->empty()) return std::make_pair(std::string(name), *v);
  }
  return std::nullopt;
}

// As net::is_z85_key: the torch-free worker library does not link themis_net.
bool is_z85_key(const std::string& text) {
  static constexpr std::string_view kZ85 =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
  return text.size() == 40 && text.find_first_not_of(kZ85) == std::string::npos;
}

// All three keys or none; a key's value is never quoted in an error (one of them is secret).
ReportCurveKeys report_keys_from(const EnvLookup& lookup) {
  const char* names[] = {"THEMIS_REPORT_SERVER_KEY", "THEMIS_REPORT_PUBLIC_KEY", "THEMIS_REPORT_SECRET_KEY"};
  std::string values[3];
  int set = 0;
  for (int k = 0; k < 3; ++k) {
    if (auto v = lookup(names[k]); v && !v->empty()) {
      if (!is_z85_key(*v)) throw ConfigError(std::string(names[k]) + ": not a CURVE key (40 characters of Z85)");
      values[k] = *v;
      ++set;
    }
  }
  if (set == 0) return {};
  for (int k = 0; k < 3; ++k) {
    if (values[k].empty()) {
      throw ConfigError(std::string(names[k]) + " is not set, but the other THEMIS_REPORT_*_KEY variables are: "
                        "reporting with CURVE needs all three");
    }
  }
  return {values[0], values[1], values[2]};
}

}  // namespace

Rendezvous parse_rendezvous(const std::string& spec) {
  Rendezvous r;
  if (spec.starts_with("tcp://")) {
    const std::string rest = spec.substr(6);
    const auto colon = rest.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      throw ConfigError("rendezvous \"" + spec + "\": expected tcp://<host>:<port>");
    }
    r.kind = Rendezvous::Kind::kTcp;
    r.host = rest.substr(0, colon);
    if (r.host.size() > 2 && r.host.front() == '[' && r.host.back() == ']') r.host = r.host.substr(1, r.host.size() - 2);
    r.port = static_cast<int>(parse_integer("rendezvous port", rest.substr(colon + 1), 1, 65535));
    return r;
  }
  if (spec.starts_with("file://")) {
    r.kind = Rendezvous::Kind::kFile;
    r.path = spec.substr(7);
    if (r.path.empty() || r.path.front() != '/') {
      throw ConfigError("rendezvous \"" + spec + "\": expected file://<absolute path>");
    }
    return r;
  }
  throw ConfigError("rendezvous \"" + spec + "\": expected tcp://<host>:<port> or file://<absolute path>");
}

WorkerEnv worker_env_from(const EnvLookup& lookup) {
  WorkerEnv env;
  if (auto v = first_set(lookup, {"THEMIS_WORLD_SIZE", "WORLD_SIZE"})) {
    env.world_size = static_cast<int>(parse_integer(v->first, v->second, 1, 1 << 20));
  }
  if (auto v = first_set(lookup, {"THEMIS_RANK", "RANK"})) {
    env.rank = static_cast<int>(parse_integer(v->first, v->second, 0, env.world_size - 1));
  }
  if (auto v = first_set(lookup, {"THEMIS_RENDEZVOUS"})) {
    try {
      env.rendezvous = parse_rendezvous(v->second);
    } catch (const ConfigError& e) {
      throw ConfigError("THEMIS_RENDEZVOUS: " + std::string(e.what()));
    }
  } else if (auto addr = first_set(lookup, {"MASTER_ADDR"})) {
    auto port = first_set(lookup, {"MASTER_PORT"});
    if (!port) throw ConfigError("MASTER_ADDR is set but MASTER_PORT is not");
    env.rendezvous.kind = Rendezvous::Kind::kTcp;
    env.rendezvous.host = addr->second;
    env.rendezvous.port = static_cast<int>(parse_integer(port->first, port->second, 1, 65535));
  } else if (env.world_size == 1) {
    env.rendezvous.kind = Rendezvous::Kind::kFile;
    env.rendezvous.path = (std::filesystem::temp_directory_path() /
                           ("themis-rdzv-" + std::to_string(::getpid()) + "-solo")).string();
  } else {
    throw ConfigError("world size " + std::to_string(env.world_size) +
                      " needs THEMIS_RENDEZVOUS (tcp://host:port or file:///path) or MASTER_ADDR/MASTER_PORT");
  }
  if (auto v = first_set(lookup, {"THEMIS_JOB_ID"})) env.job_id = v->second;
  if (auto v = first_set(lookup, {"THEMIS_ATTEMPT", "TORCHELASTIC_RESTART_COUNT"})) {
    env.attempt = static_cast<int>(parse_integer(v->first, v->second, 0, 1 << 30));
  }
  if (auto v = first_set(lookup, {"THEMIS_CHECKPOINT_DIR"})) env.checkpoint_dir = v->second;
  if (auto v = first_set(lookup, {"THEMIS_REPORT_ENDPOINT"})) env.report_endpoint = v->second;
  env.report_keys = report_keys_from(lookup);
  if (auto v = first_set(lookup, {"THEMIS_DIST_BACKEND"})) {
    if (v->second != "gloo" && v->second != "nccl") {
      throw ConfigError("THEMIS_DIST_BACKEND=" + v->second + ": expected gloo or nccl");
    }
    env.backend = v->second;
  }
  if (auto v = first_set(lookup, {"GLOO_SOCKET_IFNAME"})) env.gloo_interface = v->second;
  if (auto v = first_set(lookup, {"THEMIS_COMM_TIMEOUT_S"})) {
    env.comm_timeout = std::chrono::seconds(parse_integer(v->first, v->second, 1, 86400));
  }
  if (auto v = first_set(lookup, {"THEMIS_RENDEZVOUS_TIMEOUT_S"})) {
    env.rendezvous_timeout = std::chrono::seconds(parse_integer(v->first, v->second, 1, 86400));
  }
  return env;
}

WorkerEnv worker_env_from_process() {
  return worker_env_from([](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v == nullptr ? std::nullopt : std::optional<std::string>(v);
  });
}

}  // namespace themis::worker
