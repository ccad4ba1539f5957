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

// A nested solve is handed no budget (0) without a deadline, and a positive one with a deadline, even once it has
// passed: a budget of 0 would read as none.
TEST(Deadline, ANestedSolveGetsAPositiveBudgetOnlyUnderADeadline) {
  EXPECT_EQ(Deadline(0).budget_left(), 0.0);
  const Deadline hour(3600);
  EXPECT_GT(hour.budget_left(), 3000.0);
  EXPECT_LE(hour.budget_left(), 3600.0);
  const Deadline short_budget(0.001);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(short_budget.passed());
  EXPECT_EQ(short_budget.budget_left(), 1e-6);
}

}  // namespace
}  // namespace themis::arbiter
