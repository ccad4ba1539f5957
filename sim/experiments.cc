#include "sim/experiments.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/rng.h"
#include "sim/model_catalog.h"

namespace themis::sim {

ClusterSpec shrink_cluster(const ClusterSpec& spec, int k) {
  if (k < 1) throw std::invalid_argument("shrink_cluster: k must be >= 1, got " + std::to_string(k));
  ClusterSpec out{spec.name + "/" + std::to_string(k), {}};
  int position = 0;
  for (std::size_t m = 0; m < spec.machines.size(); ++m) {
    if (m > 0 && spec.machines[m].gpus_per_slot != spec.machines[m - 1].gpus_per_slot) position = 0;
    if (position % k == 0) out.machines.push_back(spec.machines[m]);
    ++position;
  }
  return out;
}

ClusterSpec truth_telling_cluster() {
  ClusterSpec spec{"truth-telling-64", {}};
  spec.machines.push_back({"g8-01", "rack0", {2, 2, 2, 2}});
  for (int m = 1; m <= 28; ++m) {
    std::string num = std::to_string(m);
    if (num.size() < 2) num = "0" + num;
    spec.machines.push_back({"g2-" + num, "rack0", {2}});
  }
  return spec;
}

std::vector<AppSpec> truth_telling_workload() {
  const ModelInfo* vgg = find_model("VGG16");
  std::vector<AppSpec> apps;
  for (int a = 0; a < 8; ++a) {
    AppSpec app;
    app.name = "tt-" + std::to_string(a);
    for (int j = 0; j < 2; ++j) {
      JobSpec job;
      job.model = vgg->name;
      job.slowdown = vgg->slowdown;
      job.gpus = 8;
      job.serial_iter_time = 1;
      job.iterations = 8 * 4 * 3600;
      app.jobs.push_back(job);
    }
    apps.push_back(std::move(app));
  }
  return apps;
}


// Fig 18's liar (sweep --liar): the app named `choice`, the app of that index, or ("random") one drawn with `seed` among
// the apps with a multi-GPU job (a lie about spread placements changes nothing for the others).
AppId choose_liar(const std::vector<AppSpec>& apps, const std::string& choice, std::uint64_t seed) {
  for (std::size_t i = 0; i < apps.size(); ++i)
    if (apps[i].name == choice) return static_cast<AppId>(i);
  if (choice == "random") {
    std::vector<AppId> candidates;
    for (std::size_t i = 0; i < apps.size(); ++i)
      for (const JobSpec& j : apps[i].jobs)
        if (j.gpus > 1) {
          candidates.push_back(static_cast<AppId>(i));
          break;
        }
    if (candidates.empty()) throw std::invalid_argument("--liar random: no app has a multi-GPU job");
    Rng rng(seed ^ 0x6c696172ULL);  // its own stream: the liar does not move the policy's draws
    return candidates[static_cast<std::size_t>(rng.below(candidates.size()))];
  }
  std::size_t end = 0;
  long index = -1;
  try {
    index = std::stol(choice, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  if (end != choice.size() || index < 0 || static_cast<std::size_t>(index) >= apps.size()) {
    throw std::invalid_argument("--liar: '" + choice + "' is neither an app's name nor an index in 0.." +
                                std::to_string(apps.size() - 1) + ", nor 'random'");
  }
  return static_cast<AppId>(index);
}

LieEffect lie_effect(std::span<const AppResult> apps, AppId liar, const std::map<AppId, Seconds>& first) {
  const auto change = [&](const AppResult& a) -> std::optional<double> {
    const auto it = first.find(a.id);
    if (it == first.end() || it->second <= 0) return std::nullopt;
    return (a.jct - it->second) / it->second;
  };
  std::optional<double> liar_change;
  std::vector<double> others;
  for (const AppResult& a : apps) {
    const auto c = change(a);
    if (!c) continue;
    if (a.id == liar) liar_change = c;
    else others.push_back(*c);
  }
  LieEffect e;
  if (others.empty() || !liar_change) return e;
  const auto more = std::count_if(others.begin(), others.end(), [&](double c) { return c < *liar_change; });
  e.others_gained_more = static_cast<double>(more) / static_cast<double>(others.size());
  for (double& c : others) c = std::abs(c);
  const auto mid = others.begin() + static_cast<std::ptrdiff_t>(others.size() / 2);
  std::nth_element(others.begin(), mid, others.end());
  e.others_median_abs_change = *mid;
  return e;
}

}  // namespace themis::sim
