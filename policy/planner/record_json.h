#pragma once
// The JSON forms of the values rounds are recorded with: a cluster's machines, a bid, and one auction's
// input (the cluster, the GPUs offered, the bids as received). Round records (round_record.h) and
// themis-sim's auction log (docs/simulator.md, "Auction log") write them; auction_bench reads auction logs
// back to time the solvers on the auctions a run met (docs/performance.md). Pure: JSON values in and out.
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/bid.h"
#include "core/topology.h"

namespace themis::planner {

// Reading records: a field of `object`, or std::invalid_argument naming it; get<T>: that field as a T, or the
// same error saying why it is not one.
namespace json_read {
const nlohmann::json& field(const nlohmann::json& object, const char* name);
template <typename T>
T get(const nlohmann::json& object, const char* name) {
  try {
    return field(object, name).get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("field \"") + name + "\": " + e.what());
  }
}
}  // namespace json_read

nlohmann::json cluster_to_json(const Cluster& cluster);  // {"name", "machines": [{"name", "rack", "slots"}]}
nlohmann::json bid_to_json(const Bid& bid);              // {"rho_no_new", "rows": [{"gpus", "rho"[, "scope"]}]}

// Each throws std::invalid_argument naming the field that is missing or wrong.
ClusterSpec cluster_spec_from_json(const nlohmann::json& json);
Bid bid_from_json(AppId app, const nlohmann::json& json);

// One auction as the Themis policy held it: the GPUs offered (after any held for a gang) and every bid
// received, before validation.
struct AuctionInput {
  Offer offer;
  std::vector<Bid> bids;
};
// {"round", "now", "offer": [GPU, ...], "bids": [{"app", "rho_no_new", "rows"}, ...]}
nlohmann::json auction_to_json(const Offer& offer, std::span<const Bid> bids, Seconds now);
AuctionInput auction_from_json(const nlohmann::json& json);

}  // namespace themis::planner
