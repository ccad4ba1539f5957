// Fuzzes the cluster-file TOML parser (core/cluster_file.h). A rejected file must throw ClusterFileError
// only; an accepted one must build a Cluster.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/cluster_file.h"
#include "core/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto spec = themis::parse_cluster_toml(text, "fuzz.toml");
    const themis::Cluster cluster(spec);
    (void)cluster.size();
  } catch (const themis::ClusterFileError&) {
  }
  return 0;
}
