#pragma once
// An app as a round records it: its current ρ, its extra demand and the bid it sent for the round (none:
// a missing bid). The coordinator's apps answer the policy this way (ρ and demand from the launcher's
// report, or the attained-service proxy for an app without one), and a recorded round is replayed with
// the same answers (policy/planner/round_record.h).
#include <algorithm>
#include <optional>
#include <span>
#include <utility>

#include "policy/arbiter/policy.h"

namespace themis::planner {

class RecordedAppModel final : public arbiter::AppModel {
 public:
  RecordedAppModel(AppId id, double rho, int demand, std::optional<Bid> bid = std::nullopt, int gpus_per_job = 1)
      : id_(id), rho_(rho), demand_(demand), bid_(std::move(bid)), gpus_per_job_(gpus_per_job) {}
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
  Seconds attained_service() const override { return 0; }
  Seconds remaining_service() const override { return 0; }
  Seconds remaining_time(std::span<const GpuIndex> /*extra*/) const override { return 0; }
  double loss_decrease(std::span<const GpuIndex> /*extra*/) const override { return 0; }
  double placement_score(std::span<const GpuIndex> /*extra*/) const override { return 1; }
  const std::optional<Bid>& recorded_bid() const { return bid_; }

 private:
  AppId id_;
  double rho_;
  int demand_;
  std::optional<Bid> bid_;
  int gpus_per_job_;
};

}  // namespace themis::planner
