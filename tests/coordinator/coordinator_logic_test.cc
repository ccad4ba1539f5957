// The coordinator's logic on a real SQLite file with a manual clock and no sockets: each test moves the
// clock by hand, so lease expiries and lost heartbeats happen at exact instants, without sleeps.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "coordinator/coordinator.h"
#include "coordinator/store/database.h"
#include "net/envelope.h"
#include "tests/store/temp_dir.h"

namespace themis::coordinator {
namespace {

// A clock moved by the test, and every frame the coordinator sent, decoded.
class ManualEnv : public Env {
 public:
  double now() override {
    std::lock_guard lock(mutex_);
    return now_;
  }
  void set(double t) {
    std::lock_guard lock(mutex_);
    now_ = t;
  }
  void send(const std::string& routing_id, zmq::message_t frame) override {
    wire::ErrorCode code{};
    std::string error;
    auto in = net::InMessage::parse(frame, &code, &error);
    ASSERT_TRUE(in) << error;
    sent.emplace_back(routing_id, std::move(*in));
  }
  // The messages of one kind sent to `peer` (all peers when empty).
  std::vector<net::InMessage*> to(const std::string& peer, wire::Envelope::Body::Which which) {
    std::vector<net::InMessage*> out;
    for (auto& [id, message] : sent) {
      if ((peer.empty() || id == peer) && message.which() == which) out.push_back(&message);
    }
    return out;
  }
  std::vector<std::pair<std::string, net::InMessage>> sent;

 private:
  std::mutex mutex_;
  double now_ = 1'000'000;
};

class CoordinatorLogic : public ::testing::Test {
 protected:
  void SetUp() override {
    spdlog::set_level(spdlog::level::warn);
    config_.database = dir_.file("themis.db");
    config_.heartbeat_interval_ms = 1000;
    config_.heartbeat_lives = 3;
    config_.lease_duration_ms = 60'000;
    config_.probe_duration_ms = 0;
    config_.round_batch_window_ms = 200;
    coordinator_ = std::make_unique<Coordinator>(config_, env_);
  }

  void send(const std::string& peer, const Coordinator::Caller& caller, net::OutMessage& message) {
    coordinator_->dispatch(peer, caller, message.to_frame());
  }
  // A host with `gpus` GPUs in one slot, on rack r1.
  void register_host(const std::string& host, int gpus) {
    net::OutMessage m(next_id_++);
    auto reg = m.body().initRegister();
    reg.setHost(host);
    reg.setRack("r1");
    reg.setAddress("127.0.0.1");
    auto slot = reg.initSlots(1)[0].initGpus(static_cast<unsigned>(gpus));
    for (int i = 0; i < gpus; ++i) slot[static_cast<unsigned>(i)].setLocalIndex(static_cast<std::uint32_t>(i));
    send("peer-" + host, {net::Role::kNode, host}, m);
  }
  void heartbeat(const std::string& host, const std::vector<std::tuple<std::int64_t, std::int64_t, std::uint32_t>>& running) {
    net::OutMessage m(next_id_++);
    auto hb = m.body().initHeartbeat();
    hb.setSeq(next_id_);
    auto list = hb.initRunning(static_cast<unsigned>(running.size()));
    for (unsigned i = 0; i < running.size(); ++i) {
      list[i].setApp(std::get<0>(running[i]));
      list[i].setJob(std::get<1>(running[i]));
      list[i].setAttempt(std::get<2>(running[i]));
      list[i].setRank(0);
      list[i].setPid(4242);
    }
    send("peer-" + host, {net::Role::kNode, host}, m);
  }
  void exited(const std::string& host, std::int64_t app, std::int64_t job, std::uint32_t attempt, int code) {
    net::OutMessage m(next_id_++);
    auto e = m.body().initExited();
    e.setApp(app);
    e.setJob(job);
    e.setAttempt(attempt);
    e.setRank(0);
    e.setExitCode(code);
    send("peer-" + host, {net::Role::kNode, host}, m);
  }
  std::int64_t submit(const std::string& name, int jobs) {
    std::string values;
    for (int i = 0; i < jobs; ++i) values += (i ? ", " : "") + std::to_string(i);
    net::OutMessage m(next_id_++);
    auto s = m.body().initSubmit();
    s.setSpec("name = \"" + name + "\"\ncommand = [\"sleep\", \"{x}\"]\n[hyperparameters]\nx = [" + values +
              "]\n[resources]\ngpus_per_job = 1\n[checkpoint]\ngrace_period = \"1s\"\n");
    s.setSpecName(name + ".toml");
    const std::size_t before = env_.sent.size();
    send("peer-alice", {net::Role::kUser, "alice"}, m);
    EXPECT_EQ(env_.sent.size(), before + 1);
    const auto& reply = env_.sent.back().second;
    EXPECT_EQ(reply.which(), wire::Envelope::Body::SUBMITTED) << net::body_name(reply.which());
    return reply.envelope().getBody().getSubmitted().getApp();
  }
  // Ticks at time t until no winner determination is in flight (it runs on its own thread).
  void tick_at(double t) {
    env_.set(t);
    coordinator_->tick();
    for (int i = 0; i < 10'000 && coordinator_->auction_in_flight(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      coordinator_->tick();
    }
    ASSERT_FALSE(coordinator_->auction_in_flight());
  }
  std::string query(const std::string& sql) {
    store::Database db(config_.database);
    auto st = db.prepare(sql);
    std::string out;
    while (st.step()) out += (out.empty() ? "" : "|") + st.text(0);
    return out;
  }

