// themis-nodelet: one per GPU host.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <memory>

#include "net/preflight.h"
#include "nodelet/config_check.h"
#include "nodelet/http/nodelet_http.h"
#include "nodelet/nodelet.h"

namespace {
themis::nodelet::Nodelet* g_nodelet = nullptr;
extern "C" void on_signal(int) {
  if (g_nodelet) g_nodelet->request_stop();
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{"themis-nodelet: runs workers on this GPU host for the themis coordinator"};
  std::string config_path = "/etc/themis/themis.toml";
  bool check_config = false;
  bool insecure = false;
  cli.add_option("-c,--config", config_path, "themis.toml");
  cli.add_flag("--check-config", check_config, "check what a start would (config, key files, work directory), then exit: 0 ok, 78 configuration error");
  cli.add_flag("--insecure", insecure, "no CURVE: loopback only, for local demos and tests");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli.exit(e) == 0 ? 0 : 2;
  }
  // Exit codes as themis-coordinator's (docs/admin.md "Errors and exit codes"): 78 permanent, not restarted.
  themis::nodelet::NodeletConfig config;
  try {
    config = themis::nodelet::load_nodelet_config(config_path);
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return themis::net::kExitConfig;
  }
  if (insecure) config.insecure = true;
  const auto check = themis::nodelet::check_nodelet_startup(config);
  if (!check.ok()) {
    std::cerr << config_path << ": " << check.problems().size() << (check.problems().size() == 1 ? " problem" : " problems")
              << " found before starting:\n"
              << check.report();
    return check.exit_code();
  }
  if (check_config) {
    std::cout << "config ok: host " << config.host << ", " << config.slots.size() << " slots, coordinator "
              << config.coordinator << (config.insecure ? " (insecure)" : "") << "\n";
    return 0;
  }
  try {
    themis::nodelet::Nodelet nodelet(config);
    // Off the loop, on its own threads (docs/admin.md "Metrics and dashboard").
    std::unique_ptr<themis::web::HttpServer> http;
    if (!config.http_listen.empty()) http = themis::nodelet::start_nodelet_http(config, nodelet.metrics());
    g_nodelet = &nodelet;
    std::signal(SIGTERM, on_signal);
    std::signal(SIGINT, on_signal);
    nodelet.run();
    g_nodelet = nullptr;
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
  return 0;
}
