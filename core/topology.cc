#include "core/topology.h"

#include <map>
#include <set>
#include <stdexcept>

namespace themis {

std::string_view to_string(Locality locality) {
  switch (locality) {
    case Locality::kSameSlot: return "slot";
    case Locality::kSameMachine: return "machine";
    case Locality::kSameRack: return "rack";
    case Locality::kCrossRack: return "cross-rack";
  }
  return "unknown";
}

int Machine::gpu_count() const {
  int n = 0;
  for (int g : gpus_per_slot) n += g;
  return n;
}

Cluster::Cluster(const ClusterSpec& spec) : name_(spec.name) {
  std::map<std::string, int> rack_index;
  std::set<std::string> machine_names;
  for (const auto& m : spec.machines) {
    if (m.name.empty()) throw std::invalid_argument("cluster '" + spec.name + "': a machine has no name");
    if (!machine_names.insert(m.name).second)
      throw std::invalid_argument("cluster '" + spec.name + "': machine '" + m.name + "' is listed twice");
    if (m.gpus_per_slot.empty())
      throw std::invalid_argument("machine '" + m.name + "': slots must list at least one slot");
    auto [it, added] = rack_index.try_emplace(m.rack, static_cast<int>(racks_.size()));
    if (added) racks_.push_back(Rack{m.rack, {}});
    const int machine = static_cast<int>(machines_.size());
    racks_[static_cast<std::size_t>(it->second)].machines.push_back(machine);
    Machine built{m.name, it->second, m.gpus_per_slot, static_cast<GpuIndex>(gpus_.size())};
    for (int per_slot : m.gpus_per_slot) {
      if (per_slot <= 0)
        throw std::invalid_argument("machine '" + m.name + "': every slot needs at least one GPU, got " +
                                    std::to_string(per_slot));
      for (int k = 0; k < per_slot; ++k)
        gpus_.push_back(Gpu{static_cast<GpuIndex>(gpus_.size()), slot_count_, machine, it->second});
      ++slot_count_;
    }
    machines_.push_back(std::move(built));
  }
  if (gpus_.empty()) throw std::invalid_argument("cluster '" + spec.name + "' has no GPUs");
}

Locality Cluster::locality(std::span<const GpuIndex> bundle) const {
  if (bundle.size() <= 1) return Locality::kSameSlot;
  const Gpu& first = gpu(bundle[0]);
  Locality widest = Locality::kSameSlot;
  for (GpuIndex i : bundle.subspan(1)) {
    const Gpu& g = gpu(i);
    if (g.rack != first.rack) return Locality::kCrossRack;
    if (g.machine != first.machine) widest = Locality::kSameRack;
    else if (g.slot != first.slot && widest < Locality::kSameMachine) widest = Locality::kSameMachine;
  }
  return widest;
}

Locality Cluster::gang_locality(std::span<const GpuIndex> bundle, int gang) const {
  if (gang <= 1) return Locality::kSameSlot;
  const int gangs = static_cast<int>(bundle.size()) / gang;
  if (gangs == 0) return Locality::kSameSlot;
  for (int level = 0; level < kLocalityLevels - 1; ++level) {
    std::map<int, int> per_group;
    for (GpuIndex g : bundle) {
      const Gpu& one = gpu(g);
      ++per_group[level == 0 ? one.slot : level == 1 ? one.machine : one.rack];
    }
    int fit = 0;
    for (const auto& entry : per_group) fit += entry.second / gang;
    if (fit >= gangs) return static_cast<Locality>(level);
  }
  return Locality::kCrossRack;
}

Locality Cluster::tightest_locality(int gpus) const {
  if (gpus <= 1) return Locality::kSameSlot;
  for (const Machine& m : machines_)
    for (int slot : m.gpus_per_slot)
      if (slot >= gpus) return Locality::kSameSlot;
  for (const Machine& m : machines_)
    if (m.gpu_count() >= gpus) return Locality::kSameMachine;
  for (const Rack& r : racks_) {
    int total = 0;
    for (int m : r.machines) total += machines_[static_cast<std::size_t>(m)].gpu_count();
    if (total >= gpus) return Locality::kSameRack;
  }
  return Locality::kCrossRack;
}

std::string Cluster::gpu_name(GpuIndex i) const {
  const Gpu& g = gpu(i);
  const Machine& m = machines_[static_cast<std::size_t>(g.machine)];
  return m.name + "/gpu" + std::to_string(i - m.first_gpu);
}

}  // namespace themis
