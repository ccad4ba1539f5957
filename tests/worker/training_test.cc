// Real multi-process Gloo training: ranks must end with bit-identical parameters.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>
#include <zmq.hpp>

#include "process.h"

namespace themis::worker::testing {
namespace {

using std::chrono::seconds;

void expect_completed_and_identical(const std::vector<Rank>& ranks, const std::vector<Exit>& exits,
                                    std::int64_t iterations) {
  ASSERT_EQ(exits.size(), ranks.size());
  std::string digest;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    ASSERT_TRUE(exits[r].exited && exits[r].code == 0)
        << "rank " << r << " code " << exits[r].code << " signal " << exits[r].signal << "\n"
        << read_text(ranks[r].stderr_path);
    const auto exit_event = find_event(ranks[r].stdout_path, "exit");
    ASSERT_TRUE(exit_event.has_value());
    EXPECT_EQ(exit_event->fields.at("status"), "completed");
    EXPECT_EQ(exit_event->iteration, iterations);
    const std::string d = exit_event->fields.at("digest");
    EXPECT_EQ(d.size(), 16U);
    if (r == 0) digest = d;
    EXPECT_EQ(d, digest) << "rank " << r << " diverged from rank 0";
    // Every iteration reported once, in order, with a time and a finite loss.
    std::int64_t expected = 1;
    for (const auto& report : read_reports(ranks[r].stdout_path)) {
      if (!report.iteration) continue;
      EXPECT_EQ(report.rank, static_cast<int>(r));
      EXPECT_EQ(report.iteration->iteration, expected++);
      EXPECT_GT(report.iteration->seconds, 0.0);
      EXPECT_TRUE(std::isfinite(report.iteration->loss));
    }
    EXPECT_EQ(expected, iterations + 1);
  }
}

double mean_loss(const std::filesystem::path& out, std::int64_t from, std::int64_t to) {
  double sum = 0;
  int n = 0;
  for (const auto& r : read_reports(out)) {
    if (r.iteration && r.iteration->iteration >= from && r.iteration->iteration <= to) {
      sum += r.iteration->loss;
      ++n;
    }
  }
  return n == 0 ? 0 : sum / n;
}

TEST(Training, TwoRanksOverTcpStoreStayBitIdenticalAndLearn) {
  TempDir dir;
  JobAttempt job;
  job.world_size = 2;
  job.args = {"--model", "mlp", "--iterations", "150", "--lr", "0.05"};
  job.rendezvous = "tcp://127.0.0.1:" + std::to_string(free_tcp_port());
  job.start_order = {1, 0};  // the client comes up before the store server
  const auto ranks = launch(job, dir.path(), "tcp2");
  const auto exits = wait_all(ranks, seconds(60));
  expect_completed_and_identical(ranks, exits, 150);
  // The synthetic task is learnable: the loss falls well below chance (ln 10 = 2.30).
  EXPECT_LT(mean_loss(ranks[0].stdout_path, 131, 150), 0.6 * mean_loss(ranks[0].stdout_path, 1, 20));
}

// --min-iteration-seconds paces a job in wall time: every iteration both ranks report lasts at least the pace
// (the sleep comes after the optimizer step, inside the timed iteration), and the job still completes in step.
TEST(Training, APacedJobTakesAtLeastItsPacePerIteration) {
  TempDir dir;
  JobAttempt job;
  job.args = {"--model", "mlp", "--hidden", "16", "--batch-size", "8", "--iterations", "30",
              "--min-iteration-seconds", "0.02"};
  job.rendezvous = "file://" + (dir.path() / "rdzv").string();
  const auto ranks = launch(job, dir.path(), "paced");
  const auto exits = wait_all(ranks, seconds(60));
  expect_completed_and_identical(ranks, exits, 30);
  for (const auto& rank : ranks) {
    for (const auto& report : read_reports(rank.stdout_path)) {
      if (report.iteration) {
        EXPECT_GE(report.iteration->seconds, 0.02) << "iteration " << report.iteration->iteration;
      }
    }
  }
}

TEST(Training, FourRanksCnnOverFileStoreStayBitIdentical) {
  TempDir dir;
  JobAttempt job;
  job.world_size = 4;
  job.args = {"--model", "cnn", "--iterations", "40", "--batch-size", "16"};
  job.rendezvous = "file://" + (dir.path() / "rdzv").string();
  const auto ranks = launch(job, dir.path(), "cnn4");
  const auto exits = wait_all(ranks, seconds(60));
  expect_completed_and_identical(ranks, exits, 40);
}

// Reads report lines from `pull` until `ranks` ranks of job `job` have reported their exit (60 s at most).
struct PulledReports {
  std::map<int, std::vector<std::int64_t>> iterations;  // per rank, in arrival order
  std::map<int, std::string> exit_status;
};
PulledReports pull_reports(zmq::socket_t& pull, const std::string& job, std::size_t ranks) {
  PulledReports out;
  const auto deadline = std::chrono::steady_clock::now() + seconds(60);
  while (out.exit_status.size() < ranks && std::chrono::steady_clock::now() < deadline) {
    zmq::pollitem_t item{pull.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(100));
    zmq::message_t message;
    while (pull.recv(message, zmq::recv_flags::dontwait)) {
      std::istringstream lines(message.to_string());
      std::string line;
      while (std::getline(lines, line)) {
        const Report r = parse_report_line(line);
        EXPECT_EQ(r.job, job);
        if (r.iteration) out.iterations[r.rank].push_back(r.iteration->iteration);
        if (r.event && r.event->event == "exit") out.exit_status[r.rank] = r.event->fields.at("status");
      }
    }
  }
  return out;
}

TEST(Training, ReportsReachAZeroMqPullSocket) {
  TempDir dir;
  zmq::context_t context;
  zmq::socket_t pull(context, zmq::socket_type::pull);
  pull.bind("tcp://127.0.0.1:*");
  JobAttempt job;
  job.world_size = 2;
  job.args = {"--iterations", "80"};
  job.rendezvous = "file://" + (dir.path() / "rdzv").string();
  job.env["THEMIS_REPORT_ENDPOINT"] = pull.get(zmq::sockopt::last_endpoint);
  const auto ranks = launch(job, dir.path(), "zmq");

  PulledReports pulled = pull_reports(pull, "zmq", 2);
  auto& iterations = pulled.iterations;
  auto& exit_status = pulled.exit_status;
  const auto exits = wait_all(ranks, seconds(30));
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(exits[static_cast<std::size_t>(r)].exited && exits[static_cast<std::size_t>(r)].code == 0);
    EXPECT_EQ(exit_status[r], "completed") << "rank " << r;
    ASSERT_EQ(iterations[r].size(), 80U) << "rank " << r;
    for (std::size_t i = 0; i < 80; ++i) EXPECT_EQ(iterations[r][i], static_cast<std::int64_t>(i + 1));
    EXPECT_EQ(read_reports(ranks[static_cast<std::size_t>(r)].stdout_path).size(), 0U)
        << "with an endpoint, nothing is reported on stdout";
  }
}

