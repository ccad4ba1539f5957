#include "policy/arbiter/leftover.h"

#include <algorithm>
#include <string>

#include "policy/arbiter/placement.h"

namespace themis::arbiter {

namespace {

void shuffle(std::vector<LeftoverRecipient>& recipients, Rng& rng) {
  for (std::size_t i = recipients.size(); i > 1; --i)
    std::swap(recipients[i - 1], recipients[static_cast<std::size_t>(rng.below(i))]);
}

// The largest count of at most `gpus` more GPUs the recipient can put to work: whole jobs. With a model,
// a count its jobs can use together with what it won in the auction (AppModel::usable_extra counts those as
// not yet held) and, where it won some, one its jobs can use alone as well, since the jobs the won GPUs
// start are not the model's to say; in any case a multiple of its job width.
int usable_count(const LeftoverRecipient& recipient, int gpus) {
  const int width = std::max(1, recipient.job_width);
  int count = std::clamp(gpus, 0, recipient.demand);
  while (count > 0) {
    if (recipient.model) {
      const int with_won = recipient.model->usable_extra(recipient.won + count) - recipient.won;
      if (with_won < count) {
        count = std::max(with_won, 0);
        continue;
      }
      if (recipient.won > 0 && recipient.model->usable_extra(count) < count) {
        --count;
        continue;
      }
    }
    if (count % width == 0) return count;
    count = count / width * width;
  }
  return 0;
}

// The fewest GPUs the recipient could put to work (for the idle reason); 0 if none up to its demand.
int narrowest_usable(const LeftoverRecipient& recipient) {
  for (int n = 1; n <= recipient.demand; ++n)
    if (usable_count(recipient, n) > 0) return n;
  return 0;
}

}  // namespace

bool placed_well_enough(const Cluster& cluster, const AppModel& app, std::span<const GpuIndex> gpus) {
  const double score = app.placement_score(gpus);
  if (score >= kMinLeftoverPlacementScore) return true;
  std::vector<GpuIndex> every(static_cast<std::size_t>(cluster.size()));
  for (GpuIndex g = 0; g < cluster.size(); ++g) every[static_cast<std::size_t>(g)] = g;
  const auto best = most_local_subset(cluster, every, static_cast<int>(gpus.size()), GroupPreference::kBestFit);
  return score >= kMinLeftoverPlacementScore * app.placement_score(best);
}

LeftoverResult distribute_leftover(const Cluster& cluster, std::vector<GpuIndex> pool,
                                   std::vector<LeftoverRecipient> non_bidders,
                                   std::vector<LeftoverRecipient> bidders, Rng& rng) {
  std::sort(pool.begin(), pool.end());
  LeftoverResult result;
  bool anyone_wanted = false;
  int narrowest_unfit = 0;  // the smallest job width of an app that wanted GPUs but found no whole job's worth
  int placed_too_slow = 0;  // apps that found whole jobs' worth, each placed too slow for them
  for (auto* tier : {&non_bidders, &bidders}) {
    std::erase_if(*tier, [](const LeftoverRecipient& r) { return r.demand <= 0; });
    if (tier->empty()) continue;
    anyone_wanted = true;
    if (pool.empty()) break;
    shuffle(*tier, rng);
    for (const LeftoverRecipient& recipient : *tier) {
      if (pool.empty()) break;
      const int usable = usable_count(recipient, static_cast<int>(pool.size()));
      if (usable == 0) {
        const int narrowest = narrowest_usable(recipient);
        if (narrowest > 0) narrowest_unfit = narrowest_unfit == 0 ? narrowest : std::min(narrowest_unfit, narrowest);
        continue;
      }
      std::vector<GpuIndex> given;
      for (int count = usable; count > 0; count = usable_count(recipient, count - 1)) {
        std::vector<GpuIndex> candidate = most_local_subset(cluster, pool, count, GroupPreference::kBestFit);
        if (!recipient.model || placed_well_enough(cluster, *recipient.model, candidate)) {
          given = std::move(candidate);
          break;
        }
      }
      if (given.empty()) {
        ++placed_too_slow;
        continue;
      }
      std::vector<GpuIndex> rest;
      std::set_difference(pool.begin(), pool.end(), given.begin(), given.end(), std::back_inserter(rest));
      pool = std::move(rest);
      result.grants.push_back(Grant{recipient.app, std::move(given), GrantKind::kLeftover});
    }
  }
  std::string reason = "no active app can use more GPUs";
  if (placed_too_slow > 0) {
    reason = std::to_string(pool.size()) + " left, placed so that the " + std::to_string(placed_too_slow) +
             " app(s) that want them would run at under " + std::to_string(static_cast<int>(kMinLeftoverPlacementScore * 100)) +
             "% of their speed";
  } else if (narrowest_unfit > 0) {
    reason = std::to_string(pool.size()) + " left, fewer than one whole job of any app that wants more (the narrowest needs " +
             std::to_string(narrowest_unfit) + ")";
  } else if (anyone_wanted) {
    reason = "every app that wants GPUs got all it can use";
  }
  for (GpuIndex g : pool) result.idle.push_back(IdleGpu{g, reason});
  return result;
}

}  // namespace themis::arbiter
