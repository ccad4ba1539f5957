#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "bidder/contention.h"

namespace themis::bidder {
namespace {

TEST(Contention, TimeWeightedAverage) {
  ContentionAverage c(100, 2);
  EXPECT_DOUBLE_EQ(c.average(100), 2);
  c.observe(200, 6);  // 2 apps for 100 s
  EXPECT_DOUBLE_EQ(c.average(200), 2);
  EXPECT_DOUBLE_EQ(c.average(300), (2 * 100 + 6 * 100) / 200.0);
  c.observe(300, 1);
  EXPECT_DOUBLE_EQ(c.average(500), (200 + 600 + 200) / 400.0);
  EXPECT_EQ(c.current(), 1);
}

TEST(Contention, SeveralObservationsAtTheSameInstantKeepTheLast) {
  ContentionAverage c(0, 1);
  c.observe(10, 5);
  c.observe(10, 3);
  EXPECT_DOUBLE_EQ(c.average(20), (10 + 30) / 20.0);
}

TEST(Contention, PaperExampleAppPlusThreeOthers) {
  ContentionAverage c(0, 4);
  EXPECT_DOUBLE_EQ(c.average(1000), 4);
}

TEST(Contention, RejectsBadObservations) {
  EXPECT_THROW(ContentionAverage(0, 0), std::invalid_argument);
  ContentionAverage c(10, 1);
  EXPECT_THROW(c.observe(5, 2), std::invalid_argument);
  EXPECT_THROW(c.observe(20, 0), std::invalid_argument);
  c.observe(20, 2);
  EXPECT_THROW(c.average(15), std::invalid_argument);
}

// An app that needs 1,000 s more among three others: one finishes in 200 s, one in 600 s, one outlasts it. Over
// its 1,000 s it shares with itself throughout, 200 + 600 + 1,000 s of the others: 1 + 1,800 / 1,000 = 2.8 apps
// on average, where the count now says 4.
TEST(ContentionAhead, CountsEachOtherAppUntilItsOwnFinish) {
  const std::vector<Seconds> others{200, 600, 5000};
  EXPECT_DOUBLE_EQ(contention_ahead(1000, others), 2.8);
  EXPECT_DOUBLE_EQ(contention_ahead(100, others), 4) << "all three outlast 100 s";
  EXPECT_DOUBLE_EQ(contention_ahead(1000, {}), 1) << "alone";
}

TEST(ContentionAhead, UnknownAppsCountThroughoutAndFinishedOnesNotAtAll) {
  const std::vector<Seconds> others{std::nan(""), std::numeric_limits<double>::infinity(), 0, -5};
  EXPECT_DOUBLE_EQ(contention_ahead(1000, others), 3);
  EXPECT_DOUBLE_EQ(contention_ahead(0, others), 5) << "no forecast of its own: the count now";
  EXPECT_DOUBLE_EQ(contention_ahead(std::nan(""), others), 5);
}

// Every app present, itself among them: the app at each index gets what the form over its others gives it.
TEST(ContentionAhead, OverEveryAppPresentEachGetsWhatItsOthersGiveIt) {
  const std::vector<Seconds> remaining{1000, 200, std::nan(""), 600, 0, 5000};
  for (std::size_t self = 0; self < remaining.size(); ++self) {
    std::vector<Seconds> others = remaining;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(self));
    EXPECT_EQ(contention_ahead(remaining, self), contention_ahead(remaining[self], others)) << "app " << self;
  }
  EXPECT_DOUBLE_EQ(contention_ahead(remaining, 0), 3.8) << "200 + 1,000 (unknown) + 600 + 0 + 1,000 over 1,000";
}

// 3,000 s lived at an average of 10 apps, 1,000 s left at 2.8: (3,000·10 + 1,000·2.8) / 4,000 = 8.2.
TEST(LifetimeContention, WeighsThePastAndTheForecastByTheirSpans) {
  EXPECT_DOUBLE_EQ(lifetime_contention(10, 3000, 2.8, 1000), 8.2);
  EXPECT_DOUBLE_EQ(lifetime_contention(10, 0, 2.8, 1000), 2.8) << "just arrived: the forecast alone";
  EXPECT_DOUBLE_EQ(lifetime_contention(10, 3000, 2.8, 0), 10) << "nothing left: the past alone";
  EXPECT_DOUBLE_EQ(lifetime_contention(10, 3000, 2.8, std::numeric_limits<double>::infinity()), 10);
  EXPECT_DOUBLE_EQ(lifetime_contention(10, 3000, 0.5, 1000), 10) << "a forecast below one app is no forecast";
  EXPECT_DOUBLE_EQ(lifetime_contention(10, 3000, std::nan(""), 1000), 10);
}

}  // namespace
}  // namespace themis::bidder
