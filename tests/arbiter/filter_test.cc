#include "policy/arbiter/filter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "test_apps.h"

namespace themis::arbiter {
namespace {

using testing::ScriptedApp;

TEST(Filter, CountIsExactCeiling) {
  EXPECT_EQ(filter_count(10, FilterFraction::parse("0.7")), 3);  // (1-0.7)*10 = 3 exactly, not 4
  EXPECT_EQ(filter_count(10, FilterFraction::parse("0.8")), 2);
  EXPECT_EQ(filter_count(10, FilterFraction::parse("1")), 1);   // at least one
  EXPECT_EQ(filter_count(10, FilterFraction::parse("0")), 10);
  EXPECT_EQ(filter_count(11, FilterFraction::parse("0.8")), 3);  // 2.2 -> 3
  EXPECT_EQ(filter_count(3, FilterFraction::parse("0.9")), 1);
  EXPECT_EQ(filter_count(0, FilterFraction::parse("0.8")), 0);
  EXPECT_EQ(filter_count(10, FilterFraction::from_double(0.7)), 3);
  EXPECT_EQ(filter_count(7, FilterFraction(2, 7)), 5);
  EXPECT_EQ(filter_count(100000, FilterFraction::parse("0.999999")), 1);
  EXPECT_EQ(filter_count(1000000, FilterFraction::parse("0.999999")), 1);
  EXPECT_EQ(filter_count(1000001, FilterFraction::parse("0.999999")), 2);
}

TEST(Filter, ParseRejectsBadText) {
  EXPECT_THROW(FilterFraction::parse(""), std::invalid_argument);
  EXPECT_THROW(FilterFraction::parse("1.5"), std::invalid_argument);
  EXPECT_THROW(FilterFraction::parse("0.1234567"), std::invalid_argument);
  EXPECT_THROW(FilterFraction::parse("-0.1"), std::invalid_argument);
  EXPECT_THROW(FilterFraction::parse("0.8x"), std::invalid_argument);
  EXPECT_THROW(FilterFraction::parse("."), std::invalid_argument);
  EXPECT_THROW(FilterFraction(3, 2), std::invalid_argument);
  EXPECT_THROW(FilterFraction::from_double(1.01), std::invalid_argument);
  EXPECT_EQ(FilterFraction::parse(".5").numerator(), 500000);
  EXPECT_EQ(FilterFraction::parse("1.0").numerator(), 1000000);
  try {
    FilterFraction::parse("0.8x");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("0.8x"), std::string::npos);
  }
}

TEST(Filter, WorstRhoFirstTiesByIdSatisfiedAppsSkipped) {
  std::vector<std::unique_ptr<ScriptedApp>> owned;
  owned.push_back(std::make_unique<ScriptedApp>(1, 1.5, 2));
  owned.push_back(std::make_unique<ScriptedApp>(2, 3.0, 2));
  owned.push_back(std::make_unique<ScriptedApp>(3, 3.0, 2));
  owned.push_back(std::make_unique<ScriptedApp>(4, 9.0, 0));  // worst, but wants nothing
  owned.push_back(std::make_unique<ScriptedApp>(5, 0.5, 1));
  std::vector<AppModel*> apps;
  for (auto& a : owned) apps.push_back(a.get());
  const auto picked = filter_apps(apps, FilterFraction::parse("0.5"));  // ceil(0.5*5) = 3
  ASSERT_EQ(picked.size(), 3u);
  EXPECT_EQ(picked[0]->id(), 2);
  EXPECT_EQ(picked[1]->id(), 3);
  EXPECT_EQ(picked[2]->id(), 1);
  const auto one = filter_apps(apps, FilterFraction::parse("1"));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0]->id(), 2);
}

