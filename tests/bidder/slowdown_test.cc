#include <gtest/gtest.h>

#include <stdexcept>

#include "bidder/slowdown.h"

namespace themis::bidder {
namespace {

TEST(Slowdown, Priors) {
  const SlowdownModel m;
  EXPECT_DOUBLE_EQ(m.slowdown(Locality::kSameSlot), 1.0);
  EXPECT_DOUBLE_EQ(m.slowdown(Locality::kSameMachine), 1.0);
  EXPECT_DOUBLE_EQ(m.slowdown(Locality::kSameRack), 1.1);
  EXPECT_DOUBLE_EQ(m.slowdown(Locality::kCrossRack), 1.3);
  for (int l = 0; l < kLocalityLevels; ++l) EXPECT_EQ(m.observations(static_cast<Locality>(l)), 0);
}

TEST(Slowdown, LearnedValueReplacesThePriorOfItsLevelOnly) {
  SlowdownModel m;
  // 4 GPUs across machines: 0.35 s per iteration vs 1.0 s serial → S = 1.4.
  m.observe(Locality::kSameRack, 4, 0.35, 1.0);
  EXPECT_DOUBLE_EQ(m.slowdown(Locality::kSameRack), 1.4);
  m.observe(Locality::kSameRack, 4, 0.30, 1.0);  // 1.2
  EXPECT_DOUBLE_EQ(m.slowdown(Locality::kSameRack), 1.3);
  EXPECT_EQ(m.observations(Locality::kSameRack), 2);
  EXPECT_DOUBLE_EQ(m.slowdown(Locality::kCrossRack), 1.3);  // never observed: prior
  EXPECT_DOUBLE_EQ(m.slowdown(Locality::kSameMachine), 1.0);
  EXPECT_DOUBLE_EQ(m.prior(Locality::kSameRack), 1.1);
  EXPECT_NEAR(m.placement_score(Locality::kSameRack), 1 / 1.3, 1e-12);
}

TEST(Slowdown, LearnedBetterThanPriorCanGoBelowThePriorButNotBelowOne) {
  SlowdownModel m;
  m.observe(Locality::kCrossRack, 2, 0.52, 1.0);  // 1.04 < prior 1.3
  EXPECT_DOUBLE_EQ(m.slowdown(Locality::kCrossRack), 1.04);
  m.observe(Locality::kSameMachine, 2, 0.4, 1.0);  // super-linear 0.8 → clamped
  EXPECT_DOUBLE_EQ(m.slowdown(Locality::kSameMachine), 1.0);
}

TEST(Slowdown, CustomPriorsAndBadInput) {
  SlowdownModel m({.same_slot = 1.0, .same_machine = 1.05, .same_rack = 1.2, .cross_rack = 1.5});
  EXPECT_DOUBLE_EQ(m.slowdown(Locality::kSameMachine), 1.05);
  EXPECT_THROW(SlowdownModel({.same_slot = 0.9}), std::invalid_argument);
  EXPECT_THROW(m.observe(Locality::kSameRack, 0, 1, 1), std::invalid_argument);
  EXPECT_THROW(m.observe(Locality::kSameRack, 2, 0, 1), std::invalid_argument);
  EXPECT_THROW(m.observe(Locality::kSameRack, 2, 1, -1), std::invalid_argument);
  EXPECT_THROW(m.slowdown(static_cast<Locality>(7)), std::invalid_argument);
}

}  // namespace
}  // namespace themis::bidder
