#pragma once
// A DEALER client that sends one Envelope and waits for the reply with the same request id.
// Used by themisctl and the tests; the nodelet keeps its own long-lived DEALER.
#include <chrono>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "net/curve_keys.h"
#include "net/envelope.h"

namespace themis::net {

struct ClientOptions {
  std::string endpoint;             // tcp://host:port
  bool insecure = false;            // no CURVE (loopback only)
  CurveKeyPair own_keys;            // ignored when insecure
  std::string server_public_key;    // ignored when insecure
  std::chrono::milliseconds timeout{5000};
};

class RequestClient {
 public:
  explicit RequestClient(const ClientOptions& options);
  // nullopt on timeout (coordinator unreachable, or the handshake was refused).
  std::optional<InMessage> call(OutMessage& request);
  std::uint64_t next_request_id() { return ++last_request_id_; }

 private:
  ClientOptions options_;
  zmq::context_t context_;
  zmq::socket_t socket_;
  std::uint64_t last_request_id_ = 0;
};

}  // namespace themis::net
