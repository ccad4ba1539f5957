#pragma once
// themis-nodelet: registers its GPUs with the coordinator, heartbeats, and runs the coordinator's
// Launch/Stop orders as process groups that die with it. Protocols: docs/protocols/.
#include <sys/types.h>

#include <atomic>
#include <map>
#include <string>
#include <tuple>
#include <vector>
#include <zmq.hpp>

#include "net/curve_keys.h"
#include "net/envelope.h"
#include "web/metrics_registry.h"
#include "nodelet/job_account.h"

namespace themis::nodelet {

struct NodeletConfig {
  std::string host;                        // default: the machine's host name
  std::string rack = "rack0";
  std::string address;                     // rendezvous address other ranks use; default: host
  std::vector<std::vector<int>> slots;     // local GPU indices per slot; empty: discover with nvidia-smi
  std::string coordinator = "tcp://127.0.0.1:7310";
  std::string coordinator_key = "/etc/themis/keys/coordinator.key";
  std::string secret_key;                  // default /etc/themis/keys/<host>.key_secret
  bool insecure = false;
  std::string work_dir = "/var/lib/themis-nodelet";  // rank logs under work_dir/jobs/<app>/<job>/attempt-<n>/
  long long grace_period_ms = 10000;
  // The HTTP endpoint (/metrics): "HOST:PORT", empty (the default) for none (web/listen_address.h).
  std::string http_listen;
  // themis-launch for the launchers the coordinator starts here; default: next to this executable,
  // else found on PATH.
  std::string launcher_command;
  // Jobs and launchers whose account is uid 0 run only when true (docs/admin.md, "Job accounts").
  bool allow_root_jobs = false;
};

// Throws std::invalid_argument "file:line:column: nodelet.key: reason".
NodeletConfig load_nodelet_config(const std::string& path);

// GPUs from `nvidia-smi --query-gpu=index --format=csv,noheader`, one slot each; empty when absent.
std::vector<std::vector<int>> discover_gpus();

class Nodelet {
 public:
  explicit Nodelet(const NodeletConfig& config);
  ~Nodelet();
  void run();
  void request_stop() { stop_ = true; }
  // Decodes one frame from the coordinator and carries it out; bad input is logged and answered with an
  // ErrorReply, never thrown. run() calls it per received frame; fuzz/ calls it on bytes.
  void handle(const zmq::message_t& frame);
  // What the loop reports to the HTTP endpoint (nodelet/nodelet_metrics.h); safe to read from another thread.
  const web::MetricsRegistry& metrics() const { return metrics_; }

 private:
  using Key = std::tuple<std::int64_t, std::int64_t, std::uint32_t, std::uint32_t>;  // app, job, attempt, rank
  struct Worker {
    pid_t pid = 0;
    int log_fd = -1;  // its log, kept open: the tail is read from it, not from a path the job's account owns
    double kill_at = 0;  // SIGKILL deadline once stopping; 0 while running
    std::uint32_t grace_ms = 0;  // the app's grace period, from its Launch order
  };
  struct Exit {
    int code = 0;
    int signal = 0;
    std::string tail;
  };

  void send(net::OutMessage& message);
  void send_register();
  void send_heartbeat();
  // The workers this nodelet supervises, as register and heartbeat both report them.
  void fill_running(capnp::List<wire::RunningWorker>::Builder running) const;
  void launch(wire::Launch::Reader launch);
  void stop(std::int64_t app, std::int64_t job, std::uint32_t attempt, std::uint32_t grace_ms);
  void reap();
  void enforce_deadlines();
  void report_exit(const Key& key, const Exit& exit);
  void report_launcher_exit(std::int64_t app, std::uint32_t generation, int code, int signal, const std::string& tail);
  // A clean stop: tells the coordinator (NodeletStopping) and waits briefly for its answer.
  void announce_stop();
  // Connection failures to the coordinator, from a ZeroMQ monitor on the DEALER.
  void read_monitor_events();
  void stop_all_and_wait();
  // Self-fencing (docs/reliability.md, "Fault matrix: nodes, partitions, workers").
  double down_bound_s() const;
  void note_answered(std::uint64_t request_id, double now);
  void fence_if_unheard(double now);
  void stop_orphans_of_earlier_run();
  // App launchers (docs/launcher.md, "Managed launchers"): non-GPU processes, one per app.
  void start_launcher(wire::StartLauncher::Reader start);
  void stop_launcher(std::int64_t app, std::uint32_t generation, std::uint32_t grace_ms);
  void fill_launchers(capnp::List<wire::RunningLauncher>::Builder launchers) const;
  struct Launcher {
    std::uint32_t generation = 0;
    pid_t pid = 0;
    int log_fd = -1;
    std::string key_dir;  // its certificate, removed when it exits
    double kill_at = 0;
  };
  std::map<std::int64_t, Launcher> launchers_;  // app -> its launcher here

  NodeletConfig config_;
  zmq::context_t context_;
  zmq::socket_t dealer_;
  zmq::socket_t monitor_;        // PAIR: the DEALER's connection events
  bool switch_users_ = false;    // jobs take on their app owner's account (root, not insecure)
  bool ready_notified_ = false;  // READY=1 sent to systemd, after the first registration
  bool stop_announced_ = false;  // the coordinator has ended this host's session: exits are not reported
  std::uint64_t connect_failures_ = 0;  // since the last successful handshake
  double next_failure_log_ = 0;
  std::map<Key, Worker> workers_;
  std::map<Key, Exit> finished_;
  std::atomic<bool> stop_{false};
  bool registered_ = false;
  long long heartbeat_interval_ms_ = 1000;
  double next_heartbeat_ = 0;
  double next_register_ = 0;
  double last_watchdog_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t request_id_ = 1;
  std::uint32_t lives_ = 3;
  std::map<std::uint64_t, double> sent_at_;  // register/heartbeat request id -> when it was sent
  double answered_at_ = 0;    // send time of the newest register/heartbeat the coordinator answered
  bool fenced_ = false;       // workers stopped for lack of answers; no registration until they are gone
  double stop_cap_ = 0;       // while now < stop_cap_, a Stop's SIGKILL comes no later than this
  web::MetricsRegistry metrics_;
  void publish_metrics(double now);
};

}  // namespace themis::nodelet
