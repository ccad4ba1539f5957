#include <gtest/gtest.h>

#include <stdexcept>

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

}  // namespace
}  // namespace themis::bidder
