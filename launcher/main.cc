// themis-launch: the launcher (Themis Agent + hyper-parameter scheduler) of one app.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdlib>

#include "launcher/daemon.h"

namespace {
themis::launcher::LauncherDaemon* g_daemon = nullptr;
void on_signal(int /*sig*/) {
  if (g_daemon) g_daemon->request_stop();
}
}  // namespace

int main(int argc, char** argv) {
  themis::launcher::DaemonOptions options;
  CLI::App cli{"themis-launch: one app's Themis agent: bids, leases, launches, checkpoint and resume"};
  cli.add_option("--coordinator", options.coordinator, "coordinator endpoint (tcp://host:7310)");
  cli.add_option("--app", options.app, "the app id to run")->required();
  cli.add_flag("--insecure", options.insecure, "no CURVE: loopback coordinators in insecure mode only");
  cli.add_option("--key", options.key, "own secret certificate (.key_secret); env THEMIS_KEY")->envname("THEMIS_KEY");
  cli.add_option("--server-key", options.server_key, "the coordinator's public certificate (.key); env THEMIS_SERVER_KEY")
      ->envname("THEMIS_SERVER_KEY");
  cli.add_option("--reports", options.report_bind, "ZeroMQ endpoint to bind for worker reports");
  cli.add_option("--report-address", options.report_address, "host name or address workers use to reach --reports");
  cli.add_option("--status-interval-ms", options.status_interval_ms, "how often ρ and progress go to the coordinator");
  cli.add_option("--generation", options.generation,
                 "set by the nodelet when the coordinator starts this launcher (docs/launcher.md)");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli.exit(e) == 0 ? 0 : 2;  // usage errors exit 2 (docs/ux.md), not CLI11's own codes
  }
  try {
    themis::launcher::LauncherDaemon daemon(options);
    g_daemon = &daemon;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    const int code = daemon.run();
    g_daemon = nullptr;
    return code;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
