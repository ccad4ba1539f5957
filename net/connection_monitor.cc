#include "net/connection_monitor.h"

#include <netdb.h>

#include <atomic>
#include <cstring>
#include <stdexcept>

#include "net/endpoint.h"

namespace themis::net {
namespace {

std::atomic<unsigned> monitor_count{0};

// "cannot connect to HOST:PORT: ..." with the reason a resolver gives for the host, when it gives one.
std::string cannot_connect(const std::string& endpoint, bool refused) {
  const std::string address = endpoint_address(endpoint);
  std::string message = "cannot connect to " + address;
  const auto colon = address.rfind(':');
  if (endpoint.rfind("tcp://", 0) == 0 && colon != std::string::npos) {
    std::string host = address.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
    if (found) ::freeaddrinfo(found);
    if (rc != 0) return message + ": cannot resolve host '" + host + "': " + ::gai_strerror(rc);
  }
  return message + (refused ? ": connection refused (is themis-coordinator running and listening there?)"
                            : ": no answer to the TCP connection (host down, or a firewall drops it)");
}

}  // namespace

ConnectionMonitor::ConnectionMonitor(zmq::context_t& context, zmq::socket_t& socket, std::string endpoint,
                                     std::chrono::milliseconds connect_timeout, bool client_uses_curve)
    : monitored_(socket),
      events_(context, zmq::socket_type::pair),
      endpoint_(std::move(endpoint)),
      connect_deadline_(Clock::now() + connect_timeout),
      client_uses_curve_(client_uses_curve) {
  const std::string address = "inproc://themis-connection-monitor-" + std::to_string(++monitor_count);
  const int events = ZMQ_EVENT_CONNECTED | ZMQ_EVENT_CONNECT_RETRIED | ZMQ_EVENT_CLOSED | ZMQ_EVENT_DISCONNECTED |
                     ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                     ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
  if (zmq_socket_monitor(socket.handle(), address.c_str(), events) != 0) {
    throw std::runtime_error(std::string("zmq_socket_monitor: ") + zmq_strerror(zmq_errno()));
  }
  events_.set(zmq::sockopt::linger, 0);
  events_.connect(address);
}

ConnectionMonitor::~ConnectionMonitor() {
  zmq_socket_monitor(monitored_.handle(), nullptr, 0);
  events_.close();
}

void ConnectionMonitor::on_event(std::uint16_t event, std::uint32_t value) {
  if (outcome_.state != ConnectionState::kPending) return;
  switch (event) {
    case ZMQ_EVENT_CONNECTED:
      tcp_connected_ = true;
      break;
    case ZMQ_EVENT_CONNECT_RETRIED:
    case ZMQ_EVENT_CLOSED:
      if (!tcp_connected_) tcp_failed_ = true;
      break;
    case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
      outcome_ = {ConnectionState::kReady, ""};
      break;
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
      outcome_ = {ConnectionState::kNotEnrolled,
                  "key not enrolled: the coordinator at " + endpoint_address(endpoint_) + " refused this key (ZAP status " +
                      std::to_string(value) + "); an admin enrolls its public .key with `themis-coordinator enroll NAME FILE.key`"};
      break;
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL: {
      // Either side may notice a mechanism mismatch first; when the coordinator does, it just closes the
      // connection (NO_DETAIL here). A client without CURVE has no server key to get wrong.
      const std::string address = endpoint_address(endpoint_);
      if (!client_uses_curve_) {
        outcome_ = {ConnectionState::kSecurityMismatch,
                    "security mismatch: this client runs without CURVE (--insecure) and " + address + " requires it"};
      } else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL && value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) {
        outcome_ = {ConnectionState::kSecurityMismatch,
                    "security mismatch: " + address + " runs without CURVE (insecure mode); connect with --insecure"};
      } else {
        outcome_ = {ConnectionState::kServerKeyMismatch,
                    "server key mismatch: the CURVE handshake with " + address +
                        " failed; the server key (--server-key, THEMIS_SERVER_KEY) is not that coordinator's, or it runs "
                        "without CURVE"};
      }
      break;
    }
    default:
      break;
  }
}

const ConnectionOutcome& ConnectionMonitor::update() {
  while (outcome_.state == ConnectionState::kPending) {
    zmq::message_t header;
    if (!events_.recv(header, zmq::recv_flags::dontwait)) break;
    std::uint16_t event = 0;
    std::uint32_t value = 0;
    if (header.size() >= 6) {
      std::memcpy(&event, header.data(), sizeof(event));
      std::memcpy(&value, static_cast<const char*>(header.data()) + sizeof(event), sizeof(value));
    }
    while (header.more()) {  // the endpoint frame
      zmq::message_t rest;
      if (!events_.recv(rest, zmq::recv_flags::dontwait)) break;
      header = std::move(rest);
    }
    on_event(event, value);
  }
  if (outcome_.state == ConnectionState::kPending && !tcp_connected_ && Clock::now() >= connect_deadline_) {
    outcome_ = {ConnectionState::kCannotConnect, cannot_connect(endpoint_, tcp_failed_)};
  }
  return outcome_;
}

std::optional<ConnectionMonitor::Clock::time_point> ConnectionMonitor::connect_deadline() const {
  if (tcp_connected_ || outcome_.state != ConnectionState::kPending) return std::nullopt;
  return connect_deadline_;
}

}  // namespace themis::net
