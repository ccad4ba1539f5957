#pragma once
// Why a client's connection to the coordinator does not come up, from libzmq's socket monitor events, so that
// a client can say so at once instead of waiting out its request timeout (docs/admin.md "themisctl: connection
// errors"):
//   - no TCP connection (refused, unreachable, a host name that does not resolve): no CONNECTED event within
//     the connect timeout;
//   - the coordinator's ZAP handler refused the client key (not enrolled): HANDSHAKE_FAILED_AUTH, status 400;
//   - the CURVE handshake fails without a verdict: the server key given to the client is not the coordinator's
//     (it cannot decrypt HELLO and drops the connection: HANDSHAKE_FAILED_NO_DETAIL);
//   - one side uses CURVE and the other does not: HANDSHAKE_FAILED_PROTOCOL (mechanism mismatch) when this
//     side notices first, NO_DETAIL when the coordinator does and closes the connection.
// A TCP connection with no handshake at all is not decided here: a stopped or overloaded coordinator looks the
// same, and a request queued meanwhile is delivered once it resumes.
#include <chrono>
#include <optional>
#include <string>
#include <zmq.hpp>

namespace themis::net {

enum class ConnectionState { kPending, kReady, kCannotConnect, kNotEnrolled, kServerKeyMismatch, kSecurityMismatch };

struct ConnectionOutcome {
  ConnectionState state = ConnectionState::kPending;
  std::string message;  // for the failures: what happened, naming the endpoint
};

class ConnectionMonitor {
 public:
  using Clock = std::chrono::steady_clock;
  // Call before socket.connect(); `endpoint` is what will be connected to (for messages). Without a TCP
  // connection `connect_timeout` from now, the outcome is kCannotConnect. `client_uses_curve`: whether the
  // socket is a CURVE client (else a handshake failure cannot be a wrong server key).
  ConnectionMonitor(zmq::context_t& context, zmq::socket_t& socket, std::string endpoint,
                    std::chrono::milliseconds connect_timeout, bool client_uses_curve);
  ~ConnectionMonitor();
  ConnectionMonitor(const ConnectionMonitor&) = delete;
  ConnectionMonitor& operator=(const ConnectionMonitor&) = delete;

  // The socket the events arrive on, to poll beside the client's own.
  zmq::socket_t& events() { return events_; }
  // Reads the events that have arrived (without waiting) and returns the outcome so far; a decided outcome
  // stays as it is.
  const ConnectionOutcome& update();
  // When update() decides kCannotConnect if nothing arrives before; nullopt once connected or decided.
  std::optional<Clock::time_point> connect_deadline() const;
  bool tcp_connected() const { return tcp_connected_; }

 private:
  void on_event(std::uint16_t event, std::uint32_t value);

  zmq::socket_t& monitored_;
  zmq::socket_t events_;
  std::string endpoint_;
  Clock::time_point connect_deadline_;
  bool client_uses_curve_;
  ConnectionOutcome outcome_;
  bool tcp_connected_ = false;
  bool tcp_failed_ = false;
};

}  // namespace themis::net
