#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "bidder/job_packing.h"
#include "core/rng.h"

namespace themis::bidder {
namespace {

Seconds finish(std::vector<Seconds> work, int gpus, int cap = 8, double s = 1.0) {
  return phase_finish_time(work, gpus, cap, s);
}

TEST(JobPacking, PaperExampleSerializesTwoPerGpu) {
  EXPECT_DOUBLE_EQ(finish({640, 800, 800, 960}, 2), 1600);
}

TEST(JobPacking, ExactBeatsLongestFirst) {
  // LPT puts 3,3 then 2,2,2 as {3,2,2},{3,2} = 7; the optimum is {3,3},{2,2,2} = 6.
  EXPECT_DOUBLE_EQ(finish({3, 3, 2, 2, 2}, 2), 6);
}

// The best makespan over every assignment of jobs to GPUs.
Seconds brute_force(const std::vector<Seconds>& work, int gpus) {
  std::size_t assignments = 1;
  for (std::size_t j = 0; j < work.size(); ++j) assignments *= static_cast<std::size_t>(gpus);
  Seconds best = 1e300;
  for (std::size_t code = 0; code < assignments; ++code) {
    std::vector<Seconds> loads(static_cast<std::size_t>(gpus), 0);
    std::size_t c = code;
    for (Seconds w : work) {
      loads[c % static_cast<std::size_t>(gpus)] += w;
      c /= static_cast<std::size_t>(gpus);
    }
    best = std::min(best, *std::max_element(loads.begin(), loads.end()));
  }
  return best;
}

TEST(JobPacking, SerializedPackingIsExactOnSmallPhases) {
  Rng rng(11);
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<Seconds> work;
    const int jobs = 3 + static_cast<int>(rng.below(5));  // 3..7
    for (int j = 0; j < jobs; ++j) work.push_back(static_cast<double>(1 + rng.below(50)));
    const int gpus = 2 + static_cast<int>(rng.below(static_cast<std::uint64_t>(std::min(jobs - 1, 3))));
    EXPECT_DOUBLE_EQ(finish(work, gpus), brute_force(work, gpus)) << "trial " << trial;
  }
}

TEST(JobPacking, ManyJobsFallBackToLongestFirstAndStayNearTheBound) {
  Rng rng(5);
  std::vector<Seconds> work;
  Seconds total = 0;
  for (int j = 0; j < 40; ++j) {
    work.push_back(1 + static_cast<double>(rng.below(100)));
    total += work.back();
  }
  const Seconds got = finish(work, 7);
  EXPECT_GE(got, total / 7);
  EXPECT_LE(got, total / 7 + 100);  // list-scheduling bound: average load + longest job
}

TEST(JobPacking, SpareGpusGoToTheSlowestJob) {
  EXPECT_DOUBLE_EQ(finish({100, 300}, 4), 100);    // 1 + 3 GPUs
  EXPECT_DOUBLE_EQ(finish({800, 800, 800, 800}, 16), 200);  // even split
  EXPECT_DOUBLE_EQ(finish({3600}, 16), 450);       // capped at 8
  EXPECT_DOUBLE_EQ(finish({3600}, 16, 8, 1.2), 3600 * 1.2 / 8);
}

TEST(JobPacking, SlowdownOnlyForMultiGpuJobs) {
  EXPECT_DOUBLE_EQ(finish({100, 100}, 2, 8, 1.3), 100);
  EXPECT_DOUBLE_EQ(finish({100}, 2, 8, 1.3), 65);
}

TEST(JobPacking, EdgeCases) {
  EXPECT_DOUBLE_EQ(finish({}, 4), 0);
  EXPECT_DOUBLE_EQ(finish({0, 0}, 0), 0);
  EXPECT_TRUE(std::isinf(finish({1}, 0)));
  EXPECT_THROW(finish({-1}, 1), std::invalid_argument);
  EXPECT_THROW(finish({1}, -1), std::invalid_argument);
  EXPECT_THROW(finish({1}, 1, 0), std::invalid_argument);
  EXPECT_THROW(finish({1}, 1, 1, 0.5), std::invalid_argument);
}

// From a running state: a 2-GPU gang with 100 s left and a 1-GPU job with 50 s left hold three of four
// GPUs. Queued: a 2-GPU gang of 80 s (waits for the 1-GPU job and the free GPU, starts at 50, ends at
// 130), then a 1-GPU job of 30 s that starts at once on the free GPU past it (backfill), ends at 30.
TEST(ListSchedule, RunningGangsHoldTheirGpusAndQueuedOnesStartInOrderAsTheyFit) {
  const std::vector<RunningGang> running{{.time_left = 100, .gpus = 2}, {.time_left = 50, .gpus = 1}};
  const std::vector<QueuedGang> queued{{.time = 80, .gpus = 2}, {.time = 30, .gpus = 1}};
  EXPECT_DOUBLE_EQ(list_schedule_finish(running, 1, queued), 130);
  EXPECT_DOUBLE_EQ(list_schedule_finish(running, 1, {}), 100);
  const std::vector<QueuedGang> too_wide{{.time = 10, .gpus = 5}};
  EXPECT_TRUE(std::isinf(list_schedule_finish(running, 1, too_wide)));
}

// A restart is paid by every start except a job that resumes at once: on one GPU, a running job with
// 310 s left and a waiting one of 350 s end at 310 + 10 + 350 = 670 s in that order, and at
// 10 + 350 + 10 + 310 = 680 s the other way round.
TEST(ListSchedule, AJobResumingAtOncePaysNoRestart) {
  const QueuedGang resumed{.time = 310, .gpus = 1, .restart = 10, .resumes = true};
  const QueuedGang waiting{.time = 350, .gpus = 1, .restart = 10, .resumes = false};
  const std::vector<QueuedGang> keep{resumed, waiting};
  const std::vector<QueuedGang> swap{waiting, resumed};
  EXPECT_DOUBLE_EQ(list_schedule_finish({}, 1, keep), 670);
  EXPECT_DOUBLE_EQ(list_schedule_finish({}, 1, swap), 680);
}

}  // namespace
}  // namespace themis::bidder
