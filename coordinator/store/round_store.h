#pragma once
// The SQL of a round: what the planner's snapshot is read from, and how a plan is written. The
// coordinator's round (coordinator/round.cc) calls these and decides nothing in SQL.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/topology.h"
#include "coordinator/store/database.h"
#include "policy/planner/round_snapshot.h"

namespace themis::store {

struct RegisteredCluster {
  ClusterSpec spec;                        // machines in GPU order
  std::vector<bool> up;                    // by machine
  std::vector<bool> drained;               // by machine (themisctl drain)
  std::vector<std::int64_t> first_gpu;     // by machine, as stored
};

struct StoredLease {
  GpuIndex gpu = 0;
  std::int64_t app = 0, job = 0, round = 0;
  double start = 0, expiry = 0;
};

// An app that may take part in a round (PENDING or RUNNING, admitted).
struct StoredApp {
  std::int64_t id = 0;
  int gpus_per_job = 1;
  int max_concurrent_jobs = 0;
  std::vector<std::int64_t> pending_jobs;  // PENDING and not backing off, in order
  int active_jobs = 0;                     // STARTING, RUNNING or STOPPING
  std::int64_t first_job = 0;
  std::string probe;                       // apps.probe: "", "waiting", "running", ...
};

class RoundStore {
 public:
  explicit RoundStore(Database& db) : db_(db) {}

  RegisteredCluster registered_cluster();
  std::vector<StoredLease> active_leases();
  std::vector<StoredApp> round_apps();
  // The ρ proxy of an app without a launcher (docs/protocols/control.md, "ρ without a launcher").
  double attained_rho(std::int64_t app, double now);
  // GPU-seconds each app has held leases for up to `now` (ended leases to their release or expiry, active
  // ones to now): the attained service that Tiresias, max-min and Gandiva order apps by. Apps with none: absent.
  std::map<std::int64_t, double> attained_gpu_seconds(double now);
  std::int64_t next_round_id();

  // Inside the round's transaction.
  void insert_round(std::int64_t round, double now, double finished, const std::string& trigger, const std::string& policy,
                    std::int64_t offered_gpus, std::int64_t apps, const std::string& offered_to_json);
  // The leases that end in this round; `renewed` GPUs are recorded as renewed, the rest as expired.
  void end_leases(const std::vector<planner::HeldLease>& ended, const std::vector<GpuIndex>& renewed, double now);
  void insert_lease(const planner::PlannedLease& lease, std::int64_t round);
  void start_job(std::int64_t app, std::int64_t job, const std::vector<GpuIndex>& gpus, double now);
  // Jobs of `app` running (STARTING or RUNNING) on `gpu`.
  std::vector<std::int64_t> jobs_on_gpu(std::int64_t app, GpuIndex gpu);
  void insert_bid(std::int64_t round, std::int64_t app, double rho_before, std::optional<double> rho_no_new,
                  const std::string& rows_json, const std::string& won_json, std::optional<std::string> grant_kind);
  void set_app_rho(std::int64_t app, double rho);
  void finish_round(std::int64_t round, std::int64_t granted, std::int64_t idle, const std::string& outcome_json,
                    double finished, double event_at, std::optional<double> offers_sent_at, double auction_started,
                    double auction_finished);
  // Records the round and drops records more than `kept` rounds older (kept 0: none are dropped).
  void record_round(std::int64_t round, const std::string& opened, const std::string& rng_state, const std::string& settled,
                    const std::string& plan, std::int64_t kept);
  // After the commit: when it committed and sent its grants, and the loop's worst turn since the last round.
  void mark_round_sent(std::int64_t round, double committed, double grants_sent, double worst_loop_lag_ms);

  // Launches (Coordinator::launch_ready_jobs). A STARTING job with what its launch carries; the JSON columns
  // stay text, parsed by the launch.
  struct StartingJob {
    std::int64_t app = 0, job = 0, attempt = 0;
    std::string placement_json, command_json, hparams_json;
    std::string workdir, env_json, checkpoint_dir;
    std::int64_t grace_ms = 0;
    std::string owner;
    bool launcher_env = false;  // its launcher sent environment this launch needs (jobs.launcher_env)
  };
  // Every STARTING job, by app and job.
  std::vector<StartingJob> starting_jobs();
  // Where GPU `gpu` is, and how many jobs other than (app, job) that are STARTING, RUNNING or STOPPING are
  // placed on it (nullopt: no such GPU).
  struct GpuSeat {
    std::string host;
    std::uint32_t local_index = 0;
    std::int64_t other_jobs = 0;
  };
  std::optional<GpuSeat> gpu_seat(std::int64_t app, std::int64_t job, GpuIndex gpu);

 private:
  Database& db_;
};

}  // namespace themis::store
