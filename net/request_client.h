#pragma once
// A DEALER client that sends one Envelope and waits for the reply with the same request id.
// Used by themisctl and the tests; the nodelet keeps its own long-lived DEALER.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "net/connection_monitor.h"
#include "net/curve_keys.h"
#include "net/envelope.h"

namespace themis::net {

struct ClientOptions {
  std::string endpoint;             // tcp://host:port
  bool insecure = false;            // no CURVE (loopback only)
  CurveKeyPair own_keys;            // ignored when insecure
  std::string server_public_key;    // ignored when insecure
  std::chrono::milliseconds timeout{5000};
  // Without a TCP connection this long after the client is made, a call gives up with connection_failure()
  // set (net/connection_monitor.h).
  std::chrono::milliseconds connect_timeout{2000};
};

class RequestClient {
 public:
  explicit RequestClient(const ClientOptions& options);
  ~RequestClient();
  RequestClient(const RequestClient&) = delete;
  RequestClient& operator=(const RequestClient&) = delete;
  // nullopt when the connection does not come up (connection_failure() says why: no TCP connection within
  // connect_timeout, or the handshake failed, at once) or no reply comes within the timeout.
  std::optional<InMessage> call(OutMessage& request);
  // Set once the connection has failed to come up: no TCP connection, key not enrolled, server key mismatch.
  const std::optional<ConnectionOutcome>& connection_failure() const { return connection_failure_; }
  // After a call without an answer: true when TCP connected but no handshake ever completed (the coordinator
  // is stopped or overloaded, or the server key is wrong in a way that gave no error).
  bool handshake_pending() const { return !connected_ && monitor_->tcp_connected(); }
  std::uint64_t next_request_id() { return ++last_request_id_; }

 private:
  ClientOptions options_;
  zmq::context_t context_;
  zmq::socket_t socket_;
  std::unique_ptr<ConnectionMonitor> monitor_;
  bool connected_ = false;
  std::optional<ConnectionOutcome> connection_failure_;
  std::uint64_t last_request_id_ = 0;
};

}  // namespace themis::net
