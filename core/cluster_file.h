#pragma once
// Clusters described in a small TOML file. Format (docs/clusters.md has the full reference):
//
//   name = "lab"
//   [[machine]]               # one machine
//   name = "gpu01"
//   rack = "r1"
//   slots = [2, 2]            # GPUs per slot (PCIe switch / NVLink island)
//
//   [[machine]]               # a group of identical machines: names k80-01 .. k80-12
//   name = "k80-"
//   count = 12
//   racks = ["r1", "r2"]      # spread round-robin over these racks (or one `rack`)
//   slots = [2, 2]
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/topology.h"

namespace themis {

// A cluster file that cannot be used. what() reads "<file>:<line>:<column>: <field>: <reason>"; unknown keys are errors.
class ClusterFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

ClusterSpec parse_cluster_toml(std::string_view text, std::string_view source_name = "<cluster>");
ClusterSpec load_cluster_file(const std::filesystem::path& path);

}  // namespace themis
