#include "net/request_client.h"

#include <algorithm>
#include <cerrno>
#include <stdexcept>

#include "net/socket_security.h"

namespace themis::net {

RequestClient::RequestClient(const ClientOptions& options)
    : options_(options), context_(1), socket_(context_, zmq::socket_type::dealer) {
  if (options.insecure) {
    if (!is_loopback_endpoint(options.endpoint)) {
      throw std::runtime_error("--insecure only connects to loopback endpoints, not " + options.endpoint);
    }
  } else {
    make_curve_client(socket_, options.own_keys, options.server_public_key);
  }
  socket_.set(zmq::sockopt::linger, 0);
  monitor_ = std::make_unique<ConnectionMonitor>(context_, socket_, options.endpoint, options.connect_timeout,
                                                 !options.insecure);
  try {
    socket_.connect(options.endpoint);
  } catch (const zmq::error_t& e) {
    throw std::invalid_argument("cannot connect to " + options.endpoint + ": " + e.what() +
                                " (give host:port or tcp://host:port)");
  }
}

RequestClient::~RequestClient() { monitor_.reset(); }

std::optional<InMessage> RequestClient::call(OutMessage& request) {
  if (connection_failure_) return std::nullopt;
  const std::uint64_t id = request.envelope().getRequestId();
  auto frame = request.to_frame();
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  // Queued at once while the connection comes up (a connecting DEALER has its pipe from connect()), so a
  // coordinator that is slow to accept still gets it.
  bool sent = socket_.send(frame, zmq::send_flags::dontwait).has_value();
  while (true) {
    if (!connected_) {
      const auto& outcome = monitor_->update();
      if (outcome.state == ConnectionState::kReady) {
        connected_ = true;
      } else if (outcome.state != ConnectionState::kPending) {
        connection_failure_ = outcome;
        return std::nullopt;
      }
    }
    auto until = deadline;
    if (const auto connect_deadline = connected_ ? std::nullopt : monitor_->connect_deadline()) {
      until = std::min(until, *connect_deadline);
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return std::nullopt;
    zmq::pollitem_t items[2] = {{socket_.handle(), 0, static_cast<short>(sent ? ZMQ_POLLIN : ZMQ_POLLOUT), 0},
                                {monitor_->events().handle(), 0, ZMQ_POLLIN, 0}};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now) + std::chrono::milliseconds(1);
    try {
      zmq::poll(items, connected_ ? 1 : 2, left);
    } catch (const zmq::error_t& e) {
      // A signal interrupted the wait (a handler without SA_RESTART; a stop and continue from the shell): the
      // request stays queued or sent, and the loop waits again until the deadline.
      if (e.num() != EINTR) throw;
      continue;
    }
    if (!sent) {
      if (items[0].revents & ZMQ_POLLOUT) sent = socket_.send(frame, zmq::send_flags::dontwait).has_value();
      continue;
    }
    if (!(items[0].revents & ZMQ_POLLIN)) continue;
    zmq::message_t reply;
    if (!socket_.recv(reply, zmq::recv_flags::dontwait)) continue;
    wire::ErrorCode code{};
    std::string error;
    auto in = InMessage::parse(reply, &code, &error);
    if (in && in->request_id() == id) {
      connected_ = true;  // an answer: the handshake succeeded, whatever the monitor has read so far
      return in;
    }
  }
}

}  // namespace themis::net
