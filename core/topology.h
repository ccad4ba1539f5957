#pragma once
// The cluster's four-level topology: GPU -> slot (PCIe switch / NVLink island) -> machine -> rack.
// A bundle of GPUs is as slow as the widest level it spans (Themis §6.1, architecture.md §3).
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"

namespace themis {

// The widest level a bundle of GPUs spans. Ordered: a larger value is a wider (slower) placement.
enum class Locality : int { kSameSlot = 0, kSameMachine = 1, kSameRack = 2, kCrossRack = 3 };
inline constexpr int kLocalityLevels = 4;
std::string_view to_string(Locality locality);

struct Gpu {
  GpuIndex index = 0;
  int slot = 0;     // cluster-wide slot number
  int machine = 0;  // index into Cluster::machines()
  int rack = 0;     // index into Cluster::racks()
};

struct Machine {
  std::string name;
  int rack = 0;
  std::vector<int> gpus_per_slot;  // e.g. {2,2,2,2}: four slots of two GPUs
  GpuIndex first_gpu = 0;          // the machine's GPUs are first_gpu .. first_gpu + gpu_count() - 1
  int gpu_count() const;
};

struct Rack {
  std::string name;
  std::vector<int> machines;  // indices into Cluster::machines()
};

// Describes a cluster to build. Machines are listed in order; GPUs are numbered machine by machine,
// slot by slot, so that a machine's GPUs are contiguous.
struct ClusterSpec {
  std::string name;
  struct MachineSpec {
    std::string name;
    std::string rack;
    std::vector<int> gpus_per_slot;
  };
  std::vector<MachineSpec> machines;
};

class Cluster {
 public:
  Cluster() = default;
  // Throws std::invalid_argument naming the machine and field if the spec is inconsistent
  // (duplicate machine names, a slot with no GPUs, no GPUs at all).
  explicit Cluster(const ClusterSpec& spec);

  const std::string& name() const { return name_; }
  int size() const { return static_cast<int>(gpus_.size()); }
  const std::vector<Gpu>& gpus() const { return gpus_; }
  const Gpu& gpu(GpuIndex i) const { return gpus_.at(static_cast<std::size_t>(i)); }
  const std::vector<Machine>& machines() const { return machines_; }
  const std::vector<Rack>& racks() const { return racks_; }
  int slot_count() const { return slot_count_; }

  // The widest level spanned by `bundle`. An empty or one-GPU bundle is kSameSlot.
  Locality locality(std::span<const GpuIndex> bundle) const;
  // The narrowest level at which some group of this cluster holds `gpus` GPUs: the best placement a
  // gang of that width can ever get here (kCrossRack when no rack holds it). 0 or 1 GPU: kSameSlot.
  Locality tightest_locality(int gpus) const;
  // The widest level one of `gang`-GPU gangs spans when `bundle` is split into as many whole gangs as it holds,
  // each inside the narrowest group that can hold it (slot, then machine, then rack): the level at which a
  // gang app's new GPUs run, since its gangs do not talk to each other. gang <= 1 or fewer GPUs than one
  // gang: kSameSlot.
  Locality gang_locality(std::span<const GpuIndex> bundle, int gang) const;
  // Human-readable name of a GPU: "<machine>/gpu<k>" with k the GPU's number within its machine.
  std::string gpu_name(GpuIndex i) const;

 private:
  std::string name_;
  std::vector<Gpu> gpus_;
  std::vector<Machine> machines_;
  std::vector<Rack> racks_;
  int slot_count_ = 0;
};

}  // namespace themis
