#pragma once
// Feasibility (docs/app-spec.md "Apps the cluster cannot run"): whether one job of an app can ever get
// its GPUs on the registered cluster. A job's ranks may span hosts (a gang rendezvous over the network)
// and app specs carry no placement constraint, so the largest placement one job can get is every GPU of
// every registered host, down ones included (a host that is down is expected back). Pure.
#include <optional>
#include <string>
#include <vector>

namespace themis::coordinator {

// The reason an infeasible app waits with (apps.admission), followed by the explanation.
inline constexpr const char* kInfeasiblePrefix = "Infeasible: ";

// The most GPUs one job can get, described: "4 (2 hosts x 2 GPUs)", "6 (2 hosts: 2 + 4 GPUs)".
struct LargestPlacement {
  int gpus = 0;
  std::string described;
};
LargestPlacement largest_placement(const std::vector<int>& gpus_per_host);

// Why a job of `gpus_per_job` GPUs can never run on hosts of `gpus_per_host` GPUs ("job needs 8 GPUs; the
// largest the registered cluster can give one job is 4 (2 hosts x 2 GPUs)"); nullopt when it fits, and
// when no host has registered yet (nothing is known about the cluster, so nothing is judged).
std::optional<std::string> infeasibility(int gpus_per_job, const std::vector<int>& gpus_per_host);

bool is_infeasible_reason(const std::string& admission);

}  // namespace themis::coordinator
