#include "policy/arbiter/deadline.h"

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace themis::arbiter {
namespace {

// Only lower bounds on elapsed time are asserted (a sleep lasts at least as long as asked), so a loaded
// machine cannot make these fail.

TEST(Deadline, WithoutABudgetNothingIsEverSpent) {
  const Deadline none(0);
  EXPECT_FALSE(none.enabled());
  EXPECT_FALSE(none.passed());
  EXPECT_FALSE(none.half_passed());
}

TEST(Deadline, AnHourIsNotHalfSpentAtOnce) {
  const Deadline hour(3600);
  EXPECT_TRUE(hour.enabled());
  EXPECT_FALSE(hour.half_passed());
  EXPECT_FALSE(hour.passed());
}

TEST(Deadline, HalfIsSpentOnceHalfTheBudgetHasElapsed) {
  const Deadline short_budget(0.04);
  std::this_thread::sleep_for(std::chrono::milliseconds(25));
  EXPECT_TRUE(short_budget.half_passed());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(short_budget.passed());
  EXPECT_TRUE(short_budget.half_passed());
}

}  // namespace
}  // namespace themis::arbiter
