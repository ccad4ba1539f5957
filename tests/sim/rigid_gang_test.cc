
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
    AppModel m(s);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("remaining_job_gpus[0]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace themis::bidder
