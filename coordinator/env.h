#pragma once
// What the coordinator's logic takes from the world besides its database: the time, and a way to send one
// frame to a peer. The daemon's Env is the system clock and its ROUTER socket; tests inject a manual clock
// and keep what was sent, so the logic runs without sockets, processes or sleeps (tests/coordinator/).
#include <string>
#include <zmq.hpp>

namespace themis::coordinator {

class Env {
 public:
  virtual ~Env() = default;
  // Unix time in seconds.
  virtual double now() = 0;
  // One frame to the peer known by `routing_id` (a ROUTER identity); never blocks.
  virtual void send(const std::string& routing_id, zmq::message_t frame) = 0;
};

}  // namespace themis::coordinator
