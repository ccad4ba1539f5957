#include "net/request_client.h"

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
  socket_.connect(options.endpoint);
}

std::optional<InMessage> RequestClient::call(OutMessage& request) {
  const std::uint64_t id = request.envelope().getRequestId();
  auto frame = request.to_frame();
  if (!socket_.send(frame, zmq::send_flags::dontwait)) {
    // Not yet connected: the DEALER has no peer. Wait for the connection within the timeout.
    zmq::pollitem_t out_item{socket_.handle(), 0, ZMQ_POLLOUT, 0};
    zmq::poll(&out_item, 1, options_.timeout);
    if (!(out_item.revents & ZMQ_POLLOUT) || !socket_.send(frame, zmq::send_flags::dontwait)) return std::nullopt;
  }
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, left);
    if (!(item.revents & ZMQ_POLLIN)) continue;
    zmq::message_t reply;
    if (!socket_.recv(reply, zmq::recv_flags::dontwait)) continue;
    wire::ErrorCode code{};
    std::string error;
    auto in = InMessage::parse(reply, &code, &error);
    if (in && in->request_id() == id) return in;
  }
}

}  // namespace themis::net
