#pragma once
// themis-coordinator settings: the [cluster] and [coordinator] tables of themis.toml (docs/admin.md).
#include <map>
#include <string>

#include "coordinator/admission.h"
#include "policy/arbiter/filter.h"
#include "coordinator/retry_policy.h"

namespace themis::coordinator {

struct CoordinatorConfig {
  std::string listen = "tcp://0.0.0.0:7310";
  std::string database = "/var/lib/themis/themis.db";
  std::string authorized_keys = "/etc/themis/authorized_keys";
  std::string secret_key = "/etc/themis/keys/coordinator.key_secret";
  bool insecure = false;               // no CURVE; loopback only; says so loudly
  long long heartbeat_interval_ms = 5000;
  int heartbeat_lives = 3;
  long long lease_duration_ms = 600'000;
  long long round_batch_window_ms = 200;  // resource events within this window share one round
  // Wall-clock budget of one winner determination (all its solves), run off the coordinator's loop; past it
  // the best allocation found is used and its proven gap recorded. <= 0 (the default): derived from the
  // lease, auction_budget_for_lease (docs/planner.md, "The auction off the loop").
  long long auction_budget_ms = 0;
  // A turn of the coordinator's loop that takes longer is logged with its phases (docs/admin.md "Loop health");
  // 0 logs every turn that did any work.
  long long slow_loop_threshold_ms = 100;
  // A new app's first job runs alone on one GPU for up to this long before the app competes for more, so that a
  // job that fails at once fails in seconds rather than after an auction (docs/reliability.md "Probe"). 0: off.
  long long probe_duration_ms = 20'000;
  // Rank 0's rendezvous port for a gang, taken in turn from this range so that a new attempt never reuses the
  // port an earlier one (or another job) may still hold.
  int rendezvous_port_first = 29500;
  int rendezvous_port_last = 29999;
  std::string policy = "themis";
  double fairness_knob = 0.8;          // Themis f
  // Themis: "offer-bounded" (of the ⌈(1−f)·N⌉ worst apps, as many as can use the offer) or "fixed" (all of
  // them); the same default as themis-sim, whose figures (docs/evaluation.md) are this policy's.
  arbiter::FilterRule filter = arbiter::FilterRule::kOfferBounded;
  // Themis: the offer waits for the worst app's gang when that gang is wider than the offer (docs/arbiter.md
  // "Gang reservation"); false: the paper's round, where such a gang can wait for ever. As themis-sim.
  bool gang_reservation = true;
  bool gang_backfill = false;  // ThemisSettings::gang_backfill
  // Launchers' ranking keys count N_avg over the app's whole life, the coordinator answering each status with the
  // contention over the rest of it (AppStatusAck; docs/bidder.md "N_avg ahead"); false: no answer, and the count so
  // far stands for the future. As themis-sim's --contention-ahead.
  bool contention_ahead = true;
  // Themis: how a winner pays c_i (docs/arbiter.md "Whole GPUs"): "time-share" (its whole bundle for c_i of the
  // lease), "nearest" (the nearest whole-gang count of GPUs for the whole lease) or "lottery". As themis-sim.
  std::string rounding = "time-share";
  // Themis' winner-determination solver after the depth-first search: "cbc", "shape" or "bnb" (docs/arbiter.md
  // "Solvers"). As themis-sim.
  std::string solver = "shape";
  // Themis: the solves without each winner on up to this many threads (ThemisSettings::solver_threads; the
  // outcome is the same for every count); 0: the machine's cores, at most 8. As themis-sim's --solver-threads.
  int solver_threads = 0;
  long long seed = 1;
  // round_records keeps the newest this many rounds (a few KB each; docs/planner.md "Recorded rounds"); 0: all.
  long long round_records_kept = 10'000;
  // The HTTP endpoint (/metrics, the dashboard): "HOST:PORT", empty (the default) for none. Loopback, or
  // one interface's address written on purpose; never a wildcard (web/listen_address.h).
  std::string http_listen;
  RetryPolicy retry;                   // [retry.<failure class>] tables (docs/reliability.md)
  AdmissionConfig admission;           // [admission] table
  // An app one of whose jobs is wider than every registered GPU together is refused at submit; false: it
  // is stored and waits "Infeasible" until enough hosts register (docs/admin.md).
  bool reject_infeasible = true;
  // [users]: enrolled principal -> the Unix account its jobs and launchers run as on the nodelets. A principal
  // without an entry runs as the account of its own name (docs/admin.md, "Job accounts").
  std::map<std::string, std::string> users;
};

// The Unix account the jobs of `principal` run as.
std::string unix_account(const CoordinatorConfig& config, const std::string& principal);

// The default auction budget: a sixtieth of the lease, within [0.5 s, 10 s].
double auction_budget_for_lease(double lease_seconds);
// config.auction_budget_ms when set, else auction_budget_for_lease.
double auction_budget_seconds(const CoordinatorConfig& config);

// Throws std::invalid_argument "file:line:column: table.key: reason". A missing file is an error.
CoordinatorConfig load_coordinator_config(const std::string& path);

}  // namespace themis::coordinator