  testing::TempDir dir_;
  ManualEnv env_;
  CoordinatorConfig config_;
  std::unique_ptr<Coordinator> coordinator_;
  std::uint64_t next_id_ = 1;
};

// A heartbeat's launcher list is bounded like its worker list (a Cap'n Proto list of empty structs costs one word
// per element), and a launcher listed many times is stopped once: the fuzzer found a heartbeat whose list of
// ~170,000 empty elements queued one StopLauncher each, 1.4 GB for one message from a node key.
TEST_F(CoordinatorLogic, AHeartbeatsLauncherListIsBoundedAndAStaleLauncherIsStoppedOnce) {
  register_host("gpu01", 2);
  const auto launchers = [&](unsigned count, auto fill) {
    net::OutMessage m(next_id_++);
    auto hb = m.body().initHeartbeat();
    hb.setSeq(next_id_);
    auto list = hb.initLaunchers(count);
    for (unsigned i = 0; i < count; ++i) fill(list[i], i);
    env_.sent.clear();
    send("peer-gpu01", {net::Role::kNode, "gpu01"}, m);
  };
  using W = wire::Envelope::Body::Which;
  launchers(4097, [](auto, unsigned) {});
  ASSERT_EQ(env_.to("peer-gpu01", W::ERROR).size(), 1U);
  const std::string why = env_.to("peer-gpu01", W::ERROR)[0]->envelope().getBody().getError().getMessage().cStr();
  EXPECT_NE(why.find("heartbeat: launchers: host 'gpu01' lists 4097 launchers; at most 4096 per host"), std::string::npos) << why;
  EXPECT_TRUE(env_.to("peer-gpu01", W::STOP_LAUNCHER).empty());

  // App 7 does not exist, so its launchers are not current: one stop each, however often listed.
  launchers(3000, [](auto l, unsigned i) {
    l.setApp(7);
    l.setGeneration(i % 2 == 0 ? 3 : 4);
  });
  EXPECT_EQ(env_.to("peer-gpu01", W::HEARTBEAT_ACK).size(), 1U);
  EXPECT_EQ(env_.to("peer-gpu01", W::STOP_LAUNCHER).size(), 2U);
}

// A bid's rows are bounded too: the auction thread validates every row, and empty rows cost one wire word each.
TEST_F(CoordinatorLogic, ABidWithMoreRowsThanAnyLauncherSendsIsRefused) {
  const std::int64_t app = submit("grid", 2);
  net::OutMessage attach(next_id_++);
  attach.body().initAttach().setApp(app);
  send("peer-launcher", {net::Role::kUser, "alice"}, attach);
  ASSERT_EQ(env_.to("peer-launcher", wire::Envelope::Body::ATTACHED).size(), 1U);
  const auto bid = [&](unsigned rows) {
    net::OutMessage m(next_id_++);
    auto b = m.body().initBid();
    b.setApp(app);
    b.setRhoNoNew(2);
    b.initRows(rows);
    env_.sent.clear();
    send("peer-launcher", {net::Role::kUser, "alice"}, m);
  };
  using W = wire::Envelope::Body::Which;
  bid(4097);
  ASSERT_EQ(env_.to("peer-launcher", W::ERROR).size(), 1U);
  const std::string why = env_.to("peer-launcher", W::ERROR)[0]->envelope().getBody().getError().getMessage().cStr();
  EXPECT_NE(why.find("bid: rows: app " + std::to_string(app) + " sent 4097 rows; at most 4096"), std::string::npos) << why;
  bid(4096);  // for no open offer's round: dropped as late, without an error
  EXPECT_TRUE(env_.to("peer-launcher", W::ERROR).empty());
}

TEST_F(CoordinatorLogic, AHostIsDownExactlyWhenItsLivesAreSpent) {
  const double t0 = env_.now();
  register_host("gpu01", 2);
  ASSERT_EQ(env_.to("peer-gpu01", wire::Envelope::Body::REGISTERED).size(), 1u);
  tick_at(t0 + 2.9);
  EXPECT_EQ(query("SELECT state FROM hosts WHERE name = 'gpu01'"), "up");
  heartbeat("gpu01", {});  // heard at t0 + 2.9: three more lives from there
  tick_at(t0 + 5.8);
  EXPECT_EQ(query("SELECT state FROM hosts WHERE name = 'gpu01'"), "up");
  tick_at(t0 + 5.95);
  EXPECT_EQ(query("SELECT state FROM hosts WHERE name = 'gpu01'"), "down");
  EXPECT_EQ(query("SELECT kind FROM events WHERE kind = 'HostDown'"), "HostDown");
}

TEST_F(CoordinatorLogic, AJobRunsOnItsLeaseAndTheAppCompletes) {
  const double t0 = env_.now();
  register_host("gpu01", 2);
  const auto app = submit("one", 1);
  tick_at(t0 + 0.1);  // within the batch window: no round yet
  EXPECT_TRUE(env_.to("peer-gpu01", wire::Envelope::Body::LAUNCH).empty());
  tick_at(t0 + 0.3);
  const auto launches = env_.to("peer-gpu01", wire::Envelope::Body::LAUNCH);
  ASSERT_EQ(launches.size(), 1u);
  const auto launch = launches[0]->envelope().getBody().getLaunch();
  EXPECT_EQ(launch.getApp(), app);
  EXPECT_EQ(launch.getJob(), 0);
  EXPECT_EQ(query("SELECT state FROM jobs WHERE app_id = " + std::to_string(app)), "STARTING");
  // The lease runs lease_duration from the round (the policy grants whole leases to a lone app).
  EXPECT_EQ(query("SELECT printf('%.1f', expiry - start) FROM leases WHERE state = 'active'"), "60.0");
  heartbeat("gpu01", {{app, 0, launch.getAttempt()}});
  EXPECT_EQ(query("SELECT state FROM jobs"), "RUNNING");
  EXPECT_EQ(query("SELECT state FROM apps"), "RUNNING");
  exited("gpu01", app, 0, launch.getAttempt(), 0);
  EXPECT_EQ(query("SELECT state || ' ' || reason FROM jobs"), "COMPLETED Done");
  EXPECT_EQ(query("SELECT state FROM apps"), "COMPLETED");
  EXPECT_EQ(query("SELECT count(*) FROM leases WHERE state = 'active'"), "0");
}

TEST_F(CoordinatorLogic, ALoneAppKeepsItsGpusWhenItsLeaseIsRenewed) {
  const double t0 = env_.now();
  register_host("gpu01", 1);
  const auto app = submit("long", 1);
  tick_at(t0 + 0.3);
  const auto launches = env_.to("peer-gpu01", wire::Envelope::Body::LAUNCH);
  ASSERT_EQ(launches.size(), 1u);
  const auto attempt = launches[0]->envelope().getBody().getLaunch().getAttempt();
  const double expiry = std::stod(query("SELECT expiry FROM leases WHERE state = 'active'"));
  for (double t = t0 + 1; t < expiry; t += 2.5) {  // its host stays alive up to the lease's end
    env_.set(t);
    heartbeat("gpu01", {{app, 0, attempt}});
    tick_at(t);
  }
  EXPECT_EQ(query("SELECT count(*) FROM leases WHERE state = 'active'"), "1");
  env_.set(expiry);
  heartbeat("gpu01", {{app, 0, attempt}});
  tick_at(expiry);        // the expiry asks for a round, which waits out the batch window
  EXPECT_EQ(query("SELECT count(*) FROM leases WHERE state = 'active'"), "1");
  tick_at(expiry + 0.3);  // the round: nobody else wants the GPU
  EXPECT_EQ(query("SELECT release_reason FROM leases WHERE state <> 'active'"), "renewed");
  EXPECT_EQ(query("SELECT printf('%.1f', expiry - " + std::to_string(expiry) + ") FROM leases WHERE state = 'active'"),
            "60.3");
  EXPECT_TRUE(env_.to("peer-gpu01", wire::Envelope::Body::STOP).empty()) << "a renewal must not stop the job";
  EXPECT_EQ(query("SELECT state || ' ' || attempt FROM jobs"), "RUNNING " + std::to_string(attempt));
}

TEST_F(CoordinatorLogic, ALostHostsJobWaitsToBePlacedAgain) {
  const double t0 = env_.now();
  register_host("gpu01", 1);
  const auto app = submit("lost", 1);
  tick_at(t0 + 0.3);
  const auto attempt = env_.to("peer-gpu01", wire::Envelope::Body::LAUNCH).at(0)->envelope().getBody().getLaunch().getAttempt();
  heartbeat("gpu01", {{app, 0, attempt}});
  tick_at(t0 + 3.5);  // three lives of one second, counted from the heartbeat at t0 + 0.3
  EXPECT_EQ(query("SELECT state FROM hosts"), "down");
  EXPECT_EQ(query("SELECT state || ' ' || placement FROM jobs"), "PENDING []");
  EXPECT_EQ(query("SELECT release_reason FROM leases"), "NodeFail");
  EXPECT_EQ(query("SELECT state FROM apps"), "PENDING");
}

TEST_F(CoordinatorLogic, OnlyTheNewestRoundRecordsAreKept) {
  coordinator_.reset();
  config_.round_records_kept = 2;
  coordinator_ = std::make_unique<Coordinator>(config_, env_);
  const double t0 = env_.now();
  register_host("gpu01", 4);
  for (int i = 0; i < 4; ++i) {  // each app's submission opens a round of its own
    submit("app" + std::to_string(i), 1);
    tick_at(t0 + i);
    tick_at(t0 + i + 0.3);
  }
  EXPECT_EQ(query("SELECT count(*) FROM rounds"), "4");
  const std::string newest = query("SELECT max(id) FROM rounds");
  EXPECT_EQ(query("SELECT group_concat(round_id) FROM (SELECT round_id FROM round_records ORDER BY round_id)"),
            std::to_string(std::stoi(newest) - 1) + "," + newest);
}

}  // namespace
}  // namespace themis::coordinator
