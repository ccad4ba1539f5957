#include "coordinator/retry_policy.h"

#include <algorithm>
#include <cmath>

namespace themis::coordinator {

namespace {
std::string seconds_text(double s) {
  if (s >= 60 && std::fmod(s, 60) == 0) return std::to_string(static_cast<long long>(s / 60)) + " min";
  return std::to_string(static_cast<long long>(std::llround(s))) + " s";
}
}  // namespace

std::map<FailureClass, ClassRetry> RetryPolicy::default_classes() {
  return {
      {FailureClass::kUserError, {0, 0, 0, 2}},
      {FailureClass::kOutOfMemory, {0, 0, 0, 2}},
      {FailureClass::kCommunication, {3, 10, 300, 2}},
      {FailureClass::kNodeFailure, {5, 1, 300, 2}},
      {FailureClass::kPreemption, {-1, 0, 0, 2}},
      {FailureClass::kOther, {1, 60, 600, 2}},
  };
}

double backoff_seconds(const ClassRetry& rule, int retry_number) {
  if (retry_number < 1 || rule.backoff_s <= 0) return 0;
  const double grown = rule.backoff_s * std::pow(std::max(1.0, rule.backoff_multiplier), retry_number - 1);
  return rule.backoff_max_s > 0 ? std::min(grown, std::max(rule.backoff_s, rule.backoff_max_s)) : grown;
}

RetryDecision decide_retry(const RetryPolicy& policy, FailureClass failure_class, int earlier_failures, double now) {
  const ClassRetry& rule = policy.of(failure_class);
  const std::string name(to_string(failure_class));
  RetryDecision d;
  d.retry_number = std::max(0, earlier_failures) + 1;
  if (rule.max_retries == 0) {
    d.summary = "no retry: " + name + " is not retried";
    return d;
  }
  if (rule.max_retries > 0 && d.retry_number > rule.max_retries) {
    d.summary = "no retry: " + name + " failed " + std::to_string(d.retry_number) + " times, limit " +
                std::to_string(rule.max_retries) + " retries";
    return d;
  }
  d.retry = true;
  const double wait = backoff_seconds(rule, d.retry_number);
  d.not_before = now + wait;
  d.summary = "retry " + std::to_string(d.retry_number) +
              (rule.max_retries > 0 ? " of " + std::to_string(rule.max_retries) : std::string()) +
              (wait > 0 ? " after " + seconds_text(wait) + " back-off" : std::string(" at once"));
  return d;
}

}  // namespace themis::coordinator
