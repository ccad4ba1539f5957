#include "bidder/bid_generator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "bidder/input_checks.h"

namespace themis::bidder {
namespace {

constexpr const char* kWhere = "bid generation";

// Offered GPUs of one slot / machine: a contiguous range of the (sorted) offer, because the cluster
// numbers GPUs machine by machine and slot by slot.
struct SlotGroup {
  int slot = 0;
  int begin = 0, end = 0;  // positions in the offer
  int size() const { return end - begin; }
};
struct MachineGroup {
  int machine = 0, rack = 0;
  int begin = 0, end = 0;
  int first_slot = 0, last_slot = 0;  // range in the slot-group list
  int max_slot = 0;                   // most offered GPUs in one of its slots
  int size() const { return end - begin; }
};
struct RackGroup {
  int rack = 0;
  int size = 0;
  int max_machine = 0;
  std::vector<int> machines;  // machine-group indices
};

// Where the held GPUs are: their common slot / machine / rack, -1 where they span more than one.
struct HeldSpan {
  bool any = false;
  int slot = -1, machine = -1, rack = -1;
};

enum class Level : int { kSlot = 0, kMachine = 1, kRack = 2, kCross = 3 };

struct Candidate {
  Locality placement = Locality::kSameSlot;
  Level level = Level::kSlot;
  int group = 0;   // index into the slot / machine / rack group lists (0 for cross)
  int chunks = 0;  // disjoint bundles of k it can give
  int slack = 0;   // offered GPUs it has beyond k
};

struct Pick {
  int count = 0;
  Candidate candidate;
  int chunk = 0;
  double rho = 0;
  Locality placement = Locality::kSameSlot;  // what ρ is priced at: the bundle's span, or its gangs' (Cluster::gang_locality)
};

class Generator {
 public:
  Generator(const Cluster& cluster, const Offer& offer, const BidRequest& request)
      : cluster_(cluster), offer_(offer.gpus) {
    index_offer();
    locate_held(request.held);
  }

  int offered() const { return static_cast<int>(offer_.size()); }

  // The best `limit` (candidate, chunk) bundles of `k` GPUs, best first.
  std::vector<std::pair<Candidate, int>> best_bundles(int k, int limit) const {
    std::vector<Candidate> c;
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
      const SlotGroup& s = slots_[static_cast<std::size_t>(i)];
      if (s.size() >= k) {
        const MachineGroup& m = machine_of_slot(i);
        c.push_back({placement(Level::kSlot, s.slot, m.machine, m.rack), Level::kSlot, i, s.size() / k,
                     s.size() - k});
      }
    }
    for (int i = 0; i < static_cast<int>(machines_.size()); ++i) {
      const MachineGroup& m = machines_[static_cast<std::size_t>(i)];
      if (m.size() >= k && m.max_slot < k)
        c.push_back({placement(Level::kMachine, -1, m.machine, m.rack), Level::kMachine, i, m.size() / k,
                     m.size() - k});
    }
    int max_rack = 0;
    for (int i = 0; i < static_cast<int>(racks_.size()); ++i) {
      const RackGroup& r = racks_[static_cast<std::size_t>(i)];
      max_rack = std::max(max_rack, r.size);
      if (r.size >= k && r.max_machine < k)
        c.push_back({placement(Level::kRack, -1, -1, r.rack), Level::kRack, i, r.size / k, r.size - k});
    }
    if (offered() >= k && max_rack < k)
      c.push_back({placement(Level::kCross, -1, -1, -1), Level::kCross, 0, offered() / k, offered() - k});

    auto better = [](const Candidate& x, const Candidate& y) {
      if (x.placement != y.placement) return x.placement < y.placement;
      if (x.level != y.level) return x.level < y.level;
      if (x.slack != y.slack) return x.slack < y.slack;
      return x.group < y.group;
    };
    // An emitted bundle's candidate is always among the first `limit` in this order (see below).
    const auto head = std::min<std::size_t>(c.size(), static_cast<std::size_t>(limit));
    std::partial_sort(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(head), c.end(), better);
    c.resize(head);

    // Within one placement level: the first bundle of every group, then the second, and so on.
    std::vector<std::pair<Candidate, int>> out;
    for (std::size_t run = 0; run < c.size() && static_cast<int>(out.size()) < limit;) {
      std::size_t run_end = run;
      while (run_end < c.size() && c[run_end].placement == c[run].placement) ++run_end;
      for (int chunk = 0; static_cast<int>(out.size()) < limit; ++chunk) {
        bool any = false;
        for (std::size_t i = run; i < run_end && static_cast<int>(out.size()) < limit; ++i) {
          if (c[i].chunks > chunk) {
            out.emplace_back(c[i], chunk);
            any = true;
          }
        }
        if (!any) break;
      }
      run = run_end;
    }
    return out;
  }

