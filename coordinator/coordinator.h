#pragma once
// themis-coordinator: one ROUTER endpoint, the SQLite store as the state, rounds through a Policy.
// Protocols: docs/protocols/control.md and docs/protocols/heartbeat.md.
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>
#include <zmq.hpp>

#include "coordinator/arbiter/policy.h"
#include "coordinator/config.h"
#include "coordinator/store/database.h"
#include "core/rng.h"
#include "net/authorized_keys.h"
#include "net/envelope.h"
#include "net/zap_handler.h"

namespace themis::coordinator {

class Coordinator {
 public:
  explicit Coordinator(const CoordinatorConfig& config);
  ~Coordinator();
  // The endpoint actually bound (tcp://127.0.0.1:port when the config asked for port 0 or *).
  const std::string& endpoint() const { return endpoint_; }
  // Serves until request_stop() (signal-safe).
  void run();
  void request_stop() { stop_ = true; }

 private:
  struct Caller {
    net::Role role = net::Role::kUser;
    std::string name;
  };
  struct HostSession {
    std::string routing_id;   // empty until the host (re)registers with this coordinator process
    std::string address;
    double last_heard = 0;
  };
  using JobKey = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // app, job, attempt

  void handle(const std::string& routing_id, const zmq::message_t& frame);
  void reply(const std::string& routing_id, net::OutMessage& message);
  void send_to_host(const std::string& host, net::OutMessage& message);

  void on_register(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void on_heartbeat(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void on_exited(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void on_submit(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void on_cancel(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void on_query(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  std::string host_of_routing(const std::string& routing_id) const;

  // Launchers (launchers.cc, docs/launcher.md): the per-app agents that bid and place their own jobs.
  void on_attach(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void on_bid(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void on_launch_job(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void on_stop_job(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void on_app_status(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void check_app_access(const Caller& caller, std::int64_t app, const std::string& what);
  void require_launcher(const std::string& routing_id, std::int64_t app);
  bool has_launcher(std::int64_t app) const;
  void forward_exit(std::int64_t app, wire::Exited::Reader exited);
  // Every lease the app holds now, to its launcher.
  void send_grant(std::int64_t app, std::int64_t round);

  // Reconciliation: a worker without a lease is stopped; a running job whose workers are gone is released.
  void reconcile_host(const std::string& host, capnp::List<wire::RunningWorker>::Reader running, double now);

  void tick();
  void check_heartbeats(double now);
  void run_round(double now);
  void launch_ready_jobs();
  void trigger(const std::string& why);

  // Job transitions (inside a transaction).
  void release_job_leases(std::int64_t app, std::int64_t job, double now, const std::string& reason);
  void stop_job(std::int64_t app, std::int64_t job, double now, const std::string& reason);
  void finish_app_if_done(std::int64_t app, double now);
  void event(double now, const std::string& kind, std::optional<std::int64_t> app, std::optional<std::int64_t> job,
             const std::string& host, std::optional<std::int64_t> round, const std::string& message);
  void queue_stop(const std::string& host, std::int64_t app, std::int64_t job, std::int64_t attempt, int grace_ms,
                  const std::string& reason);
  void flush_outbox();
  double current_rho(std::int64_t app, double now);

  CoordinatorConfig config_;
  zmq::context_t context_;
  std::unique_ptr<net::ZapHandler> zap_;
  zmq::socket_t router_;
  std::string endpoint_;
  store::Database db_;
  std::unique_ptr<arbiter::Policy> policy_;
  Rng rng_;
  std::atomic<bool> stop_{false};

  std::map<std::string, HostSession> sessions_;          // host name -> session
  std::set<JobKey> launched_;                            // launches sent by this process
  std::optional<double> round_requested_at_;
  std::string round_trigger_;
  struct Outgoing {
    std::string host;
    std::unique_ptr<net::OutMessage> message;
  };
  std::vector<Outgoing> outbox_;                         // sent after the transaction commits
  std::uint64_t next_request_id_ = 1;

  struct LauncherSession {
    std::string routing_id;
    std::optional<double> rho;      // from its AppStatus
    std::optional<int> demand;      // more GPUs it could use, from its AppStatus
    std::string last_summary;
  };
  struct PendingOffer {
    RoundId round = 0;
    double deadline = 0;
    std::set<AppId> recipients;     // apps with a launcher that were offered the GPUs
    std::map<AppId, Bid> bids;
    bool all_bids_in() const { return bids.size() >= recipients.size(); }
  };
  static constexpr int kOfferDeadlineMs = 1000;  // a bid later than this counts as no bid
  std::map<std::int64_t, LauncherSession> launchers_;   // app -> its attached launcher
  std::optional<PendingOffer> pending_offer_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::pair<std::string, std::string>>> launch_env_;
  double started_at_ = 0;
  double last_watchdog_ = 0;
};

double unix_now();

}  // namespace themis::coordinator
