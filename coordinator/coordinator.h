#pragma once
// themis-coordinator: one ROUTER endpoint, the SQLite store as the state, rounds through a Policy.
// Protocols: docs/protocols/control.md and docs/protocols/heartbeat.md.
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>
#include <zmq.hpp>

#include "policy/arbiter/policy.h"
#include "policy/planner/recorded_app_model.h"
#include "policy/planner/round_planner.h"
#include "coordinator/config.h"
#include "coordinator/env.h"
#include "coordinator/request_error.h"
#include "coordinator/store/admission_store.h"
#include "coordinator/store/app_store.h"
#include "coordinator/store/checkpointer.h"
#include "coordinator/store/database.h"
#include "coordinator/store/event_store.h"
#include "coordinator/store/failure_store.h"
#include "coordinator/store/grant_store.h"
#include "coordinator/store/host_store.h"
#include "coordinator/store/job_exit_store.h"
#include "coordinator/store/job_launch_store.h"
#include "coordinator/store/launcher_store.h"
#include "coordinator/store/lease_release_store.h"
#include "coordinator/store/log_relay_store.h"
#include "coordinator/store/query_store.h"
#include "coordinator/store/state_store.h"
#include "core/rng.h"
#include "net/authorized_keys.h"
#include "net/envelope.h"
#include "net/zap_handler.h"
#include "web/metrics_registry.h"

namespace themis::coordinator {

class Coordinator {
 public:
  // The daemon: binds config.listen (CURVE unless insecure), the system clock.
  explicit Coordinator(const CoordinatorConfig& config);
  // The logic alone: no socket is made or bound (config.listen and the keys are not used), the time is
  // env.now() and every frame goes to env.send(). Messages come in through dispatch(), and tick() does a
  // loop turn's periodic work; run() refuses. For tests (tests/coordinator/).
  Coordinator(const CoordinatorConfig& config, Env& env);
  ~Coordinator();
  // The endpoint actually bound (tcp://127.0.0.1:port when the config asked for port 0 or *).
  const std::string& endpoint() const { return endpoint_; }
  // Serves until request_stop() (signal-safe).
  void run();
  void request_stop() { stop_ = true; }
  // Signal-safe: re-read authorized_keys at the next turn of the loop (SIGHUP).
  void request_reload() { reload_ = true; }

  struct Caller {
    net::Role role = net::Role::kUser;
    std::string name;
  };
  // Decodes one frame that `caller` sent from `routing_id` and runs its handler; bad input gets an
  // ErrorReply, never an exception. run() calls it once CURVE/ZAP named the caller; fuzz/ calls it on bytes.
  void dispatch(const std::string& routing_id, const Caller& caller, const zmq::message_t& frame);

  // Loop health (docs/admin.md "Loop health"): the longest turn of run()'s loop, in milliseconds, since the
  // previous call, the turn in progress counted up to now; starts the count again. Each round records it
  // (rounds.worst_loop_lag_ms). 0 outside run().
  double take_worst_loop_lag_ms();

  // A loop turn's periodic work at the Env's time: config reloads, lost hosts, a finished auction, lease
  // expiries, a due round, back-offs, launches, managed launchers, probes. run() calls it after each drain.
  void tick();
  // Whether a winner determination is running on its own thread (its outcome is applied by a later tick()).
  bool auction_in_flight() const { return auction_.has_value(); }
  // What the loop reports to the HTTP endpoint (coordinator/loop_metrics.h); safe to read from another thread.
  const web::MetricsRegistry& metrics() const { return metrics_; }

