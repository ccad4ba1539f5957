#include "launcher/app_session.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <nlohmann/json.hpp>
#include <thread>

#include "launcher/report_receiver.h"
#include "tests/launcher/test_cluster.h"
#include "worker/report_format.h"
#include "worker/reporter.h"

namespace themis::launcher {
namespace {

AgentConfig two_gpu_job() {
  return {.app = 42, .scheduler = {SchedulerKind::kAllJobs, 1, {50}}, .gpus_per_job = 2, .lease_seconds = 30,
          .default_serial_iter_time = 0.5};
}

std::string iteration_line(const std::string& job, int rank, std::int64_t it, double sec, double loss) {
  std::string out;
  worker::append_iteration_line(out, job, rank, {it, sec, loss});
  out.pop_back();
  return out;
}

std::string event_line(const std::string& job, int rank, std::int64_t it, const std::string& event,
                       std::map<std::string, std::string> fields) {
  std::string out;
  worker::append_event_line(out, job, rank, {event, it, std::move(fields)});
  out.pop_back();
  return out;
}

TEST(AppSession, JobNamesCarryTheAttempt) {
  const auto name = parse_job_name("42_3@2");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->app, 42);
  EXPECT_EQ(name->job, 3);
  EXPECT_EQ(name->attempt, 2);
  EXPECT_FALSE(parse_job_name("42_3"));
  EXPECT_FALSE(parse_job_name("local"));
  EXPECT_FALSE(parse_job_name("42_x@1"));
}

TEST(AppSession, LaunchPreemptAndResumeThroughReportsAndRankExits) {
  const auto cluster = testing::two_rack_cluster();
  AppSession session(cluster, two_gpu_job(), {{{"lr", "0.1"}, {"model", "mlp"}}}, {{"THEMIS_REPORT_ENDPOINT", "tcp://127.0.0.1:5999"}}, 0, 1);
  session.on_leases({0, 1}, 1);
  auto launches = session.take_launches();
  ASSERT_EQ(launches.size(), 1U);
  EXPECT_EQ(launches[0].env.at("THEMIS_JOB_ID"), "42_0@1");
  EXPECT_EQ(launches[0].env.at("THEMIS_REPORT_ENDPOINT"), "tcp://127.0.0.1:5999");
  const auto hp = nlohmann::json::parse(launches[0].env.at("THEMIS_HPARAMS"));
  EXPECT_EQ(hp["iterations"], 50);
  EXPECT_DOUBLE_EQ(hp["lr"].get<double>(), 0.1);

  session.on_report_line(event_line("42_0@1", 0, 0, "start", {{"world_size", "2"}, {"resumed_from", "-1"}}), 2);
  for (int it = 1; it <= 20; ++it) {
    session.on_report_line(iteration_line("42_0@1", 0, it, 0.2, 1.0 / it), 2);
    session.on_report_line(iteration_line("42_0@1", 1, it, 0.2, 1.0 / it), 2);
  }
  session.on_report_line("not json", 2);
  session.on_report_line(iteration_line("7_0@1", 0, 3, 0.2, 1.0), 2);  // another app's
  EXPECT_EQ(session.dropped_reports(), 2);
  EXPECT_DOUBLE_EQ(session.agent().job(0).iterations_done, 20);
  EXPECT_NEAR(session.agent().timing().serial_iter_time(0), 0.4, 1e-12);
  EXPECT_NEAR(session.status(3).progress, 20.0 / 50.0, 1e-12);

  session.on_leases({0}, 3);  // GPU 1 lost
  const auto stops = session.take_stops();
  ASSERT_EQ(stops.size(), 1U);
  session.on_report_line(event_line("42_0@1", 0, 22, "exit", {{"status", "preempted"}}), 4);
  session.on_rank_exit(0, 1, 1, 0, 0, false, 4);
  EXPECT_EQ(session.agent().job(0).state, JobState::kStopping) << "one rank still runs";
  session.on_rank_exit(0, 1, 0, 0, 0, false, 4);
  EXPECT_EQ(session.agent().job(0).state, JobState::kWaiting);
  EXPECT_EQ(session.agent().job(0).preemptions, 1);

  session.on_leases({6, 7}, 5);
  launches = session.take_launches();
  ASSERT_EQ(launches.size(), 1U);
  EXPECT_EQ(launches[0].env.at("THEMIS_JOB_ID"), "42_0@2");
  // A late report of attempt 1 changes nothing.
  session.on_report_line(iteration_line("42_0@1", 0, 40, 0.2, 0.0), 5);
  EXPECT_DOUBLE_EQ(session.agent().job(0).iterations_done, 22);
  session.on_report_line(event_line("42_0@2", 0, 22, "start", {{"resumed_from", "22"}}), 6);
  session.on_report_line(event_line("42_0@2", 0, 50, "exit", {{"status", "completed"}}), 9);
  session.on_rank_exit(0, 2, 0, 0, 0, false, 9);
  session.on_rank_exit(0, 2, 1, 0, 0, false, 9);
  const auto status = session.status(10);
  EXPECT_TRUE(status.finished);
  EXPECT_DOUBLE_EQ(status.progress, 1.0);
}

// The status carries the app's slowdown per locality level (the coordinator scores leftover sets and machine
// holds by them): the priors until a job runs wider, then what its iterations showed.
TEST(AppSession, StatusCarriesTheSlowdownPriorsThenWhatItsJobsShowed) {
  const auto cluster = testing::two_rack_cluster();
  AppSession session(cluster, two_gpu_job(), {{{"lr", "0.1"}}}, {}, 0, 1);
  EXPECT_EQ(session.status(0).slowdowns, (std::array<double, kLocalityLevels>{1.0, 1.0, 1.1, 1.3}));
  session.on_leases({0, 1}, 1);  // one slot of node1
  ASSERT_EQ(session.take_launches().size(), 1U);
  session.on_report_line(event_line("42_0@1", 0, 0, "start", {{"world_size", "2"}, {"resumed_from", "-1"}}), 2);
  for (int it = 1; it <= 5; ++it) session.on_report_line(iteration_line("42_0@1", 0, it, 0.2, 1.0), 2);
  session.on_leases({}, 3);
  ASSERT_EQ(session.take_stops().size(), 1U);
  session.on_report_line(event_line("42_0@1", 0, 5, "exit", {{"status", "preempted"}}), 3);
  session.on_rank_exit(0, 1, 0, 0, 0, false, 3);
  session.on_rank_exit(0, 1, 1, 0, 0, false, 3);
  session.on_leases({3, 4}, 4);  // node1 and node2: one rack
  ASSERT_EQ(session.take_launches().size(), 1U);
  session.on_report_line(event_line("42_0@2", 0, 5, "start", {{"resumed_from", "5"}}), 5);
  for (int it = 6; it <= 10; ++it) session.on_report_line(iteration_line("42_0@2", 0, it, 0.5, 1.0), 5);
  // Serial time 0.2 s x 2 GPUs = 0.4 s; across machines 0.5 s x 2 / 0.4 s = 2.5.
  const auto slowdowns = session.status(6).slowdowns;
  EXPECT_DOUBLE_EQ(slowdowns[0], 1.0);
  EXPECT_DOUBLE_EQ(slowdowns[1], 1.0);
  EXPECT_NEAR(slowdowns[2], 2.5, 1e-12);
  EXPECT_DOUBLE_EQ(slowdowns[3], 1.3);
}

// What a launcher sends again to a coordinator that restarted before a launch went out: the launch as it was
// (GPUs, typed hyper-parameters, job id, report endpoint), for as long as the attempt has not ended.
TEST(AppSession, AnAttemptsLaunchIsKeptUntilItEndsForACoordinatorThatLostIt) {
  const auto cluster = testing::two_rack_cluster();
  AppSession session(cluster, two_gpu_job(), {{{"lr", "0.1"}}}, {{"THEMIS_REPORT_ENDPOINT", "tcp://127.0.0.1:5999"}}, 0, 1);
  EXPECT_FALSE(session.launch_of(0, 1).has_value()) << "nothing launched yet";
  session.on_leases({0, 1}, 1);
  const auto launches = session.take_launches();
  ASSERT_EQ(launches.size(), 1U);
  const auto again = session.launch_of(0, 1);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->gpus, launches[0].gpus);
  EXPECT_EQ(again->env, launches[0].env);
  EXPECT_EQ(again->env.at("THEMIS_REPORT_ENDPOINT"), "tcp://127.0.0.1:5999");
  EXPECT_FALSE(session.launch_of(0, 2).has_value()) << "another attempt";
  session.on_rank_exit(0, 1, 0, 0, 0, true, 2);
  session.on_rank_exit(0, 1, 1, 0, 0, true, 2);
  EXPECT_FALSE(session.launch_of(0, 1).has_value()) << "the attempt ended";
}

