#pragma once
// Book-keeping for a baseline policy's round: the GPUs still free, what each app was granted so far
// and how many more it can use. Baselines differ only in who gets the next GPUs and which ones.
#include <map>
#include <span>
#include <vector>

#include "policy/arbiter/policy.h"

namespace themis::arbiter::policies {

class RoundAllocation {
 public:
  explicit RoundAllocation(const RoundInput& input);

  const std::vector<GpuIndex>& free() const { return free_; }
  // Apps (in id order) that can still use some of the free GPUs.
  std::vector<AppModel*> wanting() const;
  int demand_left(const AppModel* app) const;
  // How many of `gpus` more it can put to work (AppModel::usable_extra past this round's grants).
  int usable(const AppModel* app, int gpus) const;
  // The fewest free GPUs it can use all of (one, or its narrowest waiting gang); 0 if none fits.
  int step(const AppModel* app) const;
  const std::vector<GpuIndex>& granted(const AppModel* app) const;
  // What the app holds now plus what it was granted this round (sorted).
  std::vector<GpuIndex> held_and_granted(const AppModel* app) const;
  // Grants `gpus` (a subset of free(), at most demand_left) to `app`, cut to the first usable() of them;
  // an app that can use none of them wants nothing more this round.
  void grant(AppModel* app, std::span<const GpuIndex> gpus);
  // Grants, in app-id order; every GPU left free is reported idle.
  RoundOutcome finish() const;

 private:
  const RoundInput& input_;
  std::vector<GpuIndex> free_;
  std::map<AppId, int> demand_left_;
  std::map<AppId, std::vector<GpuIndex>> granted_;
  std::map<AppId, std::vector<GpuIndex>> held_;
};

}  // namespace themis::arbiter::policies