  // The GPUs of bundle `chunk` (positions chunk·k .. chunk·k + k − 1 of the group's fill order), sorted.
  std::vector<GpuIndex> bundle(const Candidate& c, int chunk, int k) const {
    std::vector<GpuIndex> fill;
    const std::size_t need = static_cast<std::size_t>((chunk + 1) * k);
    switch (c.level) {
      case Level::kSlot: fill_slot(c.group, need, fill); break;
      case Level::kMachine: fill_machine(c.group, need, fill); break;
      case Level::kRack: fill_rack(c.group, need, fill); break;
      case Level::kCross: fill_cross(need, fill); break;
    }
    std::vector<GpuIndex> out(fill.begin() + static_cast<std::ptrdiff_t>(chunk * k),
                              fill.begin() + static_cast<std::ptrdiff_t>(need));
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  void index_offer() {
    rack_of_.assign(cluster_.racks().size(), -1);
    for (std::size_t p = 0; p < offer_.size(); ++p) {
      const GpuIndex g = offer_[p];
      if (g < 0 || g >= cluster_.size())
        detail::reject(kWhere, "offer.gpus[" + std::to_string(p) + "]",
                       "a GPU of the cluster (0 .. " + std::to_string(cluster_.size() - 1) + ")", g);
      if (p > 0 && g <= offer_[p - 1])
        detail::reject(kWhere, "offer.gpus[" + std::to_string(p) + "]", "sorted and distinct (after " +
                                                                             std::to_string(offer_[p - 1]) + ")",
                       g);
      const Gpu& gpu = cluster_.gpu(g);
      const int pos = static_cast<int>(p);
      if (machines_.empty() || machines_.back().machine != gpu.machine) {
        machines_.push_back({gpu.machine, gpu.rack, pos, pos, static_cast<int>(slots_.size()),
                             static_cast<int>(slots_.size()), 0});
      }
      if (slots_.empty() || slots_.back().slot != gpu.slot) {
        slots_.push_back({gpu.slot, pos, pos});
        machines_.back().last_slot = static_cast<int>(slots_.size());
      }
      ++slots_.back().end;
      MachineGroup& m = machines_.back();
      ++m.end;
      m.max_slot = std::max(m.max_slot, slots_.back().size());
    }
    for (std::size_t i = 0; i < machines_.size(); ++i) {
      const MachineGroup& m = machines_[i];
      int& r = rack_of_[static_cast<std::size_t>(m.rack)];
      if (r < 0) {
        r = static_cast<int>(racks_.size());
        racks_.push_back({m.rack, 0, 0, {}});
      }
      RackGroup& rack = racks_[static_cast<std::size_t>(r)];
      rack.size += m.size();
      rack.max_machine = std::max(rack.max_machine, m.size());
      rack.machines.push_back(static_cast<int>(i));
    }
    slot_machine_.resize(slots_.size());
    for (std::size_t i = 0; i < machines_.size(); ++i)
      for (int s = machines_[i].first_slot; s < machines_[i].last_slot; ++s)
        slot_machine_[static_cast<std::size_t>(s)] = static_cast<int>(i);
  }

  void locate_held(std::span<const GpuIndex> held) {
    std::vector<GpuIndex> sorted(held.begin(), held.end());
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      const GpuIndex g = sorted[i];
      if (g < 0 || g >= cluster_.size())
        detail::reject(kWhere, "held", "GPUs of the cluster (0 .. " + std::to_string(cluster_.size() - 1) + ")", g);
      if (i > 0 && g == sorted[i - 1]) detail::reject(kWhere, "held", "distinct GPUs; listed twice", g);
      if (std::binary_search(offer_.begin(), offer_.end(), g))
        detail::reject(kWhere, "held", "GPUs not in the offer; offered", g);
      const Gpu& gpu = cluster_.gpu(g);
      if (!held_.any) {
        held_ = {true, gpu.slot, gpu.machine, gpu.rack};
        continue;
      }
      if (gpu.slot != held_.slot) held_.slot = -1;
      if (gpu.machine != held_.machine) held_.machine = -1;
      if (gpu.rack != held_.rack) held_.rack = -1;
    }
  }

