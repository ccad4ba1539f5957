#pragma once
// The SQL of `themisctl explain` and the dashboard's round texts (coordinator/explain.cc): what the
// coordinator recorded about an app, its jobs, leases, bids and rounds, read as typed rows.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/store/database.h"

namespace themis::store {

// The columns of apps that explain reads.
struct ExplainApp {
  std::int64_t id = 0;
  std::string name, state;
  std::int64_t gpus_per_job = 1, max_concurrent_jobs = 1;
  std::optional<std::string> admission;  // nullopt: admitted
  std::optional<std::string> probe;
  std::optional<double> rho;
  double submitted_at = 0;
  std::optional<double> finished_at;
};

// The columns of jobs that explain reads.
struct ExplainJob {
  std::int64_t job = 0;
  std::string state, reason;
  std::int64_t attempt = 0;
  std::string placement;  // JSON array of GPUs
  std::optional<std::int64_t> exit_code, exit_signal;
  std::optional<std::string> log_tail;
  std::optional<double> retry_at;
  std::optional<std::string> failure;
};

// The columns of rounds that explain reads; offered_to and outcome are JSON texts.
struct ExplainRound {
  double started_at = 0;
  std::string trigger;
  std::int64_t free_gpus = 0, apps = 0, granted = 0, idle = 0;
  std::string offered_to, outcome;
};

struct ClusterCounts {
  std::int64_t hosts_up = 0;
  std::int64_t gpus_up = 0;    // GPUs of the up hosts
  std::int64_t free_gpus = 0;  // of those, on hosts not drained and without an active lease
};

struct LeaseExpiry {
  double expiry = 0;
  std::int64_t app = 0;
  std::string app_name;
  std::int64_t gpu = 0;
};

// An app's last bid with the round it was in; JSON texts as stored.
struct LastBid {
  std::int64_t round = 0;
  std::optional<double> rho_before;
  std::optional<double> rho_no_new;  // nullopt: the app did not bid
  std::string bid_rows, won;
  std::optional<std::string> grant_kind;
  double started_at = 0;
  std::string trigger;
  std::int64_t free_gpus = 0, apps = 0;
  std::string offered_to, outcome;
};

// A bid of a round with its app's name and ρ when the round ran.
struct Bidder {
  std::int64_t app = 0;
  std::string name;
  std::optional<double> rho;
};

struct HeldLease {
  std::int64_t gpu = 0;
  std::string host;
  std::int64_t job = 0, round = 0;
  double start = 0, expiry = 0;
};

// The last round in which an app won GPUs.
struct LastWin {
  std::int64_t round = 0;
  std::string won;  // JSON array of GPUs
  std::optional<std::string> grant_kind;
  double started_at = 0;
  std::string trigger;
};

struct LeaseUse {
  double gpu_seconds = 0;  // leased, each lease up to its release or its expiry
  std::int64_t rounds = 0;
};

class ExplainStore {
 public:
  explicit ExplainStore(Database& db) : db_(db) {}

  std::optional<ExplainApp> app(std::int64_t app);
  std::vector<ExplainJob> jobs(std::int64_t app);  // in job order
  std::optional<ExplainRound> round(std::int64_t round);

  ClusterCounts cluster_counts();
  // The active lease that expires first (lowest GPU among equals); nullopt when none is active.
  std::optional<LeaseExpiry> next_expiry();
  // GPUs `app` holds that none of its STARTING, RUNNING or STOPPING jobs runs on, in GPU order.
  std::vector<std::int64_t> unused_gpus(std::int64_t app);
  std::optional<LastBid> last_bid(std::int64_t app);
  // The bids of a round, highest ρ first.
  std::vector<Bidder> bidders(std::int64_t round);
  // The active leases of `app`, in GPU order.
  std::vector<HeldLease> held_leases(std::int64_t app);
  std::optional<LastWin> last_win(std::int64_t app);
  LeaseUse lease_use(std::int64_t app);
  // The last round `app` bid in; nullopt when it never did.
  std::optional<std::int64_t> last_bid_round(std::int64_t app);

 private:
  Database& db_;
};

}  // namespace themis::store
