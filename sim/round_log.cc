#include "sim/round_log.h"

#include <map>

#include <nlohmann/json.hpp>

namespace themis::sim {

using nlohmann::ordered_json;

std::string round_log_line(const planner::RoundPlan& plan, std::span<const RoundLogApp> apps) {
  std::map<AppId, std::string> names;
  ordered_json app_lines = ordered_json::array();
  for (const RoundLogApp& a : apps) {
    names[a.id] = a.name;
    app_lines.push_back({{"app", a.name}, {"rho", a.rho}, {"held", a.held}, {"demand", a.demand}});
  }
  const auto name = [&](AppId id) {
    const auto it = names.find(id);
    return it == names.end() ? std::to_string(id) : it->second;
  };
  const arbiter::RoundOutcome& outcome = plan.outcome;
  ordered_json line = {{"round", plan.round}, {"now", plan.now}, {"offered", plan.offered.size()}, {"apps", app_lines}};
  if (!outcome.auction.bidders.empty()) {
    ordered_json bidders = ordered_json::array();
    for (std::size_t i = 0; i < outcome.auction.bidders.size(); ++i) {
      // A bid's rows as [GPUs, ρ] pairs: enough to see what the app asked for and at what value.
      ordered_json rows = ordered_json::array();
      if (i < outcome.auction.bids.size())
        for (const BidRow& row : outcome.auction.bids[i].rows) rows.push_back({row.gpus.size(), row.rho});
      ordered_json bidder = {{"app", name(outcome.auction.bidders[i])}, {"rows", rows}};
      if (i < outcome.auction.bids.size()) bidder["rho_no_new"] = outcome.auction.bids[i].rho_no_new;
      bidders.push_back(std::move(bidder));
    }
    ordered_json winners = ordered_json::array();
    for (const arbiter::AuctionRecord::Winner& w : outcome.auction.winners)
      winners.push_back({{"app", name(w.app)}, {"bundle", w.pf_bundle.size()}, {"rho", w.rho}, {"c", w.c}, {"kept", w.kept.size()}});
    line["bidders"] = bidders;
    line["winners"] = winners;
    if (outcome.auction.gap > 0) line["gap"] = outcome.auction.gap;
  }
  ordered_json grants = ordered_json::array();
  for (const arbiter::Grant& g : outcome.grants)
    grants.push_back({{"app", name(g.app)}, {"gpus", g.gpus}, {"kind", arbiter::grant_kind_name(g.kind)}, {"lease_fraction", g.lease_fraction}});
  line["grants"] = grants;
  std::map<std::string, int> idle;
  for (const arbiter::IdleGpu& i : plan.idle) ++idle[i.reason];
  if (!idle.empty()) line["idle"] = idle;
  if (outcome.reservation) line["reservation"] = {{"app", name(outcome.reservation->app)}, {"reason", outcome.reservation->reason}};
  return line.dump();
}

}  // namespace themis::sim