  const MachineGroup& machine_of_slot(int slot_group) const {
    return machines_[static_cast<std::size_t>(slot_machine_[static_cast<std::size_t>(slot_group)])];
  }

  // The widest level spanned by held ∪ (k GPUs of a group at `level` within slot/machine/rack). The
  // group's own level is exact: a machine group is used only when no slot in it has k offered GPUs,
  // so its bundles span two slots or more (likewise for racks and the cross-rack group).
  Locality placement(Level level, int slot, int machine, int rack) const {
    if (!held_.any) return static_cast<Locality>(level);
    if (held_.rack < 0 || level == Level::kCross || rack != held_.rack) return Locality::kCrossRack;
    if (held_.machine < 0 || level == Level::kRack || machine != held_.machine) return Locality::kSameRack;
    if (held_.slot < 0 || level == Level::kMachine || slot != held_.slot) return Locality::kSameMachine;
    return Locality::kSameSlot;
  }

  void fill_slot(int s, std::size_t need, std::vector<GpuIndex>& fill) const {
    const SlotGroup& g = slots_[static_cast<std::size_t>(s)];
    for (int p = g.begin; p < g.end && fill.size() < need; ++p) fill.push_back(offer_[static_cast<std::size_t>(p)]);
  }

  void fill_machine(int m, std::size_t need, std::vector<GpuIndex>& fill) const {
    const MachineGroup& g = machines_[static_cast<std::size_t>(m)];
    std::vector<int> order;
    for (int s = g.first_slot; s < g.last_slot; ++s) order.push_back(s);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      const SlotGroup& x = slots_[static_cast<std::size_t>(a)];
      const SlotGroup& y = slots_[static_cast<std::size_t>(b)];
      const bool xh = x.slot == held_.slot, yh = y.slot == held_.slot;
      if (xh != yh) return xh;
      if (x.size() != y.size()) return x.size() > y.size();
      return a < b;
    });
    for (int s : order) {
      if (fill.size() >= need) return;
      fill_slot(s, need, fill);
    }
  }

  void fill_rack(int r, std::size_t need, std::vector<GpuIndex>& fill) const {
    std::vector<int> order = racks_[static_cast<std::size_t>(r)].machines;
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      const MachineGroup& x = machines_[static_cast<std::size_t>(a)];
      const MachineGroup& y = machines_[static_cast<std::size_t>(b)];
      const bool xh = x.machine == held_.machine, yh = y.machine == held_.machine;
      if (xh != yh) return xh;
      if (x.size() != y.size()) return x.size() > y.size();
      return a < b;
    });
    for (int m : order) {
      if (fill.size() >= need) return;
      fill_machine(m, need, fill);
    }
  }

  void fill_cross(std::size_t need, std::vector<GpuIndex>& fill) const {
    std::vector<int> order(racks_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      const RackGroup& x = racks_[static_cast<std::size_t>(a)];
      const RackGroup& y = racks_[static_cast<std::size_t>(b)];
      const bool xh = x.rack == held_.rack, yh = y.rack == held_.rack;
      if (xh != yh) return xh;
      if (x.size != y.size) return x.size > y.size;
      return a < b;
    });
    for (int r : order) {
      if (fill.size() >= need) return;
      fill_rack(r, need, fill);
    }
  }

  const Cluster& cluster_;
  const std::vector<GpuIndex>& offer_;
  std::vector<SlotGroup> slots_;
  std::vector<int> slot_machine_;
  std::vector<MachineGroup> machines_;
  std::vector<RackGroup> racks_;
  std::vector<int> rack_of_;  // cluster rack -> rack-group index
  HeldSpan held_;
};

