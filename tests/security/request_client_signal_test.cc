// themisctl waits for the coordinator's reply in RequestClient::call. A signal that interrupts that wait (a
// handler installed without SA_RESTART, or a stop and continue from the shell's job control) must not end the
// call with "Interrupted system call": the wait goes on, and the reply that comes is returned.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <zmq.hpp>

#include "net/envelope.h"
#include "net/request_client.h"

namespace themis::net {
namespace {

using namespace std::chrono_literals;

std::atomic<int> g_signals{0};
void count_signal(int) { ++g_signals; }

TEST(RequestClient, SignalsWhileItWaitsForTheReplyNeitherEndTheCallNorLoseTheReply) {
  zmq::context_t server_context(1);
  zmq::socket_t router(server_context, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  router.bind("tcp://127.0.0.1:*");
  const std::string endpoint = router.get(zmq::sockopt::last_endpoint);

  // The server answers the one request it gets once the caller has taken five signals (or after 15 s), with an
  // error reply of the same request id.
  std::thread server([&] {
    zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, 30s);
    if (!(item.revents & ZMQ_POLLIN)) return;
    zmq::message_t identity, frame;
    if (!router.recv(identity, zmq::recv_flags::dontwait) || !router.recv(frame, zmq::recv_flags::dontwait)) return;
    wire::ErrorCode code{};
    std::string error;
    const auto request = InMessage::parse(frame, &code, &error);
    if (!request) return;
    const auto give_up = std::chrono::steady_clock::now() + 15s;
    while (g_signals < 5 && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(5ms);
    zmq::message_t reply = make_error(request->request_id(), wire::ErrorCode::NOT_FOUND, "late").to_frame();
    router.send(identity, zmq::send_flags::sndmore);
    router.send(reply, zmq::send_flags::none);
  });

  struct sigaction action {};
  action.sa_handler = count_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a poll it interrupts returns EINTR
  struct sigaction previous {};
  ASSERT_EQ(sigaction(SIGUSR1, &action, &previous), 0);
  const pthread_t caller = pthread_self();
  std::atomic<bool> waiting{true};
  std::thread signaller([&] {
    while (waiting) {
      pthread_kill(caller, SIGUSR1);
      std::this_thread::sleep_for(20ms);
    }
  });

  ClientOptions options;
  options.endpoint = endpoint;
  options.insecure = true;
  options.timeout = 30s;
  RequestClient client(options);
  OutMessage request(client.next_request_id());
  request.body().initAck();
  std::optional<InMessage> reply;
  EXPECT_NO_THROW(reply = client.call(request));
  waiting = false;
  signaller.join();
  server.join();
  ASSERT_EQ(sigaction(SIGUSR1, &previous, nullptr), 0);

  EXPECT_GE(g_signals.load(), 5);  // the wait was interrupted, again and again
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->request_id(), 1u);
  EXPECT_EQ(reply->which(), wire::Envelope::Body::ERROR);
  EXPECT_EQ(std::string(reply->envelope().getBody().getError().getMessage().cStr()), "late");
}

}  // namespace
}  // namespace themis::net
