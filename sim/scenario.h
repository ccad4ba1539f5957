#pragma once
// Hand-written scenario files (tests/scenarios/NNNN_name.scenario): a tiny cluster, the policies to
// run, an optional lease, and apps as trace lines. Directive lines:
//   cluster: m0=4 m1=2      machines (name=GPUs), one slot each, all in one rack
//   policies: gandiva max-min
//   lease: 600
// Every other non-comment line is an app in the trace format (docs/trace-format.md).
// The matching .expected file holds "<policy> <app> jct <seconds>" lines.
#include <filesystem>
#include <string>
#include <vector>

#include "core/topology.h"
#include "sim/trace.h"

namespace themis::sim {

struct Scenario {
  ClusterSpec cluster;
  std::vector<std::string> policies;
  Seconds lease = 600;
  std::vector<AppSpec> apps;
};

struct ExpectedJct {
  std::string policy;
  std::string app;
  Seconds jct = 0;
};

// Errors are TraceError "file:line: field: reason".
Scenario parse_scenario(std::string_view text, std::string_view source_name);
Scenario load_scenario(const std::filesystem::path& path);
std::vector<ExpectedJct> load_expected(const std::filesystem::path& path);

}  // namespace themis::sim