TEST(Filter, OfferBoundedKeepsOnlyTheWorstAppsThatCanUseTheOffer) {
  // Ranked worst first: 2 (ρ 4, wants 3), 3 (ρ 3, wants 2), 1 (ρ 2, wants 4), 5 (ρ 1, wants 1).
  std::vector<std::unique_ptr<ScriptedApp>> owned;
  owned.push_back(std::make_unique<ScriptedApp>(1, 2.0, 4));
  owned.push_back(std::make_unique<ScriptedApp>(2, 4.0, 3));
  owned.push_back(std::make_unique<ScriptedApp>(3, 3.0, 2));
  owned.push_back(std::make_unique<ScriptedApp>(4, 9.0, 0));  // wants nothing: never ranked
  owned.push_back(std::make_unique<ScriptedApp>(5, 1.0, 1));
  std::vector<AppModel*> apps;
  for (auto& a : owned) apps.push_back(a.get());
  const auto f = FilterFraction::parse("0.2");  // ⌈0.8·5⌉ = 4: all four apps that want GPUs
  auto ids = [&](FilterRule rule, int offered) {
    std::vector<AppId> out;
    for (const AppModel* a : filter_apps(apps, f, rule, offered)) out.push_back(a->id());
    return out;
  };
  EXPECT_EQ(ids(FilterRule::kOfferBounded, 1), (std::vector<AppId>{2}));     // the worst can use it all
  EXPECT_EQ(ids(FilterRule::kOfferBounded, 3), (std::vector<AppId>{2}));     // 3 ≥ 3
  EXPECT_EQ(ids(FilterRule::kOfferBounded, 4), (std::vector<AppId>{2, 3}));  // 3 + 2 ≥ 4
  EXPECT_EQ(ids(FilterRule::kOfferBounded, 9), (std::vector<AppId>{2, 3, 1}));
  EXPECT_EQ(ids(FilterRule::kOfferBounded, 100), (std::vector<AppId>{2, 3, 1, 5}));  // capped by f
  EXPECT_EQ(ids(FilterRule::kOfferBounded, 0), (std::vector<AppId>{2}));     // at least one
  EXPECT_EQ(ids(FilterRule::kFixed, 1), (std::vector<AppId>{2, 3, 1, 5}));  // the paper's count
  // f still bounds the list: ⌈0.5·5⌉ = 3 apps at most, however large the offer.
  EXPECT_EQ(filter_apps(apps, FilterFraction::parse("0.5"), FilterRule::kOfferBounded, 100).size(), 3u);
}

TEST(Filter, AdaptiveIsFixedWhenRhoIsEvenAndOfferBoundedWhenAppsFallBehind) {
  const auto f = FilterFraction::parse("0.2");  // ⌈0.8·N⌉ bounds both cases
  auto ids = [&](const std::vector<std::unique_ptr<ScriptedApp>>& owned, int offered) {
    std::vector<AppModel*> apps;
    for (const auto& a : owned) apps.push_back(a.get());
    std::vector<AppId> out;
    for (const AppModel* a : filter_apps(apps, f, FilterRule::kAdaptive, offered)) out.push_back(a->id());
    return out;
  };
  // ρ 1.00-1.09: within 10% of each other, so all four that want GPUs bid, as under the fixed rule.
  std::vector<std::unique_ptr<ScriptedApp>> even;
  even.push_back(std::make_unique<ScriptedApp>(1, 1.05, 4));
  even.push_back(std::make_unique<ScriptedApp>(2, 1.09, 3));
  even.push_back(std::make_unique<ScriptedApp>(3, 1.00, 2));
  even.push_back(std::make_unique<ScriptedApp>(4, 9.00, 0));  // wants nothing: neither ranked nor in the spread
  even.push_back(std::make_unique<ScriptedApp>(5, 1.02, 1));
  EXPECT_EQ(ids(even, 1), (std::vector<AppId>{2, 1, 5, 3}));
  // ρ 1.0-1.5: app 2 is behind, so only as many of the worst as can use the offer bid.
  std::vector<std::unique_ptr<ScriptedApp>> spread;
  spread.push_back(std::make_unique<ScriptedApp>(1, 1.2, 4));
  spread.push_back(std::make_unique<ScriptedApp>(2, 1.5, 3));
  spread.push_back(std::make_unique<ScriptedApp>(3, 1.0, 2));
  spread.push_back(std::make_unique<ScriptedApp>(5, 1.1, 1));
  EXPECT_EQ(ids(spread, 3), (std::vector<AppId>{2}));
  EXPECT_EQ(ids(spread, 4), (std::vector<AppId>{2, 1}));
  EXPECT_EQ(ids(spread, 100), (std::vector<AppId>{2, 1, 5, 3}));
  // An app of unknown ρ (ranked +∞) is behind everyone.
  std::vector<std::unique_ptr<ScriptedApp>> unknown;
  unknown.push_back(std::make_unique<ScriptedApp>(1, 1.0, 1));
  unknown.push_back(std::make_unique<ScriptedApp>(2, std::nan(""), 1));
  unknown.push_back(std::make_unique<ScriptedApp>(3, 1.0, 1));
  EXPECT_EQ(ids(unknown, 1), (std::vector<AppId>{2}));
  EXPECT_TRUE(ids({}, 4).empty());
}

TEST(Filter, RuleNamesRoundTrip) {
  for (FilterRule rule : {FilterRule::kFixed, FilterRule::kOfferBounded, FilterRule::kAdaptive})
    EXPECT_EQ(parse_filter_rule(to_string(rule)), rule);
  EXPECT_FALSE(parse_filter_rule("bounded").has_value());
}

}  // namespace
}  // namespace themis::arbiter
