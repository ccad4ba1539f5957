// themis-coordinator: serve, check the config, or enroll a key.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <memory>

#include "coordinator/config.h"
#include "coordinator/coordinator.h"
#include "coordinator/http/coordinator_http.h"
#include "coordinator/store/database.h"
#include "net/authorized_keys.h"
#include "net/curve_keys.h"

namespace {
themis::coordinator::Coordinator* g_coordinator = nullptr;
extern "C" void on_signal(int) {
  if (g_coordinator) g_coordinator->request_stop();
}
extern "C" void on_reload(int) {
  if (g_coordinator) g_coordinator->request_reload();
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"themis-coordinator: the themis cluster coordinator"};
  std::string config_path = "/etc/themis/themis.toml";
  bool check_config = false;
  bool insecure = false;
  std::string listen, database;
  cli.add_option("-c,--config", config_path, "themis.toml");
  cli.add_flag("--check-config", check_config, "validate the config and the database, then exit (0 or 78)");
  cli.add_flag("--insecure", insecure, "no CURVE: loopback only, for local demos and tests");
  cli.add_option("--listen", listen, "override coordinator.listen");
  cli.add_option("--database", database, "override coordinator.database");
  auto* enroll = cli.add_subcommand("enroll", "add a public key to the authorized keys file");
  std::string enroll_name, enroll_key, enroll_role = "user", enroll_file;
  enroll->add_option("name", enroll_name, "principal (host name for nodes)")->required();
  enroll->add_option("key", enroll_key, "Z85 public key or a .key certificate file")->required();
  enroll->add_option("--role", enroll_role, "node | user | admin");
  enroll->add_option("--file", enroll_file, "authorized keys file (default: coordinator.authorized_keys)");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli.exit(e) == 0 ? 0 : 2;
  }
  try {
    auto config = themis::coordinator::load_coordinator_config(config_path);
    if (insecure) config.insecure = true;
    if (!listen.empty()) config.listen = listen;
    if (!database.empty()) config.database = database;
    if (enroll->parsed()) {
      const auto role = themis::net::parse_role(enroll_role);
      if (!role) {
        std::cerr << "enroll: --role must be node, user or admin\n";
        return 2;
      }
      std::string key = enroll_key;
      // A file wins: a path can itself be 40 characters of the Z85 alphabet.
      if (std::filesystem::exists(enroll_key) || !themis::net::is_z85_key(key)) {
        key = themis::net::read_certificate(enroll_key).public_key;
      }
      themis::net::append_authorized_key(enroll_file.empty() ? config.authorized_keys : enroll_file, {enroll_name, key, *role});
      std::cout << "enrolled " << enroll_role << ":" << enroll_name << "\n";
      return 0;
    }
    if (check_config) {
      themis::store::Database db(config.database);
      std::cout << "config ok; database schema version " << db.user_version() << "\n";
      if (!config.insecure) {
        themis::net::read_authorized_keys(config.authorized_keys);
        themis::net::read_certificate(config.secret_key);
      }
      return 0;
    }
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
    return 78;
  }
  return 0;
}
