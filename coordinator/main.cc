// themis-coordinator: serve, check the config, or enroll a key.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <memory>

#include "coordinator/config.h"
#include "coordinator/config_check.h"
#include "coordinator/coordinator.h"
#include "coordinator/http/coordinator_http.h"
#include "coordinator/store/database.h"
#include "net/authorized_keys.h"
#include "net/curve_keys.h"
#include "net/preflight.h"

namespace {
themis::coordinator::Coordinator* g_coordinator = nullptr;
extern "C" void on_signal(int) {
  if (g_coordinator) g_coordinator->request_stop();
}
extern "C" void on_reload(int) {
  if (g_coordinator) g_coordinator->request_reload();
}

int enroll_principal(const std::string& authorized_keys, const std::string& name, const std::string& key_argument,
               const std::string& role_text) {
  const auto role = themis::net::parse_role(role_text);
  if (!role) {
    std::cerr << "enroll: --role must be node, user or admin\n";
    return 2;
  }
  if (!themis::net::is_valid_principal_name(name)) {
    std::cerr << "enroll: principal name '" << name << "' is not valid: " << themis::net::kPrincipalNameRule << "\n";
    return 2;
  }
  try {
    std::string key = key_argument;
    // A file wins: a path can itself be 40 characters of the Z85 alphabet.
    if (std::filesystem::exists(key_argument) || !themis::net::is_z85_key(key)) {
      key = themis::net::read_certificate(key_argument).public_key;
    }
    themis::net::append_authorized_key(authorized_keys, {name, key, *role});
  } catch (const std::exception& e) {
    std::cerr << "enroll: " << e.what() << "\n";
    return 1;
  }
  std::cout << "enrolled " << role_text << ":" << name << " in " << authorized_keys << "\n";
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"themis-coordinator: the themis cluster coordinator"};
  std::string config_path = "/etc/themis/themis.toml";
  bool check_config = false;
  bool insecure = false;
  std::string listen, database;
  cli.add_option("-c,--config", config_path, "themis.toml");
  cli.add_flag("--check-config", check_config,
               "check what a start would (config, key files, listen endpoint, database), then exit: 0 ok, 78 "
               "configuration error, 75 transient (the port is in use)");
  cli.add_flag("--insecure", insecure, "no CURVE: loopback only, for local demos and tests");
  cli.add_option("--listen", listen, "override coordinator.listen");
  cli.add_option("--database", database, "override coordinator.database");
  auto* enroll = cli.add_subcommand("enroll", "add a public key to the authorized keys file");
  std::string enroll_name, enroll_key, enroll_role = "user", enroll_file;
  enroll->add_option("name", enroll_name, std::string("principal (host name for nodes): ") + themis::net::kPrincipalNameRule)
      ->required();
  enroll->add_option("key", enroll_key, "Z85 public key or a .key certificate file")->required();
  enroll->add_option("--role", enroll_role, "node | user | admin");
  enroll->add_option("--file", enroll_file, "authorized keys file (default: coordinator.authorized_keys of --config; with --file no config is read)");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli.exit(e) == 0 ? 0 : 2;
  }
  // Exit codes (docs/admin.md "Errors and exit codes"): 78 a permanent configuration error, which the unit does
  // not restart (RestartPreventExitStatus=78); 75 a transient one found before starting (a port still held);
  // 1 a failure after start. Both of the last are restarted.
  if (enroll->parsed() && !enroll_file.empty()) return enroll_principal(enroll_file, enroll_name, enroll_key, enroll_role);
  themis::coordinator::CoordinatorConfig config;
  try {
    config = themis::coordinator::load_coordinator_config(config_path);
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return themis::net::kExitConfig;
  }
  if (insecure) config.insecure = true;
  if (!listen.empty()) config.listen = listen;
  if (!database.empty()) config.database = database;
  if (enroll->parsed()) return enroll_principal(config.authorized_keys, enroll_name, enroll_key, enroll_role);
  const auto check = themis::coordinator::check_coordinator_startup(config);
  if (!check.ok()) {
    std::cerr << config_path << ": " << check.problems().size() << (check.problems().size() == 1 ? " problem" : " problems")
              << " found before starting:\n"
              << check.report();
    return check.exit_code();
  }
  if (check_config) {
    std::cout << "config ok: listen " << config.listen << ", policy " << config.policy << ", database " << config.database
              << (config.insecure ? " (insecure)" : "") << "\n";
    return 0;
  }
  try {
    themis::coordinator::Coordinator coordinator(config);
    // Off the loop: its own threads, its own read-only connection (docs/admin.md "Metrics and dashboard").
    std::unique_ptr<themis::coordinator::CoordinatorHttp> http;
    if (!config.http_listen.empty()) {
      http = std::make_unique<themis::coordinator::CoordinatorHttp>(config, coordinator.metrics());
      http->start();
    }
    g_coordinator = &coordinator;
    std::signal(SIGTERM, on_signal);
    std::signal(SIGINT, on_signal);
    std::signal(SIGHUP, on_reload);
    std::cout << "listening " << coordinator.endpoint() << std::endl;
    coordinator.run();
    g_coordinator = nullptr;
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
  return 0;
}