TEST(AppSession, ANonZeroRankExitIsAFailureWhateverRankZeroSaid) {
  const auto cluster = testing::two_rack_cluster();
  AppSession session(cluster, two_gpu_job(), {{}}, {}, 0, 1);
  session.on_leases({0, 1}, 1);
  ASSERT_EQ(session.take_launches().size(), 1U);
  session.on_report_line(event_line("42_0@1", 0, 50, "exit", {{"status", "completed"}}), 2);
  session.on_rank_exit(0, 1, 0, 0, 0, false, 2);
  session.on_rank_exit(0, 1, 1, 1, 0, false, 2);
  EXPECT_EQ(session.agent().job(0).failures, 1);
  EXPECT_EQ(session.agent().job(0).state, JobState::kWaiting);
}

TEST(AppSession, ACleanExitOfAStopTheCoordinatorOrderedIsAPreemptionEvenWithoutRankZerosStatus) {
  const auto cluster = testing::two_rack_cluster();
  AppSession session(cluster, two_gpu_job(), {{}}, {}, 0, 1);
  session.on_leases({0, 1}, 1);
  ASSERT_EQ(session.take_launches().size(), 1U);
  // The launcher was not listening: its lease ran out, the coordinator stopped the job, and the exits come
  // back before rank 0's "preempted" line or the new grant.
  session.on_rank_exit(0, 1, 0, 0, 0, true, 2);
  session.on_rank_exit(0, 1, 1, 0, 0, true, 2);
  EXPECT_EQ(session.agent().job(0).state, JobState::kWaiting);
  EXPECT_EQ(session.agent().job(0).preemptions, 1);
  EXPECT_FALSE(session.status(3).finished);
}