// The launcher's report socket in CURVE mode (launcher/report_security.h): a rank given the three keys in its
// environment completes the handshake and reports every iteration; the server admits no other mechanism.
TEST(Training, ReportsReachACurveReportSocketWithTheKeysFromTheEnvironment) {
  TempDir dir;
  char server_public[41], server_secret[41], rank_public[41], rank_secret[41];
  ASSERT_EQ(zmq_curve_keypair(server_public, server_secret), 0) << "libzmq without CURVE";
  ASSERT_EQ(zmq_curve_keypair(rank_public, rank_secret), 0);
  zmq::context_t context;
  zmq::socket_t pull(context, zmq::socket_type::pull);
  pull.set(zmq::sockopt::curve_server, 1);
  pull.set(zmq::sockopt::curve_secretkey, std::string(server_secret));
  pull.bind("tcp://127.0.0.1:*");
  JobAttempt job;
  job.world_size = 1;
  job.args = {"--iterations", "40"};
  job.env["THEMIS_REPORT_ENDPOINT"] = pull.get(zmq::sockopt::last_endpoint);
  job.env["THEMIS_REPORT_SERVER_KEY"] = server_public;
  job.env["THEMIS_REPORT_PUBLIC_KEY"] = rank_public;
  job.env["THEMIS_REPORT_SECRET_KEY"] = rank_secret;
  const auto ranks = launch(job, dir.path(), "curve");

  PulledReports pulled = pull_reports(pull, "curve", 1);
  const auto exits = wait_all(ranks, seconds(30));
  EXPECT_TRUE(exits[0].exited && exits[0].code == 0);
  EXPECT_EQ(pulled.exit_status[0], "completed");
  ASSERT_EQ(pulled.iterations[0].size(), 40U);
  EXPECT_EQ(pulled.iterations[0].back(), 40);
}

}  // namespace
}  // namespace themis::worker::testing
