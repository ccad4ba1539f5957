// Raw protocol checks against a real coordinator: malformed frames, wrong versions and unknown
// messages get an error reply, and the coordinator keeps serving.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "net/curve_keys.h"
#include "net/envelope.h"
#include "net/socket_security.h"
#include "test_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;

class RawClient {
 public:
  explicit RawClient(TestCluster& cluster) : context_(1), socket_(context_, zmq::socket_type::dealer) {
    net::make_curve_client(socket_, net::read_certificate(cluster.key("alice", true)),
                           net::read_certificate(cluster.key("coordinator", false)).public_key);
    socket_.set(zmq::sockopt::linger, 0);
    socket_.connect(cluster.endpoint());
  }
  std::optional<net::InMessage> exchange(zmq::message_t request) {
    socket_.send(request, zmq::send_flags::none);
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, 3000ms);
    if (!(item.revents & ZMQ_POLLIN)) return std::nullopt;
    zmq::message_t reply;
    (void)socket_.recv(reply);
    wire::ErrorCode code{};
    std::string error;
    return net::InMessage::parse(reply, &code, &error);
  }

 private:
  zmq::context_t context_;
  zmq::socket_t socket_;
};

TEST(Protocol, MalformedAndUnknownMessagesGetErrorRepliesNotACrash) {
  TestCluster cluster({{"node-a", "rack-1", {{0}}}});
  cluster.start_coordinator();
  RawClient client(cluster);

  auto garbage = client.exchange(zmq::message_t(std::string("definitely not capnp")));
  ASSERT_TRUE(garbage);
  ASSERT_EQ(garbage->which(), wire::Envelope::Body::ERROR);
  EXPECT_EQ(garbage->envelope().getBody().getError().getCode(), wire::ErrorCode::MALFORMED);

  auto words = zmq::message_t(std::string(64, '\xff'));  // aligned but nonsense pointers
  auto nonsense = client.exchange(std::move(words));
  ASSERT_TRUE(nonsense);
  EXPECT_EQ(nonsense->which(), wire::Envelope::Body::ERROR);

  net::OutMessage future(7);
  future.envelope().setVersion(99);
  future.body().initQuery();
  auto version = client.exchange(future.to_frame());
  ASSERT_TRUE(version);
  ASSERT_EQ(version->which(), wire::Envelope::Body::ERROR);
  EXPECT_EQ(version->envelope().getBody().getError().getCode(), wire::ErrorCode::BAD_VERSION);

  net::OutMessage odd(8);
  odd.body().initGrant();  // a coordinator-to-launcher message sent the wrong way
  auto unknown = client.exchange(odd.to_frame());
  ASSERT_TRUE(unknown);
  ASSERT_EQ(unknown->which(), wire::Envelope::Body::ERROR);
  EXPECT_EQ(unknown->envelope().getBody().getError().getCode(), wire::ErrorCode::UNKNOWN_MESSAGE);
  EXPECT_EQ(unknown->request_id(), 8u);

  net::OutMessage heartbeat(9);  // a user key pretending to be a node
  heartbeat.body().initHeartbeat();
  auto denied = client.exchange(heartbeat.to_frame());
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->envelope().getBody().getError().getCode(), wire::ErrorCode::DENIED);

  // Still serving.
  EXPECT_EQ(cluster.ctl("alice", {"whoami"}).out, "user:alice\n");
}

TEST(Protocol, CoordinatorTellsSystemdItIsReady) {
  TestCluster cluster({{"node-a", "rack-1", {{0}}}});
  const std::string path = cluster.dir() + "/notify.sock";
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  cluster.start_coordinator({{"NOTIFY_SOCKET", path}});
  char buffer[256] = {};
  const auto n = ::recv(fd, buffer, sizeof(buffer) - 1, 0);
  ::close(fd);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buffer).rfind("READY=1\nSTATUS=serving on tcp://127.0.0.1:", 0), 0u) << buffer;
}

}  // namespace
}  // namespace themis::testing
