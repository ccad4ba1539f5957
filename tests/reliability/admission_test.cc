#include "coordinator/admission.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace themis::coordinator
