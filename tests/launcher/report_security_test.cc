// The launcher's report socket in CURVE mode (launcher/report_security.h), with real sockets on loopback:
// the worker reporter with the launch environment's keys gets through; a pusher with a key of its own, or
// without CURVE, is refused at the handshake and none of its lines reach the launcher.
#include "launcher/report_security.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "launcher/report_receiver.h"
#include "net/connection_monitor.h"
#include "net/curve_keys.h"
#include "net/socket_security.h"
#include "worker/report_format.h"
#include "worker/reporter.h"

namespace themis::launcher {
namespace {

using namespace std::chrono_literals;

// Pushes one line as an outsider (a CURVE key pair of its own, or no CURVE) and returns how its connection ended.
net::ConnectionState push_from_outsider(zmq::context_t& context, const std::string& endpoint, bool curve,
                                        const std::string& server_key) {
  zmq::socket_t push(context, zmq::socket_type::push);
  push.set(zmq::sockopt::linger, 0);
  if (curve) net::make_curve_client(push, net::generate_curve_keypair(), server_key);
  net::ConnectionMonitor monitor(context, push, endpoint, 10s, curve);
  push.connect(endpoint);
  std::string line = "{\"job\":\"1_0@1\",\"rank\":0,\"iter\":1,\"sec\":0.001,\"loss\":0.5}\n";
  (void)push.send(zmq::buffer(line), zmq::send_flags::dontwait);  // queued until a handshake that never comes
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (monitor.update().state == net::ConnectionState::kPending && std::chrono::steady_clock::now() < deadline) {
    zmq::pollitem_t item{monitor.events().handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, 50ms);
  }
  return monitor.update().state;
}

TEST(ReportSecurity, OnlyTheLaunchersOwnWorkersGetTheirReportsThrough) {
  zmq::context_t context(1);
  ReportSecurity security(context);
  ReportReceiver receiver(context, "tcp://127.0.0.1:*", [&](zmq::socket_t& pull) { security.secure(pull); });
  const auto env = security.worker_env();
  ASSERT_EQ(env.size(), 3U);
  for (const char* name : {"THEMIS_REPORT_SERVER_KEY", "THEMIS_REPORT_PUBLIC_KEY", "THEMIS_REPORT_SECRET_KEY"}) {
    ASSERT_TRUE(env.count(name)) << name;
    EXPECT_TRUE(net::is_z85_key(env.at(name))) << name;
  }

  // A host that knows the socket's public key but not the workers' key pair: refused by the ZAP handler.
  EXPECT_EQ(push_from_outsider(context, receiver.endpoint(), true, env.at("THEMIS_REPORT_SERVER_KEY")),
            net::ConnectionState::kNotEnrolled);
  EXPECT_GE(security.rejected(), 1);
  // A pusher without CURVE: the mechanisms do not match.
  EXPECT_EQ(push_from_outsider(context, receiver.endpoint(), false, ""), net::ConnectionState::kSecurityMismatch);

  // A rank with the launch environment's keys.
  {
    const worker::ReportCurveKeys keys{env.at("THEMIS_REPORT_SERVER_KEY"), env.at("THEMIS_REPORT_PUBLIC_KEY"),
                                       env.at("THEMIS_REPORT_SECRET_KEY")};
    auto reporter = worker::make_zmq_reporter("42_0@1", 0, receiver.endpoint(), keys);
    for (int it = 1; it <= 20; ++it) reporter->record({it, 0.25, 1.0});
    reporter->flush();
  }
  std::vector<std::string> jobs;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (jobs.size() < 20 && std::chrono::steady_clock::now() < deadline) {
    receiver.drain([&](std::string_view line) { jobs.push_back(worker::parse_report_line(line).job); });
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(jobs.size(), 20U);
  for (const auto& job : jobs) EXPECT_EQ(job, "42_0@1") << "a refused pusher's line got through";
}

}  // namespace
}  // namespace themis::launcher
