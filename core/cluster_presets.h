#pragma once
// Built-in clusters from the Themis paper. Rack layouts are ours (the paper gives none): machines are
// dealt round-robin over racks so that every rack holds the same mix of machine types.
//
//   paper-testbed-64   §6.1 testbed: 8 NC12 (one K80 card = 1 slot of 2 GPUs) + 12 NC24 (2 K80 cards =
//                      2 slots of 2 GPUs); 64 GPUs, 20 machines, 4 racks of 16 GPUs.
//   paper-footnote-168 footnote 6 as written: 16 machines of 8 GPUs (4 slots x 2), 6 of 4 GPUs
//                      (4 slots x 1), 16 of 1 GPU; 168 GPUs, 38 machines, 4 racks.
//   paper-256          the same mix scaled to 256 GPUs: 24 x 8, 9 x 4, 28 x 1; 61 machines, 8 racks.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/topology.h"

namespace themis {

std::vector<std::string> cluster_preset_names();
std::optional<ClusterSpec> cluster_preset(std::string_view name);

}  // namespace themis
