#pragma once
// A round as the coordinator records it (the round_records table, docs/planner.md "Recorded rounds"):
// the snapshot the round opened on, the policy's random state then, the snapshot its outcome was settled
// on, and the plan. Replaying the record through the planner gives the same plan: that is how the
// coordinator and themis-sim are checked to run the same rounds. Pure: JSON values in and out.
#include <array>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "policy/arbiter/policy.h"
#include "policy/planner/recorded_app_model.h"
#include "policy/planner/round_snapshot.h"

namespace themis::planner {

// The apps' answers are taken from their models: ρ, demand and, for a RecordedAppModel, its bid.
nlohmann::json snapshot_to_json(const RoundSnapshot& snapshot);
nlohmann::json plan_to_json(const RoundPlan& plan);

// A snapshot read back, with the cluster and the app models it points to.
struct SnapshotRecord {
  std::unique_ptr<Cluster> cluster;
  std::vector<std::unique_ptr<RecordedAppModel>> models;
  RoundSnapshot snapshot;
};
// Throws std::invalid_argument naming the field that is missing or of the wrong type.
std::unique_ptr<SnapshotRecord> snapshot_from_json(const nlohmann::json& json);

// Open the round on `opened`, run `policy` with a generator in `rng_state`, settle on `settled`.
RoundPlan replay_round(const nlohmann::json& opened, const std::array<std::uint64_t, 4>& rng_state,
                       const nlohmann::json& settled, arbiter::Policy& policy);

}  // namespace themis::planner