 private:
  struct HostSession {
    std::string routing_id;   // empty until the host (re)registers with this coordinator process
    std::string address;
    double last_heard = 0;
    double heartbeat_written = 0;  // hosts.last_heartbeat as last written (on_heartbeat)
    // Ranks it reports that hold no lease (app, job, attempt, rank): being stopped, they may still use any of
    // its GPUs (a host that was declared down, then came back before fencing), so nothing launches there.
    std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>> unleased_ranks;
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
  // Host maintenance (requests.cc, admins only): a drained host gets no new leases (policy/planner).
  void on_drain(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void on_resume(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  // themisctl logs (requests.cc): a ReadLog is checked here and relayed to the rank's nodelet; its LogChunk
  // comes back as a message of its own and goes to the client. The loop never waits for it.
  void on_read_log(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void on_log_chunk(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  struct LogRelay {
    std::string client;            // routing id of the themisctl that asked
    std::uint64_t request_id = 0;  // its request id, echoed to it
    std::int64_t app = 0, job = 0;
    std::uint32_t attempt = 0;
    std::string host;
    double deadline = 0;           // unanswered by then: forgotten (themisctl has timed out)
  };
  std::map<std::uint64_t, LogRelay> log_relays_;
  std::uint64_t next_log_relay_ = 1;
  static constexpr double kLogRelaySeconds = 10;
  static constexpr std::size_t kMaxLogRelays = 1000;
  std::string host_of_routing(const std::string& routing_id) const;

  // Launchers (launchers.cc, docs/launcher.md): the per-app agents that bid and place their own jobs.
  void on_attach(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void on_bid(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void on_launch_job(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void on_stop_job(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void on_app_status(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void send_contention_ahead(const std::string& routing_id, std::uint64_t request_id, std::int64_t app, double remaining);
  void check_app_access(const Caller& caller, std::int64_t app, const std::string& what);
  void require_launcher(const std::string& routing_id, std::int64_t app);
  bool app_has_ended(std::int64_t app);
  bool has_launcher(std::int64_t app) const;
  // A launcher's job had ranks on a host that was declared down: no exit will come from there, so each
  // such rank's end is forwarded as a kill (signal 9) with `why` as its log tail.
  struct LostRanks {
    std::int64_t app = 0, job = 0, attempt = 0;
    std::vector<std::uint32_t> ranks;
    std::string why;
  };
  LostRanks ranks_on_host(std::int64_t app, std::int64_t job, const std::string& host);  // before the placement is cleared
  void forward_lost_ranks(const LostRanks& lost);
  void forward_exit(std::int64_t app, wire::Exited::Reader exited);
  // Every lease the app holds now, to its launcher.
  void send_grant(std::int64_t app, std::int64_t round);
  // Ends a launcher app (its launcher said finished or failed, or it could not be kept running).
  void end_launcher_app(std::int64_t app, bool failed, const std::string& message, double now);

  // Managed launchers (launchers.cc, docs/launcher.md "Managed launchers"): started through a nodelet
  // for apps whose spec has a [scheduler] table, restarted with back-off when they die.
  void supervise_launchers(double now);
  void on_launcher_exited(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void on_nodelet_stopping(const std::string& routing_id, const Caller& caller, const net::InMessage& in);
  void reconcile_launchers(const std::string& host, capnp::List<wire::RunningLauncher>::Reader running, double now);
  enum class LauncherMode { kNone, kForeground, kManaged };  // from the spec's [scheduler] table
  LauncherMode launcher_mode(std::int64_t app);
  bool wants_managed_launcher(std::int64_t app) { return launcher_mode(app) == LauncherMode::kManaged; }
  void start_launcher(std::int64_t app, double now);
  void enrol_launcher_keys();

  // Reconciliation: a worker without a lease is stopped; a running job whose workers are gone is released.
  void reconcile_host(const std::string& host, capnp::List<wire::RunningWorker>::Reader running, double now);

  void check_heartbeats(double now);
  enum class HostEnd { kMissedHeartbeats, kStopped };
  void end_host_sessions(const std::vector<std::string>& hosts, double now, HostEnd how);
  // Rounds (round.cc, docs/planner.md): read a snapshot, plan it with the round planner, apply the plan.
  void run_round(double now);
  // What a round is planned on, read from the store and the launchers' reports; it owns what the
  // snapshot points to.
  struct LoadedRound {
    std::unique_ptr<Cluster> cluster;
    std::vector<std::unique_ptr<arbiter::AppModel>> models;
    std::map<AppId, double> rho_of;
    planner::RoundSnapshot snapshot;
  };
  struct RoundTiming {
    double started_at = 0;
    std::string trigger;
    std::vector<AppId> offered_to;
    double event_at = 0;
    std::optional<double> offers_sent_at;
    double auction_started = 0;
    double auction_finished = 0;
    std::string opened;     // the snapshot the round opened on, and the policy's random state then (JSON)
    std::string rng_state;
  };
  std::unique_ptr<LoadedRound> load_round(double now, RoundId round);
  bool send_offers(const planner::RoundFrame& frame, const std::vector<AppId>& recipients, double now);
  // `loaded`: what the round opened on (its apps' records); `settled`: the state the plan was settled on.
  void apply_round(const planner::RoundPlan& plan, const LoadedRound& loaded, const planner::RoundSnapshot& settled,
                   const RoundTiming& timing);
  // The winner determination runs on its own thread under the auction budget while the loop goes on
  // reading heartbeats, requests and bids; once it is done, its outcome is settled against the state then
  // and applied (docs/planner.md, "The auction off the loop").
  struct AuctionInFlight {
    std::unique_ptr<LoadedRound> loaded;
    planner::RoundFrame frame;
    RoundTiming timing;
    std::future<arbiter::RoundOutcome> outcome;
  };
  void finish_auction();
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

  // The first-iteration probe (probe.cc, docs/reliability.md "Probe").
  bool wants_probe(std::int64_t app, int gpus_per_job, int jobs, int max_concurrent_jobs);
  void note_probe_started(AppId app, GpuIndex gpu, std::int64_t job, RoundId round, double now);
  void settle_probes(double now);
  void settle_launcher_probe(std::int64_t app, bool active, double now);

  // Failed attempts and admission control (job_failures.cc, docs/reliability.md); inside a transaction.
  // record_failed_exit classifies a rank's failed exit, stores it and applies the retry policy: it returns
  // the reason to stop the job with, "Backoff" (PENDING again after the back-off) or "RankFailed".
  std::string record_failed_exit(std::int64_t app, std::int64_t job, std::int64_t attempt, int exit_code, int signal,
                                 const std::string& log_tail, double now);
  // Another rank of a failing gang: replaces the stored cause when it explains the failure better.
  void refine_failed_exit(std::int64_t app, std::int64_t job, std::int64_t attempt, int exit_code, int signal,
                          const std::string& log_tail, double now);
  // After stop_job(NodeFail/WorkersLost): back-off, or FAILED once node failures exceed their limit.
  void after_node_loss(std::int64_t app, std::int64_t job, std::int64_t attempt, const std::string& what, double now);
  void record_preemption(std::int64_t app, std::int64_t job, std::int64_t attempt, double now);
  std::string failed_reason(std::int64_t app, std::int64_t job, std::int64_t attempt);
  Classification classify_rank_exit(std::int64_t app, std::int64_t job, int exit_code, int signal,
                                    const std::string& log_tail, double now);
  std::string decide_failed_attempt(std::int64_t app, std::int64_t job, std::int64_t attempt, const Classification& failure,
                                    std::optional<int> exit_code, std::optional<int> signal, double now);
  void release_backoffs(double now);   // jobs whose back-off ended may be placed again (own transaction)
  void admit_apps(double now);         // apps.admission: NULL admitted, else why the app waits
  // Feasibility (admission_infeasible.cc): why the registered cluster can never run a job this wide
  // (nullopt: it can, or no host has registered); judge_feasibility marks pending apps Infeasible or back.
  std::optional<std::string> infeasible_at_submit(int gpus_per_job);
  void judge_feasibility(double now);
  static constexpr const char* kAdmissionUndecided = "new";

  Coordinator(const CoordinatorConfig& config, Env* injected);
  class RouterEnv;
  CoordinatorConfig config_;
  std::unique_ptr<Env> own_env_;   // the daemon's (system clock, router_); empty when one was injected
  Env* env_;
  zmq::context_t context_;
  std::unique_ptr<net::ZapHandler> zap_;
  zmq::socket_t router_;
  std::string endpoint_;
  store::Database db_;
  store::StateStore states_{db_};  // the one writer of jobs.state and apps.state
  // The SQL of launchers.cc: a launcher's app rows and bookkeeping, its job requests, its grants.
  store::LauncherStore launcher_store_{db_};
  store::JobLaunchStore job_launch_store_{db_};
  store::GrantStore grant_store_{db_};
  // Hosts, events, rank exits and lease releases (coordinator.cc): store/host_store.h, store/event_store.h,
  // store/job_exit_store.h, store/lease_release_store.h.
  store::HostStore hosts_{db_};
  store::EventStore events_{db_};
  store::JobExitStore job_exits_{db_};
  store::LeaseReleaseStore lease_releases_{db_};
  // The SQL of client requests (requests.cc): submit and cancel, themisctl's queries, log reads.
  store::AppStore app_store_{db_};
  store::QueryStore query_store_{db_};
  store::LogRelayStore log_relay_store_{db_};
  // Stores of failed attempts and admission control (job_failures.cc): store::FailureStore, store::AdmissionStore.
  store::FailureStore failures_{db_};
  store::AdmissionStore admission_{db_};
  // Syncs db_ every second off the loop: its commits do not wait for the disk (docs/reliability.md "Durability").
  static constexpr std::chrono::milliseconds kCheckpointInterval{1000};
  store::Checkpointer checkpointer_;
  std::string last_checkpoint_error_;  // as last logged
  std::unique_ptr<arbiter::Policy> policy_;
  Rng rng_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> reload_{false};
  void reload_authorized_keys();

  std::map<std::string, HostSession> sessions_;          // host name -> session
  std::set<JobKey> launched_;                            // launches sent by this process
  std::set<JobKey> awaiting_launch_env_;                 // launches waiting for their launcher's environment (logged)
  std::map<JobKey, std::set<std::string>> stopped_on_;   // STOPPING attempts: hosts that report none of their workers
  std::optional<double> round_requested_at_;
  std::string round_trigger_;
  struct Outgoing {
    std::string host;
    std::unique_ptr<net::OutMessage> message;
  };
  std::vector<Outgoing> outbox_;                         // sent after the transaction commits
  std::uint64_t next_request_id_ = 1;
  std::uint64_t rendezvous_turn_ = 0;  // which port of config_.rendezvous_port_* the next gang gets

  struct LauncherSession {
    std::string routing_id;
    std::optional<double> rho;      // from its AppStatus
    std::optional<int> demand;      // more GPUs it could use, from its AppStatus
    std::optional<double> remaining;  // seconds it still needs on its fair share, from its AppStatus (> 0)
    std::optional<planner::LevelSlowdowns> slowdowns;  // from its AppStatus: the policy scores placements by them
    std::string slowdowns_problem;  // why its last slowdowns were refused (logged once per change)
    double progress = 0;            // share of its planned iterations done, from its AppStatus
    std::string last_summary;
    std::string state;              // its last resumable state (AppStatus.state), for a restarted launcher
    std::uint64_t iterations_done = 0;     // from its AppStatus, for `themisctl apps` PROGRESS
    std::uint64_t iterations_planned = 0;
    std::string phase;
  };
  // `themisctl apps` PROGRESS: "done/planned phase" from the app's launcher, else the app's phase.
  std::string progress_text(std::int64_t app, const std::string& state, const std::string& probe) const;
  struct ManagedLauncher {
    std::string host;               // where the current generation runs (or was started)
    std::uint32_t generation = 0;
    std::string public_key;         // its CURVE key, enrolled while it is current (empty when insecure)
    std::string owner;              // the app's owner: the principal the key acts as
    bool running = false;           // started and not known to have exited
    bool stop_sent = false;         // the app ended: the launcher was told to stop
    double started_at = 0;
    double next_start = 0;          // earliest restart (back-off)
    int failures = 0;               // exits in a row that came before kLauncherStableSeconds
  };
  static constexpr int kLauncherMaxFailures = 5;        // then the app fails
  static constexpr double kLauncherStableSeconds = 60;  // a launcher that ran this long resets the count
  static constexpr double kLauncherBackoffMax = 30;
  std::map<std::int64_t, ManagedLauncher> managed_;     // app -> its coordinator-started launcher
  std::map<std::int64_t, LauncherMode> launcher_mode_;        // app -> its spec's launcher mode (cache)
  struct PendingOffer {
    RoundId round = 0;
    double deadline = 0;
    std::set<AppId> recipients;     // apps with a launcher that were offered the GPUs
    std::map<AppId, Bid> bids;
    std::map<AppId, GpuIndex> probes;  // GPUs set aside for new apps' probes: the same ones when the bids are in
    double sent_at = 0;             // when the offers went out (rounds.offers_sent_at)
    bool all_bids_in() const { return bids.size() >= recipients.size(); }
  };
  static constexpr int kOfferDeadlineMs = 1000;  // a bid later than this counts as no bid
  std::map<std::int64_t, LauncherSession> launchers_;   // app -> its attached launcher
  std::int64_t active_count_ = 0;                        // active apps, for send_contention_ahead
  std::optional<double> active_count_read_at_;           // when active_count_ was read from the database
  std::optional<PendingOffer> pending_offer_;
  // No round number below this is offered again: an offer that ended without its round (its GPUs went
  // away) keeps its number, so a late bid for it cannot count in the next round.
  RoundId next_round_floor_ = 1;
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::pair<std::string, std::string>>> launch_env_;
  double started_at_ = 0;
  double last_watchdog_ = 0;
  std::uint64_t tick_failures_ = 0;     // in a row (e.g. the database disk is full)
  std::string last_tick_error_;
  double last_tick_error_logged_ = 0;
  // Messages were still waiting in the socket when the last drain stopped, since this time (0: none were).
  // A host's heartbeat may be among them, so its silence is not yet known (check_heartbeats).
  double unread_since_ = 0;

  // One turn of run()'s loop, timed by phase (seconds); logged when longer than config_.slow_loop_threshold_ms.
  struct LoopPhases {
    double messages = 0;     // reading and handling messages (their transactions included)
    int messages_read = 0;
    double heartbeats = 0;   // check_heartbeats
    double round = 0;        // run_round: admission, offers, the auction, its transaction, grants
    double launches = 0;     // launch_ready_jobs
    double other = 0;        // lease expiries, back-offs, managed launchers, sending
    store::CommitClock commits_before;  // the database's commit clock when the turn began
  };
  // Adds the time from its construction to its end to one phase of the turn in progress.
  class PhaseTimer {
   public:
    explicit PhaseTimer(double& phase) : phase_(phase), start_(std::chrono::steady_clock::now()) {}
    ~PhaseTimer() { phase_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
    PhaseTimer(const PhaseTimer&) = delete;
    PhaseTimer& operator=(const PhaseTimer&) = delete;

   private:
    double& phase_;
    std::chrono::steady_clock::time_point start_;
  };
  void begin_loop_turn();
  void end_loop_turn();
  LoopPhases turn_;
  std::optional<std::chrono::steady_clock::time_point> turn_started_;  // set while a turn runs
  double worst_loop_lag_ms_ = 0;                                       // since take_worst_loop_lag_ms()
  // hosts.last_heartbeat is written at most this often per host: liveness is HostSession::last_heard, the
  // column is for readers, and one write (one commit) per heartbeat is what the loop cannot afford.
  static constexpr double kHeartbeatWriteInterval = 1.0;

  web::MetricsRegistry metrics_;

  // Last, so that it is destroyed first: its thread uses policy_ and rng_.
  std::optional<AuctionInFlight> auction_;
};

double unix_now();

}  // namespace themis::coordinator
