// themis-sim run --auction-log (policy/planner/record_json.h): each auction's offer and bids, complete enough
// that auction_bench --recorded solves the auction the policy held.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "policy/arbiter/bid_validation.h"
#include "policy/arbiter/partial_allocation.h"
#include "policy/arbiter/policies/registry.h"
#include "policy/arbiter/shape_problem.h"
#include "policy/arbiter/themis_policy.h"
#include "policy/arbiter/winner_solver.h"
#include "policy/planner/record_json.h"
#include "sim/simulator.h"

namespace themis::sim {
namespace {

std::string job(int gpus, int iterations) {
  return R"({"model":"x","gpus":)" + std::to_string(gpus) + R"(,"serial_iter_time":1,"iterations":)" +
         std::to_string(iterations) + R"(,"slowdown":[1,1.2,1.5,2]})";
}

// Six apps of 1-, 2- and 4-GPU jobs on two racks: with the paper's filter (every one of the worst 20% bids) the
// rounds hold auctions of several bidders over offers spread across machines, so rows of every scope occur.
// Each auction, written to its line and read back, is solved again as the policy solves it (validated bids,
// rows as shapes, the default solver and limits): the same Σ log(1/ρ) and the same winners.
TEST(AuctionLog, AnAuctionReadBackFromItsLineIsSolvedToTheOutcomeThePolicyReached) {
  const Cluster cluster(ClusterSpec{"two-racks", {{"a0", "r0", {2, 2}}, {"a1", "r0", {2, 2}}, {"b0", "r1", {4}}}});
  std::string trace;
  const int widths[] = {1, 2, 4, 2, 1, 4, 2, 1, 2, 4};
  for (int a = 0; a < 10; ++a)
    trace += R"({"name":"app)" + std::to_string(a) + R"(","arrival":)" + std::to_string(30 * a) + R"(,"jobs":[)" +
             job(widths[a], 900 + 170 * a) + "," + job(widths[a], 600 + 90 * a) + "]}\n";
  const auto apps = parse_trace(trace, "mixed");
  arbiter::policies::PolicySettings settings;
  settings.filter_f = 0.5;
  auto themis = arbiter::policies::make_policy("themis", settings);
  const auto cluster_line = planner::cluster_to_json(cluster).dump();
  int auctions = 0, several_bidders = 0, scoped_rows = 0;
  const SimResult result = simulate(cluster, apps, *themis, SimSettings{}, {},
                                    [&](const planner::RoundPlan& plan, std::span<const RoundLogApp>) {
    const arbiter::AuctionRecord& held = plan.outcome.auction;
    if (held.bidders.empty()) return;
    ++auctions;
    several_bidders += held.bidders.size() > 1 ? 1 : 0;
    const std::string line = planner::auction_to_json(Offer{plan.round, held.offered}, held.bids, plan.now).dump();
    const planner::AuctionInput read = planner::auction_from_json(nlohmann::json::parse(line));
    const Cluster read_cluster(planner::cluster_spec_from_json(nlohmann::json::parse(cluster_line)));
    ASSERT_EQ(read.offer.gpus, held.offered);
    ASSERT_EQ(read.bids.size(), held.bids.size());
    for (std::size_t b = 0; b < read.bids.size(); ++b) {
      ASSERT_EQ(read.bids[b].app, held.bids[b].app);
      ASSERT_EQ(read.bids[b].rows.size(), held.bids[b].rows.size());
      for (std::size_t r = 0; r < read.bids[b].rows.size(); ++r) {
        EXPECT_EQ(read.bids[b].rows[r].gpus, held.bids[b].rows[r].gpus);
        EXPECT_EQ(read.bids[b].rows[r].scope, held.bids[b].rows[r].scope);
        scoped_rows += read.bids[b].rows[r].scope != ShapeScope::kExact ? 1 : 0;
      }
    }
    std::vector<arbiter::ExpectedBidder> expected;
    for (const Bid& bid : read.bids) expected.push_back({bid.app, 1 << 20});
    const arbiter::ValidatedBids valid = arbiter::validate_bids(read.offer, read.bids, expected);
    const arbiter::ThemisSettings defaults;
    const arbiter::ShapeProblem shaped = arbiter::make_shape_problem(read_cluster, read.offer, valid.accepted, defaults.max_rows_per_bidder);
    const auto solver = arbiter::make_winner_solver(defaults.solver);
    const arbiter::PartialAllocation pa = arbiter::partial_allocation(
        shaped.packing, *solver, arbiter::AuctionLimits{0, defaults.solver_max_nodes, defaults.small_search_cap()});
    double objective = pa.pf.value;
    for (const Bid& bid : valid.accepted) objective -= std::log(bid.rho_no_new);
    EXPECT_NEAR(objective, held.objective, 1e-9) << "round " << plan.round;
    std::vector<AppId> winners;
    for (std::size_t b = 0; b < pa.pf.choice.size(); ++b)
      if (pa.pf.choice[b] >= 0) winners.push_back(valid.accepted[b].app);
    std::vector<AppId> held_winners;
    for (const auto& w : held.winners) held_winners.push_back(w.app);
    std::sort(winners.begin(), winners.end());
    std::sort(held_winners.begin(), held_winners.end());
    EXPECT_EQ(winners, held_winners) << "round " << plan.round;
  });
  for (const AppResult& app : result.apps) EXPECT_TRUE(app.finished) << app.name;
  EXPECT_GE(several_bidders, 3) << "of " << auctions << " auctions";
  EXPECT_GT(scoped_rows, 0);
}

TEST(AuctionLog, AMalformedLineIsRefusedNamingTheField) {
  const auto refused = [](const std::string& line) {
    try {
      planner::auction_from_json(nlohmann::json::parse(line));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refused(R"({"round":1,"now":0,"bids":[]})").find("\"offer\""), std::string::npos);
  EXPECT_NE(refused(R"({"round":1,"now":0,"offer":[0],"bids":[{"app":1,"rows":[]}]})").find("\"rho_no_new\""), std::string::npos);
  EXPECT_NE(refused(R"({"round":1,"now":0,"offer":[0],"bids":[{"app":1,"rho_no_new":2,"rows":[{"gpus":[0],"rho":1,"scope":7}]}]})")
                .find("7 is not 0 (exact) to 4 (anywhere)"),
            std::string::npos);
  EXPECT_NE(refused(R"({"round":1,"now":0,"offer":"all","bids":[]})").find("\"offer\""), std::string::npos);
}

}  // namespace
}  // namespace themis::sim
