// Rigid gangs (docs/trace-format.md "elastic"): a job runs only on all of its GPUs, unless the trace
// marks it elastic; the app model prices rigid jobs on whole gangs only.
#include <gtest/gtest.h>

#include <cmath>

#include "bidder/app_model.h"
#include "bidder/job_packing.h"
#include "policy/arbiter/policies/registry.h"
#include "sim/sim_app.h"
#include "sim/simulator.h"

namespace themis::sim {
namespace {

Cluster one_machine(int gpus) { return Cluster(ClusterSpec{"m", {{"m0", "r0", {gpus}}}}); }

std::vector<AppSpec> two_apps(bool elastic) {
  const std::string flag = elastic ? R"(,"elastic":true)" : "";
  return parse_trace(
      R"({"name":"a","arrival":0,"jobs":[{"model":"x","gpus":2,"serial_iter_time":1,"iterations":1000,"slowdown":[1,1,1,1]}]}
{"name":"b","arrival":0,"jobs":[{"model":"x","gpus":4,"serial_iter_time":1,"iterations":1000,"slowdown":[1,1,1,1])" +
          flag + "}]}\n",
      "two");
}

// FIFO on 4 GPUs: a (2-GPU job, 500 s on 2) starts first; b's 4-GPU gang cannot start on the other 2
// and waits for a to finish (500 s), then runs 250 s. Elastic, b runs on the 2 left at half speed from
// 0 and has done its 1000 iterations at 500 s.
TEST(RigidGang, WaitsForAllItsGpusWhileAnElasticJobRunsOnFewer) {
  const Cluster cluster = one_machine(4);
  auto fifo = arbiter::policies::make_policy("fifo");
  const SimResult rigid = simulate(cluster, two_apps(false), *fifo, SimSettings{});
  EXPECT_NEAR(rigid.apps[0].jct, 500, 1e-6);
  EXPECT_NEAR(rigid.apps[1].jct, 750, 1e-6);
  EXPECT_NEAR(rigid.apps[1].gpu_time, 1000, 1e-6);  // 4 GPUs × 250 s: it held none while it waited
  auto fifo2 = arbiter::policies::make_policy("fifo");
  const SimResult elastic = simulate(cluster, two_apps(true), *fifo2, SimSettings{});
  EXPECT_NEAR(elastic.apps[1].jct, 500, 1e-6);
}

TEST(RigidGang, AppTakesOnlyWholeGangsAndReleasesAStoppedGangsGpus) {
  const Cluster cluster = one_machine(4);
  const auto apps = two_apps(false);
  SimApp b(1, apps[1], cluster, AppSettings{}, 2);
  EXPECT_EQ(b.usable_extra(3), 0);
  EXPECT_EQ(b.usable_extra(4), 4);
  const GpuIndex three[] = {0, 1, 2};
  EXPECT_EQ(b.gain(three), (std::vector<GpuIndex>{0, 1, 2}));  // all back: no job can start on 3
  EXPECT_TRUE(b.held().empty());
  const GpuIndex four[] = {0, 1, 2, 3};
  EXPECT_TRUE(b.gain(four).empty());
  b.advance_to(10);
  const GpuIndex lost[] = {2};
  EXPECT_EQ(b.lose(lost), (std::vector<GpuIndex>{0, 1, 3}));  // the gang stopped: its other GPUs go back
  EXPECT_TRUE(b.held().empty());
  EXPECT_TRUE(std::isinf(b.next_completion()));
}

TEST(RigidGang, UsableExtraIsTheLargestSumOfWholeGangs) {
  const Cluster cluster = one_machine(8);
  const auto apps = parse_trace(
      R"({"name":"m","arrival":0,"jobs":[{"model":"x","gpus":3,"serial_iter_time":1,"iterations":10,"slowdown":[1,1,1,1]},{"model":"x","gpus":5,"serial_iter_time":1,"iterations":10,"slowdown":[1,1,1,1]}]})",
      "mixed");
  SimApp app(0, apps[0], cluster, AppSettings{}, 1);
  EXPECT_EQ(app.extra_demand(), 8);
  EXPECT_EQ(app.usable_extra(2), 0);
  EXPECT_EQ(app.usable_extra(4), 3);
  EXPECT_EQ(app.usable_extra(7), 5);
  EXPECT_EQ(app.usable_extra(8), 8);
}

// Holding nothing, the app's bid has no row that starts no whole gang (a 4-GPU gang: rows of 4 only).
TEST(RigidGang, BidHasOnlyRowsThatStartWholeGangs) {
  const Cluster cluster = one_machine(8);
  const auto apps = parse_trace(
      R"({"name":"g","arrival":0,"jobs":[{"model":"x","gpus":4,"serial_iter_time":1,"iterations":1000,"slowdown":[1,1,1,1]},{"model":"x","gpus":4,"serial_iter_time":1,"iterations":1000,"slowdown":[1,1,1,1]}]})",
      "gangs");
  SimApp app(0, apps[0], cluster, AppSettings{}, 1);
  Offer offer;
  for (GpuIndex g = 0; g < 8; ++g) offer.gpus.push_back(g);
  const Bid bid = app.bid(offer);
  ASSERT_FALSE(bid.rows.empty());
  for (const auto& row : bid.rows) EXPECT_EQ(row.gpus.size() % 4, 0u) << row.gpus.size();
  EXPECT_TRUE(std::isfinite(app.current_rho()));
}

// A 4-GPU gang 2.8x slower across machines, on four one-GPU machines of one rack (the shape of a Gavel
// trace's cluster): the best placement here spans machines, and waiting is priced at that placement, so
// the four GPUs on offer beat waiting and it bids for them. Priced at S = 1, a placement this cluster does
// not have, every row was worse than waiting and the app bid nothing, round after round.
TEST(RigidGang, AGangThatCanOnlySpanMachinesBidsForThem) {
  ClusterSpec spec{"flat", {}};
  for (int m = 0; m < 4; ++m) spec.machines.push_back({"m" + std::to_string(m), "r0", {1}});
  const Cluster cluster(spec);
  EXPECT_EQ(cluster.tightest_locality(4), Locality::kSameRack);
  const auto apps = parse_trace(
      R"({"name":"lm","arrival":0,"jobs":[{"model":"x","gpus":4,"serial_iter_time":1,"iterations":1000,"slowdown":[1,1,2.8,6.4]}]})",
      "flat");
  SimApp app(0, apps[0], cluster, AppSettings{}, 1);
  const Offer offer{1, {0, 1, 2, 3}};
  const Bid bid = app.bid(offer);
  ASSERT_EQ(bid.rows.size(), 1u);
  EXPECT_EQ(bid.rows[0].gpus, (std::vector<GpuIndex>{0, 1, 2, 3}));
  EXPECT_LT(bid.rows[0].rho, bid.rho_no_new);
  EXPECT_NEAR(app.attainable_slowdown(), 2.8, 1e-12);
}

// Two 3-GPU machines won at once by an app of two 1-GPU jobs (the longest, so they run first) and two
// 2-GPU gangs: the gangs take their GPUs first, one machine each, and the 1-GPU jobs the one left on
// each. Placing the 1-GPU jobs first put both on machine 0 and split a gang over the two machines.
TEST(RigidGang, WidestGangsArePlacedFirstSoNoneIsSplit) {
  const Cluster cluster(ClusterSpec{"two", {{"m0", "r0", {3}}, {"m1", "r0", {3}}}});
  const auto apps = parse_trace(
      R"({"name":"mix","arrival":0,"jobs":[{"model":"x","gpus":1,"serial_iter_time":1,"iterations":1000,"slowdown":[1,1,2,2]},{"model":"x","gpus":1,"serial_iter_time":1,"iterations":1000,"slowdown":[1,1,2,2]},{"model":"x","gpus":2,"serial_iter_time":1,"iterations":1000,"slowdown":[1,1,2,2]},{"model":"x","gpus":2,"serial_iter_time":1,"iterations":1000,"slowdown":[1,1,2,2]}]})",
      "mix");
  SimApp app(0, apps[0], cluster, AppSettings{}, 1);
  const GpuIndex all[] = {0, 1, 2, 3, 4, 5};
  EXPECT_TRUE(app.gain(all).empty());
  app.advance_to(10);
  EXPECT_DOUBLE_EQ(app.placement_score_so_far(), 1.0);  // no gang ran across machines
  // Each gang's jobs finish together: 1000 iterations on 2 GPUs at S = 1, 500 s, not 1000 s at S = 2.
  EXPECT_NEAR(app.completion_on(0), 500, 1e-6);
  EXPECT_NEAR(app.completion_on(3), 500, 1e-6);
}

// Longest first with backfill: on 3 GPUs, gangs of 2, 2 and 1 GPUs, 50 s each: the first 2-GPU gang
// and the 1-GPU job start at 0 (the second gang does not fit), the second gang at 50 and ends at 100.
// On 4 the two gangs start at 0 and the 1-GPU job at 50; on 5 all three at 0.
TEST(RigidPacking, GangsStartWholeAndBackfill) {
  const Seconds work[] = {100, 100, 50};
  const int gpus[] = {2, 2, 1};
  EXPECT_DOUBLE_EQ(bidder::rigid_phase_finish_time(work, gpus, 3, 1.0), 100);
  EXPECT_DOUBLE_EQ(bidder::rigid_phase_finish_time(work, gpus, 4, 1.0), 100);
  EXPECT_DOUBLE_EQ(bidder::rigid_phase_finish_time(work, gpus, 5, 1.0), 50);
  EXPECT_TRUE(std::isinf(bidder::rigid_phase_finish_time(work, gpus, 1, 1.0)));  // a 2-GPU gang never fits
  const Seconds one[] = {100};
  const int four[] = {4};
  EXPECT_DOUBLE_EQ(bidder::rigid_phase_finish_time(one, four, 8, 1.2), 30);  // 100 × 1.2 / 4
  const int bad[] = {2, 2};
  EXPECT_THROW(bidder::rigid_phase_finish_time(work, bad, 3, 1.0), std::invalid_argument);
}

TEST(RigidGang, TraceElasticFieldRoundTripsAndRejectsNonBooleans) {
  const auto apps = two_apps(true);
  EXPECT_FALSE(apps[0].jobs[0].elastic);
  EXPECT_TRUE(apps[1].jobs[0].elastic);
  EXPECT_TRUE(parse_trace(trace_to_jsonl(apps), "rt")[1].jobs[0].elastic);
  try {
    parse_trace(R"({"name":"a","arrival":0,"jobs":[{"model":"VGG16","gpus":1,"serial_iter_time":1,"iterations":1,"elastic":1}]})",
                "t.jsonl");
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_STREQ(e.what(), "t.jsonl:1: jobs[0].elastic: must be true or false");
  }
}

}  // namespace
}  // namespace themis::sim

namespace themis::bidder {
namespace {

// The app model with rigid gangs (AppState::remaining_job_gpus): two 2-GPU gangs of 100 serial seconds
// (50 s each on their gang). On 2 GPUs they run one after the other (100 s), on 3 the same (a third GPU
// starts no gang), on 4 together (50 s); on 1 never. Holding nothing it is priced on its widest gang.
AppState two_gangs() {
  AppState s;
  s.remaining = {{{100, 100}, 2}};
  s.remaining_job_gpus = {{2, 2}};
  s.life = {{.work = 200, .demand = 4, .longest = 50}};
  s.gang = 2;
  s.smallest_bundle = 2;
  s.demand_now = 4;
  s.cluster_gpus = 8;
  s.n_avg = 1;
  s.lease = 600;
  return s;
}

TEST(RigidAppModel, PricesWholeGangsOnly) {
  const AppModel m(two_gangs());
  EXPECT_DOUBLE_EQ(m.remaining_time(2, 1.0), 100);
  EXPECT_DOUBLE_EQ(m.remaining_time(3, 1.0), 100);
  EXPECT_DOUBLE_EQ(m.remaining_time(4, 1.0), 50);
  EXPECT_TRUE(std::isinf(m.remaining_time(1, 1.0)));
  // Holding one GPU (too few for a gang): "no new GPUs" is a lease's wait and then one gang.
  EXPECT_DOUBLE_EQ(m.rho_without_new(1, 1.0, 1.0), (600 + 100) / m.independent_time());
}

TEST(RigidAppModel, RejectsGangsThatDoNotMatchTheJobs) {
  AppState s = two_gangs();
  s.remaining_job_gpus = {{2}};
  try {
    const AppModel m(s);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("remaining_job_gpus[0]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace themis::bidder
