#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "bidder/gpu_time.h"

namespace themis::bidder {
namespace {

TEST(GpuTime, AccumulatesPerTaskJobApp) {
  GpuTimeLedger l;
  const std::vector<GpuIndex> a = {3, 4, 5}, b = {3};
  l.record(1, 0, a, 10, 20);
  l.record(1, 0, b, 30, 35);
  l.record(2, 0, b, 40, 100);
  EXPECT_DOUBLE_EQ(l.task(1, 0, 3), 15);
  EXPECT_DOUBLE_EQ(l.task(1, 0, 4), 10);
  EXPECT_DOUBLE_EQ(l.job(1, 0), 35);
  EXPECT_DOUBLE_EQ(l.app(1), 35);
  EXPECT_DOUBLE_EQ(l.app(2), 60);
  EXPECT_DOUBLE_EQ(l.total(), 95);
  EXPECT_DOUBLE_EQ(l.app(9), 0);
  EXPECT_DOUBLE_EQ(l.task(1, 1, 3), 0);
}

TEST(GpuTime, RejectsBadIntervals) {
  GpuTimeLedger l;
  const std::vector<GpuIndex> none, dup = {1, 1}, neg = {-1}, ok = {0};
  EXPECT_THROW(l.record(1, 0, none, 0, 1), std::invalid_argument);
  EXPECT_THROW(l.record(1, 0, dup, 0, 1), std::invalid_argument);
  EXPECT_THROW(l.record(1, 0, neg, 0, 1), std::invalid_argument);
  EXPECT_THROW(l.record(1, 0, ok, 5, 1), std::invalid_argument);
  EXPECT_DOUBLE_EQ(l.total(), 0);
}

}  // namespace
}  // namespace themis::bidder
