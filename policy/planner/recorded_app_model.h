#pragma once
// An app as a round records it: its current ρ, its extra demand, the bid it sent for the round (none:
// a missing bid) and, where its launcher reported them, its placement slowdowns. The coordinator's apps
// answer the policy this way (ρ, demand and slowdowns from the launcher's report, or the attained-service
// proxy for an app without one), and a recorded round is replayed with the same answers
// (policy/planner/round_record.h).
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>

#include "policy/arbiter/policy.h"

namespace themis::planner {

// S per locality level (same slot, same machine, same rack, cross rack), each >= 1: how much slower one of
// the app's gangs runs placed at that level (its launcher's SlowdownModel, docs/launcher.md "Status").
using LevelSlowdowns = std::array<double, kLocalityLevels>;

// `values` as slowdowns per level, or why they are not: four values, each finite and >= 1.
inline std::variant<LevelSlowdowns, std::string> parse_level_slowdowns(std::span<const double> values) {
  if (values.size() != static_cast<std::size_t>(kLocalityLevels))
    return "slowdowns: " + std::to_string(values.size()) + " values, expected " + std::to_string(kLocalityLevels) +
           " (same slot, same machine, same rack, cross rack)";
  LevelSlowdowns out{};
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(values[i]) || values[i] < 1)
      return "slowdowns: value " + std::to_string(i) + " (" + std::string(to_string(static_cast<Locality>(i))) + ") is " +
             std::to_string(values[i]) + ", expected a finite number >= 1";
    out[i] = values[i];
  }
  return out;
}

class RecordedAppModel final : public arbiter::AppModel {
 public:
  RecordedAppModel(AppId id, double rho, int demand, std::optional<Bid> bid = std::nullopt, int gpus_per_job = 1)
      : id_(id), rho_(rho), demand_(demand), bid_(std::move(bid)), gpus_per_job_(gpus_per_job) {}
  // With the slowdowns its launcher reported, on `cluster` (which must outlive the model): placement_score
  // then says how well a set is placed for its gangs, so that the leftover's placement rule and the machine
  // hold (docs/arbiter.md) work in the coordinator as in themis-sim.
  void set_slowdowns(const Cluster& cluster, const LevelSlowdowns& slowdowns) {
    cluster_ = &cluster;
    slowdowns_ = slowdowns;
  }
  // GPU-seconds its leases have held so far (the coordinator's lease table): what Tiresias, max-min and
  // Gandiva order apps by.
  void set_attained_service(Seconds gpu_seconds) { attained_ = gpu_seconds; }
  AppId id() const override { return id_; }
  double current_rho() const override { return rho_; }
  int extra_demand() const override { return demand_; }
  int gpus_per_job() const override { return gpus_per_job_; }
  // Its jobs are gangs of gpus_per_job: only whole gangs put GPUs to work.
  int usable_extra(int gpus) const override {
    const int gang = std::max(1, gpus_per_job_);
    return std::clamp(gpus, 0, demand_) / gang * gang;
  }
  Bid bid(const Offer& /*offer*/) override { return bid_ ? *bid_ : Bid{id_, 0, {}}; }
  Seconds attained_service() const override { return attained_; }
  // What only the app knows (its remaining work and loss curve) is not reported to the coordinator: the
  // policies that need it (srtf, srsf, optimus, slaq, gavel-ftf) run in themis-sim only (coordinator/config.cc).
  Seconds remaining_service() const override { return 0; }
  Seconds remaining_time(std::span<const GpuIndex> /*extra*/) const override { return 0; }
  double loss_decrease(std::span<const GpuIndex> /*extra*/) const override { return 0; }
  // 1/S of the widest level one of its gangs spans when `extra` starts whole gangs of its own (each inside the
  // narrowest group that holds it, as its bids price new GPUs: docs/bidder.md "Gangs"). 1 without reported
  // slowdowns: every set counts as well placed.
  double placement_score(std::span<const GpuIndex> extra) const override {
    if (!slowdowns_ || cluster_ == nullptr) return 1;
    const Locality level = cluster_->gang_locality(extra, std::max(1, gpus_per_job_));
    return 1.0 / (*slowdowns_)[static_cast<std::size_t>(level)];
  }
  const std::optional<Bid>& recorded_bid() const { return bid_; }
  const std::optional<LevelSlowdowns>& slowdowns() const { return slowdowns_; }

 private:
  AppId id_;
  double rho_;
  int demand_;
  std::optional<Bid> bid_;
  int gpus_per_job_;
  const Cluster* cluster_ = nullptr;
  std::optional<LevelSlowdowns> slowdowns_;
  Seconds attained_ = 0;
};

}  // namespace themis::planner
