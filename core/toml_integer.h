#pragma once
// A TOML integer, or nothing. Not toml::node::value<int64_t>(): that also converts a float, and casts one outside
// int64's range (slots = [2, 2.2e35]) before checking it, which is undefined behaviour (found by cluster_file_fuzz).
#include <cstdint>
#include <optional>

#include <toml++/toml.h>

namespace themis {

inline std::optional<std::int64_t> toml_integer(const toml::node& node) {
  if (const auto* v = node.as_integer()) return v->get();
  return std::nullopt;
}

}  // namespace themis
