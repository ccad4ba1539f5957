#pragma once
// What happens to a job after a failed attempt: retried after an exponential back-off, or failed for
// good, per failure class. Pure: the caller passes the time (docs/reliability.md gives the defaults and
// the reasons for them).
#include <map>
#include <string>

#include "coordinator/failure_class.h"

namespace themis::coordinator {

struct ClassRetry {
  int max_retries = 0;          // retries after the first failure of this class; -1: unlimited
  double backoff_s = 0;         // wait before the first retry
  double backoff_max_s = 0;     // the wait doubles with each retry up to this
  double backoff_multiplier = 2;
};

struct RetryPolicy {
  // Every class has an entry; the defaults are the ones documented in docs/reliability.md.
  std::map<FailureClass, ClassRetry> classes = default_classes();
  static std::map<FailureClass, ClassRetry> default_classes();
  const ClassRetry& of(FailureClass c) const { return classes.at(c); }
};

struct RetryDecision {
  bool retry = false;
  double not_before = 0;  // unix seconds: the job may be placed again from then on
  int retry_number = 0;   // 1 for the first retry of this class
  std::string summary;    // e.g. "retry 2 of 3 after 20 s back-off" or "no retry: out_of_memory is never retried"
};

// `earlier_failures`: how many failed attempts of the same class the job had before this one.
RetryDecision decide_retry(const RetryPolicy& policy, FailureClass failure_class, int earlier_failures, double now);

// The wait before retry number `retry_number` (1-based): backoff_s * multiplier^(n-1), at most backoff_max_s.
double backoff_seconds(const ClassRetry& rule, int retry_number);

}  // namespace themis::coordinator