TEST(AppSession, AnOrderedStopThatKillsRanksStillLoadingIsAPreemptionNotAFailure) {
  const auto cluster = testing::two_rack_cluster();
  AppSession session(cluster, two_gpu_job(), {{}}, {}, 0, 1);
  session.on_leases({0, 1}, 1);
  ASSERT_EQ(session.take_launches().size(), 1U);
  // The lease ended while both ranks were still starting: the stop's SIGTERM killed them before their
  // checkpoint handler was installed, and rank 0 never reported.
  session.on_rank_exit(0, 1, 0, 0, SIGTERM, true, 2);
  session.on_rank_exit(0, 1, 1, 0, SIGTERM, true, 2);
  EXPECT_EQ(session.agent().job(0).state, JobState::kWaiting);
  EXPECT_EQ(session.agent().job(0).preemptions, 1);
  EXPECT_EQ(session.agent().job(0).failures, 0);
  const auto notes = session.take_notes();
  ASSERT_FALSE(notes.empty());
  EXPECT_EQ(notes.back(), "job 0 attempt 1 stopped by the coordinator (rank 0 sent no exit status) at iteration 0");
}

TEST(AppSession, ARankKilledAfterOutlivingAnOrderedStopIsStillAFailure) {
  const auto cluster = testing::two_rack_cluster();
  AppSession session(cluster, two_gpu_job(), {{}}, {}, 0, 1);
  session.on_leases({0, 1}, 1);
  ASSERT_EQ(session.take_launches().size(), 1U);
  session.on_rank_exit(0, 1, 0, 0, SIGTERM, true, 2);
  session.on_rank_exit(0, 1, 1, 0, SIGKILL, true, 2);  // ignored SIGTERM: killed at the end of its grace
  EXPECT_EQ(session.agent().job(0).failures, 1);
  EXPECT_EQ(session.agent().job(0).preemptions, 0);
}

