#include "coordinator/retry_policy.h"

#include <gtest/gtest.h>

namespace themis::coordinator {
namespace {

constexpr double kNow = 1'000'000;

TEST(RetryPolicy, UserErrorsAndOutOfMemoryAreNotRetriedByDefault) {
  const RetryPolicy policy;
  for (const auto c : {FailureClass::kUserError, FailureClass::kOutOfMemory}) {
    const auto d = decide_retry(policy, c, 0, kNow);
    EXPECT_FALSE(d.retry);
    EXPECT_EQ(d.summary, "no retry: " + std::string(to_string(c)) + " is not retried");
  }
}

TEST(RetryPolicy, CommunicationFailuresBackOffExponentiallyUpToTheLimit) {
  const RetryPolicy policy;
  const double waits[] = {10, 20, 40};
  for (int earlier = 0; earlier < 3; ++earlier) {
    const auto d = decide_retry(policy, FailureClass::kCommunication, earlier, kNow);
    ASSERT_TRUE(d.retry) << earlier;
    EXPECT_DOUBLE_EQ(d.not_before, kNow + waits[earlier]);
    EXPECT_EQ(d.retry_number, earlier + 1);
  }
  EXPECT_EQ(decide_retry(policy, FailureClass::kCommunication, 1, kNow).summary, "retry 2 of 3 after 20 s back-off");
  const auto exhausted = decide_retry(policy, FailureClass::kCommunication, 3, kNow);
  EXPECT_FALSE(exhausted.retry);
  EXPECT_EQ(exhausted.summary, "no retry: communication failed 4 times, limit 3 retries");
}

TEST(RetryPolicy, BackOffIsCappedAtItsMaximum) {
  const RetryPolicy policy;
  // communication: 10 s doubling, at most 300 s.
  EXPECT_DOUBLE_EQ(backoff_seconds(policy.of(FailureClass::kCommunication), 5), 160);
  EXPECT_DOUBLE_EQ(backoff_seconds(policy.of(FailureClass::kCommunication), 6), 300);
  // node_failure: 1 s doubling; the fifth retry waits 16 s.
  EXPECT_DOUBLE_EQ(backoff_seconds(policy.of(FailureClass::kNodeFailure), 5), 16);
  ClassRetry rule{-1, 10, 60, 3};
  EXPECT_DOUBLE_EQ(backoff_seconds(rule, 1), 10);
  EXPECT_DOUBLE_EQ(backoff_seconds(rule, 2), 30);
  EXPECT_DOUBLE_EQ(backoff_seconds(rule, 3), 60);
  EXPECT_DOUBLE_EQ(backoff_seconds(rule, 30), 60);
}

TEST(RetryPolicy, PreemptionAlwaysResumesAtOnce) {
  const RetryPolicy policy;
  const auto d = decide_retry(policy, FailureClass::kPreemption, 1000, kNow);
  EXPECT_TRUE(d.retry);
  EXPECT_DOUBLE_EQ(d.not_before, kNow);
  EXPECT_EQ(d.summary, "retry 1001 at once");
}

TEST(RetryPolicy, ConfiguredLimitsReplaceTheDefaults) {
  RetryPolicy policy;
  policy.classes[FailureClass::kOutOfMemory] = {1, 30, 30, 2};
  const auto first = decide_retry(policy, FailureClass::kOutOfMemory, 0, kNow);
  EXPECT_TRUE(first.retry);
  EXPECT_DOUBLE_EQ(first.not_before, kNow + 30);
  EXPECT_EQ(first.summary, "retry 1 of 1 after 30 s back-off");
  EXPECT_FALSE(decide_retry(policy, FailureClass::kOutOfMemory, 1, kNow).retry);
  policy.classes[FailureClass::kOther] = {-1, 120, 0, 2};  // unlimited, no cap
  const auto d = decide_retry(policy, FailureClass::kOther, 9, kNow);
  EXPECT_TRUE(d.retry);
  EXPECT_DOUBLE_EQ(d.not_before, kNow + 120 * 512);
}

}  // namespace
}  // namespace themis::coordinator
