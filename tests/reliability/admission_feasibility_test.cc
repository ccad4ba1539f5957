// Feasibility at submit (coordinator/admission_feasibility.h): the largest placement one job can get on
// the registered hosts, and the message naming it. Hand-checked sums.
#include "coordinator/admission_feasibility.h"

#include <gtest/gtest.h>

namespace themis::coordinator {
namespace {

TEST(Feasibility, AJobWiderThanEveryRegisteredGpuIsInfeasibleAndTheLimitIsNamed) {
  EXPECT_EQ(infeasibility(8, {2, 2}).value_or("fits"),
            "job needs 8 GPUs; the largest the registered cluster can give one job is 4 (2 hosts x 2 GPUs)");
  EXPECT_EQ(infeasibility(7, {2, 4}).value_or("fits"),
            "job needs 7 GPUs; the largest the registered cluster can give one job is 6 (2 hosts: 2 + 4 GPUs)");
  EXPECT_EQ(infeasibility(2, {1}).value_or("fits"),
            "job needs 2 GPUs; the largest the registered cluster can give one job is 1 (1 host x 1 GPU)");
}

TEST(Feasibility, AJobThatSpansHostsFits) {
  EXPECT_FALSE(infeasibility(4, {2, 2}).has_value());  // a gang may span hosts
  EXPECT_FALSE(infeasibility(1, {2, 2}).has_value());
}

TEST(Feasibility, NoRegisteredHostMeansNothingIsJudged) { EXPECT_FALSE(infeasibility(64, {}).has_value()); }

TEST(Feasibility, TheReasonIsRecognised) {
  EXPECT_TRUE(is_infeasible_reason(std::string(kInfeasiblePrefix) + "job needs 8 GPUs"));
  EXPECT_FALSE(is_infeasible_reason("queued: admission (demand 8 GPUs would exceed cap 4)"));
}

}  // namespace
}  // namespace themis::coordinator