// A restarted launcher resumes successive halving from its predecessor's saved state: the phase,
// the jobs stopped early, and the loss of a job that already reached the phase's target.
TEST(AppSession, ARestartedSessionResumesTheSchedulerFromTheSavedState) {
  const auto cluster = testing::two_rack_cluster();
  const AgentConfig config{.app = 42, .scheduler = {SchedulerKind::kSuccessiveHalving, 4, {10, 20, 40}}, .gpus_per_job = 1,
                           .lease_seconds = 30, .default_serial_iter_time = 0.5};
  AppSession first(cluster, config, {{}, {}, {}, {}}, {}, 0, 1);
  first.on_leases({0, 1, 2, 3}, 1);
  ASSERT_EQ(first.take_launches().size(), 4U);
  const double losses[] = {0.9, 0.3, 0.5, 0.1};
  auto finish = [](AppSession& session, int job, int attempt, std::int64_t iteration, double loss) {
    const std::string name = "42_" + std::to_string(job) + "@" + std::to_string(attempt);
    session.on_report_line(event_line(name, 0, 0, "start", {{"resumed_from", "-1"}}), 2);
    session.on_report_line(iteration_line(name, 0, iteration, 0.1, loss), 2);
    session.on_report_line(event_line(name, 0, iteration, "exit", {{"status", "completed"}}), 2);
    session.on_rank_exit(job, attempt, 0, 0, 0, false, 2);
  };
  for (int j = 0; j < 4; ++j) finish(first, j, 1, 10, losses[j]);
  EXPECT_EQ(first.agent().scheduler().phase(), 1);
  const auto phase2 = first.take_launches();  // jobs 1 and 3 go on
  ASSERT_EQ(phase2.size(), 2U);
  finish(first, 1, 2, 30, 0.05);
  const std::string saved = first.saved_state();
  // Iterations of a running job do not change the saved state (it is sent with every status).
  first.on_report_line(event_line("42_3@2", 0, 10, "start", {{"resumed_from", "10"}}), 3);
  first.on_report_line(iteration_line("42_3@2", 0, 15, 0.1, 0.2), 3);
  EXPECT_EQ(first.saved_state(), saved);

  AppSession second(cluster, config, {{}, {}, {}, {}}, {}, 0, 1);
  for (int j = 0; j < 4; ++j) second.restore_attempt(j, j == 1 || j == 3 ? 2 : 1);
  second.restore_state(saved);
  EXPECT_EQ(second.agent().scheduler().phase(), 1);
  EXPECT_EQ(second.agent().scheduler().status(0), JobStatus::kStoppedEarly);
  EXPECT_EQ(second.agent().job(1).state, JobState::kIdle);
  second.on_leases({0}, 4);
  const auto launches = second.take_launches();
  ASSERT_EQ(launches.size(), 1U);
  EXPECT_EQ(launches[0].job, 3);
  EXPECT_EQ(launches[0].attempt, 3);
  EXPECT_EQ(nlohmann::json::parse(launches[0].env.at("THEMIS_HPARAMS"))["iterations"], 30);
  finish(second, 3, 3, 30, 0.07);
  EXPECT_EQ(second.agent().scheduler().phase(), 2);
  EXPECT_EQ(second.agent().scheduler().status(3), JobStatus::kStoppedEarly) << "job 1's loss 0.05 beats job 3's 0.07";
  EXPECT_EQ(second.agent().scheduler().status(1), JobStatus::kActive);
  second.on_leases({0}, 6);
  const auto last = second.take_launches();
  ASSERT_EQ(last.size(), 1U);
  EXPECT_EQ(last[0].job, 1);
  EXPECT_EQ(nlohmann::json::parse(last[0].env.at("THEMIS_HPARAMS"))["iterations"], 70);

  EXPECT_THROW(second.restore_state("{\"phase\":0,\"jobs\":[]}"), std::invalid_argument);
  EXPECT_THROW(second.restore_state("not json"), std::invalid_argument);
}

