#pragma once
// themis-launch: one app's launcher process. It attaches to the coordinator (a DEALER, CURVE or the
// loopback-only insecure mode), answers offers with bids before their deadline, follows its leases,
// asks the coordinator to launch and stop its jobs' ranks on the GPUs it leases, reads its workers'
// reports on a PULL socket, and reports ρ and progress. Protocol: docs/protocols/launcher.md.
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "core/topology.h"
#include "launcher/app_session.h"
#include "launcher/report_receiver.h"
#include "launcher/report_security.h"
#include "net/envelope.h"

namespace themis::launcher {

struct DaemonOptions {
  std::string coordinator = "tcp://127.0.0.1:7310";
  AppId app = 0;
  bool insecure = false;
  std::string key;         // own .key_secret (CURVE)
  std::string server_key;  // the coordinator's .key
  std::string report_bind = "tcp://127.0.0.1:*";  // where the workers' reports arrive
  std::string report_address;                      // host part workers connect to; default: the bound one
  int status_interval_ms = 1000;
  int attach_timeout_ms = 10000;
  unsigned generation = 0;  // set by a nodelet starting it for the coordinator; 0 when run by hand
};

class LauncherDaemon {
 public:
  explicit LauncherDaemon(const DaemonOptions& options);
  ~LauncherDaemon();
  // Runs until the app finishes (0), fails (1), or request_stop() (0). Throws on a setup error.
  int run();
  void request_stop() { stop_ = true; }

 private:
  void send(net::OutMessage& message);
  void attach();
  void handle(const net::InMessage& in, double now);
  void flush_commands(double now);
  void send_launch(const JobLaunch& launch);
  void send_status(double now, bool force);

  DaemonOptions options_;
  zmq::context_t context_;
  zmq::socket_t dealer_;
  std::unique_ptr<ReportSecurity> report_security_;  // CURVE mode only; outlives the report socket
  std::unique_ptr<ReportReceiver> reports_;
  std::string report_endpoint_;
  std::map<std::string, std::string> report_env_;  // what every launched rank needs to report here
  Cluster cluster_;
  std::unique_ptr<AppSession> session_;
  std::atomic<bool> stop_{false};
  std::uint64_t request_id_ = 1;
  double last_status_ = 0;
  std::string last_status_text_;
  std::string last_released_;  // the GPUs the last AppStatus gave back, as logged
  std::map<std::uint64_t, std::pair<int, int>> launch_requests_;  // request id -> (job, attempt)
  std::map<GpuIndex, std::int64_t> lease_ids_;                     // held GPU -> its lease, as the last grant said
};

double unix_now();

}  // namespace themis::launcher
