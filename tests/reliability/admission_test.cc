#include "coordinator/admission.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace themis::coordinator {
namespace {

using Ids = std::vector<std::int64_t>;

TEST(Admission, OffAdmitsEveryApp) {
  const auto plan = plan_admission({0}, {4, 400, {{1, 8}, {2, 64}}});
  EXPECT_EQ(plan.admit, (Ids{1, 2}));
  EXPECT_TRUE(plan.wait.empty());
}

TEST(Admission, AppOverTheCapWaitsWithItsDemandAndTheCap) {
  // Six GPUs, ratio 1: cap 6. Four are demanded by admitted apps.
  const auto plan = plan_admission({1.0}, {6, 4, {{7, 4}, {8, 1}}});
  EXPECT_TRUE(plan.admit.empty());
  ASSERT_EQ(plan.wait.size(), 2u);
  EXPECT_EQ(plan.wait[0].app, 7);
  EXPECT_EQ(plan.wait[0].reason, "queued: admission (demand 8 GPUs would exceed cap 6)");
  // First come, first served: the small app behind it waits too, and its demand counts the app ahead.
  EXPECT_EQ(plan.wait[1].app, 8);
  EXPECT_EQ(plan.wait[1].reason, "queued: admission (demand 9 GPUs would exceed cap 6)");
}

TEST(Admission, AppsAreAdmittedInOrderAsCapacityFrees) {
  const AdmissionConfig config{1.5};  // 6 GPUs: cap 9
  EXPECT_EQ(admission_cap_gpus(config, 6), 9);
  const auto plan = plan_admission(config, {6, 2, {{1, 4}, {2, 2}, {3, 2}, {4, 1}}});
  EXPECT_EQ(plan.admit, (Ids{1, 2}));
  ASSERT_EQ(plan.wait.size(), 2u);
  EXPECT_EQ(plan.wait[0].reason, "queued: admission (demand 10 GPUs would exceed cap 9)");
}

TEST(Admission, AnAppLargerThanTheCapRunsAloneRatherThanWaitForever) {
  const auto alone = plan_admission({1.0}, {6, 0, {{5, 12}, {6, 1}}});
  EXPECT_EQ(alone.admit, (Ids{5}));
  ASSERT_EQ(alone.wait.size(), 1u);
  EXPECT_EQ(alone.wait[0].reason, "queued: admission (demand 13 GPUs would exceed cap 6)");
}

TEST(Admission, PlanSaysWhereItLeftOff) {
  const auto plan = plan_admission({1.0}, {6, 4, {{7, 4}, {8, 1}}});
  EXPECT_EQ(plan.after, (AdmissionProgress{9, true}));
  const auto open = plan_admission({1.5}, {6, 2, {{1, 4}, {2, 2}}});
  EXPECT_EQ(open.after, (AdmissionProgress{8, false}));
}

TEST(Admission, ArrivalBehindAWaitingAppWaitsWithTheWholeQueueAhead) {
  // The queue of AppOverTheCapWaits...: 9 GPUs counted, one app waiting. A 1-GPU arrival would fit the
  // cap on its own but waits behind them.
  const auto plan = plan_admission_after({1.0}, 6, {9, true}, {{9, 1}});
  EXPECT_TRUE(plan.admit.empty());
  ASSERT_EQ(plan.wait.size(), 1u);
  EXPECT_EQ(plan.wait[0].reason, "queued: admission (demand 10 GPUs would exceed cap 6)");
  EXPECT_EQ(plan.after, (AdmissionProgress{10, true}));
}

bool same(const AdmissionPlan& a, const AdmissionPlan& b) {
  if (a.admit != b.admit || a.wait.size() != b.wait.size() || !(a.after == b.after)) return false;
  for (std::size_t i = 0; i < a.wait.size(); ++i) {
    if (a.wait[i].app != b.wait[i].app || a.wait[i].reason != b.wait[i].reason) return false;
  }
  return true;
}

AdmissionPlan joined(const AdmissionPlan& first, const AdmissionPlan& second) {
  AdmissionPlan plan = first;
  plan.admit.insert(plan.admit.end(), second.admit.begin(), second.admit.end());
  plan.wait.insert(plan.wait.end(), second.wait.begin(), second.wait.end());
  plan.after = second.after;
  return plan;
}

// What the coordinator relies on to decide only the apps submitted since its last plan: for any queue and
// any split, planning the front and then the arrivals from where the front left off decides every app
// exactly as one plan of the whole queue; and a queue whose admitted apps have left it, planned again
// with their demand counted as admitted, keeps every waiting app's decision and reason.
TEST(Admission, DecidingArrivalsAfterTheQueueDecidesAsPlanningTheWholeQueue) {
  std::mt19937_64 rng(20201125);
  auto draw = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  int admitted_some = 0, waited_some = 0, admitted_and_waited = 0;
  for (int trial = 0; trial < 5000; ++trial) {
    const AdmissionConfig config{trial % 10 == 0 ? 0.0 : static_cast<double>(draw(1, 40)) / 8.0};
    AdmissionInput input;
    input.cluster_gpus = draw(1, 64);
    input.admitted_demand_gpus = trial % 3 == 0 ? 0 : draw(0, 80);
    const auto length = static_cast<std::size_t>(draw(0, 12));
    for (std::size_t i = 0; i < length; ++i) input.queue.push_back({static_cast<std::int64_t>(100 + i), draw(0, 20)});
    const auto whole = plan_admission(config, input);
    admitted_some += !whole.admit.empty();
    waited_some += !whole.wait.empty();

    const auto split = static_cast<std::size_t>(draw(0, static_cast<std::int64_t>(length)));
    AdmissionInput front = input;
    front.queue.resize(split);
    const std::vector<QueuedApp> arrivals(input.queue.begin() + static_cast<std::ptrdiff_t>(split), input.queue.end());
    const auto first = plan_admission(config, front);
    const auto rest = plan_admission_after(config, input.cluster_gpus, first.after, arrivals);
    ASSERT_TRUE(same(whole, joined(first, rest))) << "trial " << trial << " split " << split;

    // The admitted apps leave the queue and count as admitted: the same apps wait, for the same reason.
    AdmissionInput again;
    again.cluster_gpus = input.cluster_gpus;
    again.admitted_demand_gpus = input.admitted_demand_gpus;
    for (const auto& q : input.queue) {
      const bool admitted = std::find(whole.admit.begin(), whole.admit.end(), q.app) != whole.admit.end();
      if (admitted) again.admitted_demand_gpus += q.demand_gpus;
      else again.queue.push_back(q);
    }
    const auto replanned = plan_admission(config, again);
    admitted_and_waited += !whole.admit.empty() && !whole.wait.empty();
    ASSERT_TRUE(replanned.admit.empty()) << "trial " << trial;
    ASSERT_EQ(replanned.wait.size(), whole.wait.size()) << "trial " << trial;
    for (std::size_t i = 0; i < whole.wait.size(); ++i) {
      ASSERT_EQ(replanned.wait[i].app, whole.wait[i].app);
      ASSERT_EQ(replanned.wait[i].reason, whole.wait[i].reason);
    }
    ASSERT_EQ(replanned.after, whole.after) << "trial " << trial;
  }
  // The draws cover queues that admit, that wait, and that do both.
  EXPECT_GT(admitted_some, 500);
  EXPECT_GT(waited_some, 500);
  EXPECT_GT(admitted_and_waited, 200);
}

}  // namespace
}  // namespace themis::coordinator