// The probe's time (its attempt's launch to its first iteration) counts in T_id once; a launcher restarted after
// the probe cannot measure it again, so it is part of the saved state.
TEST(AppSession, ARestartedSessionKeepsTheProbesTime) {
  const auto cluster = testing::two_rack_cluster();
  const AgentConfig config{.app = 42, .scheduler = {SchedulerKind::kAllJobs, 2, {100}}, .gpus_per_job = 1,
                           .lease_seconds = 30, .default_serial_iter_time = 0.5};
  AppSession first(cluster, config, {{}, {}}, {}, 0, 1);
  first.on_leases({9}, 10, true);
  ASSERT_EQ(first.take_launches(10).size(), 1U);
  const std::string before = first.saved_state();
  first.on_report_line(event_line("42_0@1", 0, 0, "start", {{"resumed_from", "-1"}}), 10.4);
  first.on_report_line(iteration_line("42_0@1", 0, 1, 0.1, 0.9), 10.75);
  ASSERT_EQ(first.agent().probe_time(), 0.75);
  const std::string saved = first.saved_state();
  EXPECT_NE(saved, before);
  first.on_report_line(iteration_line("42_0@1", 0, 2, 0.1, 0.8), 11);
  EXPECT_EQ(first.saved_state(), saved) << "only the probe's first iteration ends its time";

  AppSession second(cluster, config, {{}, {}}, {}, 0, 1);
  second.restore_attempt(0, 1);
  second.restore_state(saved);
  EXPECT_EQ(second.agent().probe_time(), 0.75);
  EXPECT_DOUBLE_EQ(second.agent().context(20).probe_time, 0.75);
  AppSession third(cluster, config, {{}, {}}, {}, 0, 1);
  auto with_probe = nlohmann::json::parse(saved);
  with_probe["probe_time"] = "soon";
  EXPECT_THROW(third.restore_state(with_probe.dump()), std::invalid_argument);
  with_probe["probe_time"] = -1;
  EXPECT_THROW(third.restore_state(with_probe.dump()), std::invalid_argument);
}

// Real sockets: the worker's own ZeroMQ reporter pushes to the launcher's PULL socket.
TEST(AppSession, WorkerReporterReachesTheReceiver) {
  zmq::context_t context(1);
  ReportReceiver receiver(context, "tcp://127.0.0.1:*");
  ASSERT_EQ(receiver.endpoint().rfind("tcp://127.0.0.1:", 0), 0U);
  const auto cluster = testing::two_rack_cluster();
  auto config = two_gpu_job();
  config.gpus_per_job = 1;
  AppSession session(cluster, config, {{}}, {{"THEMIS_REPORT_ENDPOINT", receiver.endpoint()}}, 0, 1);
  session.on_leases({3}, 0);
  ASSERT_EQ(session.take_launches().size(), 1U);
  {
    auto reporter = worker::make_zmq_reporter("42_0@1", 0, receiver.endpoint());
    reporter->event({"start", 0, {{"resumed_from", "-1"}}});
    for (int it = 1; it <= 30; ++it) reporter->record({it, 0.25, 2.0 / it});
    reporter->flush();
  }
  int lines = 0;
  for (int i = 0; i < 100 && lines < 31; ++i) {
    lines += receiver.drain([&](std::string_view line) { session.on_report_line(line, 1); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(lines, 31);
  EXPECT_DOUBLE_EQ(session.agent().job(0).iterations_done, 30);
  EXPECT_NEAR(*session.agent().job(0).loss, 2.0 / 30, 1e-9);
  EXPECT_NEAR(session.agent().timing().serial_iter_time(0), 0.25, 1e-12);
}

}  // namespace
}  // namespace themis::launcher
