#include "launcher/timing_model.h"

#include <gtest/gtest.h>

namespace themis::launcher {
namespace {

TEST(TimingModel, MachineLocalRunsMeasureSerialTimeAndWiderRunsTheSlowdown) {
  TimingModel timing(1.0);
  EXPECT_DOUBLE_EQ(timing.serial_iter_time(0), 1.0);  // nothing measured: the default
  for (int i = 0; i < 10; ++i) timing.observe(0, 2, Locality::kSameMachine, 0.25);
  EXPECT_TRUE(timing.measured(0));
  EXPECT_DOUBLE_EQ(timing.serial_iter_time(0), 0.5);
  // The same job across racks: 0.4 s per iteration on 2 GPUs is S = 0.4 * 2 / 0.5 = 1.6 (prior 1.3).
  for (int i = 0; i < 10; ++i) timing.observe(0, 2, Locality::kCrossRack, 0.4);
  const auto slowdown = timing.slowdown();
  EXPECT_NEAR(slowdown.slowdown(Locality::kCrossRack), 1.6, 1e-12);
  EXPECT_DOUBLE_EQ(slowdown.slowdown(Locality::kSameRack), 1.1);  // never seen: prior
  EXPECT_DOUBLE_EQ(timing.serial_iter_time(0), 0.5);             // the wider level does not move it
}

TEST(TimingModel, OnlyWideRunsDivideByThePrior) {
  TimingModel timing(1.0);
  timing.observe(3, 4, Locality::kCrossRack, 0.13);
  EXPECT_NEAR(timing.serial_iter_time(3), 0.13 * 4 / 1.3, 1e-12);
  EXPECT_DOUBLE_EQ(timing.slowdown().slowdown(Locality::kCrossRack), 1.3);
}

TEST(TimingModel, UnmeasuredJobsTakeTheUpperMedianOfMeasuredOnes) {
  TimingModel timing(9.0);
  timing.observe(0, 1, Locality::kSameSlot, 1.0);
  timing.observe(1, 1, Locality::kSameSlot, 3.0);
  timing.observe(2, 1, Locality::kSameSlot, 2.0);
  EXPECT_FALSE(timing.measured(7));
  EXPECT_DOUBLE_EQ(timing.serial_iter_time(7), 2.0);
  timing.observe(3, 1, Locality::kSameSlot, 4.0);
  EXPECT_DOUBLE_EQ(timing.serial_iter_time(7), 3.0);
}

TEST(TimingModel, MeansFollowDriftAfterTwentySamples) {
  TimingModel timing(1.0);
  for (int i = 0; i < 20; ++i) timing.observe(0, 1, Locality::kSameSlot, 1.0);
  for (int i = 0; i < 100; ++i) timing.observe(0, 1, Locality::kSameSlot, 2.0);
  EXPECT_NEAR(timing.serial_iter_time(0), 2.0, 0.01);  // a plain mean would say 1.83
}

TEST(TimingModel, BadSamplesAreRejected) {
  TimingModel timing(1.0);
  EXPECT_THROW(timing.observe(0, 0, Locality::kSameSlot, 1.0), std::invalid_argument);
  EXPECT_THROW(timing.observe(0, 1, Locality::kSameSlot, 0.0), std::invalid_argument);
  EXPECT_THROW(TimingModel(-1.0), std::invalid_argument);
}

}  // namespace
}  // namespace themis::launcher
