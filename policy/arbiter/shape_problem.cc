#include "policy/arbiter/shape_problem.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace themis::arbiter {

namespace {

constexpr int kOfferLevel = 4;
constexpr int kRackLevel = 3;

int group_key(const Cluster& cluster, GpuIndex g, int level) {
  const Gpu& gpu = cluster.gpu(g);
  switch (level) {
    case 0: return g;
    case 1: return gpu.slot;
    case 2: return gpu.machine;
    case 3: return gpu.rack;
    default: return 0;
  }
}

}  // namespace

ShapeProblem make_shape_problem(const Cluster& cluster, const Offer& offer, std::span<const Bid> bids,
                                int max_rows) {
  ShapeProblem out;
  // Groups top down, so a parent always precedes its children.
  std::map<std::pair<int, int>, int> index;  // (level, key) -> group
  std::vector<std::vector<int>> gpu_groups(offer.gpus.size());  // per offered GPU: its group per level
  for (std::size_t i = 0; i < offer.gpus.size(); ++i) gpu_groups[i].assign(kOfferLevel + 1, -1);
  for (int level = kOfferLevel; level >= 0; --level) {
    for (std::size_t i = 0; i < offer.gpus.size(); ++i) {
      const GpuIndex g = offer.gpus[i];
      const auto [it, fresh] = index.try_emplace({level, group_key(cluster, g, level)},
                                                 static_cast<int>(out.groups.size()));
      if (fresh)
        out.groups.push_back({level, level == kOfferLevel ? -1 : gpu_groups[i][static_cast<std::size_t>(level + 1)], {}});
      out.groups[static_cast<std::size_t>(it->second)].gpus.push_back(g);
      gpu_groups[i][static_cast<std::size_t>(level)] = it->second;
    }
  }

  struct ShapedRow {
    int source_row;
    double gain;
    std::vector<ShapeDemand> demands;
  };
  std::vector<std::vector<ShapedRow>> shaped(bids.size());
  for (std::size_t b = 0; b < bids.size(); ++b) {
    const Bid& bid = bids[b];
    for (std::size_t r = 0; r < bid.rows.size(); ++r) {
      const BidRow& row = bid.rows[r];
      const double gain = std::log(bid.rho_no_new) - std::log(row.rho);
      if (!(gain > 0) || !std::isfinite(gain)) continue;
      const auto level = static_cast<std::size_t>(std::clamp(static_cast<int>(row.scope), 0, kOfferLevel));
      std::map<int, int> counts;
      for (GpuIndex g : row.gpus) {
        const auto pos = std::lower_bound(offer.gpus.begin(), offer.gpus.end(), g) - offer.gpus.begin();
        ++counts[gpu_groups[static_cast<std::size_t>(pos)][level]];
      }
      ShapedRow s{static_cast<int>(r), gain, {}};
      for (const auto& [group, count] : counts) s.demands.push_back({group, count});
      shaped[b].push_back(std::move(s));
    }
    auto& rows = shaped[b];
    std::stable_sort(rows.begin(), rows.end(), [](const ShapedRow& x, const ShapedRow& y) { return x.gain > y.gain; });
    std::vector<ShapedRow> distinct;  // the first (highest-gain) row of each shape
    for (ShapedRow& row : rows) {
      const bool seen = std::any_of(distinct.begin(), distinct.end(), [&](const ShapedRow& d) {
        return d.demands.size() == row.demands.size() &&
               std::equal(d.demands.begin(), d.demands.end(), row.demands.begin(),
                          [](const ShapeDemand& x, const ShapeDemand& y) { return x.group == y.group && x.count == y.count; });
      });
      if (!seen) distinct.push_back(std::move(row));
      if (max_rows >= 0 && distinct.size() >= static_cast<std::size_t>(max_rows)) break;
    }
    rows = std::move(distinct);
  }

  // Items: the groups some row draws from directly.
  std::vector<int> item_of(out.groups.size(), -1);
  for (const auto& rows : shaped)
    for (const ShapedRow& row : rows)
      for (const ShapeDemand& d : row.demands) item_of[static_cast<std::size_t>(d.group)] = 0;
  std::map<int, int> rack_index;  // rack group -> its index among the racks holding an item
  for (std::size_t g = 0; g < out.groups.size(); ++g) {
    if (item_of[g] < 0) continue;
    item_of[g] = out.packing.item_count++;
    out.packing.item_capacity.push_back(static_cast<int>(out.groups[g].gpus.size()));
    int rack = static_cast<int>(g);
    while (rack >= 0 && out.groups[static_cast<std::size_t>(rack)].level < kRackLevel)
      rack = out.groups[static_cast<std::size_t>(rack)].parent;
    const bool in_rack = rack >= 0 && out.groups[static_cast<std::size_t>(rack)].level == kRackLevel;
    out.packing.item_rack.push_back(
        in_rack ? rack_index.try_emplace(rack, static_cast<int>(rack_index.size())).first->second : -1);
  }
  out.demands.resize(bids.size());
  for (std::size_t b = 0; b < bids.size(); ++b) {
    PackingBidder bidder{bids[b].app, {}};
    for (ShapedRow& row : shaped[b]) {
      PackingRow packed{row.source_row, row.gain, {}};
      for (const ShapeDemand& d : row.demands)
        for (int g = d.group; g >= 0; g = out.groups[static_cast<std::size_t>(g)].parent)
          if (item_of[static_cast<std::size_t>(g)] >= 0) packed.items.insert(packed.items.end(), static_cast<std::size_t>(d.count), item_of[static_cast<std::size_t>(g)]);
      std::sort(packed.items.begin(), packed.items.end());
      bidder.rows.push_back(std::move(packed));
      out.demands[b].push_back(std::move(row.demands));
    }
    out.packing.bidders.push_back(std::move(bidder));
  }
  // A problem whose items all hold one GPU is the concrete one: keep it unit so every solver takes it.
  if (std::all_of(out.packing.item_capacity.begin(), out.packing.item_capacity.end(), [](int c) { return c == 1; }))
    out.packing.item_capacity.clear();
  return out;
}

}  // namespace themis::arbiter
