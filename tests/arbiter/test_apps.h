#pragma once
// Test doubles for AppModel: a scripted app (fixed answers, bid from a function) and helpers to build
// clusters and random bundles for arbiter tests.
#include <algorithm>
#include <functional>
#include <span>
#include <utility>

#include "policy/arbiter/policy.h"
#include "core/rng.h"
#include "core/topology.h"

namespace themis::arbiter::testing {

class ScriptedApp final : public AppModel {
 public:
  using BidFunction = std::function<Bid(const Offer&)>;
  ScriptedApp(AppId id, double rho, int demand, BidFunction bid = {})
      : id_(id), rho_(rho), demand_(demand), bid_(std::move(bid)) {}
  AppId id() const override { return id_; }
  double current_rho() const override { return rho_; }
  int extra_demand() const override { return demand_; }
  int gpus_per_job() const override { return gpus_per_job_; }
  // Rigid (set_rigid_gangs): only whole gangs of gpus_per_job put GPUs to work; otherwise any count, unless
  // set_usable_extra says which counts.
  int usable_extra(int gpus) const override {
    if (usable_extra_) return usable_extra_(gpus);
    const int usable = std::clamp(gpus, 0, demand_);
    return rigid_ ? usable / std::max(1, gpus_per_job_) * std::max(1, gpus_per_job_) : usable;
  }
  Bid bid(const Offer& offer) override {
    ++bids_asked_;
    return bid_ ? bid_(offer) : Bid{id_, rho_, {}};
  }
  Seconds attained_service() const override { return 0; }
  Seconds remaining_service() const override { return 0; }
  Seconds remaining_time(std::span<const GpuIndex>) const override { return 0; }
  double loss_decrease(std::span<const GpuIndex>) const override { return 0; }
  double placement_score(std::span<const GpuIndex> extra) const override {
    return placement_score_ ? placement_score_(extra) : 1;
  }

  void set_rho(double rho) { rho_ = rho; }
  void set_placement_score(std::function<double(std::span<const GpuIndex>)> score) { placement_score_ = std::move(score); }
  void set_demand(int demand) { demand_ = demand; }
  void set_gpus_per_job(int width) { gpus_per_job_ = width; }
  void set_rigid_gangs(bool rigid) { rigid_ = rigid; }
  void set_usable_extra(std::function<int(int)> usable) { usable_extra_ = std::move(usable); }
  void set_bid(BidFunction bid) { bid_ = std::move(bid); }
  int bids_asked() const { return bids_asked_; }

 private:
  AppId id_;
  double rho_;
  int demand_;
  BidFunction bid_;
  std::function<double(std::span<const GpuIndex>)> placement_score_;  // empty: 1 everywhere
  std::function<int(int)> usable_extra_;  // empty: by demand, gpus_per_job and rigid_
  int gpus_per_job_ = 1;
  bool rigid_ = false;
  int bids_asked_ = 0;
};

// `machines` machines of `slots` slots × `per_slot` GPUs, `machines_per_rack` machines per rack.
inline Cluster make_cluster(int machines, int slots, int per_slot, int machines_per_rack) {
  ClusterSpec spec{"test", {}};
  for (int m = 0; m < machines; ++m)
    spec.machines.push_back({"m" + std::to_string(m), "r" + std::to_string(m / machines_per_rack),
                             std::vector<int>(static_cast<std::size_t>(slots), per_slot)});
  return Cluster(spec);
}

// `count` distinct GPUs of `gpus` drawn at random (count <= gpus.size()), sorted.
inline std::vector<GpuIndex> random_bundle(Rng& rng, std::vector<GpuIndex> gpus, int count) {
  for (int i = 0; i < count; ++i)
    std::swap(gpus[static_cast<std::size_t>(i)],
              gpus[static_cast<std::size_t>(i) + rng.below(gpus.size() - static_cast<std::size_t>(i))]);
  gpus.resize(static_cast<std::size_t>(count));
  std::sort(gpus.begin(), gpus.end());
  return gpus;
}

}  // namespace themis::arbiter::testing