// `k` offered GPUs none of which is on machine `avoid`: fullest machines first, each from its fullest
// slots; empty if the other machines hold fewer than k.
std::vector<GpuIndex> spread_bundle(const Cluster& cluster, const std::vector<GpuIndex>& offer, int avoid, int k) {
  std::vector<std::vector<GpuIndex>> machines(cluster.machines().size());
  for (GpuIndex g : offer)
    if (cluster.gpu(g).machine != avoid) machines[static_cast<std::size_t>(cluster.gpu(g).machine)].push_back(g);
  std::stable_sort(machines.begin(), machines.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  std::vector<GpuIndex> out;
  for (auto& gpus : machines) {
    std::map<int, std::vector<GpuIndex>> slots;
    for (GpuIndex g : gpus) slots[cluster.gpu(g).slot].push_back(g);
    std::vector<std::vector<GpuIndex>> ordered;
    for (auto& [slot, members] : slots) ordered.push_back(std::move(members));
    std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
    for (const auto& members : ordered)
      for (GpuIndex g : members)
        if (static_cast<int>(out.size()) < k) out.push_back(g);
  }
  if (static_cast<int>(out.size()) < k) return {};
  std::sort(out.begin(), out.end());
  return out;
}


// Within each run of rows of one count and one ρ, the rows naming more of `renewing` first (stable).
void keep_renewed_gpus_first(std::vector<BidRow>& rows, std::span<const GpuIndex> offer, std::span<const GpuIndex> renewing) {
  std::vector<GpuIndex> own(renewing.begin(), renewing.end());
  std::sort(own.begin(), own.end());
  for (GpuIndex g : own)
    if (!std::binary_search(offer.begin(), offer.end(), g))
      detail::reject(kWhere, "renewing", "GPUs of the offer (those whose lease ends this round)", g);
  const auto named = [&](const BidRow& row) {
    return std::count_if(row.gpus.begin(), row.gpus.end(), [&](GpuIndex g) { return std::binary_search(own.begin(), own.end(), g); });
  };
  for (std::size_t begin = 0; begin < rows.size();) {
    std::size_t end = begin + 1;
    while (end < rows.size() && rows[end].gpus.size() == rows[begin].gpus.size() && rows[end].rho == rows[begin].rho) ++end;
    std::stable_sort(rows.begin() + static_cast<std::ptrdiff_t>(begin), rows.begin() + static_cast<std::ptrdiff_t>(end),
                     [&](const BidRow& a, const BidRow& b) { return named(a) > named(b); });
    begin = end;
  }
}

}  // namespace

ShapeScope widest_scope(Locality placement, double rho, const std::function<double(Locality)>& rho_at) {
  // The same count per slot spans the same slots, hence the same placement: always the same ρ.
  ShapeScope scope = ShapeScope::kSlot;
  for (int s = static_cast<int>(ShapeScope::kMachine); s <= static_cast<int>(ShapeScope::kAnywhere); ++s) {
    // Spanning several groups of this level already (placement >= the level that means so), every
    // realization spans the same groups. Otherwise it may land anywhere within one such group, from
    // one slot up, and ρ must be the same at each of those placements.
    const bool spans_several = s <= kLocalityLevels - 1 && static_cast<int>(placement) >= s;
    bool same = true;
    if (!spans_several)
      for (int level = 0; level <= std::min(s - 1, kLocalityLevels - 1) && same; ++level)
        same = level == static_cast<int>(placement) || rho_at(static_cast<Locality>(level)) == rho;
    if (!same) break;
    scope = static_cast<ShapeScope>(s);
  }
  return scope;
}

std::vector<int> bid_counts(int max_count, const BidSettings& settings) {
  detail::require_at_least(kWhere, "settings.max_rows", settings.max_rows, 1);
  detail::require_at_least(kWhere, "settings.dense_counts", settings.dense_counts, 0);
  std::vector<int> counts;
  if (max_count <= 0) return counts;
  for (int k = 1; k <= std::min(max_count, settings.dense_counts); ++k) counts.push_back(k);
  for (long p = 1; p < max_count; p *= 2)
    if (p > settings.dense_counts) counts.push_back(static_cast<int>(p));
  if (counts.empty() || counts.back() != max_count) counts.push_back(max_count);
  const auto rows = static_cast<std::size_t>(settings.max_rows);
  if (counts.size() > rows) {  // keep max_rows counts spread evenly, the largest among them
    std::vector<int> thinned;
    for (std::size_t i = 0; i < rows; ++i) {
      const std::size_t at = rows == 1 ? counts.size() - 1 : (i * (counts.size() - 1) + (rows - 1) / 2) / (rows - 1);
      if (thinned.empty() || thinned.back() != counts[at]) thinned.push_back(counts[at]);
    }
    counts = std::move(thinned);
  }
  return counts;
}

