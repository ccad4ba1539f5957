#pragma once
// `themis-sim run --round-log FILE`: one JSON object per line and round, saying what the round saw (every
// active app's current ρ, GPUs held and extra demand) and what it decided (bidders, their bids, winners with
// ρ and payment factor c, grants, GPUs lost or left idle, a gang reservation). It is how to find out why an
// app waited in a run, without a temporary trace in the policy (docs/simulator.md, "Round log").
#include <span>
#include <string>
#include <vector>

#include "core/ids.h"
#include "policy/planner/round_snapshot.h"

namespace themis::sim {

// An active app as the round found it, before its outcome was applied.
struct RoundLogApp {
  AppId id = 0;
  std::string name;
  double rho = 0;      // current ρ (the Themis filter's ranking key)
  int held = 0;        // GPUs it holds past this round
  int demand = 0;      // extra GPUs it could use now
};

// One line (no trailing newline) for the round `plan` decided over `apps` (by id).
std::string round_log_line(const planner::RoundPlan& plan, std::span<const RoundLogApp> apps);

}  // namespace themis::sim
