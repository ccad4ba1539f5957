// The simulator's evaluation semantics: T_id on a 1/N_avg share (Themis §3.2), GPUs freed within the
// batching window offered in one round (architecture.md §2 step 1), bids that charge a bundle's
// spread only to jobs that span several GPUs, successive-halving estimates priced at each phase's own
// job demand, the app scheduler's longest-first order and its keeping of a job's GPUs across a
// renewed lease, and the restart cost of a job whose GPUs change.
#include <gtest/gtest.h>

#include "policy/arbiter/policies/registry.h"
#include "core/cluster_presets.h"
#include "sim/sim_app.h"
#include "sim/simulator.h"

namespace themis::sim {
namespace {

std::vector<AppSpec> two_apps_of_four_jobs() {
  std::string text;
  for (const char* name : {"a", "b"}) {
    text += std::string(R"({"name":")") + name + R"(","arrival":0,"jobs":[)";
    for (int j = 0; j < 4; ++j)
      text += std::string(j ? "," : "") + R"({"model":"VGG16","gpus":1,"serial_iter_time":1,"iterations":1000})";
    text += "]}\n";
  }
  return parse_trace(text, "two");
}

TEST(IndependentTime, IsTheFinishTimeOnAOneOverNShare) {
  // Two apps of four 1000 s one-GPU jobs on 64 GPUs: N_avg = 2, a share of 32 GPUs holds all four jobs,
  // so T_id = 1000 s and, running at once, ρ = 1. (Eq. 1's T_cluster · N_avg would say 2000 s, ρ = 0.5.)
  const Cluster cluster(*cluster_preset("paper-testbed-64"));
  auto policy = arbiter::policies::make_policy("fifo");
  const SimResult r = simulate(cluster, two_apps_of_four_jobs(), *policy, SimSettings{});
  for (const AppResult& a : r.apps) {
    EXPECT_NEAR(a.n_avg, 2.0, 1e-9) << a.name;
    EXPECT_NEAR(a.t_id, 1000.0, 1e-6) << a.name;
    EXPECT_NEAR(a.rho, 1.0, 1e-6) << a.name;
  }
}

TEST(IndependentTime, ShareSmallerThanDemandStretchesIt) {
  // N_avg = 32 on 64 GPUs is a 2-GPU share: 4000 s of work takes 2000 s. N_avg = 1 is the whole
  // cluster, more than the 4 GPUs the app can use: its 1000 s jobs bound T_id below.
  const Cluster cluster(*cluster_preset("paper-testbed-64"));
  const auto apps = two_apps_of_four_jobs();
  SimApp app(0, apps[0], cluster, AppSettings{}, 1);
  EXPECT_NEAR(app.independent_time(32.0), 2000.0, 1e-6);
  EXPECT_NEAR(app.independent_time(1.0), 1000.0, 1e-6);
}

TEST(BatchingWindow, LeasesExpiringCloseTogetherAreAuctionedInOneRound) {
  const auto apps = parse_trace(
      R"({"name":"a","arrival":0,"jobs":[{"model":"VGG16","gpus":1,"serial_iter_time":1,"iterations":5000}]}
{"name":"b","arrival":30,"jobs":[{"model":"VGG16","gpus":1,"serial_iter_time":1,"iterations":5000}]}
)",
      "staggered");
  const Cluster cluster(*cluster_preset("paper-testbed-64"));
  auto run = [&](Seconds window) {
    auto policy = arbiter::policies::make_policy("themis");
    SimSettings s;
    s.batch_window = window;
    return simulate(cluster, apps, *policy, s);
  };
  const SimResult apart = run(0);
  const SimResult together = run(60);
  // Without a window the two leases (granted at 0 and 30 s) expire in separate rounds forever; with a
  // 60 s window the second expiry joins the first, and from then on they stay aligned.
  EXPECT_GT(apart.stats.rounds, together.stats.rounds);
  EXPECT_LE(together.stats.rounds, 2 + 5000 / 540 + 1);
  for (const SimResult* r : {&apart, &together})
    for (const AppResult& a : r->apps) EXPECT_NEAR(a.jct, 5000.0, 1e-3) << a.name;
}

double two_gpu_row_rho(const AppSpec& spec, const Cluster& cluster, std::vector<GpuIndex> offer) {
  SimApp app(0, spec, cluster, AppSettings{}, 1);
  const Bid bid = app.bid(Offer{1, offer});
  for (const BidRow& row : bid.rows)
    if (row.gpus.size() == 2) return row.rho;
  ADD_FAILURE() << "no two-GPU row";
  return 0;
}

TEST(Bid, SpreadBundleCostsNothingToOneGpuJobs) {
  const Cluster cluster(*cluster_preset("paper-testbed-64"));
  ASSERT_EQ(cluster.locality(std::vector<GpuIndex>{0, 1}), Locality::kSameSlot);
  ASSERT_GT(cluster.locality(std::vector<GpuIndex>{0, 63}), Locality::kSameMachine);
  const auto one_gpu_jobs = parse_trace(
      R"({"name":"a","arrival":0,"jobs":[{"model":"VGG16","gpus":1,"serial_iter_time":1,"iterations":1000},{"model":"VGG16","gpus":1,"serial_iter_time":1,"iterations":1000}]})",
      "one")[0];
  const auto two_gpu_job = parse_trace(
      R"({"name":"b","arrival":0,"jobs":[{"model":"VGG16","gpus":2,"serial_iter_time":1,"iterations":2000}]})",
      "two")[0];
  EXPECT_DOUBLE_EQ(two_gpu_row_rho(one_gpu_jobs, cluster, {0, 1}), two_gpu_row_rho(one_gpu_jobs, cluster, {0, 63}));
  EXPECT_GT(two_gpu_row_rho(two_gpu_job, cluster, {0, 63}), two_gpu_row_rho(two_gpu_job, cluster, {0, 1}) * 1.2);
}

TEST(Bid, NewJobsArePlacedByTheirOwnBundleNotTheAppsOtherGpus) {
  // Two 2-GPU VGG16 jobs; job 0 runs on machine 0 (GPUs 0, 1), job 1 waits. New GPUs start job 1, so
  // two GPUs on one other machine are a dense placement for it, two on two machines a spread one.
  const Cluster cluster(*cluster_preset("paper-testbed-64"));
  ASSERT_EQ(cluster.locality(std::vector<GpuIndex>{2, 3}), Locality::kSameSlot);
  ASSERT_GT(cluster.locality(std::vector<GpuIndex>{2, 4}), Locality::kSameMachine);
  const auto spec = parse_trace(
      R"({"name":"a","arrival":0,"jobs":[{"model":"VGG16","gpus":2,"serial_iter_time":1,"iterations":1000},{"model":"VGG16","gpus":2,"serial_iter_time":1,"iterations":1000}]})",
      "two-jobs")[0];
  auto rho_of = [&](std::vector<GpuIndex> offer) {
    SimApp app(0, spec, cluster, AppSettings{}, 1);
    const GpuIndex held[] = {0, 1};
    EXPECT_TRUE(app.gain(held).empty());
    for (const BidRow& row : app.bid(Offer{1, offer}).rows)
      if (row.gpus.size() == 2) return row.rho;
    ADD_FAILURE() << "no two-GPU row";
    return 0.0;
  };
  EXPECT_LT(rho_of({2, 3}) * 1.2, rho_of({2, 4}));
}

Cluster one_machine(int gpus) {
  ClusterSpec spec;
  spec.name = "one-machine";
  spec.machines.push_back({"m0", "r0", {gpus}});
  return Cluster(spec);
}

TEST(SuccessiveHalving, LaterPhasesArePricedAtTheirOwnJobDemand) {
  // Four 1-GPU jobs of 100 iterations of 1 s; phase 1 runs 2 jobs on 2 GPUs each, phase 2 one job on 4.
  // On 4 GPUs: 100 + 200/4 + 100/4 = 175 s, which is T_id on the whole 4-GPU cluster. Capping the later
  // phases at phase 0's one GPU per job would say 100 + 100 + 100 = 300 s.
  const Cluster cluster = one_machine(4);
  const auto spec = parse_trace(
      R"({"name":"sh","arrival":0,"scheme":"successive_halving","jobs":[{"model":"ResNet50","gpus":1,"serial_iter_time":1,"iterations":100},{"model":"ResNet50","gpus":1,"serial_iter_time":1,"iterations":100},{"model":"ResNet50","gpus":1,"serial_iter_time":1,"iterations":100},{"model":"ResNet50","gpus":1,"serial_iter_time":1,"iterations":100}]})",
      "sh")[0];
  SimApp app(0, spec, cluster, AppSettings{}, 1);
  const GpuIndex all[] = {0, 1, 2, 3};
  EXPECT_NEAR(app.remaining_time(all), 175.0, 1e-9);
  EXPECT_NEAR(app.independent_time(1.0), 175.0, 1e-9);
}

AppResult run_alone(const Cluster& cluster, const std::string& line, const std::string& policy_name,
                    SimSettings settings) {
  auto policy = arbiter::policies::make_policy(policy_name);
  const SimResult r = simulate(cluster, parse_trace(line, "alone"), *policy, settings);
  EXPECT_EQ(r.apps.size(), 1u);
  EXPECT_TRUE(r.apps.at(0).finished);
  return r.apps.at(0);
}

TEST(AppScheduler, StartsTheLongestWaitingJobFirst) {
  // Jobs of 100, 100 and 300 s (in that order) on 2 GPUs: longest first runs the 300 s job at once and
  // the two short ones one after the other beside it, 300 s in all; job order would end at 400 s.
  const Cluster cluster = one_machine(2);
  const std::string app =
      R"({"name":"a","arrival":0,"jobs":[{"model":"ResNet50","gpus":1,"serial_iter_time":1,"iterations":100},{"model":"ResNet50","gpus":1,"serial_iter_time":1,"iterations":100},{"model":"ResNet50","gpus":1,"serial_iter_time":1,"iterations":300}]})";
  SimSettings s;
  s.lease = 10000;
  EXPECT_NEAR(run_alone(cluster, app, "fifo", s).jct, 300.0, 1e-6);
}

// The instants the jobs on `gpus` complete, sorted (+inf for a GPU no job runs on).
std::vector<Seconds> completions(const SimApp& app, std::initializer_list<GpuIndex> gpus) {
  std::vector<Seconds> out;
  for (GpuIndex g : gpus) out.push_back(app.completion_on(g));
  std::sort(out.begin(), out.end());
  return out;
}

std::string one_gpu_jobs(std::initializer_list<int> iterations) {
  std::string text = R"({"name":"a","arrival":0,"jobs":[)";
  bool first = true;
  for (int n : iterations) {
    text += std::string(first ? "" : ",") + R"({"model":"ResNet50","gpus":1,"serial_iter_time":1,"iterations":)" +
            std::to_string(n) + "}";
    first = false;
  }
  return text + "]}\n";
}

// An app of one-GPU jobs of the given lengths (s), all running on the three GPUs of one machine.
struct ThreeJobsRunning {
  explicit ThreeJobsRunning(std::initializer_list<int> seconds)
      : specs(parse_trace(one_gpu_jobs(seconds), "three")), app(0, specs[0], cluster, AppSettings{}, 1) {
    EXPECT_TRUE(app.gain(all).empty());
  }
  const Cluster cluster = one_machine(3);
  const std::vector<AppSpec> specs;
  const std::vector<GpuIndex> all{0, 1, 2};
  SimApp app;
};

TEST(AppScheduler, WinningBackFewerGpusThanItLostRestartsTheLongestJobs) {
  // Jobs of 100, 200 and 300 s run on three GPUs; at 50 s the app loses all three and wins two back at
  // the same instant. The jobs with 250 and 150 s left run on (ending at 300 and 200 s) and the 50 s
  // one follows: 300 s in all. Restarting them in job order (50 and 150 s left) left the longest job
  // waiting until 100 s, ending at 350 s, while its bids priced it as running.
  ThreeJobsRunning three({100, 200, 300});
  SimApp& app = three.app;
  app.advance_to(50);
  app.lose(three.all);
  const std::vector<GpuIndex> two{0, 1};
  EXPECT_TRUE(app.gain(two).empty());
  EXPECT_EQ(completions(app, {0, 1}), (std::vector<Seconds>{200, 300}));
}

TEST(AppScheduler, TheLongestJobTakesAGpuBackFromAShorterOneWhenThePhaseEndsSooner) {
  // Jobs of 400, 300 and 100 s on three GPUs. At 10 s the 400 s job loses its GPU; at 20 s the other
  // two lose theirs and win them back at that instant. Running on the two that were running (280 and
  // 80 s left) would start the longest job (390 s left) at 80 s and end at 490 s; the longest job and
  // the 280 s one end at 410 s, the 80 s one after the 280 s one at 380 s. So the longest job takes
  // one of the two GPUs back. On one GPU the order cannot shorten the phase and the running job keeps
  // its GPU (Restart.AJobRunningAtALeaseExpiryKeepsItsGpusOverALongerWaitingJob).
  ThreeJobsRunning three({400, 300, 100});
  SimApp& app = three.app;
  const std::vector<GpuIndex>& all = three.all;
  GpuIndex longest = 0;
  for (GpuIndex g : all)
    if (app.completion_on(g) == 400) longest = g;
  ASSERT_EQ(app.completion_on(longest), 400);
  app.advance_to(10);
  const std::vector<GpuIndex> lost{longest};
  app.lose(lost);
  app.advance_to(20);
  std::vector<GpuIndex> others;
  for (GpuIndex g : all)
    if (g != longest) others.push_back(g);
  app.lose(others);
  EXPECT_TRUE(app.gain(others).empty());
  std::vector<Seconds> ends;
  for (GpuIndex g : others) ends.push_back(app.completion_on(g));
  std::sort(ends.begin(), ends.end());
  EXPECT_EQ(ends, (std::vector<Seconds>{300, 410}));
}

// Two waiting 2-GPU VGG16 gangs (placement-sensitive) offered one 2-GPU slot on each of two machines:
// each gang runs inside its slot (fill), so the app bids for the four GPUs what they are worth there,
// the same as four GPUs of one machine, not the slowdown of a gang spread over machines.
TEST(AppBid, FourGpusOnTwoMachinesArePricedWhereItsTwoGangsRun) {
  const Cluster cluster(*cluster_preset("paper-testbed-64"));
  const auto specs = parse_trace(
      R"({"name":"a","arrival":0,"jobs":[{"model":"VGG16","gpus":2,"serial_iter_time":1,"iterations":1000},{"model":"VGG16","gpus":2,"serial_iter_time":1,"iterations":1000}]})"
      "\n",
      "gangs");
  SimApp app(0, specs[0], cluster, AppSettings{}, 1);
  std::vector<GpuIndex> spread;  // a 2-GPU slot on each of two machines
  std::vector<GpuIndex> one_machine;  // two 2-GPU slots of one machine
  for (GpuIndex g = 0; g + 3 < cluster.size() && one_machine.empty(); ++g) {
    const std::vector<GpuIndex> four{g, g + 1, g + 2, g + 3};
    if (cluster.locality(four) == Locality::kSameMachine) one_machine = four;
  }
  for (GpuIndex a = 0; a + 1 < cluster.size() && spread.empty(); ++a)
    for (GpuIndex b = a + 2; b + 1 < cluster.size() && spread.empty(); ++b)
      if (cluster.locality(std::vector<GpuIndex>{a, a + 1}) == Locality::kSameSlot &&
          cluster.locality(std::vector<GpuIndex>{b, b + 1}) == Locality::kSameSlot &&
          cluster.locality(std::vector<GpuIndex>{a, a + 1, b, b + 1}) == Locality::kSameRack)
        spread = {a, a + 1, b, b + 1};
  ASSERT_EQ(one_machine.size(), 4U);
  ASSERT_EQ(spread.size(), 4U);
  auto four = [&](const std::vector<GpuIndex>& gpus) {
    for (const BidRow& row : app.bid(Offer{1, gpus}).rows)
      if (row.gpus.size() == 4) return row.rho;
    return 0.0;
  };
  const double across = four(spread);
  EXPECT_GT(across, 0);
  EXPECT_DOUBLE_EQ(across, four(one_machine));
}

TEST(Restart, EveryStartCostsTheRestartButARenewedLeaseDoesNot) {
  // One 1000 s job on the only GPU, 50 s restart cost, 300 s leases: it pays once, when it starts; at
  // every expiry its app wins the same GPU back at the same instant and the job keeps running.
  const Cluster cluster = one_machine(1);
  const std::string app =
      R"({"name":"a","arrival":0,"jobs":[{"model":"ResNet50","gpus":1,"serial_iter_time":1,"iterations":1000}]})";
  for (const char* policy : {"fifo", "themis"}) {
    SimSettings s;
    s.lease = 300;
    s.restart_cost = 50;
    EXPECT_NEAR(run_alone(cluster, app, policy, s).jct, 1050.0, 1e-6) << policy;
    s.restart_cost = 0;
    EXPECT_NEAR(run_alone(cluster, app, policy, s).jct, 1000.0, 1e-6) << policy;
  }
}

TEST(Restart, AJobRunningAtALeaseExpiryKeepsItsGpusOverALongerWaitingJob) {
  // Jobs of 400 and 350 s on one GPU, 100 s leases, 10 s restart cost. Longest first starts the 400 s
  // job; at the 100 s expiry it has 310 s left, less than the waiting job's 350, but it was running and
  // wins its GPU back, so it goes on: 10 + 400, then the second job restarts: + 10 + 350 = 770 s.
  // Switching to the longer job at every expiry would pay a restart each time and end later.
  const Cluster cluster = one_machine(1);
  const std::string app =
      R"({"name":"a","arrival":0,"jobs":[{"model":"ResNet50","gpus":1,"serial_iter_time":1,"iterations":400},{"model":"ResNet50","gpus":1,"serial_iter_time":1,"iterations":350}]})";
  SimSettings s;
  s.lease = 100;
  s.restart_cost = 10;
  EXPECT_NEAR(run_alone(cluster, app, "fifo", s).jct, 770.0, 1e-6);
}

}  // namespace
}  // namespace themis::sim

