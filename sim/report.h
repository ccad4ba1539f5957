#pragma once
// Output of themis-sim: JSON for machines (stable keys, fixed formatting so that the same seed gives
// byte-identical output) and aligned tables for people.
#include <string>
#include <vector>

#include "sim/metrics.h"

namespace themis::sim {

std::string run_json(const SimResult& result, const RunSummary& summary);
std::string run_table(const SimResult& result, const RunSummary& summary);
std::string compare_json(const std::vector<RunSummary>& summaries);
std::string compare_table(const std::vector<RunSummary>& summaries);
// {"max_rho":..,"gpu_time":..,...}: the per-policy summary object used in both JSON outputs.
std::string summary_json_object(const RunSummary& summary);

}  // namespace themis::sim
