#include "policy/planner/record_json.h"

#include <stdexcept>
#include <string>

namespace themis::planner {

using nlohmann::json;

using json_read::field;
using json_read::get;

const json& json_read::field(const json& object, const char* name) {
  if (!object.is_object() || !object.contains(name)) throw std::invalid_argument(std::string("missing field \"") + name + "\"");
  return object.at(name);
}

json cluster_to_json(const Cluster& cluster) {
  json machines = json::array();
  for (const Machine& m : cluster.machines())
    machines.push_back({{"name", m.name}, {"rack", cluster.racks().at(static_cast<std::size_t>(m.rack)).name}, {"slots", m.gpus_per_slot}});
  return {{"name", cluster.name()}, {"machines", machines}};
}

ClusterSpec cluster_spec_from_json(const json& j) {
  ClusterSpec spec;
  spec.name = get<std::string>(j, "name");
  for (const json& m : field(j, "machines"))
    spec.machines.push_back({get<std::string>(m, "name"), get<std::string>(m, "rack"), get<std::vector<int>>(m, "slots")});
  return spec;
}

json bid_to_json(const Bid& bid) {
  json rows = json::array();
  for (const BidRow& row : bid.rows) {
    json r = {{"gpus", row.gpus}, {"rho", row.rho}};
    // A wider scope than exact (core/bid.h ShapeScope, 1 slot to 4 anywhere, as on the wire) changes the
    // auction, so a replay needs it; exact rows leave it out, as records written before it did.
    if (row.scope != ShapeScope::kExact) r["scope"] = static_cast<int>(row.scope);
    rows.push_back(std::move(r));
  }
  return {{"rho_no_new", bid.rho_no_new}, {"rows", rows}};
}

Bid bid_from_json(AppId app, const json& j) {
  Bid bid{app, get<double>(j, "rho_no_new"), {}};
  for (const json& row : field(j, "rows")) {
    bid.rows.push_back({get<std::vector<GpuIndex>>(row, "gpus"), get<double>(row, "rho")});
    if (row.contains("scope")) {
      const int scope = get<int>(row, "scope");
      if (scope < static_cast<int>(ShapeScope::kExact) || scope > static_cast<int>(ShapeScope::kAnywhere))
        throw std::invalid_argument("field \"scope\": " + std::to_string(scope) + " is not 0 (exact) to 4 (anywhere)");
      bid.rows.back().scope = static_cast<ShapeScope>(scope);
    }
  }
  return bid;
}

json auction_to_json(const Offer& offer, std::span<const Bid> bids, Seconds now) {
  json out_bids = json::array();
  for (const Bid& bid : bids) {
    json b = bid_to_json(bid);
    b["app"] = bid.app;
    out_bids.push_back(std::move(b));
  }
  return {{"round", offer.round}, {"now", now}, {"offer", offer.gpus}, {"bids", out_bids}};
}

AuctionInput auction_from_json(const json& j) {
  AuctionInput in;
  in.offer.round = get<RoundId>(j, "round");
  in.offer.gpus = get<std::vector<GpuIndex>>(j, "offer");
  for (const json& b : field(j, "bids")) in.bids.push_back(bid_from_json(get<AppId>(b, "app"), b));
  return in;
}

}  // namespace themis::planner