namespace themis::sim {
namespace {

// An app holding nothing ranks by ρ after one more lease on its fair share (IdleRho::kFairShare), so
// a wide app and a narrow one that are equally far behind rank alike; "on one GPU" ranked the wide app
// as if it would run its sixteen jobs one after another. Its bids still price losing at one GPU.
TEST(IdleRho, AppHoldingNothingRanksByItsFairShareNotByOneGpu) {
  std::string text = R"({"name":"wide","arrival":0,"jobs":[)";
  for (int j = 0; j < 16; ++j)
    text += std::string(j ? "," : "") + R"({"model":"VGG16","gpus":1,"serial_iter_time":1,"iterations":1000})";
  text += "]}\n";
  text += R"({"name":"narrow","arrival":0,"jobs":[{"model":"VGG16","gpus":1,"serial_iter_time":1,"iterations":1000}]})";
  text += "\n";
  const auto specs = parse_trace(text, "idle");
  const Cluster cluster(*cluster_preset("paper-testbed-64"));  // N_avg = 1: a 64-GPU share
  auto rho = [&](std::size_t k, IdleRho rule) {
    AppSettings settings;
    settings.idle_rho = rule;
    SimApp app(static_cast<AppId>(k), specs[k], cluster, settings, 1);
    return std::make_pair(app.current_rho(), app.bid(Offer{1, {0, 1}}).rho_no_new);
  };
  // T_id = 1000 s for both (16 jobs on 16 of the 64 GPUs; one job). After a 600 s lease on the share:
  // (600 + 1000) / 1000 = 1.6 for both. On one GPU the wide app needs 16000 s: (600 + 16000) / 1000.
  EXPECT_NEAR(rho(0, IdleRho::kFairShare).first, 1.6, 1e-9);
  EXPECT_NEAR(rho(1, IdleRho::kFairShare).first, 1.6, 1e-9);
  EXPECT_NEAR(rho(0, IdleRho::kOneGpu).first, 16.6, 1e-9);
  EXPECT_NEAR(rho(1, IdleRho::kOneGpu).first, 1.6, 1e-9);
  // Losing the auction is priced the same under both: one GPU after one more lease.
  EXPECT_NEAR(rho(0, IdleRho::kFairShare).second, 16.6, 1e-9);
  EXPECT_NEAR(rho(0, IdleRho::kOneGpu).second, 16.6, 1e-9);
  EXPECT_EQ(parse_idle_rho(to_string(IdleRho::kOneGpu)), IdleRho::kOneGpu);
  EXPECT_EQ(parse_idle_rho(to_string(IdleRho::kFairShare)), IdleRho::kFairShare);
  EXPECT_FALSE(parse_idle_rho("share").has_value());
}

// Winning one GPU of a sixteen-job demand must not rank the app below where it stood holding nothing: on one
// GPU it would need 16,000 s (ρ 16), yet it is as far behind its 16-GPU share as before, so it ranks by ρ
// after one more lease on that share. Without the cap it took every one-GPU offer of the round after, one
// GPU at a time, ahead of apps truly further behind (bidder::AppModel::ranking_rho).
TEST(IdleRho, AnAppShortOfItsShareRanksNoWorseThanHoldingNothing) {
  std::string text = R"({"name":"wide","arrival":0,"jobs":[)";
  for (int j = 0; j < 16; ++j)
    text += std::string(j ? "," : "") + R"({"model":"VGG16","gpus":1,"serial_iter_time":1,"iterations":1000})";
  text += "]}\n";
  const auto specs = parse_trace(text, "short");
  const Cluster cluster(*cluster_preset("paper-testbed-64"));
  SimApp app(0, specs[0], cluster, AppSettings{}, 1);
  EXPECT_NEAR(app.current_rho(), 1.6, 1e-9) << "(600 + 1000) / 1000 holding nothing";
  const std::vector<GpuIndex> one{0};
  EXPECT_TRUE(app.gain(one).empty());
  EXPECT_NEAR(app.current_rho(), 1.6, 1e-9) << "one GPU of sixteen: no worse than holding nothing";
  std::vector<GpuIndex> rest;
  for (GpuIndex g = 1; g < 16; ++g) rest.push_back(g);
  EXPECT_TRUE(app.gain(rest).empty());
  EXPECT_NEAR(app.current_rho(), 1.0, 1e-9) << "its whole share: its current ρ, 1000 s of 1000";
}

}  // namespace
}  // namespace themis::sim
