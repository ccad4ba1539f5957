// The ZAP handler's thread must survive the signals a daemon receives (SIGTERM, SIGHUP on reload, a fuzzer's
// SIGALRM): an interrupted poll that escaped as an exception ended the whole process (CI, coordinator
// dispatch fuzzer, 6.5 s in: SIGALRM every 6 s from -timeout=10).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <zmq.hpp>

#include "net/authorized_keys.h"
#include "net/curve_keys.h"
#include "net/socket_security.h"
#include "net/zap_handler.h"

namespace themis::net {
namespace {

using namespace std::chrono_literals;

std::atomic<int> g_signals{0};
void count_signal(int) { ++g_signals; }

// One message from a CURVE client with `client` keys to a server in `context`; the User-Id the server saw,
// or "" when nothing arrived within two seconds.
std::string user_id_of_one_message(zmq::context_t& context, const CurveKeyPair& server, const CurveKeyPair& client) {
  zmq::socket_t router(context, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  make_curve_server(router, server);
  router.bind("tcp://127.0.0.1:*");
  const std::string endpoint = router.get(zmq::sockopt::last_endpoint);

  zmq::context_t client_context(1);
  zmq::socket_t dealer(client_context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  make_curve_client(dealer, client, server.public_key);
  dealer.connect(endpoint);
  dealer.send(zmq::str_buffer("hello"), zmq::send_flags::none);

  zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, 2000ms);
  if (!(item.revents & ZMQ_POLLIN)) return "";
  zmq::message_t identity, body;
  if (!router.recv(identity, zmq::recv_flags::dontwait)) return "";
  if (!router.recv(body, zmq::recv_flags::dontwait)) return "";
  const char* user_id = body.gets("User-Id");
  return user_id == nullptr ? "" : user_id;
}

TEST(ZapHandler, SignalsToTheProcessNeitherEndItNorStopAuthentication) {
  const CurveKeyPair server = generate_curve_keypair();
  const CurveKeyPair alice = generate_curve_keypair();
  zmq::context_t context(1);
  const ZapHandler zap(context, {{"alice", alice.public_key, Role::kUser}});

  struct sigaction action {};
  action.sa_handler = count_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: an interrupted poll returns EINTR, as it does under std::signal
  struct sigaction previous_action {};
  ASSERT_EQ(sigaction(SIGUSR1, &action, &previous_action), 0);
  // With this thread blocking SIGUSR1 (and libzmq's own threads blocking everything), a process-directed
  // SIGUSR1 can only be taken by the ZAP thread, unless that thread blocks it too.
  sigset_t usr1, previous_mask;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &usr1, &previous_mask), 0);
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(kill(getpid(), SIGUSR1), 0);
    std::this_thread::sleep_for(5ms);
  }

  EXPECT_EQ(user_id_of_one_message(context, server, alice), "user:alice");
  EXPECT_EQ(user_id_of_one_message(context, server, generate_curve_keypair()), "");  // not enrolled
  EXPECT_GE(zap.rejected(), 1);  // the client retries its handshake: once or more

  // The signal waited for the thread that handles it.
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr), 0);
  EXPECT_GE(g_signals.load(), 1);
  sigaction(SIGUSR1, &previous_action, nullptr);
}

}  // namespace
}  // namespace themis::net
