// `run --fidelity gavel` (sim/gavel_fidelity.h): Gavel's simulator's rounds, FIFO and re-solve rule on
// scenarios small enough to follow by hand, 360 s rounds throughout.
#include <gtest/gtest.h>

#include <string>

#include "sim/gavel_fidelity.h"
#include "sim/gavel_fidelity_report.h"

namespace themis::sim {
namespace {

// One line of a trace: a rigid job of `gpus` GPUs doing `steps_per_s` steps/s on all of them.
std::string job(const std::string& name, double arrival, int gpus, double steps_per_s, long long steps) {
  return R"({"name":")" + name + R"(","arrival":)" + std::to_string(arrival) + R"(,"jobs":[{"model":"x","gpus":)" +
         std::to_string(gpus) + R"(,"serial_iter_time":)" + std::to_string(gpus / steps_per_s) +
         R"(,"iterations":)" + std::to_string(steps) + R"(,"slowdown":[1,1,1,1]}]})" + "\n";
}

GavelFidelitySettings cluster_of(int gpus) {
  GavelFidelitySettings s;
  s.gpus = gpus;
  return s;
}

// 1 GPU; a (1 step/s, 500 steps) and b (2 steps/s, 1000 steps) both arrive at 0. FIFO allocates a;
// a runs 360 steps in round 1 (0–360) and its last 140 in round 2 (360–500): JCT 500, not the 720 of
// two whole rounds. The re-solve at 500 (allowed: the only one so far was at t = 0) hands a's GPU to b,
// which runs 720 steps (500–860) and its last 280 (860–1000): JCT 1000.
TEST(GavelFidelity, TwoJobsOnOneGpuRunInRoundsAndEndWhenTheirLastStepsDo) {
  const auto apps = parse_trace(job("a", 0, 1, 1, 500) + job("b", 0, 1, 2, 1000), "two");
  const GavelFidelityResult r = simulate_gavel_fifo(apps, cluster_of(1));
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_TRUE(r.jobs[0].completed);
  EXPECT_TRUE(r.jobs[1].completed);
  EXPECT_NEAR(r.jobs[0].jct, 500, 1e-9);
  EXPECT_NEAR(r.jobs[1].jct, 1000, 1e-9);
  EXPECT_NEAR(gavel_average_jct(r), 750, 1e-9);
  EXPECT_NEAR(r.makespan, 1000, 1e-9);
  EXPECT_EQ(r.rounds, 4);
  EXPECT_EQ(r.resolves, 2);
  EXPECT_EQ(r.idle_waits, 0);
}

// 2 GPUs, all 1 step/s. a (400 steps) and b (4000) start at 0. c (100 steps) arrives at 10 and is
// admitted at the round boundary 360, when the allocation is re-solved (a and b keep both GPUs). a ends
// at 400 (round 360–720 is as long as b's micro-task). Its GPU then idles until the next re-solve,
// 1920 s after the one at 360: at 2520 c starts and ends at 2620 (JCT 2610). b runs whole rounds to
// 3960 and its last 40 steps to 4000.
TEST(GavelFidelity, FreedGpusWaitForTheNextResolveAtLeast1920sAfterTheLast) {
  const auto apps = parse_trace(job("a", 0, 1, 1, 400) + job("b", 0, 1, 1, 4000) + job("c", 10, 1, 1, 100), "three");
  const GavelFidelityResult r = simulate_gavel_fifo(apps, cluster_of(2));
  EXPECT_NEAR(r.jobs[0].jct, 400, 1e-9);
  EXPECT_NEAR(r.jobs[1].jct, 4000, 1e-9);
  EXPECT_NEAR(r.jobs[2].jct, 2610, 1e-9);
  EXPECT_NEAR(r.makespan, 4000, 1e-9);
  EXPECT_EQ(r.resolves, 3);  // 0, 360, 2520

  // Re-solving at every boundary instead, c takes a's GPU at 720 (the first boundary after 400).
  GavelFidelitySettings eager = cluster_of(2);
  eager.resolve_interval = 0;
  EXPECT_NEAR(simulate_gavel_fifo(apps, eager).jobs[2].jct, 720 + 100 - 10, 1e-9);
}

// A 2-GPU job at 1 step/s with 361 steps: 360 in round 1, then 1 step split as 1 / 2 = 0 per worker,
// so every later micro-task fails; after 5 in a row the job is dropped, not completed.
TEST(GavelFidelity, AMultiGpuJobWhoseLastStepsSplitToZeroPerWorkerIsDropped) {
  const auto apps = parse_trace(job("d", 0, 2, 1, 361), "one");
  const GavelFidelityResult r = simulate_gavel_fifo(apps, cluster_of(2));
  EXPECT_FALSE(r.jobs[0].completed);
  EXPECT_TRUE(r.jobs[0].dropped);
  EXPECT_EQ(gavel_average_jct(r), 0);
  EXPECT_EQ(r.rounds, 6);
}

TEST(GavelFidelity, RefusesAJobLargerThanTheCluster) {
  const auto apps = parse_trace(job("big", 0, 4, 1, 10), "one");
  try {
    simulate_gavel_fifo(apps, cluster_of(2));
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'big' needs 4 GPUs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace themis::sim
