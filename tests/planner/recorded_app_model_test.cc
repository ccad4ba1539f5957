// The coordinator's app model with the placement slowdowns its launcher reports (AppStatus.slowdowns): it scores
// a set at the widest level one of its gangs spans, keeps the slowdowns through a round record, and with them
// the Themis policy's machine hold starts in the coordinator as it does in themis-sim.
#include "policy/planner/recorded_app_model.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <variant>
#include <vector>

#include "policy/arbiter/policies/registry.h"
#include "policy/arbiter/themis_policy.h"
#include "policy/planner/round_record.h"
#include "tests/arbiter/test_apps.h"

namespace themis::planner {
namespace {

using arbiter::testing::make_cluster;

// An 8-GPU gang app 4x slower across machines: S = 1 in a slot or a machine, 4 across machines.
constexpr LevelSlowdowns kSpreadAverse = {1.0, 1.0, 4.0, 4.0};

TEST(RecordedAppModel, WithoutReportedSlowdownsEverySetCountsAsWellPlaced) {
  const Cluster cluster = make_cluster(2, 1, 4, 2);  // m0 = GPUs 0-3, m1 = 4-7, one rack
  RecordedAppModel app(1, 2.0, 4, std::nullopt, 4);
  EXPECT_EQ(app.placement_score(std::vector<GpuIndex>{0, 1, 4, 5}), 1.0);
  app.set_slowdowns(cluster, kSpreadAverse);
  EXPECT_EQ(app.placement_score(std::vector<GpuIndex>{0, 1, 4, 5}), 0.25);
  EXPECT_EQ(app.placement_score(std::vector<GpuIndex>{4, 5, 6, 7}), 1.0);
}

TEST(RecordedAppModel, ASetIsScoredAtTheWidestLevelOneOfItsGangsSpans) {
  const Cluster cluster = make_cluster(2, 1, 4, 2);
  // Gangs of 2: {0, 1, 4, 5} is two gangs, each inside a machine; {0, 4} is one gang across machines.
  RecordedAppModel pairs(1, 2.0, 4, std::nullopt, 2);
  pairs.set_slowdowns(cluster, kSpreadAverse);
  EXPECT_EQ(pairs.placement_score(std::vector<GpuIndex>{0, 1, 4, 5}), 1.0);
  EXPECT_EQ(pairs.placement_score(std::vector<GpuIndex>{0, 4}), 0.25);
  // One-GPU jobs never span anything: every set is well placed, whatever the slowdowns.
  RecordedAppModel ones(2, 2.0, 4, std::nullopt, 1);
  ones.set_slowdowns(cluster, kSpreadAverse);
  EXPECT_EQ(ones.placement_score(std::vector<GpuIndex>{0, 4, 5, 7}), 1.0);
}

TEST(RecordedAppModel, SlowdownsThatAreNotFourFiniteValuesOfAtLeastOneAreRefusedWithTheReason) {
  const std::vector<double> good = {1.0, 1.0, 1.1, 1.3};
  ASSERT_TRUE(std::holds_alternative<LevelSlowdowns>(parse_level_slowdowns(good)));
  EXPECT_EQ(std::get<LevelSlowdowns>(parse_level_slowdowns(good)), (LevelSlowdowns{1.0, 1.0, 1.1, 1.3}));
  const std::vector<double> three = {1.0, 1.0, 1.1};
  EXPECT_EQ(std::get<std::string>(parse_level_slowdowns(three)),
            "slowdowns: 3 values, expected 4 (same slot, same machine, same rack, cross rack)");
  const std::vector<double> below_one = {1.0, 1.0, 0.5, 1.3};
  EXPECT_EQ(std::get<std::string>(parse_level_slowdowns(below_one)),
            "slowdowns: value 2 (rack) is 0.500000, expected a finite number >= 1");
  const std::vector<double> not_a_number = {1.0, 1.0, 1.1, std::nan("")};
  EXPECT_TRUE(std::holds_alternative<std::string>(parse_level_slowdowns(not_a_number)));
}

// Three 4-GPU machines in one rack: m0 = GPUs 0-3, m1 = 4-7, m2 = 8-11. At t = 100, GPUs 0-1, 4-6 and 8 are free:
// six, enough for app 1's 4-GPU gang by count, but no four on one machine. App 2 (one-GPU jobs) holds the rest:
// 2 and 3 until t = 150 and 160, 7 until 500, 9-11 until 200, so m0 is the first machine to hold the gang.
// App 1, the worst ρ, sent a bid without rows (every spread set priced worse than waiting); app 2 bid for the
// GPUs of m1 and m2.
struct ScatteredRound {
  Cluster cluster = make_cluster(3, 1, 4, 3);
  RecordedAppModel gang{1, 3.0, 4, Bid{1, 3.0, {}}, 4};
  RecordedAppModel ones{2, 1.2, 4, Bid{2, 1.2, {{{4}, 1.15}, {{4, 5}, 1.1}, {{4, 5, 6}, 1.05}, {{4, 5, 6, 8}, 1.0}}}, 1};
  arbiter::RoundInput input() {
    return arbiter::RoundInput{&cluster, 7, 100, {0, 1, 4, 5, 6, 8},
                               {{2, 2, 3, 0, 150}, {3, 2, 3, 0, 160}, {7, 2, 3, 0, 500}, {9, 2, 3, 0, 200}, {10, 2, 3, 0, 200}, {11, 2, 3, 0, 200}},
                               {&gang, &ones}};
  }
};

std::set<GpuIndex> granted_to(const arbiter::RoundOutcome& out, AppId app) {
  std::set<GpuIndex> gpus;
  for (const arbiter::Grant& g : out.grants)
    if (g.app == app) gpus.insert(g.gpus.begin(), g.gpus.end());
  return gpus;
}

TEST(RecordedAppModel, AReportedPlacementSensitiveGangRankedWorstHasAMachineHeldForIt) {
  ScatteredRound round;
  round.gang.set_slowdowns(round.cluster, kSpreadAverse);
  arbiter::ThemisPolicy policy;
  Rng rng(1);
  const arbiter::RoundOutcome out = policy.run_round(round.input(), rng);
  ASSERT_TRUE(out.reservation.has_value());
  EXPECT_EQ(out.reservation->app, 1);
  std::set<GpuIndex> idle;
  for (const arbiter::IdleGpu& i : out.idle) idle.insert(i.gpu);
  EXPECT_EQ(idle, (std::set<GpuIndex>{0, 1}));
  EXPECT_TRUE(granted_to(out, 1).empty());
  EXPECT_EQ(granted_to(out, 2), (std::set<GpuIndex>{4, 5, 6, 8}));
}

TEST(RecordedAppModel, WithoutReportedSlowdownsNoMachineIsHeldAndTheFreeGpusAreAllHandedOut) {
  ScatteredRound round;
  arbiter::ThemisPolicy policy;
  Rng rng(1);
  const arbiter::RoundOutcome out = policy.run_round(round.input(), rng);
  EXPECT_FALSE(out.reservation.has_value());
  std::set<GpuIndex> granted;
  for (const arbiter::Grant& g : out.grants) granted.insert(g.gpus.begin(), g.gpus.end());
  EXPECT_TRUE(granted.count(0) && granted.count(1)) << "GPUs 0 and 1 of m0 went to nobody";
}

// Tiresias (least attained service first) in the coordinator: the app that has held fewer GPU-seconds gets
// the one free GPU, whatever the ids; without the lease table's figure both would tie at 0.
TEST(RecordedAppModel, TiresiasGivesTheFreeGpuToTheAppWithLessAttainedService) {
  const Cluster cluster = make_cluster(1, 1, 2, 1);
  RecordedAppModel veteran(1, 1.0, 1, std::nullopt, 1);
  RecordedAppModel newcomer(2, 1.0, 1, std::nullopt, 1);
  veteran.set_attained_service(7200);
  newcomer.set_attained_service(60);
  const auto tiresias = arbiter::policies::make_tiresias();
  Rng rng(1);
  const arbiter::RoundOutcome out =
      tiresias->run_round(arbiter::RoundInput{&cluster, 1, 100, {1}, {{0, 1, 0, 0, 700}}, {&veteran, &newcomer}}, rng);
  ASSERT_EQ(out.grants.size(), 1u);
  EXPECT_EQ(out.grants[0].app, 2);
}

TEST(RecordedAppModel, ARoundRecordKeepsTheSlowdownsAndRefusesMalformedOnesNamingTheApp) {
  ScatteredRound round;
  round.gang.set_slowdowns(round.cluster, kSpreadAverse);
  round.gang.set_attained_service(1234.5);
  RoundSnapshot s;
  s.cluster = &round.cluster;
  s.round = 7;
  s.now = 100;
  AppState gang;
  gang.id = 1;
  gang.gpus_per_job = 4;
  gang.model = &round.gang;
  AppState ones;
  ones.id = 2;
  ones.model = &round.ones;
  s.apps = {gang, ones};
  nlohmann::json json = snapshot_to_json(s);
  const auto record = snapshot_from_json(json);
  ASSERT_EQ(record->models.size(), 2u);
  ASSERT_TRUE(record->models[0]->slowdowns().has_value());
  EXPECT_EQ(*record->models[0]->slowdowns(), kSpreadAverse);
  EXPECT_EQ(record->models[0]->placement_score(std::vector<GpuIndex>{0, 1, 4, 5}), 0.25);
  EXPECT_FALSE(record->models[1]->slowdowns().has_value());
  EXPECT_EQ(record->models[0]->attained_service(), 1234.5);
  EXPECT_EQ(record->models[1]->attained_service(), 0);
  EXPECT_FALSE(json.at("apps").at(1).contains("slowdowns"));

  json.at("apps").at(0)["slowdowns"] = {1.0, 0.9, 4.0, 4.0};
  try {
    snapshot_from_json(json);
    FAIL() << "a slowdown below 1 was read back";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "app 1: slowdowns: value 1 (machine) is 0.900000, expected a finite number >= 1");
  }
}

}  // namespace
}  // namespace themis::planner
