// The order of events at one instant: a job that completes at or before a lease expiry that the
// batching window pulls forward is settled first, so the window (which only batches expiries) never
// takes the GPU from a job that has finished or would finish within its lease.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "policy/arbiter/policies/registry.h"
#include "sim/simulator.h"

namespace themis::sim {
namespace {

std::string one_job_app(const std::string& name, Seconds arrival, int seconds) {
  return R"({"name":")" + name + R"(","arrival":)" + std::to_string(arrival) +
         R"(,"jobs":[{"model":"ResNet50","gpus":1,"serial_iter_time":1,"iterations":)" +
         std::to_string(seconds) + "}]}\n";
}

Cluster one_machine(int gpus) {
  ClusterSpec spec;
  spec.name = "one-machine";
  spec.machines.push_back({"m0", "r0", {gpus}});
  return Cluster(spec);
}

SimResult run(int gpus, const std::string& trace, const std::string& policy_name, Seconds batch_window,
              Seconds restart_cost = 0) {
  auto policy = arbiter::policies::make_policy(policy_name);
  SimSettings settings;
  settings.lease = 600;
  settings.batch_window = batch_window;
  settings.restart_cost = restart_cost;
  return simulate(one_machine(gpus), parse_trace(trace, "event-order"), *policy, settings);
}

void expect_jcts(const SimResult& r, const std::vector<Seconds>& jcts) {
  ASSERT_EQ(r.apps.size(), jcts.size());
  for (std::size_t i = 0; i < jcts.size(); ++i) {
    EXPECT_TRUE(r.apps[i].finished) << r.apps[i].name;
    EXPECT_NEAR(r.apps[i].jct, jcts[i], 1e-6) << r.apps[i].name;
  }
}

TEST(EventOrder, AJobFinishingAtOrJustBeforeItsLeaseExpiryCompletesThere) {
  // One GPU, 600 s leases; "short" (570 or 600 s of work) and "long" (1000 s) arrive at 0. Every
  // policy here runs "short" first. It completes at 570 s, inside the 60 s window before its lease
  // ends at 600 s, or exactly at 600 s; either way it finishes then, and "long" runs from that
  // instant to the end: JCTs `work` and `work` + 1000. Expiring the lease first left "short" holding
  // no GPU with its work done; under least-attained-service, and under Themis (long's ρ is now the
  // worse), "long" then won the GPU for a whole lease and "short" was settled 600 s late.
  for (const char* policy : {"tiresias", "themis", "fifo"}) {
    for (const int work : {570, 600}) {
      for (const Seconds window : {60.0, 0.0}) {
        SCOPED_TRACE(std::string(policy) + ", short " + std::to_string(work) + " s, window " +
                     std::to_string(static_cast<int>(window)) + " s");
        expect_jcts(run(1, one_job_app("short", 0, work) + one_job_app("long", 0, 1000), policy, window),
                    {static_cast<Seconds>(work), work + 1000.0});
      }
    }
  }
}

TEST(EventOrder, AJobFinishingAtAnExpiryPaysNoRestart) {
  // Two GPUs, 600 s leases, 60 s window, 30 s restart cost. At 0, "x" (100 s) takes GPU 0 and
  // "short" (540 s) GPU 1; "y" (410 s) waits. x completes at 30 + 100 = 130 s and y starts on GPU 0
  // (lease to 730 s); short and y both complete at 570 s (30 + 540, 130 + 30 + 410). JCTs 130, 570,
  // 570. Expiring short's lease (600 s, in the window) first, then freeing y's GPU 0, left short to
  // win a first-fit GPU 0 back, a move: it paid 30 s more to finish work it had done.
  for (const char* policy : {"tiresias", "themis", "fifo"}) {
    SCOPED_TRACE(policy);
    expect_jcts(run(2, one_job_app("x", 0, 100) + one_job_app("short", 0, 540) + one_job_app("y", 0, 410),
                    policy, 60, 30),
                {130, 570, 570});
  }
}

TEST(EventOrder, AnExpiryPulledForwardWaitsForAJobThatCompletesWithinTheLease) {
  // One GPU, 600 s leases, 60 s window. "a" (590 s) runs from 0, its lease ends at 600 s; "c"
  // (1000 s) arrives at 560 s, and the window pulls a's expiry forward to that arrival. a's job
  // completes at 590 s, within its lease, so it keeps the GPU until then, and c runs from 590 s:
  // JCTs 590 and 590 + 1000 - 560 = 1030. Expiring a's lease at 560 s cut a off 30 s short, and
  // under least-attained-service c took the GPU for a whole lease first (a's JCT 1190).
  for (const char* policy : {"tiresias", "themis", "fifo"}) {
    SCOPED_TRACE(policy);
    expect_jcts(run(1, one_job_app("a", 0, 590) + one_job_app("c", 560, 1000), policy, 60), {590, 1030});
  }
}

}  // namespace
}  // namespace themis::sim
