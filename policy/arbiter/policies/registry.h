#pragma once
// Every scheduling policy by name: the Themis auction and the baselines of Themis §6.1, each in its
// own file. `themis-sim` and the coordinator pick policies through make_policy.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/arbiter/policy.h"

namespace themis::arbiter::policies {

// Tiresias' discretised 2D-LAS (policies/tiresias.cc). Defaults: two queues split at one hour on one
// GPU, and promotion after waiting 8× the time run (docs/simulator.md, "Policies", says where from).
struct TiresiasSettings {
  std::vector<double> queue_thresholds{3600};  // attained GPU-seconds between queues, ascending
  double promote_knob = 8;                     // promote after waiting this many times the time run; <= 0: never
};

struct PolicySettings {
  double filter_f = 0.8;              // Themis: at most the worst ⌈(1−f)·N⌉ apps bid
  std::string filter = "fixed";       // Themis: "fixed" (all of them) | "offer-bounded" (as many as can use the offer)
  Seconds lease = 600;                // Themis: lease length
  std::string rounding = "time-share";   // Themis: whole GPUs from c_i ("nearest" | "lottery" | "time-share")
  bool gang_reservation = true;       // Themis: ThemisSettings::gang_reservation
  bool gang_backfill = false;         // Themis: ThemisSettings::gang_backfill
  // Themis' winner solver: no wall-clock budget (a budget would make results depend on the machine);
  // a node cap per solve bounds the time instead. <= 0: no cap.
  long long solver_max_nodes = 200000;
  int solver_threads = 0;  // Themis: ThemisSettings::solver_threads
  // Themis: each solve first tries depth-first search up to this many nodes (ThemisSettings::small_search_nodes);
  // unset: the solver's default (default_small_search_nodes).
  std::optional<long long> small_search_nodes;
  bool shape_bids = true;  // Themis: ThemisSettings::shape_bids
  // Themis' winner solver (ThemisSettings::solver): "cbc", "shape" or "bnb" (docs/arbiter.md, "Solvers").
  std::string solver = "shape";
  // Themis' wall-clock budget for one auction (all its solves); <= 0: none. The coordinator sets one
  // (its auction runs off the loop); themis-sim does not, so its runs are reproducible.
  double solver_seconds = 0;
  TiresiasSettings tiresias;
};

// Names accepted by make_policy, "themis" first when the Themis policy is built in.
std::vector<std::string> policy_names();
// Throws std::invalid_argument listing the known names if `name` is unknown.
std::unique_ptr<Policy> make_policy(std::string_view name, const PolicySettings& settings = {});

// The baselines (one file each).
std::unique_ptr<Policy> make_gandiva();   // time-sliced turns, best-placed bundles
std::unique_ptr<Policy> make_tiresias(const TiresiasSettings& settings = {});  // 2D-LAS queues
std::unique_ptr<Policy> make_optimus();   // highest throughput scaling first, a GPU at a time
std::unique_ptr<Policy> make_slaq();      // highest loss decrease first, a GPU at a time
std::unique_ptr<Policy> make_srtf();      // shortest remaining time first
std::unique_ptr<Policy> make_srsf();      // shortest remaining service first, a GPU at a time
std::unique_ptr<Policy> make_max_min();   // water-filled shares, time-shared in rounds (Gavel's LAS)
std::unique_ptr<Policy> make_gavel_ftf();  // Gavel's finish-time fairness, time fractions realised in rounds
std::unique_ptr<Policy> make_fifo();      // arrival (app id) order

}  // namespace themis::arbiter::policies
