#include "core/cluster_presets.h"

namespace themis {
namespace {

struct Group {
  const char* prefix;
  int count;
  std::vector<int> gpus_per_slot;
};

// Deals each group's machines round-robin over `racks` racks, continuing the deal across groups.
ClusterSpec dealt(std::string name, int racks, const std::vector<Group>& groups) {
  ClusterSpec spec{std::move(name), {}};
  int next_rack = 0;
  for (const Group& g : groups) {
    for (int k = 1; k <= g.count; ++k) {
      std::string num = std::to_string(k);
      if (num.size() < 2) num = "0" + num;
      spec.machines.push_back({g.prefix + num, "rack" + std::to_string(next_rack), g.gpus_per_slot});
      next_rack = (next_rack + 1) % racks;
    }
  }
  return spec;
}

}  // namespace

std::vector<std::string> cluster_preset_names() {
  return {"paper-testbed-64", "paper-footnote-168", "paper-256"};
}

std::optional<ClusterSpec> cluster_preset(std::string_view name) {
  if (name == "paper-testbed-64")
    return dealt("paper-testbed-64", 4, {{"nc12-", 8, {2}}, {"nc24-", 12, {2, 2}}});
  if (name == "paper-footnote-168")
    return dealt("paper-footnote-168", 4,
                 {{"g8-", 16, {2, 2, 2, 2}}, {"g4-", 6, {1, 1, 1, 1}}, {"g1-", 16, {1}}});
  if (name == "paper-256")
    return dealt("paper-256", 8, {{"g8-", 24, {2, 2, 2, 2}}, {"g4-", 9, {1, 1, 1, 1}}, {"g1-", 28, {1}}});
  return std::nullopt;
}

}  // namespace themis