Bid generate_bid(const Cluster& cluster, const Offer& offer, const BidRequest& request,
                 const Valuation& valuation, const BidSettings& settings) {
  detail::require_non_negative(kWhere, "remaining_demand", request.remaining_demand);
  detail::require_positive(kWhere, "rho_no_new", request.rho_no_new);
  if (!valuation) throw std::invalid_argument("bid generation: valuation is empty");
  const Generator generator(cluster, offer, request);  // validates offer and held
  const std::vector<int> counts = bid_counts(std::min(request.remaining_demand, generator.offered()), settings);

  Bid bid{request.app, request.rho_no_new, {}};
  if (counts.empty()) return bid;
  const int held = static_cast<int>(request.held.size());
  const int per_count = settings.max_rows - static_cast<int>(counts.size()) + 1;

  // ρ depends only on (count, placement): at most 4 valuations per count.
  std::vector<std::array<double, kLocalityLevels>> rho(counts.size());
  std::vector<std::vector<Pick>> picks(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    rho[i].fill(0);
    for (const auto& [candidate, chunk] : generator.best_bundles(counts[i], per_count)) {
      // New GPUs that start whole gangs of their own (request.gang, nothing held placing them) run each
      // gang inside the narrowest group that holds it: a bundle spread over machines whose gangs each fit
      // on one machine is priced at one machine. Its scope follows from that price, not from the bundle's span:
      // the same count per machine keeps each gang inside a machine (widest_scope below).
      Locality placement = candidate.placement;
      if (request.gang > 1 && request.held.empty() && counts[i] >= 2 * request.gang && placement > Locality::kSameSlot)
        placement = std::min(placement, cluster.gang_locality(generator.bundle(candidate, chunk, counts[i]), request.gang));
      double& value = rho[i][static_cast<std::size_t>(placement)];
      if (value == 0) {
        value = valuation(held + counts[i], placement);
        if (!(std::isfinite(value) && value > 0))
          throw std::invalid_argument("bid generation: valuation(" + std::to_string(held + counts[i]) + ", " +
                                      std::string(to_string(placement)) + ") returned " +
                                      detail::format_number(value) + "; it must be > 0 and finite");
      }
      if (settings.drop_non_improving && value >= request.rho_no_new) continue;
      picks[i].push_back({counts[i], candidate, chunk, value, placement});
    }
  }

  // Every count's best bundle first, then the next best of each count in turn, up to max_rows.
  std::vector<std::vector<const Pick*>> chosen(counts.size());
  int rows = 0;
  for (std::size_t rank = 0; rows < settings.max_rows; ++rank) {
    bool any = false;
    for (std::size_t i = 0; i < counts.size() && rows < settings.max_rows; ++i) {
      if (rank < picks[i].size()) {
        chosen[i].push_back(&picks[i][rank]);
        ++rows;
        any = true;
      }
    }
    if (!any) break;
  }
  // Rows in order; `spare` marks alternatives that make room for a spread row when max_rows is reached.
  std::vector<char> spare;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const auto rho_at = [&](Locality level) { return valuation(held + counts[i], level); };
    for (std::size_t n = 0; n < chosen[i].size(); ++n) {
      const Pick* p = chosen[i][n];
      bid.rows.push_back({generator.bundle(p->candidate, p->chunk, p->count), p->rho,
                          widest_scope(p->placement, p->rho, rho_at)});
      spare.push_back(n > 0 ? 1 : 0);
      if (n > 0) continue;
      // The best bundle fills one machine: an app whose ρ is the same spread over other machines
      // says so, so that an app that needs the machine whole can win it (Themis Figure 5).
      const BidRow& best = bid.rows.back();
      std::vector<GpuIndex> spread = spread_bundle(cluster, offer.gpus, cluster.gpu(best.gpus.front()).machine, counts[i]);
      if (spread.empty()) continue;
      std::vector<GpuIndex> all(request.held.begin(), request.held.end());
      all.insert(all.end(), spread.begin(), spread.end());
      const Locality placement = cluster.locality(all);
      if (placement <= p->candidate.placement || rho_at(placement) != p->rho) continue;
      const bool named = std::any_of(chosen[i].begin(), chosen[i].end(), [&](const Pick* q) {
        return generator.bundle(q->candidate, q->chunk, q->count) == spread;
      });
      if (named) continue;
      bid.rows.push_back({std::move(spread), p->rho, widest_scope(placement, p->rho, rho_at)});
      spare.push_back(0);
    }
  }
  for (std::size_t r = bid.rows.size(); r-- > 0 && static_cast<int>(bid.rows.size()) > settings.max_rows;) {
    if (spare[r] == 0) continue;
    bid.rows.erase(bid.rows.begin() + static_cast<std::ptrdiff_t>(r));
    spare.erase(spare.begin() + static_cast<std::ptrdiff_t>(r));
  }
  if (!request.renewing.empty()) keep_renewed_gpus_first(bid.rows, offer.gpus, request.renewing);
  return bid;
}

}  // namespace themis::bidder
